/* The sandbox face's network: egress through the project's gateway, and the
 * ports a long-lived sandbox publishes on the host's loopback.
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
#include "face/sandbox_int.h"
#include "netns/ingress.h"
#include "netns/tls_paths.h"
#include "policy/egress_rules.h"
#include "runtime/exec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/paths.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <unistd.h>

#define PROXY_URL "http://127.0.0.1:3128"
#define NO_PROXY  "localhost,127.0.0.1,::1"

static const char *const proxy_env[] = {
    "HTTP_PROXY=" PROXY_URL, "HTTPS_PROXY=" PROXY_URL, "ALL_PROXY=" PROXY_URL,
    "NO_PROXY=" NO_PROXY,    "http_proxy=" PROXY_URL,  "https_proxy=" PROXY_URL,
    "all_proxy=" PROXY_URL,  "no_proxy=" NO_PROXY,     NULL};

static int env_add(struct sandbox *s, const char *entry, struct umw_error **err)
{
        size_t n = 0;
        while (s->env_set && s->env_set[n])
                n++;
        char **more = realloc(s->env_set, (n + 2) * sizeof(char *));
        if (!more)
                return umw_fail_sys(err, ENOMEM, "egress environment");
        s->env_set = more;
        more[n] = strdup(entry);
        more[n + 1] = NULL;
        return more[n] ? 0 : umw_fail_sys(err, ENOMEM, "egress environment");
}

/* ------------------------------------------------------------ ports */

static int add_port(struct sandbox *s, uint16_t port, const char *origin, struct umw_error **err)
{
        for (size_t i = 0; i < s->n_ports; i++)
                if (s->ports[i] == port)
                        return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                        "%s %u: the port is published already (by .umwelt.toml "
                                        "[ingress] ports or another --publish)",
                                        origin, port);
        if (s->n_ports == INGRESS_PORTS_MAX)
                return umw_fail(err, UMW_EXIT_USAGE, E2BIG,
                                "%s %u: expected at most %d published ports", origin, port,
                                INGRESS_PORTS_MAX);
        s->ports[s->n_ports++] = port;
        return 0;
}

static int refuse_publish(struct sandbox *s, uint16_t port, struct umw_error **err)
{
        char text[8];
        snprintf(text, sizeof(text), "%u", port);
        int r = umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                         "--publish %u: publishing ports is not allowed by the host floor "
                         "(ingress = false)",
                         port);
        const char *kv[] = {"port", text, "error", (*err)->msg, NULL};
        sandbox_audit(s, "refusal", kv);
        return r;
}

static int collect_ports(struct sandbox *s, const struct sandbox_opts *o, struct umw_error **err)
{
        int r = 0;
        for (size_t i = 0; r == 0 && i < s->policy.n_ingress_ports; i++)
                r = add_port(s, s->policy.ingress_ports[i], "[ingress] ports", err);
        for (size_t i = 0; r == 0 && i < o->n_publish; i++)
                r = s->policy.ingress_allowed ? add_port(s, o->publish[i], "--publish", err)
                                              : refuse_publish(s, o->publish[i], err);
        return r;
}

/* ------------------------------------------------------------ egress set-up */

/* Whether a rule can only be decided on the request itself: over HTTPS the
 * gateway then terminates TLS with the umwelt CA. */
static bool rules_need_termination(const struct policy_config *pc)
{
        struct egress_rules rules;
        _cleanup_error_ struct umw_error *ignored = NULL;
        if (egress_rules_parse((const char *const *)pc->egress_allow,
                               (const char *const *)pc->egress_deny, &rules, &ignored) < 0)
                return true;
        bool need = false;
        for (size_t i = 0; i < rules.n_allow; i++)
                need |= rules.allow[i].path || rules.allow[i].methods;
        for (size_t i = 0; i < rules.n_deny; i++)
                need |= rules.deny[i].path || rules.deny[i].methods;
        egress_rules_free(&rules);
        return need;
}

