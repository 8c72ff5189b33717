/* The relay's clients (relay_client.h). */
#include "face/relay_client.h"
#include "face/relay.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Requests a watch keeps in view at once (the relay holds at most
 * RELAY_PENDING_MAX a sandbox). */
#define RELAY_SNAPSHOT_MAX 256

/* ------------------------------------------------------------ lines */

struct lines {
        int fd;
        size_t have, skip; /* bytes buffered; of them, the line handed out last */
        char buf[RELAY_ANSWER_MAX];
};

/* The next line (newline cut off, NUL-terminated in place): 1, 0 at the
 * end, or an error for a line over the bound. */
static int next_line(struct lines *l, char **line, size_t *len, struct umw_error **err)
{
        memmove(l->buf, l->buf + l->skip, l->have - l->skip);
        l->have -= l->skip;
        l->skip = 0;
        for (;;) {
                char *nl = memchr(l->buf, '\n', l->have);
                if (nl) {
                        *nl = '\0';
                        *line = l->buf;
                        *len = (size_t)(nl - l->buf);
                        l->skip = *len + 1;
                        return 1;
                }
                if (l->have == sizeof(l->buf))
                        return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                        "the relay sent a line over %d bytes", RELAY_ANSWER_MAX);
                ssize_t n = read(l->fd, l->buf + l->have, sizeof(l->buf) - l->have);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return umw_fail_errno(err, "read from the relay");
                if (n == 0)
                        return 0;
                l->have += (size_t)n;
        }
}

static int connect_to(const char *path, const char *what, struct umw_error **err)
{
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof(a.sun_path))
                return umw_fail(err, UMW_EXIT_FAILURE, ENAMETOOLONG, "%s: path too long", path);
        memcpy(a.sun_path, path, strlen(path) + 1);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
                return umw_fail_errno(err, "no relay answers on %s (%s)", path, what);
        return TAKE_FD(fd);
}

static int send_line(int fd, const char *line, size_t len, struct umw_error **err)
{
        if (umw_write_all(fd, line, len) < 0)
                return umw_fail_errno(err, "write to the relay");
        return 0;
}

/* ------------------------------------------------------------ requests */

static int exit_of(enum relay_status s)
{
        switch (s) {
        case RELAY_OK:
        case RELAY_GRANTED:
                return 0;
        case RELAY_DENIED:
                return RELAY_EXIT_DENIED;
        case RELAY_TIMEOUT:
                return RELAY_EXIT_TIMEOUT;
        case RELAY_REFUSED:
                return RELAY_EXIT_REFUSED;
        case RELAY_PENDING:
        case RELAY_ERROR:
                break;
        }
        return UMW_EXIT_FAILURE;
}

static void say(const char *what, const char *text)
{
        fprintf(stderr, "umwelt-run: %s", what);
        if (text && *text) {
                fputs(": ", stderr);
                umw_put_printable(stderr, text, strlen(text), false);
        }
        fputc('\n', stderr);
}

void relay_status_print(FILE *out, const char *line)
{
        yajl_val tree = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        if (umw_json_parse(line, "answer", &tree, &err) < 0)
                return;
        yajl_val grants = umw_json_member(tree, "grants");
        for (size_t i = 0; YAJL_IS_ARRAY(grants) && i < grants->u.array.len; i++) {
                yajl_val g = grants->u.array.values[i];
                const char *path = umw_json_member_str(g, "path", "?");
                fprintf(out, "grant %s ", umw_json_member_str(g, "mode", "?"));
                umw_put_printable(out, path, strlen(path), false);
                fputc('\n', out);
        }
        yajl_val egress = umw_json_member(tree, "egress");
        for (size_t i = 0; YAJL_IS_ARRAY(egress) && i < egress->u.array.len; i++) {
                const char *rule = YAJL_GET_STRING(egress->u.array.values[i]);
                if (!rule)
                        continue;
                fputs("egress ", out);
                umw_put_printable(out, rule, strlen(rule), false);
                fputc('\n', out);
        }
        yajl_val ports = umw_json_member(tree, "ports");
        for (size_t i = 0; YAJL_IS_ARRAY(ports) && i < ports->u.array.len; i++)
                if (YAJL_IS_INTEGER(ports->u.array.values[i]))
                        fprintf(out, "ingress %lld\n",
                                (long long)YAJL_GET_INTEGER(ports->u.array.values[i]));
        yajl_tree_free(tree);
}

