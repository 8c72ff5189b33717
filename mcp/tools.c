/* The tools' table, schemas and the asking tools' requests (tools.h). */
#include "mcp/tools.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"

#include "common/utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOST_PARAM                                                                                 \
        "the machine to act on: absent, \"local\" or this machine's name (remote hosts are not "   \
        "built yet)"

static const struct tool tools[] = {
    {"bash",
     "Run a command in the sandbox",
     "Runs a command line with /bin/sh -c inside the project's sandbox (its view of the "
     "system, its workspace, no network unless the project allows it) and returns its exit "
     "status, stdout and stderr. Each stream is kept up to 64 KiB; the cut is said. The "
     "command and everything it started are killed at the timeout, when it exits, and when "
     "the call is cancelled.",
     TOOL_WORKER,
     0,
     false,
     true,
     {{"command", "string", "the command line, for /bin/sh -c", true},
      {"cwd", "string", "the directory to run in (default: the workspace)", false},
      {"timeout", "integer", "seconds before it is killed (default 120, at most 3600)", false}}},
    {"read",
     "Read a file in the sandbox",
     "Reads a text file as the sandbox sees it. offset (the first line, from 1) and limit "
     "(lines) select part of it; at most 4 MiB is answered.",
     TOOL_WORKER,
     0,
     true,
     false,
     {{"path", "string", "the file; relative to the workspace", true},
      {"offset", "integer", "the first line to read, from 1", false},
      {"limit", "integer", "how many lines to read", false}}},
    {"write",
     "Write a file in the sandbox",
     "Writes content to a file in the sandbox (created, or truncated first), making the "
     "directories above it. What the sandbox may not write is refused.",
     TOOL_WORKER,
     0,
     false,
     true,
     {{"path", "string", "the file; relative to the workspace", true},
      {"content", "string", "the whole new content", true}}},
    {"edit",
     "Edit a file in the sandbox",
     "Replaces old_string by new_string in a file in the sandbox: an exact match, refused "
     "when it is not found, or found more than once without replace_all.",
     TOOL_WORKER,
     0,
     false,
     true,
     {{"path", "string", "the file; relative to the workspace", true},
      {"old_string", "string", "the text to replace, exactly as it is in the file", true},
      {"new_string", "string", "the text to put in its place", true},
      {"replace_all", "boolean", "replace every occurrence (default false)", false}}},
    {"glob",
     "Find files in the sandbox",
     "Lists the paths under path (default: the workspace) that match a glob pattern; ** "
     "spans directories (\"**/*.c\"). .git is not searched; links are not followed.",
     TOOL_WORKER,
     0,
     true,
     false,
     {{"pattern", "string", "the glob, matched against paths relative to path", true},
      {"path", "string", "the directory to search (default: the workspace)", false}}},
    {"grep",
     "Search file contents in the sandbox",
     "Lists the lines (FILE:LINE:TEXT) that match a POSIX extended regular expression in "
     "the files under path (or in path, a file); glob filters the files by name. Binary "
     "files and .git are skipped.",
     TOOL_WORKER,
     0,
     true,
     false,
     {{"pattern", "string", "a POSIX extended regular expression", true},
      {"path", "string", "a directory or a file (default: the workspace)", false},
      {"glob", "string", "only files whose name (or path, with a /) matches", false},
      {"ignore_case", "boolean", "match without regard to case", false}}},
    {"ls",
     "List a directory in the sandbox",
     "Lists a directory as the sandbox sees it, a name a line (/ after a directory, @ "
     "after a link).",
     TOOL_WORKER,
     0,
     true,
     false,
     {{"path", "string", "the directory (default: the workspace)", false}}},
    {"request_grant",
     "Ask for a path",
     "Asks the human, through umwelt's relay, for a host path to appear in the sandbox at "
     "the same place, read-only (ro) or writable (rw). Waits until they decide.",
     TOOL_RELAY,
     RELAY_GRANT,
     false,
     false,
     {{"path", "string", "the absolute host path", true},
      {"mode", "string", "ro or rw (default ro)", false},
      {"why", "string", "why the work needs it, for the human", true}}},
    {"host_action",
     "Ask to run a host action",
     "Asks the human to run a named action from the host's table (host_actions lists them) "
     "with the given parameters; returns its output and exit status.",
     TOOL_RELAY,
     RELAY_ACTION,
     false,
     true,
     {{"name", "string", "the action's name", true},
      {"params", "object", "the action's parameters, NAME: VALUE", false},
      {"why", "string", "why the work needs it, for the human", true}}},
    {"host_actions",
     "List host actions",
     "Lists the host actions this project may ask for, their parameters and values.",
     TOOL_RELAY,
     RELAY_ACTIONS,
     true,
     false,
     {{0}}},
    {"request_egress",
     "Ask for a network destination",
     "Asks the human to open an egress rule (host[:port][/path-glob]) through the project's "
     "gateway, live.",
     TOOL_RELAY,
     RELAY_EGRESS,
     false,
     false,
     {{"rule", "string", "host[:port][/path-glob]", true},
      {"why", "string", "why the work needs it, for the human", true}}},
    {"publish_port",
     "Ask to publish a port",
     "Asks the human to publish a port the sandbox listens on at the host's loopback.",
     TOOL_RELAY,
     RELAY_INGRESS,
     false,
     false,
     {{"port", "integer", "the port, 1 to 65535", true},
      {"why", "string", "why, for the human", true}}},
    {"note",
     "Leave a note",
     "Leaves a note for the human in the relay's log, without asking anything.",
     TOOL_RELAY,
     RELAY_NOTE,
     false,
     false,
     {{"text", "string", "the note", true}}},
    {"status",
     "What the sandbox was given",
     "Lists what the relay gave this sandbox live: grants, egress rules, ports.",
     TOOL_RELAY,
     RELAY_STATUS,
     true,
     false,
     {{0}}},
};

