/* Starting a sandbox: a plain run, and one with its network door (egress
 * through the project's gateway, ports published on the host's loopback).
 *
 * The kernel wall (run.umwelt.net=default-drop, set by compose) lets nothing
 * but lo through, so the gateway's listeners on 127.0.0.1:3128 and
 * [::1]:3128 inside the sandbox's network namespace are its only door: if
 * the gateway is not there, or dies, the door is shut. They are made here
 * before the workload's first instruction (socket activation) and handed
 * to the gateway, started from the host's side (for run at the first
 * connection): a connection waits in their backlog until the gateway
 * decides it. As root that is between the runtime's create and start. A
 * rootless sandbox's init cannot be entered from outside until it has
 * exec'd (until then it is an undumpable image of umwelt-run, whose
 * /proc/PID/ns belongs to the host's root), so there the door is made
 * after the start of a pause init, and run's command is exec'd into that
 * sandbox then. */
#include "face/direct_report.h"
#include "face/sandbox_int.h"
#include "netns/tls_paths.h"
#include "policy/egress_rules.h"
#include "runtime/exec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The pid of a created container's init. */
static int init_pid(const struct runtime_opts *rt, const char *id, pid_t *pid,
                    struct umw_error **err)
{
        _cleanup_free_ char *json = NULL;
        yajl_val st = NULL;
        int r;
        if ((r = container_state(rt, id, &json, err)) < 0 ||
            (r = umw_json_parse(json, "state", &st, err)) < 0)
                return r;
        yajl_val v = umw_json_member(st, "pid");
        *pid = YAJL_IS_INTEGER(v) ? (pid_t)v->u.number.i : 0;
        yajl_tree_free(st);
        return *pid > 0
                   ? 0
                   : umw_fail(err, UMW_EXIT_FAILURE, ESRCH, "sandbox %s: its state has no pid", id);
}

static int publish(struct sandbox *s, pid_t init, struct umw_error **err)
{
        pid_t forwarder;
        struct ingress_request req = {.sandbox_pid = init,
                                      .ports = s->net.ports,
                                      .n_ports = s->net.n_ports,
                                      .sandbox_id = s->project.container_id,
                                      .audit_fd = s->project.audit_fd};
        /* The forwarder ends with the init; up leaves it behind by exiting. */
        return s->net.n_ports ? ingress_start(&req, &forwarder, err) : 0;
}

/* Whether the sandbox needs its gateway to have started before it does:
 * the gateway writes the trust files where they are not up to date, and
 * where a rule needs TLS termination it opens the CA, without which the
 * sandbox must not start. Otherwise the listeners are the door: a
 * connection waits in their backlog while the gateway starts. */
static bool gateway_first(const struct sandbox *s)
{
        return egress_rules_need_termination((const char *const *)s->view.policy.egress_allow,
                                             (const char *const *)s->view.policy.egress_deny) ||
               (s->net.trust_dir && !tls_trust_current(s->net.trust_dir));
}

/* tied (run) with nothing to wait for: the gateway starts alongside the
 * sandbox; up waits, and says so, where it cannot start. */
static int open_door(struct sandbox *s, pid_t init, bool tied, struct sandbox_gateway *gw,
                     struct umw_error **err)
{
        int r = sandbox_gateway_start(s, init, tied, !tied || gateway_first(s), gw, err);
        if (r == 0) {
                char pid[16];
                snprintf(pid, sizeof(pid), "%d", gw->pid);
                sandbox_audit_rules(s, "egress", pid, NULL);
        }
        return r;
}

static int start_gated(struct sandbox *s, const struct runtime_opts *rt, bool tied,
                       struct sandbox_gateway *gw, pid_t *init, struct umw_error **err)
{
        bool before = s->net.egress && !s->project.who.rootless;
        int r;
        if ((r = init_pid(rt, s->project.container_id, init, err)) < 0 ||
            (before && (r = open_door(s, *init, tied, gw, err)) < 0) ||
            (r = container_start(rt, s->project.container_id, err)) < 0 ||
            (s->net.egress && !before && (r = open_door(s, *init, tied, gw, err)) < 0) ||
            (r = publish(s, *init, err)) < 0) {
                sandbox_gateway_end(NULL, gw);
                return r;
        }
        return 0;
}