/* How an action ran, as `sandbox exec` says how a command did: its output
 * on our stdout and stderr, its exit status, 128+N for signal N, 124 when
 * it was killed at its timeout; a cut output and a time-out said. */
static int action_result(const char *line, bool print)
{
        yajl_val t = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        if (umw_json_parse(line, "answer", &t, &err) < 0)
                return UMW_EXIT_FAILURE;
        const char *streams[] = {"stdout", "stderr"};
        for (size_t i = 0; print && i < 2; i++) {
                const char *text = umw_json_member_str(t, streams[i], "");
                fputs(text, i ? stderr : stdout);
                char key[16];
                snprintf(key, sizeof(key), "%s_cut", streams[i]);
                yajl_val cut = umw_json_member(t, key);
                if (YAJL_IS_TRUE(cut))
                        fprintf(stderr, "umwelt-run: the action's %s was cut at %zu bytes\n",
                                streams[i], strlen(text));
        }
        fflush(stdout);
        yajl_val status = umw_json_member(t, "exit_status"), sig = umw_json_member(t, "signal");
        bool timed_out = YAJL_IS_TRUE(umw_json_member(t, "timed_out"));
        int code = YAJL_IS_INTEGER(status) ? (int)YAJL_GET_INTEGER(status)
                   : YAJL_IS_INTEGER(sig)  ? 128 + (int)YAJL_GET_INTEGER(sig)
                                           : UMW_EXIT_FAILURE;
        if (timed_out && print)
                fprintf(stderr, "umwelt-run: the action was killed at its timeout\n");
        if (timed_out)
                code = RELAY_EXIT_ACTION_TIMEOUT;
        yajl_tree_free(t);
        return code;
}

void relay_actions_print(FILE *out, const char *line)
{
        yajl_val t = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        if (umw_json_parse(line, "answer", &t, &err) < 0)
                return;
        yajl_val list = umw_json_member(t, "actions");
        for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++) {
                yajl_val a = list->u.array.values[i];
                fprintf(out, "%s%s\n", umw_json_member_str(a, "name", "?"),
                        YAJL_IS_FALSE(umw_json_member(a, "ask")) ? " (runs without asking)" : "");
                const char *d = umw_json_member_str(a, "description", "");
                if (*d)
                        fprintf(out, "  %s\n", d);
                yajl_val argv = umw_json_member(a, "argv");
                fputs("  runs:", out);
                for (size_t k = 0; YAJL_IS_ARRAY(argv) && k < argv->u.array.len; k++)
                        fprintf(out, " %s",
                                YAJL_IS_STRING(argv->u.array.values[k])
                                    ? YAJL_GET_STRING(argv->u.array.values[k])
                                    : "?");
                fputc('\n', out);
                yajl_val params = umw_json_member(a, "params");
                for (size_t k = 0; YAJL_IS_OBJECT(params) && k < params->u.object.len; k++) {
                        yajl_val v = params->u.object.values[k];
                        fprintf(out, "  --param %s=", params->u.object.keys[k]);
                        for (size_t j = 0; YAJL_IS_ARRAY(v) && j < v->u.array.len; j++)
                                fprintf(out, "%s%s", j ? "|" : "",
                                        YAJL_IS_STRING(v->u.array.values[j])
                                            ? YAJL_GET_STRING(v->u.array.values[j])
                                            : "?");
                        fputc('\n', out);
                }
        }
        yajl_tree_free(t);
}