/* The directory the gateway fills with the trust files (its --trust-dir,
 * made before it says ready, so umwelt-run never loads OpenSSL), mounted
 * read-only at TLS_TRUST_INSIDE, and the variables that point each TLS
 * stack at its files. */
static int trust_dir_prepare(struct sandbox *s, struct umw_error **err)
{
        char **env = NULL;
        _cleanup_close_ int dfd = -1;
        /* The CA's directory made now, so the sandbox is composed with it
         * hidden before the gateway makes the key in it. */
        int r = umw_state_dir("ca", &s->ca_dir, err);
        if (r == 0)
                r = umw_mkdir_p(s->ca_dir, 0700, 0700, err);
        if (r == 0)
                r = umw_state_dir("trust", &s->trust_dir, err);
        if (r == 0)
                r = tls_trust_dir_open(s->trust_dir, &dfd, err);
        if (r == 0)
                r = tls_trust_env(NULL, &env, err);
        for (char **e = env; r == 0 && e && *e; e++)
                r = env_add(s, *e, err);
        tls_trust_env_free(env);
        return r;
}

/* Without a trust directory a rule with a path or methods cannot be
 * enforced over HTTPS: refused. Rules that need none go on without it. */
static int trust_prepare(struct sandbox *s, struct umw_error **err)
{
        if (trust_dir_prepare(s, err) == 0)
                return 0;
        free(s->trust_dir);
        s->trust_dir = NULL;
        if (rules_need_termination(&s->policy))
                return umw_error_prefix(err, "egress: a rule with a path or methods needs the "
                                             "umwelt CA, which is not usable");
        umw_warn("egress: no umwelt CA in the sandbox (%s); its rules need none", (*err)->msg);
        umw_error_freep(err);
        return 0;
}

static int egress_prepare(struct sandbox *s, struct umw_error **err)
{
        int r = sandbox_gateway_locate(s, err);
        if (r == 0)
                r = trust_prepare(s, err);
        for (const char *const *e = proxy_env; r == 0 && *e; e++)
                r = env_add(s, *e, err);
        s->egress = r == 0;
        return r;
}

int sandbox_net_prepare(struct sandbox *s, const struct sandbox_opts *o, bool long_lived,
                        struct umw_error **err)
{
        int r = long_lived ? collect_ports(s, o, err) : 0;
        if (r == 0 && s->policy.egress_enabled)
                r = egress_prepare(s, err);
        /* Hidden in every sandbox, egress or not: a state directory outside
         * the home would show the key through the read-only root. No home
         * to find it by: then there is no CA either. */
        _cleanup_error_ struct umw_error *no_home = NULL;
        if (r == 0 && !s->ca_dir)
                umw_state_dir("ca", &s->ca_dir, &no_home);
        return r;
}

/* ------------------------------------------------------------ the rules file */

static void toml_string(FILE *f, const char *s)
{
        fputc('"', f);
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (c == '"' || c == '\\')
                        fprintf(f, "\\%c", c);
                else if (c < 0x20 || c == 0x7f)
                        fprintf(f, "\\u%04x", c);
                else
                        fputc(c, f);
        }
        fputc('"', f);
}

static void toml_list(FILE *f, const char *key, char *const *v)
{
        fprintf(f, "%s = [", key);
        for (size_t i = 0; v && v[i]; i++) {
                fputs(i ? ", " : "", f);
                toml_string(f, v[i]);
        }
        fputs("]\n", f);
}

