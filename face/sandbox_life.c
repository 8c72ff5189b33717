/* The long-lived sandbox: up, exec, down, status, list, gc. A sandbox is the
 * runtime's container "umwelt-<project id>" whose config carries the
 * sandbox's annotations; everything here is found in and done through the
 * runtime's own state and verbs. */
#include "face/direct_report.h"
#include "face/sandbox_int.h"
#include "face/layer.h"
#include "runtime/exec.h"
#include "runtime/init.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* How long down and gc --idle give a sandbox to end on SIGTERM. */
#define STOP_GRACE_MS 3000

/* One sandbox as the runtime's state describes it; strings point into tree. */
struct life {
        yajl_val tree;
        const char *id, *status, *bundle, *started, *workspace, *preset, *init;
        const char *egress, *ports; /* ANNOTATION_EGRESS, ANNOTATION_INGRESS */
        yajl_val grants;            /* parsed ANNOTATION_GRANTS, owned */
        long long pid;
        bool found; /* the runtime has a state for it */
};

static void life_release(struct life *l)
{
        if (l->tree)
                yajl_tree_free(l->tree);
        if (l->grants)
                yajl_tree_free(l->grants);
        *l = (struct life){0};
}

/* A struct life released when it goes out of scope. */
#define _cleanup_life_ __attribute__((cleanup(life_release)))

/* Reads one container's state document (st, owned elsewhere). */
static void life_from_state(yajl_val st, struct life *l)
{
        yajl_val ann = umw_json_member(st, "annotations");
        yajl_val pid = umw_json_member(st, "pid");
        l->found = true;
        l->id = umw_json_member_str(st, "id", NULL);
        l->status = umw_json_member_str(st, "status", NULL);
        l->bundle = umw_json_member_str(st, "bundle", NULL);
        l->started = umw_json_member_str(st, "created", NULL);
        l->pid = YAJL_IS_INTEGER(pid) ? pid->u.number.i : 0;
        l->workspace = umw_json_member_str(ann, ANNOTATION_PROJECT, NULL);
        l->preset = umw_json_member_str(ann, ANNOTATION_PRESET, NULL);
        l->init = umw_json_member_str(ann, INIT_ANNOTATION, NULL);
        l->egress = umw_json_member_str(ann, ANNOTATION_EGRESS, NULL);
        l->ports = umw_json_member_str(ann, ANNOTATION_INGRESS, NULL);
        const char *grants = umw_json_member_str(ann, ANNOTATION_GRANTS, NULL);
        l->grants = grants ? yajl_tree_parse(grants, NULL, 0) : NULL;
}

static bool life_live(const struct life *l)
{
        return strcmp(l->status, "absent") != 0 && strcmp(l->status, "stopped") != 0;
}

/* The state of container id; status "absent" when it has none. */
static int life_lookup(const struct runtime_opts *rt, const char *id, struct life *l,
                       struct umw_error **err)
{
        *l = (struct life){.id = id, .status = "absent"};
        _cleanup_free_ char *json = NULL;
        int r = container_state(rt, id, &json, err);
        if (r < 0 && (*err)->kind == UMW_EXIT_NOTFOUND) {
                umw_error_freep(err);
                return 0;
        }
        if (r < 0 || (r = umw_json_parse(json, "state", &l->tree, err)) < 0)
                return r;
        life_from_state(l->tree, l);
        if (!l->status)
                l->status = "stopped";
        return 0;
}

/* ------------------------------------------------------------ last exec */

static void touch_last_exec(const char *bundle)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", bundle, LAST_EXEC_FILE);
        /* The file up made, touched where it is (never through a symlink);
         * made afresh when it is gone. */
        if (utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW) == 0)
                return;
        _cleanup_close_ int dirfd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int fd =
            dirfd < 0 ? -1
                      : openat(dirfd, LAST_EXEC_FILE,
                               O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
        if (fd < 0 || futimens(fd, NULL) < 0)
                umw_warn("%s/%s: cannot record the time of this exec: %s", bundle, LAST_EXEC_FILE,
                         strerror(errno));
}

