/* A runtime process that enters a container is, until it execs the
 * workload, an image of umwelt-run, and /proc/PID/exe of it names the host's
 * binary. The workload's own execve resolves "/proc/self/exe" (a script's
 * `#!/proc/self/exe`, or the command itself) against that image too, and so
 * becomes the host's umwelt-run running inside the container, dumpable, as
 * the container's user: a second process there opens /proc/PID/exe and
 * chmods, chowns, truncates or (once nothing runs it) rewrites the host's
 * binary (CVE-2019-5736). So a runtime that enters a container whose
 * processes could change that inode first re-execs itself from a read-only
 * detached bind mount of its binary (or, without CAP_SYS_ADMIN for that,
 * from a sealed memfd copy): /proc/PID/exe of every process it starts then
 * names a file nobody can change. Where nothing inside can reach the init
 * before its workload runs, create skips that re-exec and the init execs
 * the workload through a sealed trampoline instead (trampoline.h). */
#ifndef UMW_SELFEXE_H
#define UMW_SELFEXE_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct spec;
struct umw_error;

struct spec_idmap;

/* Whether a process in a container could change the binary this process
 * runs from, reached through /proc/PID/exe: own says the container has a
 * user namespace of its own, uids/n_uids its uid map in our ids (NULL when
 * unknown, as for one joined by path). False only when already protected,
 * or when that user namespace maps not the binary's owner and the binary
 * has no group or other write bit and no ACL (selfexe.c says why that is
 * enough). */
bool selfexe_exposed(bool own, const struct spec_idmap *uids, size_t n_uids);
/* selfexe_exposed for the container this spec makes. */
bool selfexe_needed(const struct spec *spec);
/* selfexe_exposed for a process joining pid's user namespace (exec). */
bool selfexe_pid_exposes(pid_t pid);
/* Whether the user namespace of pid lies strictly below ours (the one this
 * binary was exec'd in): then no process in it holds a capability in ours,
 * which ptracing an undumpable image of umwelt-run, or opening its
 * /proc/PID/exe, takes, and joining it needs no sealed copy (exec.c). False
 * when in doubt. */
bool selfexe_userns_below_ours(pid_t pid);
/* True when pid is an image of umwelt-run that runs from neither a sealed
 * copy nor a read-only detached mount. */
bool selfexe_pid_is_unsealed_runtime(pid_t pid);
/* True when a process in the pid namespace at path is one. */
bool selfexe_pidns_has_unsealed_runtime(const char *path);
/* True when this process already runs from a write-sealed copy or from a
 * read-only detached mount of its binary. */
bool selfexe_is_protected(void);
/* The seals that leave a memfd's contents as they are for good. */
#define SELFEXE_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)
/* An empty memfd (O_CLOEXEC) that may be sealed and exec'd, or -1. */
int selfexe_memfd(const char *name);
/* A memfd (O_CLOEXEC) holding a copy of the running binary, sealed against
 * any change: something to exec that nobody can have written. */
int selfexe_sealed_copy(int *fd, struct umw_error **err);
/* Re-execs the running binary with the same argv and environment from a
 * read-only, nosuid, nodev detached bind mount of it, or, where this process
 * may not clone a mount (no CAP_SYS_ADMIN over its mount namespace), from a
 * sealed memfd copy; returns 0 at once when already protected, and only on
 * failure otherwise. */
int selfexe_protect(char *const argv[], struct umw_error **err);

#endif