int sandbox_egress_policy_write(const struct sandbox *s, bool allow, struct umw_error **err)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f)
                return umw_fail_errno(err, "egress rules");
        fprintf(f,
                "# The egress rules of sandbox %s, as the host floor bounds them: written by "
                "umwelt-run for its gateway.\n[egress]\nenabled = %s\n",
                s->container_id, allow ? "true" : "false");
        toml_list(f, "allow", allow ? s->policy.egress_allow : NULL);
        toml_list(f, "deny", allow ? s->policy.egress_deny : NULL);
        bool bad = ferror(f);
        if (fclose(f) != 0 || bad) {
                free(text);
                return umw_fail_sys(err, ENOMEM, "egress rules");
        }
        _cleanup_free_ char *owned = text;
        _cleanup_close_ int dirfd = open(s->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return umw_fail_errno(err, "open %s", s->bundle);
        return umw_write_file_atomic(dirfd, EGRESS_POLICY_FILE, text, len, 0600, err);
}

char *sandbox_egress_log(const struct sandbox *s)
{
        const char *slash = s->audit_file ? strrchr(s->audit_file, '/') : NULL;
        char *path = NULL;
        if (!slash ||
            asprintf(&path, "%.*s/egress.jsonl", (int)(slash - s->audit_file), s->audit_file) < 0)
                return NULL;
        return path;
}

/* ------------------------------------------------------------ start */

static char *join(char *const *v)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        for (size_t i = 0; f && v && v[i]; i++)
                fprintf(f, "%s%s", i ? ", " : "", v[i]);
        if (f)
                fclose(f);
        return text;
}

static void audit_rules(struct sandbox *s, const char *event, const char *gateway,
                        const char *error)
{
        _cleanup_free_ char *allow = s->policy_loaded ? join(s->policy.egress_allow) : NULL;
        _cleanup_free_ char *deny = s->policy_loaded ? join(s->policy.egress_deny) : NULL;
        const char *kv[] = {"id",
                            s->container_id,
                            "gateway",
                            gateway,
                            "allow",
                            allow ? allow : "",
                            "deny",
                            deny ? deny : "",
                            error ? "error" : NULL,
                            error,
                            NULL};
        sandbox_audit(s, event, kv);
}

/* The pid of a created container's init. */
static int init_pid(const struct runtime_opts *rt, const char *id, pid_t *pid,
                    struct umw_error **err)
{
        _cleanup_free_ char *json = NULL;
        yajl_val st = NULL;
        int r = container_state(rt, id, &json, err);
        if (r == 0)
                r = umw_json_parse(json, "state", &st, err);
        if (r < 0)
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
                                      .ports = s->ports,
                                      .n_ports = s->n_ports,
                                      .sandbox_id = s->container_id,
                                      .audit_fd = s->audit_fd};
        /* The forwarder ends with the init; up leaves it behind by exiting. */
        return s->n_ports ? ingress_start(&req, &forwarder, err) : 0;
}

/* Whether the sandbox needs its gateway to have started before it does:
 * the gateway writes the trust files where they are not up to date, and
 * where a rule needs TLS termination it opens the CA, without which the
 * sandbox must not start. Otherwise the listeners are the door: a
 * connection waits in their backlog while the gateway starts. */
static bool gateway_first(const struct sandbox *s)
{
        return rules_need_termination(&s->policy) ||
               (s->trust_dir && !tls_trust_current(s->trust_dir));
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
                audit_rules(s, "egress", pid, NULL);
        }
        return r;
}