/* When the last exec (or the up) was, 0 when unknown. */
static time_t last_exec(const struct life *l)
{
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", l->bundle ? l->bundle : "", LAST_EXEC_FILE);
        return l->bundle && stat(path, &st) == 0 ? st.st_mtime : 0;
}

static void format_time(time_t t, char *buf, size_t len)
{
        struct tm tm;
        if (!t || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
                snprintf(buf, len, "%s", "");
}

/* ------------------------------------------------------------ output */

static void gen_grants(yajl_gen g, const struct life *l)
{
        umw_jgen_key(g, "grants");
        if (YAJL_IS_ARRAY(l->grants)) {
                umw_jgen_value(g, l->grants);
        } else {
                yajl_gen_array_open(g);
                yajl_gen_array_close(g);
        }
}

/* The gateway the relay started for sandbox id, which began without
 * egress (`request egress`), or 0. */
static pid_t relay_gateway(const char *id)
{
        _cleanup_free_ char *dir = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        return id && sandbox_relay_sandbox_dir(id, &dir, &err) == 0 ? sandbox_gateway_pid(dir) : 0;
}

/* The gateway of a live sandbox with egress (from its start, or opened
 * live by the relay), 0 when there is none. */
static pid_t gateway_of(const struct life *l)
{
        if (!life_live(l))
                return 0;
        return l->egress ? sandbox_gateway_pid(l->bundle) : relay_gateway(l->id);
}

/* "egress":bool, "gateway_pid":N (0: none), "published":[PORT...] */
static void gen_net(yajl_gen g, const struct life *l)
{
        pid_t gw = gateway_of(l);
        umw_jgen_key_bool(g, "egress", l->egress != NULL || gw);
        umw_jgen_key_int(g, "gateway_pid", gw);
        umw_jgen_key(g, "published");
        yajl_gen_array_open(g);
        for (const char *p = l->ports; p && *p;) {
                char *end;
                yajl_gen_integer(g, strtol(p, &end, 10));
                p = *end == ',' ? end + 1 : "";
        }
        yajl_gen_array_close(g);
}

static void print_net(const struct life *l)
{
        pid_t gw = gateway_of(l);
        if (!l->egress && gw)
                printf("egress:    opened live by the relay (gateway pid %d)\n", gw);
        else if (!l->egress)
                printf("egress:    off\n");
        else if (gw)
                printf("egress:    on (gateway pid %d)\n", gw);
        else
                printf("egress:    on, gateway not running: closed\n");
        printf("published: %s%s\n", l->ports ? l->ports : "none",
               l->ports ? " (127.0.0.1 and ::1)" : "");
}

static void gen_life(yajl_gen g, const struct life *l, const char *workspace)
{
        char when[64];
        format_time(last_exec(l), when, sizeof(when));
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "id", l->id);
        umw_jgen_key_str(g, "workspace", workspace);
        umw_jgen_key_str(g, "status", l->status);
        umw_jgen_key_int(g, "pid", life_live(l) ? l->pid : 0);
        if (l->found) {
                umw_jgen_key_str(g, "kind", l->init ? "up" : "run");
                umw_jgen_key_str(g, "started", l->started ? l->started : "");
                umw_jgen_key_str(g, "last_exec", when);
                umw_jgen_key_str(g, "preset", l->preset ? l->preset : "");
                gen_grants(g, l);
                gen_net(g, l);
        }
        yajl_gen_map_close(g);
}

static int print_json(yajl_gen g, struct umw_error **err)
{
        _cleanup_free_ char *text = umw_jgen_finish(g, NULL);
        if (!text)
                return umw_fail_sys(err, ENOMEM, "json output");
        size_t len = strlen(text);
        printf("%s%s", text, len && text[len - 1] == '\n' ? "" : "\n");
        return 0;
}