int sandbox_start_gated(struct sandbox *s, const struct runtime_opts *rt, bool tied,
                        struct umw_error **err)
{
        struct sandbox_gateway gw = SANDBOX_GATEWAY_INIT;
        pid_t init;
        int r = start_gated(s, rt, tied, &gw, &init, err);
        sandbox_gateway_release(&gw);
        return r;
}

/* ------------------------------------------------------------ run */

/* After the command (r: how it went): the gateway goes, then the container. */
static int finish(struct sandbox *s, const struct runtime_opts *rt, struct sandbox_gateway *gw,
                  int r, struct umw_error **err)
{
        sandbox_gateway_end(s, gw);
        _cleanup_error_ struct umw_error *ignored = NULL;
        int d = container_delete(rt, s->project.container_id, true, r < 0 ? &ignored : err);
        return r < 0 ? r : d;
}

/* Root: the runtime's own run (create, start, wait, delete in one go),
 * the door made between its create and its start. */
struct door {
        struct sandbox *s;
        struct sandbox_gateway gw;
};

static int door_at_create(pid_t init, void *data, struct umw_error **err)
{
        struct door *d = data;
        return open_door(d->s, init, true, &d->gw, err);
}

static int run_doored(struct sandbox *s, const struct runtime_opts *rt,
                      const struct sandbox_opts *o, int *exit_status, struct umw_error **err)
{
        struct door d = {.s = s, .gw = SANDBOX_GATEWAY_INIT};
        struct create_opts co = {.id = s->project.container_id,
                                 .bundle = s->bundle,
                                 .preserve_fds = o->preserve_fds,
                                 .created = door_at_create,
                                 .created_data = &d};
        int r = container_run(rt, &co, exit_status, err);
        sandbox_gateway_end(s, &d.gw);
        return r;
}

/* Rootless: the pause init started, its gateway ready, then the command
 * exec'd with exactly the walls of the sandbox's own process. */
static int run_through_exec(struct sandbox *s, const struct runtime_opts *rt,
                            const struct sandbox_opts *o, int *exit_status, struct umw_error **err)
{
        struct create_opts co = {.id = s->project.container_id, .bundle = s->bundle};
        struct exec_opts eo = {.id = s->project.container_id,
                               .args = o->args,
                               .tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO),
                               .tty_set = true,
                               .preserve_fds = o->preserve_fds};
        struct sandbox_gateway gw = SANDBOX_GATEWAY_INIT;
        pid_t init;
        int r = container_create(rt, &co, err);
        if (r < 0)
                return r;
        if ((r = start_gated(s, rt, true, &gw, &init, err)) == 0)
                r = container_exec(rt, &eo, exit_status, err);
        return finish(s, rt, &gw, r, err);
}

int sandbox_run_gated(struct sandbox *s, const struct runtime_opts *rt,
                      const struct sandbox_opts *o, int *exit_status, struct umw_error **err)
{
        *exit_status = 0;
        return s->pause_run ? run_through_exec(s, rt, o, exit_status, err)
                            : run_doored(s, rt, o, exit_status, err);
}

/* The state directory the runtime makes for id: it gets the runtime's copy
 * of config.json (whose root.path is absolute), so it is the bundle the
 * state reports, and what gc's check of an abandoned create looks at. */
static int state_dir_path(const char *root, const char *id, char **out, struct umw_error **err)
{
        _cleanup_free_ char *cwd = root[0] == '/' ? NULL : get_current_dir_name();
        if (root[0] != '/' && !cwd)
                return umw_fail_errno(err, "state root %s: current directory", root);
        int n = cwd ? asprintf(out, "%s/%s/%s", cwd, root, id) : asprintf(out, "%s/%s", root, id);
        if (n < 0) {
                *out = NULL;
                return umw_fail_sys(err, ENOMEM, "state directory path");
        }
        return 0;
}

/* A one-shot sandbox without egress keeps nothing beside its state: the
 * config reaches the runtime through a memfd (/proc/self/fd/N as --config),
 * and the runtime's state directory serves as its bundle. Where the state
 * root's filesystem is ext4 mounted with discard (/run here), each inode
 * made and removed costs an allocation and a synchronous discard; this saves
 * two (the bundle directory and its config.json). A crash leaves no less to
 * clean: before create nothing at all (a bundle directory was left behind
 * before, which no gc looked for), after it the state directory that
 * delete --force and gc remove. */
