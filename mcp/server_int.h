/* The server's state, shared by its files, each using only those below
 * it: the loop (server.c), the methods (server_methods.c), the calls in
 * flight (server_calls.c), what is written (server_out.c). */
#ifndef UMW_MCP_SERVER_INT_H
#define UMW_MCP_SERVER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "mcp/ask.h"
#include "mcp/link.h"
#include "mcp/rpc.h"
#include "mcp/server.h"
#include "mcp/tools.h"

#define CALLS_MAX 64 /* tool calls in flight at once */

#define MCP_SERVER_NAME              "umwelt-mcp"
#define MCP_LEGACY                   "2025-11-25"
#define MCP_MODERN                   "2026-07-28"
#define MCP_META_VERSION             "io.modelcontextprotocol/protocolVersion"
#define MCP_META_SERVER              "io.modelcontextprotocol/serverInfo"
#define MCP_META_CLIENT_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"

/* A tool call in flight: in the worker (seq) or at the relay (ask). */
struct call {
        uint32_t seq;   /* 0: a free slot */
        yajl_val id;    /* the request's id, a tree of our own */
        yajl_val token; /* its progress token, or NULL */
        bool modern;    /* answered in the 2026-07-28 shape */
        const struct tool *tool;
        struct mcp_ask ask; /* ask.fd >= 0: at the relay */
        struct timespec start;
        long long progress; /* notifications sent */
        char *what;         /* its main argument, for the audit log */
};

struct server {
        const struct mcp_server_opts *o;
        char *relay_socket;
        int audit_fd; /* the project's audit log; -1 until the first call ends */
        struct mcp_link link;
        struct call calls[CALLS_MAX];
        uint32_t next_seq;
        struct mcp_lines in;
        bool stop;
        /* Egress was opened live: the worker's environment lacks the proxy
         * variables a `sandbox exec` now gets, so it is started anew once
         * no command of it runs. */
        bool worker_stale;
};

/* server_methods.c: one message from the harness. */
void server_message(struct server *S, char *line, size_t len);
void server_too_long(struct server *S);

/* server_out.c: a message written (the harness gone: the server stops);
 * a call's end: its result written (g: a result begun by
 * server_result_begin), its slot freed. */
yajl_gen server_result_begin(struct call *c);
void server_result_end(struct server *S, struct call *c, yajl_gen g, bool error);
/* A tool result of one text, isError as given, ending the call. */
void server_result_text(struct server *S, struct call *c, const char *text, size_t len, bool error);
void server_call_free(struct call *c);
void server_write(struct server *S, yajl_gen g);
/* The call's line in the project's audit log ("mcp-call": tool, what,
 * outcome, ms): ok, error or cancelled. */
void server_audit(struct server *S, const struct call *c, const char *outcome);
/* server_calls.c: frames from the worker, answered. */
void server_frames(struct server *S);
/* Every call in the worker ended with why (the worker is gone). */
void server_worker_gone(struct server *S, const char *why);
/* A tools/call started: in the worker or at the relay. */
void server_call_start(struct server *S, struct call *c, yajl_val args);
/* An answer from the relay for c. */
void server_ask_ready(struct server *S, struct call *c);
/* Progress for every call that asked for it. */
void server_tick(struct server *S);
/* notifications/cancelled for the request id. */
void server_cancel(struct server *S, yajl_val id);

#endif
