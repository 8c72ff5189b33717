/* The methods umwelt-mcp answers, in both protocol eras (server_int.h). */
#include "mcp/server_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 2025-11-25's initialize: the versions we answer as asked. */
static const char *const legacy_versions[] = {MCP_LEGACY, "2025-06-18", "2025-03-26", "2024-11-05",
                                              NULL};

#define INSTRUCTIONS                                                                               \
        "These tools act only inside the project's umwelt sandbox: bash, read, write, edit, "      \
        "glob, grep and ls see the sandbox's files and run with its rights. What the sandbox "     \
        "does not allow, ask for: request_grant, request_egress, publish_port, host_action "       \
        "(a human decides on the host), or leave a note."

static void write_error(struct server *S, yajl_val id, int code, const char *msg)
{
        if (mcp_send_error(STDOUT_FILENO, id, code, msg, NULL, NULL) < 0)
                S->stop = true;
}

static void gen_server_info(yajl_gen g)
{
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "name", MCP_SERVER_NAME);
        umw_jgen_key_str(g, "title", "umwelt sandbox");
        umw_jgen_key_str(g, "version", PACKAGE_VERSION);
        yajl_gen_map_close(g);
}

static void gen_capabilities(yajl_gen g)
{
        umw_jgen_key(g, "capabilities");
        yajl_gen_map_open(g);
        umw_jgen_key(g, "tools");
        yajl_gen_map_open(g);
        umw_jgen_key_bool(g, "listChanged", false);
        yajl_gen_map_close(g);
        yajl_gen_map_close(g);
}

/* A modern result's tail: resultType, and who we are in _meta. */
static void gen_modern_tail(yajl_gen g)
{
        umw_jgen_key_str(g, "resultType", "complete");
        umw_jgen_key(g, "_meta");
        yajl_gen_map_open(g);
        umw_jgen_key(g, MCP_META_SERVER);
        gen_server_info(g);
        yajl_gen_map_close(g);
}

/* A cacheable modern result (discover, tools/list): the list is the same
 * for the server's life, but a client need not keep it. */
static void gen_cache_tail(yajl_gen g)
{
        umw_jgen_key_int(g, "ttlMs", 0);
        umw_jgen_key_str(g, "cacheScope", "private");
        gen_modern_tail(g);
}

static bool is_modern(yajl_val params)
{
        return mcp_meta(params, MCP_META_VERSION) != NULL;
}

/* ------------------------------------------------------------ methods */

static void initialize(struct server *S, const struct mcp_msg *m)
{
        const char *asked = umw_json_member_str(m->params, "protocolVersion", "");
        const char *version = MCP_LEGACY;
        for (size_t i = 0; legacy_versions[i]; i++)
                if (strcmp(asked, legacy_versions[i]) == 0)
                        version = legacy_versions[i];
        yajl_gen g = mcp_result_begin(m->id);
        if (!g)
                return;
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "protocolVersion", version);
        gen_capabilities(g);
        umw_jgen_key(g, "serverInfo");
        gen_server_info(g);
        umw_jgen_key_str(g, "instructions", INSTRUCTIONS);
        yajl_gen_map_close(g);
        server_write(S, g);
}

static void discover(struct server *S, const struct mcp_msg *m)
{
        yajl_gen g = mcp_result_begin(m->id);
        if (!g)
                return;
        yajl_gen_map_open(g);
        umw_jgen_key(g, "supportedVersions");
        yajl_gen_array_open(g);
        umw_jgen_str(g, MCP_MODERN);
        yajl_gen_array_close(g);
        gen_capabilities(g);
        umw_jgen_key_str(g, "instructions", INSTRUCTIONS);
        gen_cache_tail(g);
        yajl_gen_map_close(g);
        server_write(S, g);
}

static void empty_result(struct server *S, const struct mcp_msg *m)
{
        yajl_gen g = mcp_result_begin(m->id);
        if (!g)
                return;
        yajl_gen_map_open(g);
        if (is_modern(m->params))
                gen_modern_tail(g);
        yajl_gen_map_close(g);
        server_write(S, g);
}

static void tools_list(struct server *S, const struct mcp_msg *m)
{
        yajl_gen g = mcp_result_begin(m->id);
        if (!g)
                return;
        yajl_gen_map_open(g);
        mcp_tools_gen(g);
        if (is_modern(m->params))
                gen_cache_tail(g);
        yajl_gen_map_close(g);
        server_write(S, g);
}

static struct call *free_call(struct server *S)
{
        for (size_t i = 0; i < CALLS_MAX; i++)
                if (!S->calls[i].seq)
                        return &S->calls[i];
        return NULL;
}

/* The worker's id for a call: never 0 (a free slot, and the worker's
 * word on a line it could not read). */
static uint32_t next_seq(struct server *S)
{
        if (++S->next_seq == 0)
                S->next_seq = 1;
        return S->next_seq;
}