static int start_gated(struct sandbox *s, const struct runtime_opts *rt, bool tied,
                       struct sandbox_gateway *gw, pid_t *init, struct umw_error **err)
{
        bool before = s->egress && !s->who.rootless;
        int r = init_pid(rt, s->container_id, init, err);
        if (r == 0 && before)
                r = open_door(s, *init, tied, gw, err);
        if (r == 0)
                r = container_start(rt, s->container_id, err);
        if (r == 0 && s->egress && !before)
                r = open_door(s, *init, tied, gw, err);
        if (r == 0)
                r = publish(s, *init, err);
        if (r < 0)
                sandbox_gateway_end(NULL, gw);
        return r;
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
        int d = container_delete(rt, s->container_id, true, r < 0 ? &ignored : err);
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
        struct create_opts co = {.id = s->container_id,
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
        struct create_opts co = {.id = s->container_id, .bundle = s->bundle};
        struct exec_opts eo = {.id = s->container_id,
                               .args = o->args,
                               .tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO),
                               .tty_set = true,
                               .preserve_fds = o->preserve_fds};
        struct sandbox_gateway gw = SANDBOX_GATEWAY_INIT;
        pid_t init;
        int r = container_create(rt, &co, err);
        if (r < 0)
                return r;
        r = start_gated(s, rt, true, &gw, &init, err);
        if (r == 0)
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

/* ------------------------------------------------------------ reload */

/* How long reload waits for the gateway to say it read the new rules. */
#define RELOAD_WAIT_MS 3000

/* 1: the gateway's line saying it took the rules; 0: another line;
 * negative: it could not read them. */
static int reload_line(const char *line, const char *id, struct umw_error **err)
{
        yajl_val v = yajl_tree_parse(line, NULL, 0);
        const char *event = umw_json_member_str(v, "event", NULL),
                   *sandbox = umw_json_member_str(v, "sandbox", NULL);
        const char *result = umw_json_member_str(v, "result", NULL),
                   *error = umw_json_member_str(v, "error", NULL);
        int r = 0;
        if (event && sandbox && strcmp(event, "egress-reload") == 0 && strcmp(sandbox, id) == 0)
                r = result && strcmp(result, "ok") == 0
                        ? 1
                        : umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                   "the gateway could not read them: %s",
                                   error ? error : "no reason given");
        if (v)
                yajl_tree_free(v);
        return r;
}

/* Reads the egress log from where fd stands (under the writers' lock, so
 * only whole lines) until the gateway's reload line comes. Takes fd. */
static int wait_reloaded(const struct sandbox *s, int fd, struct umw_error **err)
{
        _cleanup_fclose_ FILE *f = fdopen(fd, "r");
        if (!f) {
                close(fd);
                return umw_fail_errno(err, "egress log");
        }
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        for (int waited = 0; waited < RELOAD_WAIT_MS; waited += 10) {
                int r = 0;
                flock(fd, LOCK_SH);
                while (r == 0 && getline(&line, &cap, f) > 0)
                        r = reload_line(line, s->container_id, err);
                flock(fd, LOCK_UN);
                if (r)
                        return r < 0 ? r : 0;
                clearerr(f);
                nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
        }
        return umw_fail(err, UMW_EXIT_FAILURE, ETIMEDOUT,
                        "the gateway did not confirm the new rules within %d ms", RELOAD_WAIT_MS);
}

/* The running sandbox's bundle (kept), and whether it started with egress. */
static int running(const struct runtime_opts *rt, struct sandbox *s, bool *egress,
                   struct umw_error **err)
{
        _cleanup_free_ char *json = NULL;
        yajl_val st = NULL;
        int r = container_state(rt, s->container_id, &json, err);
        if (r < 0 && (*err)->kind == UMW_EXIT_NOTFOUND) {
                umw_error_freep(err);
                return sandbox_not_running(s, err);
        }
        if (r == 0)
                r = umw_json_parse(json, "state", &st, err);
        if (r < 0)
                return r;
        const char *status = umw_json_member_str(st, "status", NULL),
                   *bundle = umw_json_member_str(st, "bundle", NULL);
        const char *on =
            umw_json_member_str(umw_json_member(st, "annotations"), ANNOTATION_EGRESS, NULL);
        *egress = on && strcmp(on, "on") == 0;
        s->keep_bundle = true;
        if (!status || strcmp(status, "stopped") == 0 || !bundle)
                r = sandbox_not_running(s, err);
        else if (!(s->bundle = strdup(bundle)))
                r = umw_fail_sys(err, ENOMEM, "bundle");
        yajl_tree_free(st);
        return r;
}

