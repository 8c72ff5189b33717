/* libFuzzer harness for umwelt-mcp's JSON-RPC reader: the harness's lines
 * carry what a model wrote. Any line is a message or one code with a
 * one-line reason; a request's id and the text written back (the only
 * input ever echoed, and every tool output, through mcp_gen_text) always
 * make JSON that parses again. */
#include "mcp/rpc.h"
#include "common/error.h"
#include "common/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What we would write back for this message parses as JSON. */
static void echo_parses(const struct mcp_msg *m, const uint8_t *data, size_t size)
{
        yajl_gen g = mcp_result_begin(m->id);
        if (!g)
                abort();
        yajl_gen_map_open(g);
        umw_jgen_key(g, "text");
        mcp_gen_text(g, (const char *)data, size);
        yajl_gen_map_close(g);
        yajl_gen_map_close(g);
        char *text = umw_jgen_finish(g, NULL);
        yajl_val back = NULL;
        struct umw_error *err = NULL;
        if (!text || umw_json_parse(text, "echo", &back, &err) < 0)
                abort();
        yajl_tree_free(back);
        free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *line = malloc(size + 1);
        if (!line)
                return 0;
        memcpy(line, data, size);
        line[size] = '\0';
        struct mcp_msg m;
        struct umw_error *err = NULL;
        int code = mcp_msg_parse(line, &m, &err);
        if (code != 0 && code != MCP_PARSE_ERROR && code != MCP_INVALID_REQUEST)
                abort();
        if (code != 0 && (!err || strchr(err->msg, '\n')))
                abort();
        if (code == 0 && (err || (!m.method && !m.id)))
                abort();
        echo_parses(&m, data, size);
        (void)mcp_meta(m.params, "progressToken");
        mcp_msg_free(&m);
        umw_error_free(err);
        free(line);
        return 0;
}
