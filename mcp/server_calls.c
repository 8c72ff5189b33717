/* Tool calls in flight: started, answered, cancelled, reported on
 * (server_int.h). */
#include "mcp/server_int.h"
#include "mcp/frame.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "face/sandbox.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The call in the worker a frame answers: only those were sent to it. */
static struct call *worker_call(struct server *S, uint32_t seq)
{
        for (size_t i = 0; seq && i < CALLS_MAX; i++)
                if (S->calls[i].seq == seq && S->calls[i].tool->side == TOOL_WORKER)
                        return &S->calls[i];
        return NULL;
}

/* ------------------------------------------------------------ the worker */

/* What a command did, as text: its output, then how it ended. */
static void ran_text(FILE *f, const struct mcp_frame *fr, const char *out, const char *err)
{
        fwrite(out, 1, fr->len, f);
        if (fr->len && out[fr->len - 1] != '\n')
                fputc('\n', f);
        if (fr->len2) {
                fputs("[stderr]\n", f);
                fwrite(err, 1, fr->len2, f);
                if (err[fr->len2 - 1] != '\n')
                        fputc('\n', f);
        }
        if (fr->out_total > fr->len)
                fprintf(f, "[stdout cut: %llu bytes in all, the first %u shown]\n",
                        (unsigned long long)fr->out_total, fr->len);
        if (fr->err_total > fr->len2)
                fprintf(f, "[stderr cut: %llu bytes in all, the first %u shown]\n",
                        (unsigned long long)fr->err_total, fr->len2);
        if (fr->timed_out)
                fprintf(f, "[killed at its timeout, after %llu ms]\n",
                        (unsigned long long)fr->duration_ms);
        else if (fr->exited)
                fprintf(f, "[exit status %d]\n", fr->status);
        else
                fprintf(f, "[killed by signal %d]\n", fr->status);
}

static void answer_ran(struct server *S, struct call *c, const struct mcp_frame *fr,
                       const char *out, const char *err)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (f) {
                ran_text(f, fr, out, err);
                fclose(f);
        }
        bool failed = fr->timed_out || !fr->exited || fr->status != 0;
        server_result_text(S, c, text ? text : "", text ? len : 0, failed);
        free(text);
}

void server_frames(struct server *S)
{
        struct mcp_frame fr;
        const char *text, *text2;
        _cleanup_error_ struct umw_error *err = NULL;
        int r;
        while ((r = mcp_frames_next(&S->link.frames, &fr, &text, &text2, &err)) > 0) {
                struct call *c = worker_call(S, fr.id);
                if (!c) /* cancelled, or the worker's word on a line it could not read */
                        continue;
                if (fr.kind == MCP_FRAME_RAN)
                        answer_ran(S, c, &fr, text, text2);
                else
                        server_result_text(S, c, text, fr.len, fr.kind == MCP_FRAME_REFUSED);
        }
        if (r < 0) {
                umw_log(UMW_LOG_ERROR, "%s: the worker is stopped", err->msg);
                mcp_link_stop(&S->link, NULL);
                server_worker_gone(S, err->msg);
        }
}

void server_worker_gone(struct server *S, const char *why)
{
        char text[512];
        int n = snprintf(text, sizeof(text),
                         "the sandbox's worker ended (%s); the next call starts it again", why);
        for (size_t i = 0; i < CALLS_MAX; i++)
                if (S->calls[i].seq && S->calls[i].ask.fd < 0)
                        server_result_text(S, &S->calls[i], text, (size_t)n, true);
}

/* Whether a call other than c is in the worker. */
static bool worker_busy(const struct server *S, const struct call *c)
{
        for (size_t i = 0; i < CALLS_MAX; i++)
                if (&S->calls[i] != c && S->calls[i].seq && S->calls[i].tool->side == TOOL_WORKER)
                        return true;
        return false;
}

static int worker_request(struct server *S, struct call *c, yajl_val args, struct umw_error **err)
{
        if (S->worker_stale && S->link.fd >= 0 && !worker_busy(S, c)) {
                mcp_link_stop(&S->link, NULL);
                S->worker_stale = false;
        }
        if (S->link.fd < 0) {
                int r = mcp_link_start(&S->link, &S->o->target, err);
                if (r < 0)
                        return r;
        }
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return umw_fail_sys(err, ENOMEM, "request");
        yajl_gen_map_open(g);
        umw_jgen_key_int(g, "id", c->seq);
        umw_jgen_key_str(g, "tool", c->tool->name);
        umw_jgen_key(g, "arguments");
        umw_jgen_value(g, args);
        yajl_gen_map_close(g);
        size_t len;
        _cleanup_free_ char *line = umw_jgen_finish(g, &len);
        if (!line)
                return umw_fail_sys(err, ENOMEM, "request");
        line[len] = '\n';
        return mcp_link_send(&S->link, line, len + 1, err);
}

