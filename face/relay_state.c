/* The relay's tables (relay_int.h): connections' answers, sandboxes'
 * inits and audit logs, pending requests. */
#include "face/relay_int.h"
#include "face/sandbox_int.h"
#include "runtime/state.h"
#include "common/audit.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <unistd.h>

int relay_watch(struct relay *R, int fd, void *ptr, struct umw_error **err)
{
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = ptr};
        if (epoll_ctl(R->epfd, EPOLL_CTL_ADD, fd, &e) < 0)
                return umw_fail_errno(err, "epoll");
        return 0;
}

/* A connection whose request waits is not read (level-triggered: it would
 * wake the loop for ever); its hang-up still is. */
void relay_conn_pause(struct relay *R, struct relay_conn *c, bool paused)
{
        struct epoll_event e = {.events = paused ? 0 : EPOLLIN, .data.ptr = c};
        (void)epoll_ctl(R->epfd, EPOLL_CTL_MOD, c->records, &e);
}

char *relay_line(yajl_gen g, size_t *len)
{
        size_t n = 0;
        char *s = umw_jgen_finish(g, &n);
        char *line = s ? realloc(s, n + 2) : NULL;
        if (!line) {
                free(s);
                return NULL;
        }
        line[n] = '\n';
        line[n + 1] = '\0';
        *len = n + 1;
        return line;
}

void relay_send(int fd, const char *line, size_t len)
{
        if (line)
                (void)send(fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void gen_id(yajl_gen g, uint64_t id)
{
        char text[RELAY_ID_MAX + 1];
        snprintf(text, sizeof(text), "%llu", (unsigned long long)id);
        umw_jgen_key_str(g, "id", text);
}

yajl_gen relay_answer_open(const char *id, enum relay_status status)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return NULL;
        yajl_gen_map_open(g);
        umw_jgen_key_int(g, "v", RELAY_VERSION);
        if (id)
                umw_jgen_key_str(g, "id", id);
        umw_jgen_key_str(g, "status", relay_status_name(status));
        return g;
}

void relay_reply(int fd, const char *id, enum relay_status status, const char *reason)
{
        yajl_gen g = relay_answer_open(id, status);
        if (!g)
                return;
        if (reason)
                umw_jgen_key_str(g, "reason", reason);
        yajl_gen_map_close(g);
        size_t len;
        _cleanup_free_ char *line = relay_line(g, &len);
        relay_send(fd, line, len);
}

void relay_answer(struct relay_conn *c, uint64_t id, enum relay_status status, const char *reason)
{
        char text[RELAY_ID_MAX + 1];
        snprintf(text, sizeof(text), "%llu", (unsigned long long)id);
        relay_reply(c->fd, id ? text : NULL, status, reason);
}

/* The workspace, bundle and audit log of the sandbox, from its runtime
 * state, and whether it started with egress. */
static int load_project(struct relay_sandbox *sb, const struct container_state *st,
                        struct umw_error **err)
{
        const char *ws = umw_json_member_str(st->annotations, ANNOTATION_PROJECT, NULL),
                   *egress = umw_json_member_str(st->annotations, ANNOTATION_EGRESS, NULL);
        if (!ws || !st->bundle)
                return umw_fail(err, UMW_EXIT_STATE, EINVAL, "container %s is not a sandbox",
                                sb->id);
        sb->gated = egress && strcmp(egress, "on") == 0;
        if (!sb->bundle && !(sb->bundle = strdup(st->bundle)))
                return umw_fail_sys(err, ENOMEM, "sandbox %s", sb->id);
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        s.keep_bundle = true;
        int r;
        if ((r = sandbox_for_workspace(&s, ws, err)) < 0 || (r = sandbox_open_audit(&s, err)) < 0)
                return r;
        sb->audit_fd = TAKE_FD(s.project.audit_fd);
        sb->workspace = TAKE_PTR(s.project.workspace);
        return 0;
}

/* The pidfd of st's init, taken while it was still that process. */
static int open_init(const struct container_state *st, struct relay_target *t,
                     struct umw_error **err)
{
        t->pid = st->pid;
        t->pidfd = pidfd_open(st->pid, 0);
        if (t->pidfd < 0 || !state_pid_alive(st)) {
                umw_close_fdp(&t->pidfd);
                return umw_fail(err, UMW_EXIT_STATE, ESRCH, "this sandbox is not running");
        }
        t->rootless = geteuid() != 0;
        return 0;
}

int relay_sandbox_target(struct relay_sandbox *sb, struct relay_target *t, struct umw_error **err)
{
        _cleanup_close_ int root = -1, dir = -1;
        struct container_state st = {0};
        int r;
        if ((r = state_root_open(sb->state_root, false, &root, err)) < 0 ||
            (r = state_dir_open(root, sb->id, &dir, err)) < 0 ||
            (r = state_read(dir, &st, err)) < 0)
                return umw_fail(err, UMW_EXIT_STATE, ESRCH, "this sandbox is not running");
        enum container_status status = state_status(&st, dir);
        if (status != STATUS_RUNNING && status != STATUS_PAUSED)
                r = umw_fail(err, UMW_EXIT_STATE, ESRCH, "this sandbox is not running");
        else if (!sb->workspace)
                r = load_project(sb, &st, err);
        if (r >= 0)
                r = open_init(&st, t, err);
        state_release(&st);
        return r;
}

void relay_audit(struct relay_sandbox *sb, const char *event, const char *const *kv)
{
        const char *all[32] = {"sandbox", sb->id};
        size_t n = 2;
        for (size_t i = 0; kv && kv[i] && n + 2 < ARRAY_SIZE(all); i += 2) {
                all[n++] = kv[i];
                all[n++] = kv[i + 1];
        }
        _cleanup_error_ struct umw_error *err = NULL;
        if (sb->audit_fd >= 0 && audit_append(sb->audit_fd, event, all, &err) < 0)
                umw_warn("sandbox %s: audit log: %s", sb->id, err->msg);
}

void relay_audit_denied(struct relay_sandbox *sb, const char *id, const char *hash, const char *why)
{
        const char *kv[] = {"id", id,      "hash", hash, "decision", "denied",
                            "by", "relay", "why",  why,  NULL};
        relay_audit(sb, "relay-decision", kv);
}

/* ------------------------------------------------------------ pending */

/* The pending file follows the table; a failure is a warning (the
 * request is only in memory then, as it is anyway while the relay runs). */
static void pending_record(const struct relay *R, const struct relay_sandbox *sb)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (relay_pending_save(R, sb, &err) < 0)
                umw_warn("sandbox %s: %s", sb->id, err->msg);
}

