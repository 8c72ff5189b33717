/* Staying with a container process until it ends: every signal umwelt-run
 * gets is passed on, a terminal is proxied, and the exit status comes back
 * the way a shell reports it (128+N for signal N). */
#ifndef UMW_SUPERVISE_H
#define UMW_SUPERVISE_H

#include <signal.h>
#include <sys/types.h>

struct umw_error;

/* Blocks every signal, so none is lost between start and supervise();
 * *old gets the previous mask for the children to restore. */
int supervise_block_signals(sigset_t *old, struct umw_error **err);
/* pid must be our child (or reparented to us as subreaper). master: a pty
 * master to proxy with our stdin/stdout, or -1. */
int supervise(pid_t pid, int master, int *exit_status, struct umw_error **err);

#endif
