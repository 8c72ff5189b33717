/* Host actions on the relay's side (relay_int.h): a request resolved
 * against the root-owned table, started under its supervisor
 * (subreaper.h), its result read by the event loop, answered and
 * audited. The table is read again at every request and every approval:
 * what runs is what the table says then, and an approval binds the argv
 * the human was shown (it is in the request's hash). */
#include "face/relay_int.h"
#include "common/subreaper.h"
#include "common/audit.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* The relay's user by name, as the table's users lists them. */
static const char *user_name(char buf[static 256])
{
        struct passwd pw, *found = NULL;
        char scratch[1024];
        if (getpwuid_r(geteuid(), &pw, scratch, sizeof(scratch), &found) != 0 || !found)
                snprintf(buf, 256, "%u", (unsigned)geteuid());
        else
                snprintf(buf, 256, "%s", found->pw_name);
        return buf;
}

static unsigned running(const struct relay *R, const char *action)
{
        unsigned n = 0;
        for (size_t i = 0; i < ARRAY_SIZE(R->runs); i++)
                n += R->runs[i] && strcmp(R->runs[i]->action, action) == 0;
        return n;
}

int relay_action_resolve(struct relay *R, struct relay_pending *p, const struct relay_sandbox *sb,
                         struct host_actions *t, const struct host_action **a, const char **rule,
                         struct umw_error **err)
{
        char user[256];
        struct host_action_arg args[RELAY_PARAMS_MAX];
        *rule = "table";
        user_name(user);
        int r = host_actions_load(t, err);
        if (r < 0)
                return r;
        *a = host_actions_find(t, p->q.action);
        if (!*a || !host_action_offered(*a, user, sb->workspace))
                return umw_fail(err, UMW_EXIT_CONFIG, ENOENT,
                                "no host action '%s' is offered to %s in this project (umwelt-run "
                                "relay actions lists them)",
                                p->q.action, user);
        *rule = "params";
        for (uint32_t i = 0; i < p->q.n_params; i++)
                args[i] = (struct host_action_arg){p->q.params[i].name, p->q.params[i].value};
        if ((r = host_action_argv(*a, args, p->q.n_params, &p->argv, err)) < 0)
                return r;
        *rule = "limit";
        if (running(R, (*a)->name) >= (*a)->concurrency)
                return umw_fail(err, UMW_EXIT_STATE, EBUSY, "action %s runs %u at once already",
                                (*a)->name, (*a)->concurrency);
        snprintf(p->description, sizeof(p->description), "%s", (*a)->description);
        return 0;
}

/* ------------------------------------------------------------ audit */

/* The argv as one line for the audit log: elements joined by spaces,
 * each JSON-escaped by the writer (malloc'd; NULL when out of memory). */
static char *argv_text(char *const *argv)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        for (size_t i = 0; f && argv[i]; i++)
                fprintf(f, "%s%s", i ? " " : "", argv[i]);
        if (f)
                fclose(f);
        return text;
}

static void run_audit(const struct relay_run *run, const char *event, const char *const *kv)
{
        const char *all[40] = {"sandbox", run->sandbox, "id",     run->id,
                               "hash",    run->hash,    "action", run->action};
        size_t n = 8;
        for (size_t i = 0; kv[i] && n + 2 < ARRAY_SIZE(all); i += 2) {
                all[n++] = kv[i];
                all[n++] = kv[i + 1];
        }
        _cleanup_error_ struct umw_error *err = NULL;
        if (run->audit_fd >= 0 && audit_append(run->audit_fd, event, all, &err) < 0)
                umw_warn("sandbox %s: audit log: %s", run->sandbox, err->msg);
}

/* ------------------------------------------------------------ start */

static struct relay_run **run_slot(struct relay *R)
{
        for (size_t i = 0; i < ARRAY_SIZE(R->runs); i++)
                if (!R->runs[i])
                        return &R->runs[i];
        return NULL;
}

static struct relay_run *run_new(struct relay_conn *c, const struct relay_pending *p)
{
        struct relay_run *run = calloc(1, sizeof(*run));
        if (!run)
                return NULL;
        run->ev = EV_ACTION;
        run->fd = -1;
        run->conn = c;
        run->audit_fd = c->sb->audit_fd >= 0 ? fcntl(c->sb->audit_fd, F_DUPFD_CLOEXEC, 3) : -1;
        snprintf(run->sandbox, sizeof(run->sandbox), "%s", c->sb->id);
        snprintf(run->action, sizeof(run->action), "%s", p->q.action);
        snprintf(run->id, sizeof(run->id), "%llu", (unsigned long long)p->id);
        snprintf(run->hash, sizeof(run->hash), "%s", p->hash);
        return run;
}

