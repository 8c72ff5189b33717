/* A runtime process that enters a container is, until it execs the
 * workload, an image of umwelt-run, and /proc/PID/exe of it names the host's
 * binary: a container process allowed to ptrace it (CAP_SYS_PTRACE in the
 * host user namespace) could open that and overwrite the runtime
 * (CVE-2019-5736). Such processes first re-exec umwelt-run from a sealed
 * memfd copy, which nobody can write. */
#ifndef UMW_SELFEXE_H
#define UMW_SELFEXE_H

#include <stdbool.h>

struct umw_error;

/* True when this process already runs from a write-sealed copy. */
bool selfexe_is_sealed(void);
/* Re-execs the running binary from a sealed memfd copy with the same argv
 * and environment; returns 0 at once when already sealed, and only on
 * failure otherwise. */
int selfexe_reexec_sealed(char *const argv[], struct umw_error **err);

#endif
