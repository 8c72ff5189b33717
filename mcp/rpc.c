/* JSON-RPC lines in and out (rpc.h). */
#include "mcp/rpc.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/utf8.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ lines */

/* The lines whole in buf handed out, the rest kept. */
static void take_lines(struct mcp_lines *in, mcp_line_fn line, void *ctx)
{
        char *start = in->buf, *nl;
        while ((nl = memchr(start, '\n', in->have - (size_t)(start - in->buf)))) {
                *nl = '\0';
                if (in->skipping)
                        in->skipping = false;
                else
                        line(ctx, start, (size_t)(nl - start));
                start = nl + 1;
        }
        in->have -= (size_t)(start - in->buf);
        memmove(in->buf, start, in->have);
}

int mcp_lines_read(struct mcp_lines *in, mcp_line_fn line, mcp_line_fn too_long, void *ctx)
{
        if (!in->buf && !(in->buf = malloc(MCP_MESSAGE_MAX + 1)))
                return -ENOMEM;
        ssize_t n = read(in->fd, in->buf + in->have, MCP_MESSAGE_MAX - in->have);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        if (n == 0) {
                in->eof = true;
                return 0;
        }
        in->have += (size_t)n;
        take_lines(in, line, ctx);
        if (in->have == MCP_MESSAGE_MAX) {
                /* Over the bound with no end in sight: refused once, and the
                 * rest of it dropped as it comes. */
                if (!in->skipping)
                        too_long(ctx, in->buf, 0);
                in->skipping = true;
                in->have = 0;
        }
        return 0;
}

void mcp_lines_free(struct mcp_lines *in)
{
        free(in->buf);
        in->buf = NULL;
}

/* ------------------------------------------------------------ messages */

static bool usable_id(yajl_val id)
{
        return YAJL_IS_STRING(id) || YAJL_IS_INTEGER(id);
}

int mcp_msg_parse(const char *line, struct mcp_msg *m, struct umw_error **err)
{
        *m = (struct mcp_msg){0};
        if (umw_json_parse(line, "message", &m->tree, err) < 0)
                return MCP_PARSE_ERROR;
        if (!YAJL_IS_OBJECT(m->tree))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "message: expected one JSON-RPC object (no batches)"),
                       MCP_INVALID_REQUEST;
        yajl_val id = umw_json_member(m->tree, "id");
        if (usable_id(id))
                m->id = id;
        const char *version = umw_json_member_str(m->tree, "jsonrpc", "");
        if (strcmp(version, "2.0") != 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "message: .jsonrpc: expected \"2.0\""),
                       MCP_INVALID_REQUEST;
        if (id && !m->id)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "message: .id: expected a string or an integer"),
                       MCP_INVALID_REQUEST;
        yajl_val method = umw_json_member(m->tree, "method");
        if (method && !YAJL_IS_STRING(method))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "message: .method: expected a string"),
                       MCP_INVALID_REQUEST;
        m->method = method ? YAJL_GET_STRING(method) : NULL;
        m->params = umw_json_member(m->tree, "params");
        if (m->params && !YAJL_IS_OBJECT(m->params))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "message: .params: expected an object"),
                       MCP_INVALID_REQUEST;
        if (!m->method && !m->id)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "message: expected a method or a response's id"),
                       MCP_INVALID_REQUEST;
        return 0;
}

void mcp_msg_free(struct mcp_msg *m)
{
        yajl_tree_free(m->tree);
        *m = (struct mcp_msg){0};
}

yajl_val mcp_meta(yajl_val params, const char *key)
{
        return umw_json_member(umw_json_member(params, "_meta"), key);
}

/* ------------------------------------------------------------ out */

static void gen_id(yajl_gen g, yajl_val id)
{
        if (id)
                umw_jgen_value(g, id);
        else
                yajl_gen_null(g);
}

yajl_gen mcp_result_begin(yajl_val id)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return NULL;
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "jsonrpc", "2.0");
        umw_jgen_key(g, "id");
        gen_id(g, id);
        umw_jgen_key(g, "result");
        return g;
}

yajl_gen mcp_notify_begin(const char *method)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return NULL;
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "jsonrpc", "2.0");
        umw_jgen_key_str(g, "method", method);
        umw_jgen_key(g, "params");
        return g;
}

int mcp_send(int fd, yajl_gen g)
{
        if (!g)
                return -ENOMEM;
        yajl_gen_map_close(g);
        size_t len;
        char *text = umw_jgen_finish(g, &len);
        if (!text)
                return -ENOMEM;
        text[len] = '\n';
        int r = umw_write_all(fd, text, len + 1);
        free(text);
        return r;
}

int mcp_send_error(int fd, yajl_val id, int code, const char *message, mcp_data_fn data, void *ctx)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return -ENOMEM;
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "jsonrpc", "2.0");
        umw_jgen_key(g, "id");
        gen_id(g, id);
        umw_jgen_key(g, "error");
        yajl_gen_map_open(g);
        umw_jgen_key_int(g, "code", code);
        umw_jgen_key(g, "message");
        mcp_gen_text(g, message, strlen(message));
        if (data) {
                umw_jgen_key(g, "data");
                yajl_gen_map_open(g);
                data(g, ctx);
                yajl_gen_map_close(g);
        }
        yajl_gen_map_close(g);
        return mcp_send(fd, g);
}

void mcp_gen_text(yajl_gen g, const char *text, size_t n)
{
        const unsigned char *p = (const unsigned char *)text;
        size_t good = 0;
        uint32_t cp;
        while (good < n && (p[good] < 0x80 || umw_utf8_decode(p + good, n - good, &cp)))
                good += p[good] < 0x80 ? 1 : umw_utf8_decode(p + good, n - good, &cp);
        if (good == n) {
                yajl_gen_string(g, p, n);
                return;
        }
        /* Rare: a copy with each bad byte replaced. */
        char *fixed = malloc(n * 3 + 1);
        size_t len = 0;
        for (size_t i = 0; fixed && i < n;) {
                size_t k = p[i] < 0x80 ? 1 : umw_utf8_decode(p + i, n - i, &cp);
                if (k) {
                        memcpy(fixed + len, p + i, k);
                        len += k;
                        i += k;
                } else {
                        memcpy(fixed + len, "\xef\xbf\xbd", 3);
                        len += 3;
                        i++;
                }
        }
        yajl_gen_string(g, (const unsigned char *)(fixed ? fixed : ""), fixed ? len : 0);
        free(fixed);
}