static int run_plain(struct sandbox *s, const struct runtime_opts *rt, const struct sandbox_opts *o,
                     int *exit_status, struct umw_error **err)
{
        _cleanup_close_ int fd = memfd_create("config.json", MFD_CLOEXEC);
        if (fd < 0)
                return umw_fail_errno(err, "memfd for config.json");
        int r = umw_write_all(fd, s->config, strlen(s->config));
        if (r < 0)
                return umw_fail_sys(err, -r, "write config.json to its memfd");
        r = state_dir_path(rt->root, s->project.container_id, &s->bundle, err);
        if (r < 0)
                return r;
        /* The runtime's to remove, with the rest of the state. */
        s->keep_bundle = true;
        char config[32];
        snprintf(config, sizeof(config), "/proc/self/fd/%d", fd);
        /* Messages name what the user knows, not a descriptor gone by then. */
        _cleanup_free_ char *name = NULL;
        if (asprintf(&name, "the sandbox config composed for %s", s->project.workspace) < 0) {
                name = NULL;
                return umw_fail_sys(err, ENOMEM, "sandbox config name");
        }
        struct create_opts co = {.id = s->project.container_id,
                                 .bundle = s->bundle,
                                 .config_path = config,
                                 .config_name = name,
                                 .preserve_fds = o->preserve_fds};
        return container_run(rt, &co, exit_status, err);
}

/* A review-mode run beside the project's long-lived sandbox would mount a
 * second overlay on the layer that one writes (the layer's lock is held
 * only while a start or a run is in progress). */
static int refuse_beside_up(const struct sandbox *s, const struct runtime_opts *rt,
                            const char *up_id, struct umw_error **err)
{
        _cleanup_free_ char *json = NULL;
        _cleanup_error_ struct umw_error *absent = NULL;
        yajl_val state = NULL;
        if (!s->view.review || container_state(rt, up_id, &json, &absent) < 0 ||
            umw_json_parse(json, "state", &state, &absent) < 0)
                return 0;
        bool stopped = strcmp(umw_json_member_str(state, "status", ""), "stopped") == 0;
        yajl_tree_free(state);
        if (stopped)
                return 0;
        return umw_fail(err, UMW_EXIT_STATE, EBUSY,
                        "review mode: sandbox %s is up on %s's layer: run commands in it with "
                        "umwelt-run sandbox exec -p %s -- CMD, or end it with sandbox down",
                        up_id, s->project.workspace, s->project.workspace);
}

int sandbox_run(const struct runtime_opts *rt, const struct sandbox_opts *o, int *exit_status,
                struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        int r = sandbox_locate(&s, o->project, err);
        if (r < 0)
                return r;
        /* One-shot: its own id, so it runs next to the project's long-lived one. */
        _cleanup_free_ char *up_id = s.project.container_id;
        if (asprintf(&s.project.container_id, "umwelt-%s-run%d", s.project.id, getpid()) < 0) {
                s.project.container_id = NULL;
                return umw_fail_sys(err, ENOMEM, "sandbox id");
        }
        s.state_root = rt->root;
        if ((r = sandbox_compose(&s, o, false, err)) < 0 ||
            (r = refuse_beside_up(&s, rt, up_id, err)) < 0)
                return r;
        struct timespec since;
        direct_now(&since);
        sandbox_audit_start(&s, o->args[0]);
        struct runtime_opts sandbox_rt = sandbox_runtime(&s, rt);
        r = s.net.egress ? sandbox_run_gated(&s, &sandbox_rt, o, exit_status, err)
                         : run_plain(&s, &sandbox_rt, o, exit_status, err);
        char status[16];
        snprintf(status, sizeof(status), "%d", r < 0 ? -1 : *exit_status);
        const char *kv[] = {"id", s.project.container_id, "status", status, NULL};
        sandbox_audit(&s, r < 0 ? "failed" : "stop", kv);
        if (!s.view.review)
                direct_report_end(&s, &since);
        if (r == 0 && o->json)
                sandbox_print_exit(s.project.container_id, *exit_status);
        return r;
}