static void print_grants(const struct life *l)
{
        size_t n = YAJL_IS_ARRAY(l->grants) ? l->grants->u.array.len : 0;
        printf("grants:    %s", n ? "" : "none");
        for (size_t i = 0; i < n; i++) {
                yajl_val g = l->grants->u.array.values[i];
                const char *path = umw_json_member_str(g, "path", NULL),
                           *mode = umw_json_member_str(g, "mode", NULL);
                printf("%s%s (%s)", i ? ", " : "", path ? path : "?", mode ? mode : "?");
        }
        putchar('\n');
}

static void print_life(const struct life *l, const char *workspace)
{
        printf("id:        %s\nworkspace: %s\nstatus:    %s\n", l->id, workspace, l->status);
        if (!l->found)
                return;
        char when[64];
        format_time(last_exec(l), when, sizeof(when));
        if (life_live(l))
                printf("pid:       %lld\n", l->pid);
        printf("kind:      %s\nstarted:   %s\n", l->init ? "up" : "run",
               l->started ? l->started : "");
        if (when[0])
                printf("last exec: %s\n", when);
        printf("preset:    %s\n", l->preset ? l->preset : "");
        print_grants(l);
        print_net(l);
}

static int report(const struct life *l, const char *workspace, bool json, struct umw_error **err)
{
        if (!json) {
                print_life(l, workspace);
                return 0;
        }
        yajl_gen g = umw_jgen_new(true);
        if (!g)
                return umw_fail_sys(err, ENOMEM, "json output");
        gen_life(g, l, workspace);
        return print_json(g, err);
}

/* The project's sandbox as the runtime has it now. */
static int report_sandbox(const struct runtime_opts *rt, const struct sandbox *s, bool json,
                          struct umw_error **err)
{
        _cleanup_life_ struct life l = {0};
        int r = life_lookup(rt, s->project.container_id, &l, err);
        return r < 0 ? r : report(&l, s->project.workspace, json, err);
}

/* ------------------------------------------------------------ ending */

/* Waits up to ms for pid to exit; it need not be our child. */
static void wait_exit(pid_t pid, int ms)
{
        _cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        while (pidfd >= 0 && poll(&p, 1, ms) < 0 && errno == EINTR)
                ;
}

/* What a sandbox whose init is gone left: state directory, cgroup, bundle. */
static int remove_dead(const struct runtime_opts *rt, const struct life *l, struct umw_error **err)
{
        /* Its gateway outlives the init: its listeners hold the namespace. */
        sandbox_gateway_stop(l->bundle);
        int r = container_delete(rt, l->id, true, err);
        if (r < 0)
                return r;
        if (l->bundle)
                sandbox_remove_bundle(l->bundle, l->id);
        sandbox_relay_remove(l->id);
        return 0;
}

/* SIGTERM ends the pause init, and with it every process of its pid
 * namespace; a sandbox still there after the grace period gets SIGKILL from
 * delete --force. */
static int stop(const struct runtime_opts *rt, const struct life *l, struct umw_error **err)
{
        _cleanup_error_ struct umw_error *gone = NULL;
        if (container_kill(rt, l->id, SIGTERM, false, &gone) == 0)
                wait_exit((pid_t)l->pid, STOP_GRACE_MS);
        return remove_dead(rt, l, err);
}

static void audit_stop(struct sandbox *s, const char *id, const char *reason)
{
        const char *kv[] = {"id", id, "reason", reason, NULL};
        sandbox_audit(s, "stop", kv);
}

/* ------------------------------------------------------------ up */

static int create_and_start(struct sandbox *s, const struct runtime_opts *rt,
                            struct umw_error **err)
{
        struct runtime_opts sandbox_rt = sandbox_runtime(s, rt);
        struct create_opts co = {.id = s->project.container_id, .bundle = s->bundle};
        /* After create: a create that re-execs the runtime (runtime/selfexe.h)
         * starts this process over, which would log the start twice. */
        int r = container_create(&sandbox_rt, &co, err);
        if (r < 0 && (*err)->kind == UMW_EXIT_EXISTS)
                s->keep_bundle = true; /* another up made it in between: its bundle */
        if (r == 0) {
                sandbox_audit_start(s, NULL);
                if ((r = sandbox_start_gated(s, &sandbox_rt, false, err)) < 0) {
                        _cleanup_error_ struct umw_error *ignored = NULL;
                        container_delete(&sandbox_rt, s->project.container_id, true, &ignored);
                }
        }
        if (r < 0) {
                const char *kv[] = {"id", s->project.container_id, "error", (*err)->msg, NULL};
                sandbox_audit(s, "failed", kv);
        }
        return r;
}