static void print_reloaded(const struct sandbox *s, bool opened, bool json)
{
        size_t n_allow = 0, n_deny = 0;
        while (opened && s->policy.egress_allow && s->policy.egress_allow[n_allow])
                n_allow++;
        while (opened && s->policy.egress_deny && s->policy.egress_deny[n_deny])
                n_deny++;
        if (!json) {
                printf("sandbox %s: egress rules reloaded (%zu allow, %zu deny)\n", s->container_id,
                       n_allow, n_deny);
                return;
        }
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return;
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "id", s->container_id);
        umw_jgen_key_bool(g, "egress", opened);
        umw_jgen_key(g, "allow");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < n_allow; i++)
                umw_jgen_str(g, s->policy.egress_allow[i]);
        yajl_gen_array_close(g);
        umw_jgen_key(g, "deny");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < n_deny; i++)
                umw_jgen_str(g, s->policy.egress_deny[i]);
        yajl_gen_array_close(g);
        yajl_gen_map_close(g);
        _cleanup_free_ char *text = umw_jgen_finish(g, NULL);
        if (text)
                printf("%s\n", text);
}

/* The rules written for the gateway, SIGHUP, its confirmation. Policy that
 * does not read closes egress (written with no rule) and is the error. */
static int reload_rules(struct sandbox *s, bool json, struct umw_error **err)
{
        _cleanup_error_ struct umw_error *bad = NULL;
        bool opened = sandbox_policy_read(s, &bad) == 0 && s->policy.egress_enabled;
        _cleanup_free_ char *log = sandbox_egress_log(s);
        int fd = log ? open(log, O_RDONLY | O_CLOEXEC) : -1;
        int r = fd >= 0 && lseek(fd, 0, SEEK_END) >= 0
                    ? 0
                    : umw_fail_errno(err, "egress log %s", log ? log : "");
        if (r == 0)
                r = sandbox_egress_policy_write(s, opened, err);
        if (r == 0 && !sandbox_gateway_signal(s->bundle, SIGHUP))
                r = umw_fail(err, UMW_EXIT_STATE, ESRCH, "sandbox %s: its gateway is gone",
                             s->container_id);
        if (r == 0)
                r = wait_reloaded(s, TAKE_FD(fd), err);
        else if (fd >= 0)
                close(fd);
        audit_rules(s, "egress-rules", opened ? "reloaded" : "closed",
                    r < 0 ? (*err)->msg
                    : bad ? bad->msg
                          : NULL);
        if (r < 0)
                return umw_error_prefix(err, "sandbox %s: egress rules", s->container_id);
        if (bad) {
                *err = TAKE_PTR(bad);
                return umw_error_prefix(err, "egress closed for sandbox %s", s->container_id);
        }
        print_reloaded(s, opened, json);
        return 0;
}

int sandbox_reload(const struct runtime_opts *rt, const struct sandbox_opts *o,
                   struct umw_error **err)
{
        struct sandbox s = SANDBOX_INIT;
        bool egress = false;
        int r = sandbox_locate(&s, o->project, err);
        if (r == 0)
                r = sandbox_open_audit(&s, err);
        if (r == 0)
                r = running(rt, &s, &egress, err);
        if (r == 0 && !egress)
                r = umw_fail(err, UMW_EXIT_STATE, EINVAL,
                             "sandbox %s started without egress: its rules take effect when it "
                             "starts again (sandbox down, then sandbox up)",
                             s.container_id);
        if (r == 0 && !sandbox_gateway_pid(s.bundle))
                r = umw_fail(err, UMW_EXIT_STATE, ESRCH,
                             "sandbox %s: its egress gateway is not running, so egress is closed; "
                             "start the sandbox again (sandbox down, then sandbox up) to open it",
                             s.container_id);
        if (r == 0)
                r = reload_rules(&s, o->json, err);
        sandbox_release(&s);
        return r;
}