static int final_answer(const char *line, const struct relay_answer *a, enum relay_kind kind,
                        bool json)
{
        if (kind == RELAY_ACTION && a->status == RELAY_OK) {
                if (json)
                        puts(line);
                return action_result(line, !json);
        }
        if (json)
                puts(line);
        else if (kind == RELAY_ACTIONS && a->status == RELAY_OK)
                relay_actions_print(stdout, line);
        else if (kind == RELAY_STATUS && a->status == RELAY_OK)
                relay_status_print(stdout, line);
        else if ((a->status != RELAY_OK && a->status != RELAY_GRANTED) ||
                 (a->status == RELAY_GRANTED && kind == RELAY_EGRESS))
                say(relay_status_name(a->status), a->reason);
        return exit_of(a->status);
}

int relay_request_send(const struct relay_request *q, bool json, struct umw_error **err)
{
        _cleanup_free_ char *out = NULL;
        _cleanup_free_ struct lines *l = calloc(1, sizeof(*l));
        size_t len;
        int r;
        if (!l)
                return umw_fail_sys(err, ENOMEM, "request");
        if ((r = relay_request_format(q, &out, &len, err)) < 0)
                return r;
        _cleanup_close_ int fd = connect_to(RELAY_SOCK_INSIDE, "run this inside a sandbox", err);
        if (fd < 0 || (r = send_line(fd, out, len, err)) < 0)
                return fd < 0 ? fd : r;
        l->fd = fd;
        char *line;
        while ((r = next_line(l, &line, &len, err)) > 0) {
                struct relay_answer a;
                if ((r = relay_answer_parse(line, len, &a, err)) < 0)
                        return r;
                if (a.status != RELAY_PENDING)
                        return final_answer(line, &a, q->kind, json);
                if (json)
                        puts(line);
                else
                        fprintf(stderr,
                                "umwelt-run: request %s waits for a human (on the host: "
                                "umwelt-run relay watch)\n",
                                a.id);
                fflush(NULL);
        }
        return r < 0 ? r : umw_fail(err, UMW_EXIT_FAILURE, EPIPE, "the relay ended the request");
}

/* ------------------------------------------------------------ the human side */

struct control {
        int fd;
        struct lines *l;
};

static void control_close(struct control *c)
{
        umw_close_fdp(&c->fd);
        free(c->l);
}

static int control_open(struct control *c, struct umw_error **err)
{
        _cleanup_free_ char *dir = NULL, *path = NULL;
        c->fd = -1;
        c->l = calloc(1, sizeof(*c->l));
        int r = relay_dir(false, &dir, err);
        if (r < 0)
                return umw_error_prefix(err, "no relay runs for this user");
        if (!c->l || asprintf(&path, "%s/control.sock", dir) < 0) {
                path = NULL;
                return umw_fail_sys(err, ENOMEM, "relay");
        }
        c->fd = connect_to(path, "the relay starts with the first sandbox", err);
        c->l->fd = c->fd;
        return c->fd < 0 ? c->fd : 0;
}

static int control_send(struct control *c, const char *text, struct umw_error **err)
{
        return send_line(c->fd, text, strlen(text), err);
}

/* One member of a pending line, printed safely. */
static void show(const char *label, yajl_val tree, const char *key)
{
        const char *v = umw_json_member_str(tree, key, NULL);
        if (!v || !*v)
                return;
        printf("  %-10s ", label);
        umw_put_printable(stdout, v, strlen(v), false);
        putchar('\n');
}

/* An action's argv as it will run, each element printed safely and
 * quoted where it holds a space (the human reads what exec gets). */