/* A sandbox already there: a live one is refused, a dead one's leftovers go. */
static int clear_the_way(const struct runtime_opts *rt, struct sandbox *s, struct umw_error **err)
{
        _cleanup_life_ struct life l = {0};
        int r = life_lookup(rt, s->project.container_id, &l, err);
        if (r < 0)
                return r;
        if (life_live(&l))
                return umw_fail(err, UMW_EXIT_EXISTS, EEXIST,
                                "sandbox %s for %s is %s already (pid %lld): run commands with "
                                "umwelt-run sandbox exec -p %s -- CMD, or end it with sandbox "
                                "down",
                                l.id, s->project.workspace, l.status, l.pid, s->project.workspace);
        if (!l.found)
                return 0;
        if ((r = remove_dead(rt, &l, err)) < 0)
                return r;
        audit_stop(s, l.id, "dead");
        return 0;
}

int sandbox_up(const struct runtime_opts *rt, const struct sandbox_opts *o, struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        s.state_root = rt->root;
        int r;
        if ((r = sandbox_locate(&s, o->project, err)) < 0 ||
            (r = sandbox_open_audit(&s, err)) < 0 || (r = clear_the_way(rt, &s, err)) < 0 ||
            (r = sandbox_compose(&s, o, true, err)) < 0 || (r = direct_up_begins(&s, err)) < 0 ||
            (r = create_and_start(&s, rt, err)) < 0)
                return r;
        s.keep_bundle = s.relay_keep = true;
        touch_last_exec(s.bundle);
        return report_sandbox(rt, &s, o->json, err);
}

/* ------------------------------------------------------------ exec */

/* The command as one line for the audit log, cut at a sane length. */
static void join_args(char *const *args, char *buf, size_t len)
{
        size_t n = 0;
        buf[0] = '\0';
        for (; *args && n + 1 < len; args++)
                n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", *args);
}

/* What exec_in learns from the runtime's exec once the state is read. */
struct exec_audit {
        struct sandbox *s;
        const struct sandbox_opts *o;
        char *bundle; /* set once the sandbox was found live */
};

/* Called by the runtime's exec with the sandbox's state: a sandbox not
 * running is refused here with how to start it; a live one gets its audit
 * line and the time of its last exec before anything runs. After exec's own
 * re-exec from a sealed copy, where there is one (runtime/exec.c), so the
 * line is written once. */
static int exec_found(void *ctx, const struct container_state *st, enum container_status status,
                      struct umw_error **err)
{
        struct exec_audit *a = ctx;
        if (status == STATUS_STOPPED)
                return sandbox_not_running(a->s, err);
        char command[4096];
        join_args(a->o->args, command, sizeof(command));
        const char *kv[] = {"id", a->s->project.container_id, "command", command, NULL};
        sandbox_audit(a->s, "exec", kv);
        if (st->bundle && !(a->bundle = strdup(st->bundle)))
                return umw_fail_sys(err, ENOMEM, "exec");
        touch_last_exec(a->bundle);
        return 0;
}

