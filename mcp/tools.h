/* umwelt-mcp's tools (umwelt-mcp(1), "TOOLS"): the acting ones run by the
 * worker inside the sandbox, the asking ones sent to the relay through
 * the sandbox's door, exactly as `umwelt-run request` from inside. */
#ifndef UMW_MCP_TOOLS_H
#define UMW_MCP_TOOLS_H

#include <stdbool.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "face/relay_msg.h"

struct umw_error;

enum tool_side {
        TOOL_WORKER, /* acts inside the sandbox */
        TOOL_RELAY,  /* asks the relay */
};

struct tool_param {
        const char *name, *type, *description;
        bool required;
};

struct tool {
        const char *name, *title, *description;
        enum tool_side side;
        enum relay_kind kind; /* TOOL_RELAY */
        bool read_only, destructive;
        struct tool_param params[6];
};

const struct tool *mcp_tool(const char *name);
/* tools/list's result value: {"tools":[...]}, with the members a
 * 2026-07-28 result carries when modern. */
void mcp_tools_gen(yajl_gen g);

/* A relay tool's arguments as a request (checked as the relay checks). */
int mcp_tool_request(const struct tool *t, yajl_val args, struct relay_request *q,
                     struct umw_error **err);
/* The call's main argument, for the audit log (malloc'd, printable,
 * bounded; NULL when it has none): the command, path, pattern, rule,
 * action, port or note. */
char *mcp_tool_what(yajl_val args);
/* The `host` argument: absent or this machine; anything else is an error
 * naming what is missing. */
int mcp_tool_host(yajl_val args, struct umw_error **err);

#endif