static void show_argv(yajl_val t)
{
        yajl_val argv = umw_json_member(t, "argv");
        if (!YAJL_IS_ARRAY(argv))
                return;
        printf("  %-10s", "runs:");
        for (size_t i = 0; i < argv->u.array.len; i++) {
                const char *a = YAJL_GET_STRING(argv->u.array.values[i]);
                bool quote = !a || !*a || strpbrk(a, " \t'\"");
                fputs(quote ? " '" : " ", stdout);
                umw_put_printable(stdout, a ? a : "", a ? strlen(a) : 0, false);
                fputs(quote ? "'" : "", stdout);
        }
        putchar('\n');
}

/* A pending request shown whole: what an approval binds to. */
static void show_pending(const char *line)
{
        yajl_val t = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        if (umw_json_parse(line, "pending", &t, &err) < 0)
                return;
        const char *kind = umw_json_member_str(t, "kind", "?");
        printf("request %s: %s\n", umw_json_member_str(t, "id", "?"), kind);
        show("path:", t, "path");
        show("requested:", t, "requested");
        show("mode:", t, "mode");
        show("egress:", t, "rule");
        show("action:", t, "action");
        show("about:", t, "description");
        show_argv(t);
        yajl_val port = umw_json_member(t, "port");
        if (YAJL_IS_INTEGER(port))
                printf("  %-10s 127.0.0.1 and [::1], port %lld\n",
                       "publish:", (long long)YAJL_GET_INTEGER(port));
        show("sandbox:", t, "sandbox");
        show("workspace:", t, "workspace");
        show("why:", t, "why");
        show("hash:", t, "hash");
        yajl_val left = umw_json_member(t, "expires_in");
        if (YAJL_IS_INTEGER(left))
                printf("  %-10s %lld s\n", "expires in", (long long)YAJL_GET_INTEGER(left));
        yajl_tree_free(t);
        fflush(stdout);
}

/* The pending lines, then the closing ok (a pending list ends there). */
typedef int (*pending_fn)(const char *line, const struct relay_answer *a, void *ctx,
                          struct umw_error **err);

static int each_pending(struct control *c, pending_fn each, void *ctx, struct umw_error **err)
{
        int r = control_send(c, "{\"v\":1,\"op\":\"pending\"}\n", err);
        char *line;
        size_t len;
        while (r >= 0 && (r = next_line(c->l, &line, &len, err)) > 0) {
                struct relay_answer a;
                if ((r = relay_answer_parse(line, len, &a, err)) < 0)
                        return r;
                if (a.status != RELAY_PENDING)
                        return 0;
                if ((r = each(line, &a, ctx, err)) < 0)
                        return r;
        }
        return r < 0 ? r : umw_fail(err, UMW_EXIT_FAILURE, EPIPE, "the relay ended");
}

static int print_pending(const char *line, const struct relay_answer *a, void *ctx,
                         struct umw_error **err)
{
        if (*(bool *)ctx)
                puts(line);
        else
                show_pending(line);
        return 0;
}

int relay_pending(bool json, struct umw_error **err)
{
        __attribute__((cleanup(control_close))) struct control c = {.fd = -1};
        int r = control_open(&c, err);
        return r < 0 ? r : each_pending(&c, print_pending, &json, err);
}

int relay_actions(bool json, struct umw_error **err)
{
        struct stat st;
        if (lstat(RELAY_SOCK_INSIDE, &st) == 0) { /* inside a sandbox: its own door */
                struct relay_request q = {.kind = RELAY_ACTIONS};
                return relay_request_send(&q, json, err);
        }
        __attribute__((cleanup(control_close))) struct control c = {.fd = -1};
        char *line;
        size_t len;
        int r;
        if ((r = control_open(&c, err)) < 0 ||
            (r = control_send(&c, "{\"v\":1,\"op\":\"actions\"}\n", err)) < 0)
                return r;
        while ((r = next_line(c.l, &line, &len, err)) > 0) {
                struct relay_answer a;
                if ((r = relay_answer_parse(line, len, &a, err)) < 0)
                        return r;
                if (a.status == RELAY_PENDING)
                        continue;
                return final_answer(line, &a, RELAY_ACTIONS, json);
        }
        return r < 0 ? r : umw_fail(err, UMW_EXIT_FAILURE, EPIPE, "the relay ended");
}

