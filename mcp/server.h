/* umwelt-mcp's server (umwelt-mcp(1)): MCP over stdio, on the host as the
 * user the harness runs as, acting only through the project's sandbox.
 * One event loop: the harness's messages on stdin, the worker's frames,
 * the relay's answers, a tick for progress. Both protocol eras: the
 * 2025-11-25 revision (initialize) and the 2026-07-28 one (server/discover,
 * the version in each request's _meta). */
#ifndef UMW_MCP_SERVER_H
#define UMW_MCP_SERVER_H

#include <stdbool.h>

#include "mcp/link.h"

struct umw_error;

struct mcp_server_opts {
        struct mcp_target target;
        bool down_on_exit; /* --on-exit down */
};

/* Serves until stdin ends (or SIGTERM, SIGINT); returns the exit status. */
int mcp_serve(const struct mcp_server_opts *o, struct umw_error **err);

#endif
