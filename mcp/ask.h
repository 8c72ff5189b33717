/* An asking tool's request to the relay (umwelt-relay(1)), sent on the
 * sandbox's own door socket from the host: the relay takes it as it
 * takes `umwelt-run request` from inside, which sandbox it came from
 * being which socket. The answers are read by the server's event loop: a
 * pending one becomes progress, the final one the tool's result. */
#ifndef UMW_MCP_ASK_H
#define UMW_MCP_ASK_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_gen.h>

#include "face/relay_msg.h"

struct umw_error;

struct mcp_ask {
        int fd;
        enum relay_kind kind;
        char *buf; /* answer lines, up to RELAY_ANSWER_MAX */
        size_t have;
        char pending_id[RELAY_ID_MAX + 1]; /* set once the relay asks a human */
};

/* Connects to socket and sends q. */
int mcp_ask_start(const char *socket, const struct relay_request *q, struct mcp_ask *a,
                  struct umw_error **err);
/* Reads what the relay sent: 1 with *final (the final answer's line, in
 * a's buffer) once it came, 0 until then, or an error (the relay ended
 * the request, or sent what is not an answer). */
int mcp_ask_read(struct mcp_ask *a, const char **final, struct umw_error **err);
/* The tool result's members for the final answer line: content and
 * isError, which is returned. */
bool mcp_ask_result(yajl_gen g, enum relay_kind kind, const char *line);
void mcp_ask_close(struct mcp_ask *a);

#endif
