/* The asking tools' requests and answers (ask.h). */
#include "mcp/ask.h"
#include "mcp/rpc.h"
#include "face/relay_client.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int mcp_ask_start(const char *socket_path, const struct relay_request *q, struct mcp_ask *a,
                  struct umw_error **err)
{
        *a = (struct mcp_ask){.fd = -1, .kind = q->kind};
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        _cleanup_free_ char *line = NULL;
        size_t len;
        int r = relay_request_format(q, &line, &len, err);
        if (r < 0)
                return r;
        if (strlen(socket_path) >= sizeof(sa.sun_path))
                return umw_fail(err, UMW_EXIT_FAILURE, ENAMETOOLONG, "%s: path too long",
                                socket_path);
        memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return umw_fail_errno(err,
                                      "no relay answers for this sandbox on %s (is umwelt-relay "
                                      "installed, and the sandbox up?)",
                                      socket_path);
        if (umw_write_all(fd, line, len) < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
                return umw_fail_errno(err, "write to the relay");
        if (!(a->buf = malloc(RELAY_ANSWER_MAX)))
                return umw_fail_sys(err, ENOMEM, "relay answer");
        a->fd = TAKE_FD(fd);
        return 0;
}

/* The whole lines: pending ones noted, the final one handed out. */
static int take_answers(struct mcp_ask *a, const char **final, struct umw_error **err)
{
        char *nl;
        while ((nl = memchr(a->buf, '\n', a->have))) {
                *nl = '\0';
                size_t len = (size_t)(nl - a->buf);
                struct relay_answer ans;
                int r = relay_answer_parse(a->buf, len, &ans, err);
                if (r < 0)
                        return r;
                if (ans.status != RELAY_PENDING) {
                        *final = a->buf;
                        return 1;
                }
                snprintf(a->pending_id, sizeof(a->pending_id), "%s", ans.id);
                a->have -= len + 1;
                memmove(a->buf, nl + 1, a->have);
        }
        return 0;
}

int mcp_ask_read(struct mcp_ask *a, const char **final, struct umw_error **err)
{
        if (a->have == RELAY_ANSWER_MAX)
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                "the relay sent a line over %d bytes", RELAY_ANSWER_MAX);
        ssize_t n = read(a->fd, a->buf + a->have, RELAY_ANSWER_MAX - a->have);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n < 0)
                return umw_fail_errno(err, "read from the relay");
        if (n == 0)
                return umw_fail(err, UMW_EXIT_FAILURE, EPIPE,
                                "the relay ended the request without an answer");
        a->have += (size_t)n;
        return take_answers(a, final, err);
}

void mcp_ask_close(struct mcp_ask *a)
{
        umw_close_fdp(&a->fd);
        free(a->buf);
        a->buf = NULL;
}

/* ------------------------------------------------------------ results */

struct text {
        char *p;
        size_t len;
        FILE *f;
};

static void action_text(FILE *f, yajl_val t)
{
        yajl_val status = umw_json_member(t, "exit_status"), sig = umw_json_member(t, "signal");
        if (YAJL_IS_TRUE(umw_json_member(t, "timed_out")))
                fputs("killed at its timeout\n", f);
        else if (YAJL_IS_INTEGER(status))
                fprintf(f, "exit status %lld\n", (long long)YAJL_GET_INTEGER(status));
        else if (YAJL_IS_INTEGER(sig))
                fprintf(f, "killed by signal %lld\n", (long long)YAJL_GET_INTEGER(sig));
        fprintf(f, "stdout:\n%s\nstderr:\n%s\n", umw_json_member_str(t, "stdout", ""),
                umw_json_member_str(t, "stderr", ""));
}

/* An action that ran but failed is an error result too. */
static bool action_failed(yajl_val t)
{
        yajl_val status = umw_json_member(t, "exit_status");
        return !YAJL_IS_INTEGER(status) || YAJL_GET_INTEGER(status) != 0;
}

static bool answer_text(FILE *f, enum relay_kind kind, yajl_val t, const struct relay_answer *a,
                        const char *line)
{
        bool ok = a->status == RELAY_OK || a->status == RELAY_GRANTED;
        if (ok && (kind == RELAY_STATUS || kind == RELAY_ACTIONS)) {
                (kind == RELAY_STATUS ? relay_status_print : relay_actions_print)(f, line);
                if (ftell(f) == 0)
                        fputs(kind == RELAY_STATUS ? "nothing was given live\n"
                                                   : "no host action is offered to this project\n",
                              f);
        } else if (ok && kind == RELAY_ACTION) {
                action_text(f, t);
        } else {
                fprintf(f, "%s%s%s", relay_status_name(a->status), a->reason[0] ? ": " : "",
                        a->reason);
        }
        return !ok || (kind == RELAY_ACTION && action_failed(t));
}

bool mcp_ask_result(yajl_gen g, enum relay_kind kind, const char *line)
{
        struct relay_answer a = {.status = RELAY_ERROR};
        yajl_val t = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        struct text out = {0};
        bool failed = true;
        if (relay_answer_parse(line, strlen(line), &a, &err) == 0)
                umw_json_parse(line, "answer", &t, &err);
        if ((out.f = open_memstream(&out.p, &out.len))) {
                if (t)
                        failed = answer_text(out.f, kind, t, &a, line);
                else
                        fprintf(out.f, "the relay's answer does not read: %s",
                                err ? err->msg : "?");
                fclose(out.f);
        }
        umw_jgen_key(g, "content");
        yajl_gen_array_open(g);
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "type", "text");
        umw_jgen_key(g, "text");
        mcp_gen_text(g, out.p ? out.p : "", out.p ? out.len : 0);
        yajl_gen_map_close(g);
        yajl_gen_array_close(g);
        umw_jgen_key_bool(g, "isError", failed);
        free(out.p);
        yajl_tree_free(t);
        return failed;
}
