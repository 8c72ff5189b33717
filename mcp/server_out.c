/* What the server writes: responses, and the end of a call (server_int.h). */
#include "mcp/server_int.h"
#include "common/json.h"

#include <string.h>
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

void server_result_end(struct server *S, struct call *c, yajl_gen g)
{
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
        server_result_end(S, c, g);
}

void server_call_free(struct call *c)
{
        yajl_tree_free(c->id);
        yajl_tree_free(c->token);
        mcp_ask_close(&c->ask);
        *c = (struct call){.ask.fd = -1};
}

