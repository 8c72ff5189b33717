/* What the server writes: responses, and the end of a call (server_int.h). */
#include "mcp/server_int.h"
#include "common/audit.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "face/sandbox.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void server_write(struct server *S, yajl_gen g)
{
        /* The harness is gone, or we are out of memory: nothing to serve. */
        if (mcp_send(STDOUT_FILENO, g) < 0)
                S->stop = true;
}

yajl_gen server_result_begin(struct call *c)
{
        yajl_gen g = mcp_result_begin(c->id);
        if (g)
                yajl_gen_map_open(g);
        return g;
}

void server_result_end(struct server *S, struct call *c, yajl_gen g, bool error)
{
        server_audit(S, c, error ? "error" : "ok");
        if (g && c->modern)
                umw_jgen_key_str(g, "resultType", "complete");
        if (g)
                yajl_gen_map_close(g);
        server_write(S, g);
        server_call_free(c);
}

static void gen_content(yajl_gen g, const char *text, size_t len, bool error)
{
        umw_jgen_key(g, "content");
        yajl_gen_array_open(g);
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "type", "text");
        umw_jgen_key(g, "text");
        mcp_gen_text(g, text, len);
        yajl_gen_map_close(g);
        yajl_gen_array_close(g);
        umw_jgen_key_bool(g, "isError", error);
}

void server_result_text(struct server *S, struct call *c, const char *text, size_t len, bool error)
{
        yajl_gen g = server_result_begin(c);
        if (g)
                gen_content(g, text, len, error);
        server_result_end(S, c, g, error);
}

void server_call_free(struct call *c)
{
        yajl_tree_free(c->id);
        yajl_tree_free(c->token);
        mcp_ask_close(&c->ask);
        free(c->what);
        *c = (struct call){.ask.fd = -1};
}

/* ------------------------------------------------------------ audit */

struct audit_ctx {
        const struct call *c;
        const char *outcome;
};

static void audit_fields(yajl_gen g, void *ctx)
{
        const struct audit_ctx *a = ctx;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long ms = (now.tv_sec - a->c->start.tv_sec) * 1000 +
                       (now.tv_nsec - a->c->start.tv_nsec) / 1000000;
        umw_jgen_key_str(g, "tool", a->c->tool->name);
        if (a->c->what)
                umw_jgen_key_str(g, "what", a->c->what);
        umw_jgen_key_str(g, "outcome", a->outcome);
        umw_jgen_key_int(g, "ms", ms);
}

/* Opened at the first call's end: a harness that only lists the tools
 * leaves no trace. A log that cannot be opened is said once. */
static int audit_fd(struct server *S)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (S->audit_fd == -1 && sandbox_audit_open(S->o->target.project, &S->audit_fd, &err) < 0) {
                umw_warn("no audit of the tool calls: %s", err->msg);
                S->audit_fd = -2;
        }
        return S->audit_fd;
}

void server_audit(struct server *S, const struct call *c, const char *outcome)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct audit_ctx a = {.c = c, .outcome = outcome};
        int fd = audit_fd(S);
        if (fd >= 0 && audit_append_fields(fd, "mcp-call", audit_fields, &a, &err) < 0)
                umw_warn("audit log: %s", err->msg);
}