/* The control answer to what was just sent: ok, or its reason as error. */
static int control_result(struct control *c, struct umw_error **err)
{
        char *line;
        size_t len;
        int r;
        while ((r = next_line(c->l, &line, &len, err)) > 0) {
                struct relay_answer a;
                if ((r = relay_answer_parse(line, len, &a, err)) < 0)
                        return r;
                if (a.status == RELAY_PENDING)
                        continue; /* a watch's announcement: not ours */
                if (a.status == RELAY_OK)
                        return 0;
                return umw_fail(err, UMW_EXIT_STATE, EPERM, "relay: %s", a.reason);
        }
        return r < 0 ? r : umw_fail(err, UMW_EXIT_FAILURE, EPIPE, "the relay ended");
}

struct wanted {
        const char *id;
        char hash[RELAY_HASH_HEX + 1];
};

static int find_wanted(const char *line, const struct relay_answer *a, void *ctx,
                       struct umw_error **err)
{
        struct wanted *w = ctx;
        if (strcmp(a->id, w->id) != 0)
                return 0;
        yajl_val t = NULL;
        int r = umw_json_parse(line, "pending", &t, err);
        if (r < 0)
                return r;
        snprintf(w->hash, sizeof(w->hash), "%s", umw_json_member_str(t, "hash", ""));
        yajl_tree_free(t);
        show_pending(line);
        return 0;
}

static int approve_line(struct control *c, const char *id, const char *hash, bool remember,
                        struct umw_error **err)
{
        char line[160];
        snprintf(line, sizeof(line),
                 "{\"v\":1,\"op\":\"approve\",\"id\":\"%s\",\"hash\":\"%s\",\"remember\":%s}\n", id,
                 hash, remember ? "true" : "false");
        int r = control_send(c, line, err);
        return r < 0 ? r : control_result(c, err);
}

static int deny_line(struct control *c, const char *id, const char *why, struct umw_error **err)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return umw_fail_sys(err, ENOMEM, "deny");
        yajl_gen_map_open(g);
        umw_jgen_key_int(g, "v", RELAY_VERSION);
        umw_jgen_key_str(g, "op", "deny");
        umw_jgen_key_str(g, "id", id);
        if (why)
                umw_jgen_key_str(g, "why", why);
        yajl_gen_map_close(g);
        _cleanup_free_ char *text = umw_jgen_finish(g, NULL);
        int r;
        if (!text)
                return umw_fail_sys(err, ENOMEM, "deny");
        if ((r = control_send(c, text, err)) < 0 || (r = control_send(c, "\n", err)) < 0)
                return r;
        return control_result(c, err);
}

static int check_id(const char *id, struct umw_error **err)
{
        size_t n = strspn(id, "0123456789");
        if (n == 0 || n > RELAY_ID_MAX || id[n])
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "relay: expected a request id, found "
                                "'%s'",
                                id);
        return 0;
}

int relay_approve_id(const char *id, bool remember, struct umw_error **err)
{
        __attribute__((cleanup(control_close))) struct control c = {.fd = -1};
        struct wanted w = {.id = id};
        int r;
        if ((r = check_id(id, err)) < 0 || (r = control_open(&c, err)) < 0 ||
            (r = each_pending(&c, find_wanted, &w, err)) < 0)
                return r;
        if (!w.hash[0])
                return umw_fail(err, UMW_EXIT_NOTFOUND, ENOENT, "relay: no request %s is pending",
                                id);
        return approve_line(&c, id, w.hash, remember, err);
}

int relay_deny_id(const char *id, const char *why, struct umw_error **err)
{
        __attribute__((cleanup(control_close))) struct control c = {.fd = -1};
        int r;
        if ((r = check_id(id, err)) < 0 || (r = control_open(&c, err)) < 0)
                return r;
        return deny_line(&c, id, why, err);
}