const struct tool *mcp_tool(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
                if (strcmp(tools[i].name, name) == 0)
                        return &tools[i];
        return NULL;
}

/* ------------------------------------------------------------ tools/list */

static void gen_param(yajl_gen g, const char *name, const char *type, const char *description)
{
        umw_jgen_key(g, name);
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "type", type);
        umw_jgen_key_str(g, "description", description);
        yajl_gen_map_close(g);
}

static void gen_schema(yajl_gen g, const struct tool *t)
{
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "type", "object");
        umw_jgen_key(g, "properties");
        yajl_gen_map_open(g);
        for (const struct tool_param *p = t->params; p->name; p++)
                gen_param(g, p->name, p->type, p->description);
        gen_param(g, "host", "string", HOST_PARAM);
        yajl_gen_map_close(g);
        umw_jgen_key(g, "required");
        yajl_gen_array_open(g);
        for (const struct tool_param *p = t->params; p->name; p++)
                if (p->required)
                        umw_jgen_str(g, p->name);
        yajl_gen_array_close(g);
        umw_jgen_key_bool(g, "additionalProperties", false);
        yajl_gen_map_close(g);
}

static void gen_tool(yajl_gen g, const struct tool *t)
{
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "name", t->name);
        umw_jgen_key_str(g, "title", t->title);
        umw_jgen_key_str(g, "description", t->description);
        umw_jgen_key(g, "inputSchema");
        gen_schema(g, t);
        umw_jgen_key(g, "annotations");
        yajl_gen_map_open(g);
        umw_jgen_key_bool(g, "readOnlyHint", t->read_only);
        umw_jgen_key_bool(g, "destructiveHint", t->destructive);
        umw_jgen_key_bool(g, "openWorldHint", t->side == TOOL_RELAY);
        yajl_gen_map_close(g);
        yajl_gen_map_close(g);
}

void mcp_tools_gen(yajl_gen g)
{
        umw_jgen_key(g, "tools");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
                gen_tool(g, &tools[i]);
        yajl_gen_array_close(g);
}

/* ------------------------------------------------------------ arguments */

/* What of an argument the audit log keeps. */
#define WHAT_MAX 1024

char *mcp_tool_what(yajl_val args)
{
        static const char *const keys[] = {"command", "path", "pattern", "rule",
                                           "name",    "port", "text"};
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                yajl_val v = umw_json_member(args, keys[i]);
                char port[16];
                const char *text = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
                if (YAJL_IS_INTEGER(v)) {
                        snprintf(port, sizeof(port), "%lld", (long long)YAJL_GET_INTEGER(v));
                        text = port;
                }
                if (text) {
                        size_t n = strlen(text);
                        return umw_printable_dup(text, n < WHAT_MAX ? n : WHAT_MAX);
                }
        }
        return NULL;
}