static void run_free(struct relay_run *run)
{
        umw_close_fdp(&run->fd);
        umw_close_fdp(&run->audit_fd);
        free(run->buf);
        free(run);
}

int relay_action_start(struct relay *R, struct relay_conn *c, struct relay_pending *p,
                       const struct host_action *a, const char *by, struct umw_error **err)
{
        struct relay_run **slot = run_slot(R);
        if (!slot)
                return umw_fail(err, UMW_EXIT_STATE, EBUSY, "%d host actions run at once already",
                                RELAY_RUNS_MAX);
        struct relay_run *run = run_new(c, p);
        if (!run)
                return umw_fail_sys(err, ENOMEM, "action");
        struct subreaper_spec spec = {.who = "umwelt-relay",
                                      .argv = p->argv,
                                      .env = a->env,
                                      .cwd = a->cwd,
                                      .timeout_ms = a->timeout_ms,
                                      .output_limit = a->output_limit};
        int r = subreaper_run(&spec, &run->fd, &run->supervisor, err);
        if (r >= 0 && (r = relay_watch(R, run->fd, run, err)) < 0)
                kill(run->supervisor, SIGTERM);
        if (r < 0) {
                run_free(run);
                return r;
        }
        *slot = run;
        c->running = run;
        relay_conn_pause(R, c, true);
        _cleanup_free_ char *line = argv_text(p->argv);
        const char *kv[] = {"argv", line ? line : "", "by", by, NULL};
        run_audit(run, "relay-action-start", kv);
        return 0;
}

/* ------------------------------------------------------------ the result */

/* Output as text a terminal and a JSON reader take: valid UTF-8, no
 * control character but tab and newline ('?' for each byte that is not). */
static char *text_of(const char *buf, size_t len)
{
        char *out = malloc(len + 1);
        size_t k = 0;
        for (size_t i = 0; out && i < len;) {
                uint32_t cp = 0;
                size_t n = umw_utf8_decode((const unsigned char *)buf + i, len - i, &cp);
                bool ok =
                    n && (cp >= 0x20 || cp == '\t' || cp == '\n') && !(cp >= 0x7f && cp <= 0x9f);
                if (!ok) {
                        out[k++] = '?';
                        i += n ? n : 1;
                        continue;
                }
                memcpy(out + k, buf + i, n);
                k += n;
                i += n;
        }
        if (out)
                out[k] = '\0';
        return out;
}

static void gen_stream(yajl_gen g, const char *name, const char *data, uint32_t kept,
                       uint64_t total)
{
        char key[32];
        _cleanup_free_ char *text = text_of(data, kept);
        umw_jgen_key_str(g, name, text ? text : "");
        snprintf(key, sizeof(key), "%s_bytes", name);
        umw_jgen_key_int(g, key, (long long)total);
        snprintf(key, sizeof(key), "%s_cut", name);
        umw_jgen_key_bool(g, key, total > kept);
}

/* The answer to the requester: how it ran and what it wrote. */
static void answer(const struct relay_run *run, const struct subreaper_result *res, const char *out,
                   const char *errs)
{
        yajl_gen g = relay_answer_open(run->id, RELAY_OK);
        if (!g)
                return;
        umw_jgen_key_int(g, res->exited ? "exit_status" : "signal", res->status);
        umw_jgen_key_bool(g, "timed_out", res->timed_out);
        umw_jgen_key_int(g, "duration_ms", (long long)res->duration_ms);
        gen_stream(g, "stdout", out, res->out_kept, res->out_total);
        gen_stream(g, "stderr", errs, res->err_kept, res->err_total);
        yajl_gen_map_close(g);
        size_t len;
        _cleanup_free_ char *line = relay_line(g, &len);
        relay_send(run->conn->fd, line, len);
}

static void audit_end(const struct relay_run *run, const struct subreaper_result *res)
{
        char status[16], ms[24], out[24], errs[24];
        snprintf(status, sizeof(status), "%d", res->status);
        snprintf(ms, sizeof(ms), "%llu", (unsigned long long)res->duration_ms);
        snprintf(out, sizeof(out), "%llu", (unsigned long long)res->out_total);
        snprintf(errs, sizeof(errs), "%llu", (unsigned long long)res->err_total);
        const char *kv[] = {res->exited ? "exit_status" : "signal",
                            status,
                            "timed_out",
                            res->timed_out ? "yes" : "no",
                            "duration_ms",
                            ms,
                            "stdout_bytes",
                            out,
                            "stdout_sha256",
                            res->out_sha256,
                            "stderr_bytes",
                            errs,
                            "stderr_sha256",
                            res->err_sha256,
                            NULL};
        run_audit(run, "relay-action-end", kv);
}

