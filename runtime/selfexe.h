/* A runtime process that enters a container is, until it execs the
 * workload, an image of umwelt-run, and /proc/PID/exe of it names the host's
 * binary: a container process allowed to ptrace it (CAP_SYS_PTRACE in the
 * host user namespace) could open that and overwrite the runtime
 * (CVE-2019-5736). Such processes first re-exec umwelt-run from a sealed
 * memfd copy, which nobody can write. */
#ifndef UMW_SELFEXE_H
#define UMW_SELFEXE_H

#include <stdbool.h>
#include <sys/types.h>

struct spec;
struct umw_error;

/* Whether processes of a container with this spec may hold CAP_SYS_PTRACE
 * over the host's user namespace while the init is still the runtime: no
 * user namespace of its own, and CAP_SYS_PTRACE in the bounding set or a pid
 * namespace shared with others. Such a create runs sealed. */
bool selfexe_needed(const struct spec *spec);
/* Whether the user namespace of pid lies strictly below ours (the one this
 * binary was exec'd in): then no process in it holds a capability in ours,
 * which ptracing an undumpable image of umwelt-run, or opening its
 * /proc/PID/exe, takes, and joining it needs no sealed copy (exec.c). False
 * when in doubt. */
bool selfexe_userns_below_ours(pid_t pid);
/* True when pid is an image of umwelt-run that is not a sealed copy. */
bool selfexe_pid_is_unsealed_runtime(pid_t pid);
/* True when a process in the pid namespace at path is one. */
bool selfexe_pidns_has_unsealed_runtime(const char *path);
/* True when this process already runs from a write-sealed copy. */
bool selfexe_is_sealed(void);
/* A memfd (O_CLOEXEC) holding a copy of the running binary, sealed against
 * any change: something to exec that nobody can have written. */
int selfexe_sealed_copy(int *fd, struct umw_error **err);
/* Re-execs the running binary from a sealed memfd copy with the same argv
 * and environment; returns 0 at once when already sealed, and only on
 * failure otherwise. */
int selfexe_reexec_sealed(char *const argv[], struct umw_error **err);

#endif