/* A copy of v that outlives the message. */
static yajl_val copy_value(yajl_val v)
{
        yajl_gen g = umw_jgen_new(false);
        yajl_val out = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        if (!g || !v)
                return g ? (yajl_gen_free(g), NULL) : NULL;
        umw_jgen_value(g, v);
        _cleanup_free_ char *text = umw_jgen_finish(g, NULL);
        if (text)
                umw_json_parse(text, "id", &out, &err);
        return out;
}

static void tools_call(struct server *S, const struct mcp_msg *m)
{
        const char *name = umw_json_member_str(m->params, "name", NULL);
        const struct tool *t = name ? mcp_tool(name) : NULL;
        yajl_val args = umw_json_member(m->params, "arguments");
        if (!t)
                return write_error(S, m->id, MCP_INVALID_PARAMS,
                                   name ? "params.name: no such tool (tools/list lists them)"
                                        : "params.name: expected a tool's name");
        if (args && !YAJL_IS_OBJECT(args))
                return write_error(S, m->id, MCP_INVALID_PARAMS,
                                   "params.arguments: expected an object");
        struct call *c = free_call(S);
        if (!c)
                return write_error(S, m->id, MCP_INTERNAL_ERROR, "too many tool calls at once");
        *c = (struct call){.seq = next_seq(S),
                           .id = copy_value(m->id),
                           .token = copy_value(mcp_meta(m->params, "progressToken")),
                           .modern = is_modern(m->params),
                           .tool = t,
                           .ask.fd = -1};
        clock_gettime(CLOCK_MONOTONIC, &c->start);
        c->what = mcp_tool_what(args);
        yajl_val empty = &(struct yajl_val_s){.type = yajl_t_object};
        server_call_start(S, c, args ? args : empty);
}

/* ------------------------------------------------------------ dispatch */

typedef void (*method_fn)(struct server *S, const struct mcp_msg *m);

static const struct {
        const char *name;
        method_fn fn;
} methods[] = {
    {"initialize", initialize}, {"server/discover", discover}, {"ping", empty_result},
    {"tools/list", tools_list}, {"tools/call", tools_call},
};

/* 2026-07-28: a request in another version is answered with the versions
 * we speak. */
static void data_versions(yajl_gen g, void *ctx)
{
        umw_jgen_key(g, "supported");
        yajl_gen_array_open(g);
        umw_jgen_str(g, MCP_MODERN);
        yajl_gen_array_close(g);
        umw_jgen_key(g, "requested");
        umw_jgen_value(g, ctx);
}

/* A modern request's envelope: its version ours, its capabilities
 * declared (2026-07-28 declares them in every request). */
static bool envelope_refused(struct server *S, const struct mcp_msg *m)
{
        yajl_val v = mcp_meta(m->params, MCP_META_VERSION);
        const char *version = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
        if (!v)
                return false;
        if (!version)
                write_error(S, m->id, MCP_INVALID_PARAMS,
                            "params._meta: " MCP_META_VERSION ": expected a string");
        else if (strcmp(version, MCP_MODERN) != 0) {
                char msg[128];
                snprintf(msg, sizeof(msg), "Unsupported protocol version: %.64s", version);
                if (mcp_send_error(STDOUT_FILENO, m->id, MCP_UNSUPPORTED_VERSION, msg,
                                   data_versions, v) < 0)
                        S->stop = true;
        } else if (!YAJL_IS_OBJECT(mcp_meta(m->params, MCP_META_CLIENT_CAPABILITIES)))
                write_error(S, m->id, MCP_INVALID_PARAMS,
                            "params._meta: " MCP_META_CLIENT_CAPABILITIES ": expected an object");
        else
                return false;
        return true;
}

static void notification(struct server *S, const struct mcp_msg *m)
{
        if (strcmp(m->method, "notifications/cancelled") == 0)
                server_cancel(S, umw_json_member(m->params, "requestId"));
        /* initialized, and any other: nothing to do. */
}

static void request(struct server *S, const struct mcp_msg *m)
{
        if (envelope_refused(S, m))
                return;
        for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
                if (strcmp(m->method, methods[i].name) == 0)
                        return methods[i].fn(S, m);
        write_error(S, m->id, MCP_METHOD_NOT_FOUND, "method not found");
}

void server_message(struct server *S, char *line, size_t len)
{
        (void)len;
        struct mcp_msg m;
        _cleanup_error_ struct umw_error *err = NULL;
        int code = mcp_msg_parse(line, &m, &err);
        if (code)
                write_error(S, m.id, code, err ? err->msg : "invalid message");
        else if (m.method && m.id)
                request(S, &m);
        else if (m.method)
                notification(S, &m);
        /* A response: we send no requests, so there is none to match. */
        mcp_msg_free(&m);
}

void server_too_long(struct server *S)
{
        char msg[96];
        snprintf(msg, sizeof(msg), "message: over %u bytes, refused unread", MCP_MESSAGE_MAX);
        write_error(S, NULL, MCP_INVALID_REQUEST, msg);
}
