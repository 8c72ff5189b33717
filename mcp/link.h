/* umwelt-mcp's link to its worker inside the project's sandbox: the
 * sandbox brought up when it is not (`umwelt-run sandbox up`, as a person
 * would), then the worker started in it by `umwelt-run sandbox exec` from
 * a sealed copy of umwelt-mcp (so /proc/PID/exe of the worker names a
 * file nobody can change), its stdin and stdout one socket to us. */
#ifndef UMW_MCP_LINK_H
#define UMW_MCP_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "mcp/frame.h"

struct umw_error;

/* What umwelt-run is asked for: the project and its sandbox's options. */
struct mcp_target {
        const char *project;   /* absolute */
        const char *preset;    /* --preset, or NULL */
        const char *workspace; /* --workspace review|direct, or NULL */
        const char *root;      /* umwelt-run --root, or NULL */
};

struct mcp_link {
        pid_t pid; /* umwelt-run sandbox exec, its command the worker; 0: none */
        int fd;    /* -1: not started */
        struct mcp_frames frames;
};

#define MCP_LINK_INIT                                                                              \
        {                                                                                          \
                .fd = -1                                                                           \
        }

int mcp_link_start(struct mcp_link *l, const struct mcp_target *t, struct umw_error **err);
/* Writes len bytes to the worker, reading its frames meanwhile (each side
 * may be writing a large message to the other). */
int mcp_link_send(struct mcp_link *l, const char *buf, size_t len, struct umw_error **err);
/* Reads what the worker sent into l->frames: 0, or an error once it ended. */
int mcp_link_read(struct mcp_link *l, struct umw_error **err);
/* Closes the worker's socket (it ends its commands and exits) and reaps
 * umwelt-run; *status its exit status (may be NULL). */
void mcp_link_stop(struct mcp_link *l, int *status);
/* `umwelt-run sandbox down` for the project (umwelt-mcp --on-exit down). */
int mcp_link_down(const struct mcp_target *t, struct umw_error **err);

#endif