/* The sandbox's door, found at the first question: the relay's
 * directory exists once a sandbox was brought up. */
static int relay_socket(struct server *S, struct umw_error **err)
{
        _cleanup_free_ char *workspace = NULL;
        if (S->relay_socket)
                return 0;
        return sandbox_relay_socket(S->o->target.project, &S->relay_socket, &workspace, err);
}

void server_call_start(struct server *S, struct call *c, yajl_val args)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct relay_request q;
        int r = mcp_tool_host(args, &err);
        if (r >= 0 && c->tool->side == TOOL_WORKER)
                r = worker_request(S, c, args, &err);
        else if (r >= 0 && (r = mcp_tool_request(c->tool, args, &q, &err)) >= 0 &&
                 (r = relay_socket(S, &err)) >= 0)
                r = mcp_ask_start(S->relay_socket, &q, &c->ask, &err);
        if (r < 0)
                server_result_text(S, c, err->msg, strlen(err->msg), true);
}

/* ------------------------------------------------------------ the relay */

static void progress(struct server *S, struct call *c, const char *message)
{
        if (!c->token)
                return;
        yajl_gen g = mcp_notify_begin("notifications/progress");
        if (!g)
                return;
        yajl_gen_map_open(g);
        umw_jgen_key(g, "progressToken");
        umw_jgen_value(g, c->token);
        umw_jgen_key_int(g, "progress", ++c->progress);
        umw_jgen_key_str(g, "message", message);
        yajl_gen_map_close(g);
        server_write(S, g);
}

static void waiting(struct server *S, struct call *c)
{
        char text[256];
        snprintf(text, sizeof(text),
                 "waiting for approval of request %s: on the host, umwelt-run relay watch",
                 c->ask.pending_id);
        progress(S, c, text);
}

void server_ask_ready(struct server *S, struct call *c)
{
        _cleanup_error_ struct umw_error *err = NULL;
        const char *line = NULL;
        bool was_pending = c->ask.pending_id[0];
        int r = mcp_ask_read(&c->ask, &line, &err);
        if (r < 0) {
                server_result_text(S, c, err->msg, strlen(err->msg), true);
                return;
        }
        if (r == 0) {
                if (!was_pending && c->ask.pending_id[0])
                        waiting(S, c);
                return;
        }
        yajl_gen g = server_result_begin(c);
        bool failed = g ? mcp_ask_result(g, c->tool->kind, line) : true;
        if (c->tool->kind == RELAY_EGRESS && !failed)
                S->worker_stale = true;
        server_result_end(S, c, g, failed);
}

/* ------------------------------------------------------------ progress */

void server_tick(struct server *S)
{
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        for (size_t i = 0; i < CALLS_MAX; i++) {
                struct call *c = &S->calls[i];
                if (!c->seq || !c->token)
                        continue;
                if (c->ask.pending_id[0]) {
                        waiting(S, c);
                        continue;
                }
                char text[128];
                snprintf(text, sizeof(text), "%s: running for %lld s", c->tool->name,
                         (long long)(now.tv_sec - c->start.tv_sec));
                progress(S, c, text);
        }
}

/* ------------------------------------------------------------ cancel */

static bool same_id(yajl_val a, yajl_val b)
{
        if (YAJL_IS_INTEGER(a) && YAJL_IS_INTEGER(b))
                return YAJL_GET_INTEGER(a) == YAJL_GET_INTEGER(b);
        const char *x = YAJL_IS_STRING(a) ? YAJL_GET_STRING(a) : NULL;
        const char *y = YAJL_IS_STRING(b) ? YAJL_GET_STRING(b) : NULL;
        return x && y && strcmp(x, y) == 0;
}

/* The command stopped (its supervisor kills all it started) and no
 * answer given: the harness has forgotten the request. */
void server_cancel(struct server *S, yajl_val id)
{
        for (size_t i = 0; i < CALLS_MAX; i++) {
                struct call *c = &S->calls[i];
                if (!c->seq || !same_id(c->id, id))
                        continue;
                if (c->ask.fd < 0 && S->link.fd >= 0) {
                        char line[64];
                        int n = snprintf(line, sizeof(line), "{\"id\":%u,\"cancel\":%u}\n", c->seq,
                                         c->seq);
                        _cleanup_error_ struct umw_error *err = NULL;
                        mcp_link_send(&S->link, line, (size_t)n, &err);
                }
                server_audit(S, c, "cancelled");
                server_call_free(c);
        }
}