int relay_pending_add(struct relay *R, struct relay_conn *c, struct relay_pending *p,
                      struct umw_error **err)
{
        if (c->sb->pending >= RELAY_PENDING_MAX)
                return umw_fail(err, UMW_EXIT_STATE, EBUSY,
                                "%d requests of this sandbox wait for a human already",
                                RELAY_PENDING_MAX);
        for (size_t i = 0; i < ARRAY_SIZE(R->pending); i++) {
                if (R->pending[i])
                        continue;
                R->pending[i] = p;
                p->conn = c;
                c->waiting = p;
                c->sb->pending++;
                relay_conn_pause(R, c, true);
                pending_record(R, c->sb);
                return 0;
        }
        return umw_fail(err, UMW_EXIT_STATE, EBUSY, "the relay has too many requests waiting");
}

struct relay_pending *relay_pending_find(struct relay *R, uint64_t id)
{
        for (size_t i = 0; i < ARRAY_SIZE(R->pending); i++)
                if (R->pending[i] && R->pending[i]->id == id)
                        return R->pending[i];
        return NULL;
}

void relay_pending_free(struct relay_pending *p)
{
        if (p)
                host_action_argv_free(p->argv);
        free(p);
}

void relay_pending_remove(struct relay *R, struct relay_pending *p)
{
        for (size_t i = 0; i < ARRAY_SIZE(R->pending); i++)
                if (R->pending[i] == p)
                        R->pending[i] = NULL;
        struct relay_conn *c = p->conn;
        c->sb->pending--;
        c->waiting = NULL;
        pending_record(R, c->sb);
}

