/* sandbox reload: changed egress rules to a running sandbox's gateway. */
#include "face/sandbox_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

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
                        r = reload_line(line, s->project.container_id, err);
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
        int r = container_state(rt, s->project.container_id, &json, err);
        if (r < 0 && (*err)->kind == UMW_EXIT_NOTFOUND) {
                umw_error_freep(err);
                return sandbox_not_running(s, err);
        }
        if (r < 0 || (r = umw_json_parse(json, "state", &st, err)) < 0)
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
        while (opened && s->view.policy.egress_allow && s->view.policy.egress_allow[n_allow])
                n_allow++;
        while (opened && s->view.policy.egress_deny && s->view.policy.egress_deny[n_deny])
                n_deny++;
        if (!json) {
                printf("sandbox %s: egress rules reloaded (%zu allow, %zu deny)\n",
                       s->project.container_id, n_allow, n_deny);
                return;
        }
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return;
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "id", s->project.container_id);
        umw_jgen_key_bool(g, "egress", opened);
        umw_jgen_key(g, "allow");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < n_allow; i++)
                umw_jgen_str(g, s->view.policy.egress_allow[i]);
        yajl_gen_array_close(g);
        umw_jgen_key(g, "deny");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < n_deny; i++)
                umw_jgen_str(g, s->view.policy.egress_deny[i]);
        yajl_gen_array_close(g);
        yajl_gen_map_close(g);
        _cleanup_free_ char *text = umw_jgen_finish(g, NULL);
        if (text)
                printf("%s\n", text);
}

/* The rules (with read false: none) written for the gateway, SIGHUP, its
 * confirmation, read from the end the egress log had before the signal. */
static int send_rules(struct sandbox *s, bool read, struct umw_error **err)
{
        _cleanup_free_ char *log = sandbox_egress_log(s);
        _cleanup_close_ int fd = log ? open(log, O_RDONLY | O_CLOEXEC) : -1;
        if (fd < 0 || lseek(fd, 0, SEEK_END) < 0)
                return umw_fail_errno(err, "egress log %s", log ? log : "");
        int r = sandbox_egress_policy_write(s, read, true, err);
        if (r < 0)
                return r;
        if (!sandbox_gateway_signal(s->bundle, SIGHUP))
                return umw_fail(err, UMW_EXIT_STATE, ESRCH, "sandbox %s: its gateway is gone",
                                s->project.container_id);
        return wait_reloaded(s, TAKE_FD(fd), err);
}

/* Policy that does not read closes egress (written with no rule) and is the
 * error. Either way the audit log says what the gateway has now. */
static int reload_rules(struct sandbox *s, bool json, struct umw_error **err)
{
        _cleanup_error_ struct umw_error *bad = NULL;
        bool read = sandbox_policy_read(s, &bad) == 0;
        bool opened = read && s->view.policy.egress_enabled;
        int r = send_rules(s, read, err);
        sandbox_audit_rules(s, "egress-rules", opened ? "reloaded" : "closed",
                            r < 0 ? (*err)->msg
                            : bad ? bad->msg
                                  : NULL);
        if (r < 0)
                return umw_error_prefix(err, "sandbox %s: egress rules", s->project.container_id);
        if (bad) {
                *err = TAKE_PTR(bad);
                return umw_error_prefix(err, "egress closed for sandbox %s",
                                        s->project.container_id);
        }
        print_reloaded(s, opened, json);
        return 0;
}

int sandbox_reload(const struct runtime_opts *rt, const struct sandbox_opts *o,
                   struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        bool egress = false;
        int r;
        if ((r = sandbox_locate(&s, o->project, err)) < 0 ||
            (r = sandbox_open_audit(&s, err)) < 0 || (r = running(rt, &s, &egress, err)) < 0)
                return r;
        if (!egress)
                return umw_fail(err, UMW_EXIT_STATE, EINVAL,
                                "sandbox %s started without egress: its rules take effect when "
                                "it starts again (sandbox down, then sandbox up)",
                                s.project.container_id);
        if (!sandbox_gateway_pid(s.bundle))
                return umw_fail(err, UMW_EXIT_STATE, ESRCH,
                                "sandbox %s: its egress gateway is not running, so egress is "
                                "closed; start the sandbox again (sandbox down, then sandbox up) "
                                "to open it",
                                s.project.container_id);
        return reload_rules(&s, o->json, err);
}

int sandbox_egress_live(struct sandbox *s, pid_t init, bool may_start, pid_t *started,
                        struct umw_error **err)
{
        *started = 0;
        if (sandbox_gateway_pid(s->bundle))
                return send_rules(s, true, err);
        if (!may_start)
                return umw_fail(err, UMW_EXIT_STATE, ESRCH,
                                "its egress gateway is not running, so egress is closed; start "
                                "the sandbox again to open it");
        struct sandbox_gateway gw = SANDBOX_GATEWAY_INIT;
        int r;
        if ((r = sandbox_gateway_locate(s, err)) < 0 ||
            (r = sandbox_egress_policy_write(s, true, true, err)) < 0 ||
            (r = sandbox_gateway_start(s, init, false, true, &gw, err)) < 0)
                return r;
        *started = gw.pid;
        sandbox_gateway_release(&gw);
        return 0;
}
