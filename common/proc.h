/* What this process makes of itself, and what /proc says of another. */
#ifndef UMW_PROC_H
#define UMW_PROC_H

#include <stdbool.h>
#include <sys/types.h>

struct umw_error;

/* No core dump, no ptrace attach and no /proc/PID/mem or fd access by the
 * same uid: for every process that holds what the rest must not reach (a
 * runtime inside a container's namespaces, a key). */
int umw_make_undumpable(struct umw_error **err);

/* Field 22 of /proc/PID/stat, when pid started (clock ticks since boot):
 * with the pid, it names a process that a reused pid cannot impersonate.
 * 0 when pid is gone or unreadable; *zombie (may be NULL) is set when it
 * has exited but is not reaped yet. */
unsigned long long umw_proc_start_time(pid_t pid, bool *zombie);

#endif