static int exec_in(const struct runtime_opts *rt, const struct sandbox_opts *o, struct sandbox *s,
                   int *exit_status, struct umw_error **err)
{
        struct exec_audit a = {.s = s, .o = o};
        /* A sandbox that began without egress and had it opened live: its
         * later commands get the variables a start with egress gives. */
        size_t n_env = 0;
        if (relay_gateway(s->project.container_id))
                while (sandbox_proxy_env[n_env])
                        n_env++;
        struct exec_opts eo = {
            .env = (const char **)sandbox_proxy_env,
            .n_env = n_env,
            .id = s->project.container_id,
            .args = o->args,
            .tty = o->tty || (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)),
            .tty_set = true,
            .cwd = o->cwd,
            .preserve_fds = o->preserve_fds,
            .loaded = exec_found,
            .loaded_ctx = &a,
        };
        int r = container_exec(rt, &eo, exit_status, err);
        if (r < 0 && (*err)->kind == UMW_EXIT_NOTFOUND) {
                umw_error_freep(err);
                r = sandbox_not_running(s, err);
        }
        if (a.bundle)
                touch_last_exec(a.bundle);
        free(a.bundle);
        if (r < 0)
                return r;
        if (o->json)
                sandbox_print_exit(s->project.container_id, *exit_status);
        return 0;
}

int sandbox_exec(const struct runtime_opts *rt, const struct sandbox_opts *o, int *exit_status,
                 struct umw_error **err)
{
        *exit_status = 0;
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        int r;
        if ((r = sandbox_locate(&s, o->project, err)) < 0 || (r = sandbox_open_audit(&s, err)) < 0)
                return r;
        return exec_in(rt, o, &s, exit_status, err);
}

/* ------------------------------------------------------------ down, status */

static int down_found(const struct runtime_opts *rt, struct sandbox *s, const struct life *l,
                      bool json, struct umw_error **err)
{
        if (!l->found)
                return sandbox_not_running(s, err);
        if (!life_live(l)) {
                int r = remove_dead(rt, l, err);
                if (r < 0)
                        return r;
                audit_stop(s, l->id, "dead");
                return umw_fail(err, UMW_EXIT_STATE, ESRCH,
                                "sandbox %s for %s was not running (its init was gone): removed "
                                "what it left",
                                l->id, s->project.workspace);
        }
        int r = stop(rt, l, err);
        if (r < 0)
                return r;
        audit_stop(s, l->id, "down");
        struct life gone = {.id = l->id, .status = "absent"};
        if (json)
                return report(&gone, s->project.workspace, true, err);
        printf("sandbox %s for %s is down\n", l->id, s->project.workspace);
        return 0;
}

int sandbox_down(const struct runtime_opts *rt, const struct sandbox_opts *o,
                 struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        _cleanup_life_ struct life l = {0};
        int r;
        if ((r = sandbox_locate(&s, o->project, err)) < 0 ||
            (r = sandbox_open_audit(&s, err)) < 0 ||
            (r = life_lookup(rt, s.project.container_id, &l, err)) < 0)
                return r;
        r = down_found(rt, &s, &l, o->json, err);
        if (l.found)
                direct_report_down(&s);
        return r;
}

int sandbox_status(const struct runtime_opts *rt, const struct sandbox_opts *o,
                   struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        int r = sandbox_locate(&s, o->project, err);
        return r < 0 ? r : report_sandbox(rt, &s, o->json, err);
}

/* ------------------------------------------------------------ list, gc */

/* Calls each for every sandbox in the state root (containers with the
 * sandbox's project annotation); a negative return stops. */
typedef int (*life_fn)(const struct life *l, void *ctx, struct umw_error **err);

