/* umwelt-mcp's worker (DESIGN.md, "The MCP server"): the one process of
 * umwelt-mcp's that runs inside the sandbox, started by `sandbox exec`
 * from a sealed copy of umwelt-mcp, so every file it opens and every
 * command it starts has the sandbox's view and rights and nothing else:
 * a path the sandbox cannot reach is refused by the kernel, exactly as
 * for `bash` inside. It reads requests, a JSON line each, on stdin
 * ({"id":N,"tool":"read","arguments":{...}}, {"id":N,"cancel":M}) and
 * answers each with a frame (frame.h) on stdout. A command runs under a
 * supervisor of its own (common/subreaper.h); files are read and written
 * by the worker itself. */
#ifndef UMW_MCP_WORKER_H
#define UMW_MCP_WORKER_H

/* The bound on a request line: a write's content and its JSON. */
#define MCP_REQUEST_MAX ((8u << 20) + 65536)

/* Serves until stdin ends; returns the exit status. */
int mcp_worker_main(void);

#endif