void relay_pending_drop(struct relay *R, struct relay_pending *p, enum relay_status status,
                        const char *reason)
{
        struct relay_conn *c = p->conn;
        relay_pending_remove(R, p);
        relay_answer(c, p->id, status, reason);
        relay_conn_pause(R, c, false);
        relay_pending_free(p);
}

static bool passed(const struct timespec *deadline, const struct timespec *now)
{
        return deadline->tv_sec < now->tv_sec ||
               (deadline->tv_sec == now->tv_sec && deadline->tv_nsec <= now->tv_nsec);
}

static void time_out(struct relay *R, struct relay_pending *p)
{
        char id[RELAY_ID_MAX + 1], why[96];
        snprintf(id, sizeof(id), "%llu", (unsigned long long)p->id);
        snprintf(why, sizeof(why), "no one answered within %d s", R->o->timeout_s);
        const char *kv[] = {"id", id, "hash", p->hash, "decision", "timeout", NULL};
        relay_audit(p->conn->sb, "relay-decision", kv);
        relay_pending_drop(R, p, RELAY_TIMEOUT, why);
}

void relay_expire(struct relay *R, struct timespec *next)
{
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        *next = (struct timespec){0};
        for (size_t i = 0; i < ARRAY_SIZE(R->pending); i++) {
                struct relay_pending *p = R->pending[i];
                if (!p)
                        continue;
                if (passed(&p->deadline, &now)) {
                        time_out(R, p);
                        continue;
                }
                if (!next->tv_sec || !passed(next, &p->deadline))
                        *next = p->deadline;
        }
}

/* An action as the human approves it: its name and description, the
 * values asked, and the argv that will run. */
static void gen_action(yajl_gen g, const struct relay_pending *p)
{
        umw_jgen_key_str(g, "action", p->q.action);
        umw_jgen_key_str(g, "description", p->description);
        umw_jgen_key(g, "params");
        yajl_gen_map_open(g);
        for (uint32_t i = 0; i < p->q.n_params; i++)
                umw_jgen_key_str(g, p->q.params[i].name, p->q.params[i].value);
        yajl_gen_map_close(g);
        umw_jgen_key(g, "argv");
        yajl_gen_array_open(g);
        for (char **a = p->argv; a && *a; a++)
                umw_jgen_str(g, *a);
        yajl_gen_array_close(g);
}

char *relay_pending_line(const struct relay_pending *p, size_t *len)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return NULL;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        yajl_gen_map_open(g);
        umw_jgen_key_int(g, "v", RELAY_VERSION);
        gen_id(g, p->id);
        umw_jgen_key_str(g, "status", relay_status_name(RELAY_PENDING));
        umw_jgen_key_str(g, "hash", p->hash);
        umw_jgen_key_str(g, "sandbox", p->conn->sb->id);
        umw_jgen_key_str(g, "workspace", p->conn->sb->workspace);
        umw_jgen_key_str(g, "kind", relay_kind_name(p->q.kind));
        if (p->q.kind == RELAY_GRANT) {
                umw_jgen_key_str(g, "path", p->path);
                if (strcmp(p->path, p->q.path) != 0)
                        umw_jgen_key_str(g, "requested", p->q.path);
                umw_jgen_key_str(g, "mode", p->q.rw && !p->is_file ? "rw" : "ro");
        }
        if (p->q.kind == RELAY_INGRESS)
                umw_jgen_key_int(g, "port", p->q.port);
        if (p->q.kind == RELAY_EGRESS)
                umw_jgen_key_str(g, "rule", p->q.rule);
        if (p->q.kind == RELAY_ACTION)
                gen_action(g, p);
        umw_jgen_key_str(g, "why", p->q.why);
        umw_jgen_key_int(g, "expires_in", (long long)(p->deadline.tv_sec - now.tv_sec));
        yajl_gen_map_close(g);
        return relay_line(g, len);
}

void relay_announce(struct relay *R, const struct relay_pending *p)
{
        size_t len;
        _cleanup_free_ char *line = relay_pending_line(p, &len);
        for (size_t i = 0; line && i < ARRAY_SIZE(R->controls); i++)
                if (R->controls[i] && R->controls[i]->watching)
                        relay_send(R->controls[i]->fd, line, len);
}