static int each_in(yajl_val list, life_fn each, void *ctx, struct umw_error **err)
{
        for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++) {
                struct life l = {0};
                life_from_state(list->u.array.values[i], &l);
                int r = l.workspace && l.id && l.status ? each(&l, ctx, err) : 0;
                if (l.grants)
                        yajl_tree_free(l.grants);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int for_each_sandbox(const struct runtime_opts *rt, life_fn each, void *ctx,
                            struct umw_error **err)
{
        _cleanup_free_ char *json = NULL;
        yajl_val list = NULL;
        int r;
        if ((r = container_list(rt, false, &json, err)) < 0 ||
            (r = umw_json_parse(json, "state list", &list, err)) < 0)
                return r;
        r = each_in(list, each, ctx, err);
        yajl_tree_free(list);
        return r;
}

static int list_text(const struct life *l, void *ctx, struct umw_error **err)
{
        printf("%-32s %-8s %-8lld %-21.19s %s\n", l->id, l->status, life_live(l) ? l->pid : 0,
               l->started ? l->started : "", l->workspace);
        return 0;
}

static int list_json(const struct life *l, void *ctx, struct umw_error **err)
{
        gen_life(ctx, l, l->workspace);
        return 0;
}

int sandbox_list(const struct runtime_opts *rt, bool json, struct umw_error **err)
{
        if (!json) {
                printf("%-32s %-8s %-8s %-21s %s\n", "ID", "STATUS", "PID", "STARTED", "WORKSPACE");
                return for_each_sandbox(rt, list_text, NULL, err);
        }
        yajl_gen g = umw_jgen_new(true);
        if (!g)
                return umw_fail_sys(err, ENOMEM, "json output");
        yajl_gen_array_open(g);
        int r = for_each_sandbox(rt, list_json, g, err);
        yajl_gen_array_close(g);
        if (r < 0) {
                yajl_gen_free(g);
                return r;
        }
        return print_json(g, err);
}

struct gc {
        const struct runtime_opts *rt;
        long long idle_secs; /* < 0: no --idle */
        bool json;
        yajl_gen g; /* json: the "removed" array */
        size_t removed, failed;
};

static void gc_record(struct gc *gc, const struct life *l, const char *reason, long long idle)
{
        struct sandbox s = SANDBOX_INIT;
        _cleanup_error_ struct umw_error *no_log = NULL;
        if (sandbox_for_workspace(&s, l->workspace, &no_log) < 0 ||
            sandbox_open_audit(&s, &no_log) < 0)
                umw_warn("%s: no audit line for this gc: %s", l->workspace, no_log->msg);
        audit_stop(&s, l->id, reason);
        direct_report_down(&s);
        sandbox_release(&s);
        gc->removed++;
        if (!gc->json) {
                if (idle >= 0)
                        printf("downed %s (%s): no exec for %llds\n", l->id, l->workspace, idle);
                else
                        printf("removed %s (%s): %s\n", l->id, l->workspace,
                               strcmp(reason, "dead") == 0 ? "its init was gone"
                                                           : "created, never started");
                return;
        }
        yajl_gen_map_open(gc->g);
        umw_jgen_key_str(gc->g, "id", l->id);
        umw_jgen_key_str(gc->g, "workspace", l->workspace);
        umw_jgen_key_str(gc->g, "reason", reason);
        yajl_gen_map_close(gc->g);
}

/* How long an up may take between create and start (the gateway's ready
 * wait included) before gc takes a created sandbox for abandoned. */
#define ABANDONED_SECS 60

/* A sandbox whose up was killed between create and start: its init waits
 * for a start that will not come. */
static bool abandoned(const struct life *l)
{
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/config.json", l->bundle ? l->bundle : "");
        return strcmp(l->status, "created") == 0 && l->bundle && stat(path, &st) == 0 &&
               time(NULL) - st.st_mtime >= ABANDONED_SECS;
}

/* One sandbox that cannot be removed does not keep gc from the others. */
static int gc_one(const struct life *l, void *ctx, struct umw_error **unused)
{
        struct gc *gc = ctx;
        _cleanup_error_ struct umw_error *err = NULL;
        time_t last = last_exec(l);
        long long idle = last ? (long long)(time(NULL) - last) : -1;
        bool stopped = strcmp(l->status, "stopped") == 0, never_started = abandoned(l);
        bool idle_long = gc->idle_secs >= 0 && l->init && strcmp(l->status, "running") == 0 &&
                         idle >= gc->idle_secs;
        int r = stopped || never_started ? remove_dead(gc->rt, l, &err)
                : idle_long              ? stop(gc->rt, l, &err)
                                         : 1;
        if (r == 0) {
                gc_record(gc, l,
                          stopped         ? "dead"
                          : never_started ? "never started"
                                          : "idle",
                          idle_long ? idle : -1);
        } else if (r < 0) {
                umw_warn("gc %s: %s", l->id, err->msg);
                gc->failed++;
        }
        return 0;
}

int sandbox_gc(const struct runtime_opts *rt, long long idle_secs, bool json,
               struct umw_error **err)
{
        struct gc gc = {.rt = rt, .idle_secs = idle_secs, .json = json};
        if (json) {
                if (!(gc.g = umw_jgen_new(true)))
                        return umw_fail_sys(err, ENOMEM, "json output");
                yajl_gen_map_open(gc.g);
                umw_jgen_key(gc.g, "removed");
                yajl_gen_array_open(gc.g);
        }
        int r = for_each_sandbox(rt, gc_one, &gc, err);
        if (json) {
                yajl_gen_array_close(gc.g);
                yajl_gen_map_close(gc.g);
                if (r < 0) {
                        yajl_gen_free(gc.g);
                        return r;
                }
                if ((r = print_json(gc.g, err)) < 0)
                        return r;
        } else if (r < 0) {
                return r;
        } else if (gc.removed == 0 && gc.failed == 0) {
                printf("nothing to remove\n");
        }
        if (gc.failed)
                return umw_fail(err, UMW_EXIT_FAILURE, EBUSY,
                                "gc: %zu sandbox(es) could not be removed (see above)", gc.failed);
        return 0;
}

/* ------------------------------------------------------------ discard */

/* The layer's directory removed by fd (face/layer_file.c), as whoever
 * runs this: a user's layer is in the user's state directory. */
static int remove_layer(const char *dir, struct umw_error **err)
{
        _cleanup_free_ char *parent = strdup(dir);
        char *slash = parent ? strrchr(parent, '/') : NULL;
        if (!slash)
                return umw_fail_sys(err, ENOMEM, "layer");
        *slash = '\0';
        _cleanup_close_ int fd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstatat(fd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? umw_fail(err, UMW_EXIT_NOTFOUND, ENOENT,
                                                  "no layer to discard (%s)", dir)
                                       : umw_fail_errno(err, "%s", dir);
        if (!S_ISDIR(st.st_mode))
                return umw_fail(err, UMW_EXIT_FAILURE, ENOTDIR, "%s: not a directory", dir);
        return layer_remove_tree(fd, slash + 1, err);
}

int sandbox_refuse_running(const struct runtime_opts *rt, struct sandbox *s, const char *what,
                           struct umw_error **err)
{
        _cleanup_life_ struct life l = {0};
        _cleanup_free_ char *dir = NULL;
        int r = life_lookup(rt, s->project.container_id, &l, err);
        if (r < 0)
                return r;
        if (life_live(&l))
                return umw_fail(err, UMW_EXIT_STATE, EBUSY,
                                "sandbox %s for %s is %s: its workspace is an overlay on the "
                                "layer; stop it (umwelt-run sandbox down -p %s) before %s",
                                l.id, s->project.workspace, l.status, s->project.workspace, what);
        /* A one-shot run holds the layer's lock while it runs. */
        if ((r = sandbox_layer_dir(s, &dir, err)) < 0)
                return r;
        _cleanup_close_ int layer = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (layer < 0)
                return errno == ENOENT ? 0 : umw_fail_errno(err, "review mode's layer %s", dir);
        return sandbox_layer_lock(s, layer, err);
}

int sandbox_deliver_discard(const struct runtime_opts *rt, const char *project,
                            struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        _cleanup_free_ char *dir = NULL;
        int r;
        if ((r = sandbox_locate(&s, project, err)) < 0 ||
            (r = sandbox_refuse_running(rt, &s, "discarding", err)) < 0 ||
            (r = sandbox_layer_dir(&s, &dir, err)) < 0 || (r = sandbox_open_audit(&s, err)) < 0 ||
            (r = remove_layer(dir, err)) < 0)
                return r;
        const char *kv[] = {"id", s.project.container_id, "layer", dir, NULL};
        sandbox_audit(&s, "discard", kv);
        printf("discarded the layer of %s\n", s.project.workspace);
        return 0;
}