/* ------------------------------------------------------------ watch */

/* y approves, a ("always") approves and remembers it for the project's
 * next start, n denies; anything else asks again; 1 at the end of in. */
static int ask_human(struct control *c, FILE *in, const char *line, const char *id,
                     struct umw_error **err)
{
        yajl_val t = NULL;
        int r = umw_json_parse(line, "pending", &t, err);
        if (r < 0)
                return r;
        char hash[RELAY_HASH_HEX + 1];
        snprintf(hash, sizeof(hash), "%s", umw_json_member_str(t, "hash", ""));
        yajl_tree_free(t);
        show_pending(line);
        char answer[64];
        for (;;) {
                fputs("approve? [y/a/n] ", stdout);
                fflush(stdout);
                if (!fgets(answer, sizeof(answer), in))
                        return 1;
                answer[strcspn(answer, "\n")] = '\0';
                if (strcmp(answer, "y") == 0 || strcmp(answer, "a") == 0)
                        return approve_line(c, id, hash, answer[0] == 'a', err);
                if (strcmp(answer, "n") == 0)
                        return deny_line(c, id, "denied from relay watch", err);
        }
}

/* The pending requests, copied: asking about one reads the connection. */
struct snapshot {
        char *lines[RELAY_SNAPSHOT_MAX];
        unsigned long long ids[RELAY_SNAPSHOT_MAX];
        size_t n;
};

static void snapshot_free(struct snapshot *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->lines[i]);
        s->n = 0;
}

static int keep_pending(const char *line, const struct relay_answer *a, void *ctx,
                        struct umw_error **err)
{
        struct snapshot *s = ctx;
        if (s->n == RELAY_SNAPSHOT_MAX)
                return 0;
        if (!(s->lines[s->n] = strdup(line)))
                return umw_fail_sys(err, ENOMEM, "watch");
        s->ids[s->n++] = strtoull(a->id, NULL, 10);
        return 0;
}

/* Asks about every pending request newer than *done; 1 at the end of in. */
static int ask_new(struct control *cmd, FILE *in, unsigned long long *done, struct umw_error **err)
{
        __attribute__((cleanup(snapshot_free))) struct snapshot s = {.n = 0};
        int r = each_pending(cmd, keep_pending, &s, err);
        for (size_t i = 0; r >= 0 && i < s.n; i++) {
                if (s.ids[i] <= *done)
                        continue;
                char id[RELAY_ID_MAX + 1];
                snprintf(id, sizeof(id), "%llu", s.ids[i]);
                *done = s.ids[i];
                if ((r = ask_human(cmd, in, s.lines[i], id, err)) < 0) {
                        fprintf(stderr, "umwelt-run: %s\n", (*err)->msg);
                        umw_error_freep(err);
                        r = 0;
                }
        }
        return r;
}

/* The watch connection only wakes the loop; the requests are listed,
 * approved and denied on a second one, so no announcement is lost while
 * a human answers. */
int relay_watch(FILE *in, struct umw_error **err)
{
        __attribute__((cleanup(control_close))) struct control c = {.fd = -1};
        __attribute__((cleanup(control_close))) struct control cmd = {.fd = -1};
        int r;
        if ((r = control_open(&c, err)) < 0 || (r = control_open(&cmd, err)) < 0 ||
            (r = control_send(&c, "{\"v\":1,\"op\":\"watch\"}\n", err)) < 0)
                return r;
        printf("watching the relay's requests (y approves, a approves for good, n denies)\n");
        fflush(stdout);
        unsigned long long done = 0;
        char *line;
        size_t len;
        while ((r = next_line(c.l, &line, &len, err)) > 0)
                if ((r = ask_new(&cmd, in, &done, err)) != 0)
                        return r < 0 ? r : 0;
        return r;
}
