/* JSON-RPC 2.0 over stdio for umwelt-mcp (umwelt-mcp(1), "PROTOCOL"): a
 * message a line, at most MCP_MESSAGE_MAX bytes; a longer one is refused
 * as it streams past, never held whole. Messages are parsed by yajl into
 * a tree and answered by generated text: nothing of the input is echoed
 * but the request's id, written back as the value it was. The decoder is
 * fuzzed (tests/fuzz/fuzz-mcp-rpc.c). */
#ifndef UMW_MCP_RPC_H
#define UMW_MCP_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

struct umw_error;

#define MCP_MESSAGE_MAX (8u << 20)

/* JSON-RPC's error codes, and MCP's. */
enum mcp_code {
        MCP_PARSE_ERROR = -32700,
        MCP_INVALID_REQUEST = -32600,
        MCP_METHOD_NOT_FOUND = -32601,
        MCP_INVALID_PARAMS = -32602,
        MCP_INTERNAL_ERROR = -32603,
        /* 2026-07-28: the request's protocol version is not one we speak. */
        MCP_UNSUPPORTED_VERSION = -32022,
};

/* Lines from a stream, each whole or refused. */
struct mcp_lines {
        int fd;
        char *buf;
        size_t have;
        bool skipping; /* the rest of a line over the bound */
        bool eof;
};

/* What one read brought: each whole line handed to line (NUL-terminated
 * in place, newline cut), each line over the bound to too_long once.
 * Returns 0, or -errno of the read (EAGAIN is 0). */
typedef void (*mcp_line_fn)(void *ctx, char *line, size_t len);
int mcp_lines_read(struct mcp_lines *in, mcp_line_fn line, mcp_line_fn too_long, void *ctx);
void mcp_lines_free(struct mcp_lines *in);

/* One message. A request has an id (a string or an integer), a
 * notification none, a response no method. */
struct mcp_msg {
        yajl_val tree;
        yajl_val id;        /* NULL: a notification */
        const char *method; /* NULL: a response */
        yajl_val params;    /* NULL or an object */
};

/* Parses line: 0, or the code to answer with (MCP_PARSE_ERROR,
 * MCP_INVALID_REQUEST) and *err saying why; m->id is set when the line
 * had a usable one, even then. Free m with mcp_msg_free. */
int mcp_msg_parse(const char *line, struct mcp_msg *m, struct umw_error **err);
void mcp_msg_free(struct mcp_msg *m);

/* A params member's value at "_meta"."key", or NULL. */
yajl_val mcp_meta(yajl_val params, const char *key);

/* A response: begin writes {"jsonrpc":"2.0","id":ID,"result": and leaves
 * the generator where the result's value goes; end closes it and writes
 * the line. A NULL id is written as null. */
yajl_gen mcp_result_begin(yajl_val id);
int mcp_send(int fd, yajl_gen g);
/* An error response with code and message (and data's members when not
 * NULL: called inside the data object). */
typedef void (*mcp_data_fn)(yajl_gen g, void *ctx);
int mcp_send_error(int fd, yajl_val id, int code, const char *message, mcp_data_fn data, void *ctx);
/* A notification: begin writes {"jsonrpc":"2.0","method":M,"params": */
yajl_gen mcp_notify_begin(const char *method);

/* text (n bytes: a file's or a command's, any bytes) as a JSON string,
 * each byte that is not well-formed UTF-8 as U+FFFD. */
void mcp_gen_text(yajl_gen g, const char *text, size_t n);

#endif