static void run_done(struct relay *R, struct relay_run *run)
{
        for (size_t i = 0; i < ARRAY_SIZE(R->runs); i++)
                if (R->runs[i] == run)
                        R->runs[i] = NULL;
        (void)epoll_ctl(R->epfd, EPOLL_CTL_DEL, run->fd, NULL);
        if (run->conn) {
                run->conn->running = NULL;
                relay_conn_pause(R, run->conn, false);
        }
        run_free(run);
}

/* The supervisor ended without a whole result: said to both. */
static void failed(struct relay_run *run, const char *why)
{
        const char *kv[] = {"error", why, NULL};
        run_audit(run, "relay-action-end", kv);
        if (run->conn)
                relay_reply(run->conn->fd, run->id, RELAY_ERROR, why);
}

static void finish(struct relay_run *run)
{
        struct subreaper_result res;
        if (run->have < sizeof(res)) {
                failed(run, "the action's supervisor ended without a result");
                return;
        }
        memcpy(&res, run->buf, sizeof(res));
        res.out_sha256[64] = res.err_sha256[64] = '\0';
        if (run->have != sizeof(res) + (size_t)res.out_kept + res.err_kept ||
            res.out_kept > HOST_ACTION_OUTPUT_MAX || res.err_kept > HOST_ACTION_OUTPUT_MAX) {
                failed(run, "the action's supervisor sent a result out of its bounds");
                return;
        }
        audit_end(run, &res);
        if (run->conn)
                answer(run, &res, run->buf + sizeof(res), run->buf + sizeof(res) + res.out_kept);
}

void relay_action_read(struct relay *R, struct relay_run *run)
{
        /* One byte more than the largest result: a supervisor that sends
         * more is caught, not cut. */
        const size_t cap = sizeof(struct subreaper_result) + 2 * HOST_ACTION_OUTPUT_MAX + 1;
        if (!run->buf && !(run->buf = malloc(cap))) {
                failed(run, "out of memory");
                run_done(R, run);
                return;
        }
        ssize_t n;
        while ((n = read(run->fd, run->buf + run->have, cap - run->have)) > 0 ||
               (n < 0 && errno == EINTR))
                if (n > 0 && (run->have += (size_t)n) == cap)
                        break;
        if (n < 0 && errno == EAGAIN)
                return;
        finish(run);
        run_done(R, run);
}

void relay_actions_end(struct relay *R)
{
        for (size_t i = 0; i < ARRAY_SIZE(R->runs); i++) {
                struct relay_run *run = R->runs[i];
                if (!run)
                        continue;
                /* It kills what the action started and exits. */
                kill(run->supervisor, SIGTERM);
                failed(run, "the relay ended: the action was killed");
                run_done(R, run);
        }
}

/* ------------------------------------------------------------ the list */

static void gen_action(yajl_gen g, const struct host_action *a, bool projects)
{
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "name", a->name);
        umw_jgen_key_str(g, "description", a->description);
        umw_jgen_key_bool(g, "ask", a->ask);
        umw_jgen_key_int(g, "timeout_ms", a->timeout_ms);
        umw_jgen_key(g, "argv");
        yajl_gen_array_open(g);
        for (const char *const *s = a->argv; *s; s++)
                umw_jgen_str(g, *s);
        yajl_gen_array_close(g);
        umw_jgen_key(g, "params");
        yajl_gen_map_open(g);
        for (size_t i = 0; i < a->n_params; i++) {
                umw_jgen_key(g, a->params[i].name);
                yajl_gen_array_open(g);
                for (const char *const *v = a->params[i].values; *v; v++)
                        umw_jgen_str(g, *v);
                yajl_gen_array_close(g);
        }
        yajl_gen_map_close(g);
        if (projects && a->projects) {
                umw_jgen_key(g, "projects");
                yajl_gen_array_open(g);
                for (const char *const *s = a->projects; *s; s++)
                        umw_jgen_str(g, *s);
                yajl_gen_array_close(g);
        }
        yajl_gen_map_close(g);
}

void relay_actions_list(int fd, const char *project)
{
        _cleanup_error_ struct umw_error *err = NULL;
        __attribute__((cleanup(host_actions_free))) struct host_actions t = {0};
        char user[256];
        if (host_actions_load(&t, &err) < 0) {
                relay_reply(fd, NULL, RELAY_REFUSED, err->msg);
                return;
        }
        user_name(user);
        yajl_gen g = relay_answer_open(NULL, RELAY_OK);
        if (!g)
                return;
        umw_jgen_key(g, "actions");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < t.n; i++)
                if (project ? host_action_offered(&t.items[i], user, project)
                            : host_action_for_user(&t.items[i], user))
                        gen_action(g, &t.items[i], !project);
        yajl_gen_array_close(g);
        yajl_gen_map_close(g);
        size_t len;
        _cleanup_free_ char *line = relay_line(g, &len);
        relay_send(fd, line, len);
}