int mcp_tool_host(yajl_val args, struct umw_error **err)
{
        const char *host = umw_json_member_str(args, "host", NULL);
        char self[256] = "";
        if (umw_json_member(args, "host") && !host)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "arguments: .host: expected a string");
        gethostname(self, sizeof(self) - 1);
        if (!host || !*host || strcmp(host, "local") == 0 || strcmp(host, "localhost") == 0 ||
            strcmp(host, self) == 0)
                return 0;
        return umw_fail(err, UMW_EXIT_CONFIG, ENOSYS,
                        "host %s: umwelt-mcp acts on this machine only; a remote host needs "
                        "umwelt's relay over ssh on it, which is not built yet",
                        host);
}

static int copy_arg(yajl_val args, const char *key, bool required, char *out, size_t size,
                    struct umw_error **err)
{
        yajl_val v = umw_json_member(args, key);
        if (!v && !required)
                return 0;
        if (!YAJL_IS_STRING(v))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "arguments: .%s: expected a string%s",
                                key, v ? "" : " (it is required)");
        const char *text = YAJL_GET_STRING(v);
        if (!text || strlen(text) >= size)
                return umw_fail(err, UMW_EXIT_CONFIG, E2BIG,
                                "arguments: .%s: expected at most %zu bytes", key, size - 1);
        snprintf(out, size, "%s", text);
        return 0;
}

static int action_params(yajl_val args, struct relay_request *q, struct umw_error **err)
{
        yajl_val params = umw_json_member(args, "params");
        if (!params)
                return 0;
        if (!YAJL_IS_OBJECT(params) || params->u.object.len > (size_t)RELAY_PARAMS_MAX)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "arguments: .params: expected an object of at most %d strings",
                                RELAY_PARAMS_MAX);
        for (size_t i = 0; i < params->u.object.len; i++) {
                struct relay_param *p = &q->params[q->n_params++];
                const char *name = params->u.object.keys[i];
                if (strlen(name) > RELAY_PARAM_NAME_MAX)
                        return umw_fail(err, UMW_EXIT_CONFIG, E2BIG,
                                        "arguments: .params: a name over %d bytes",
                                        RELAY_PARAM_NAME_MAX);
                snprintf(p->name, sizeof(p->name), "%s", name);
                int r = copy_arg(params, name, true, p->value, sizeof(p->value), err);
                if (r < 0)
                        return umw_error_prefix(err, "params");
        }
        return 0;
}

static int port_arg(yajl_val args, struct relay_request *q, struct umw_error **err)
{
        yajl_val v = umw_json_member(args, "port");
        if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 1 || YAJL_GET_INTEGER(v) > 65535)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "arguments: .port: expected an integer from 1 to 65535");
        q->port = (uint32_t)YAJL_GET_INTEGER(v);
        return 0;
}

static int grant_args(yajl_val args, struct relay_request *q, struct umw_error **err)
{
        char mode[8] = "ro";
        int r = copy_arg(args, "path", true, q->path, sizeof(q->path), err);
        if (r >= 0)
                r = copy_arg(args, "mode", false, mode, sizeof(mode), err);
        if (r >= 0 && strcmp(mode, "ro") != 0 && strcmp(mode, "rw") != 0)
                r = umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "arguments: .mode: expected ro or rw");
        q->rw = strcmp(mode, "rw") == 0;
        return r;
}

int mcp_tool_request(const struct tool *t, yajl_val args, struct relay_request *q,
                     struct umw_error **err)
{
        *q = (struct relay_request){.kind = t->kind};
        int r = 0;
        switch (t->kind) {
        case RELAY_GRANT:
                r = grant_args(args, q, err);
                break;
        case RELAY_ACTION:
                if ((r = copy_arg(args, "name", true, q->action, sizeof(q->action), err)) >= 0)
                        r = action_params(args, q, err);
                break;
        case RELAY_EGRESS:
                r = copy_arg(args, "rule", true, q->rule, sizeof(q->rule), err);
                break;
        case RELAY_INGRESS:
                r = port_arg(args, q, err);
                break;
        case RELAY_NOTE:
                r = copy_arg(args, "text", true, q->text, sizeof(q->text), err);
                break;
        default:
                break;
        }
        bool asks = t->kind != RELAY_NOTE && t->kind != RELAY_STATUS && t->kind != RELAY_ACTIONS;
        if (r >= 0 && asks)
                r = copy_arg(args, "why", true, q->why, sizeof(q->why), err);
        return r < 0 ? r : relay_request_check(q, err);
}
