/* Placing a container in its cgroup (linux.cgroupsPath) in every mounted
 * hierarchy, finding its processes, and removing it. Limits are applied by
 * the resources code on top of this. The hierarchies are found in
 * /proc/self/mountinfo, never assumed. */
#ifndef UMW_CGROUP_H
#define UMW_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct umw_error;

enum cgroup_manager { CGROUP_MANAGER_CGROUPFS, CGROUP_MANAGER_SYSTEMD, CGROUP_MANAGER_DISABLED };

/* The relative cgroup path for a container: cgroupsPath as given (checked:
 * no "..", no empty components), its systemd "slice:prefix:name" form turned
 * into a cgroupfs path, or "umwelt-run/<id>" when absent. *out is malloc'd. */
int cgroup_path_resolve(const char *cgroups_path, const char *id, enum cgroup_manager manager,
                        char **out, struct umw_error **err);
/* Creates path in each hierarchy and moves pid into it. strict: any failure
 * is an error (root); otherwise (rootless, nothing delegated) a hierarchy we
 * may not write is skipped and *placed says whether any took the process. */
int cgroup_enter(const char *path, pid_t pid, bool strict, bool *placed, struct umw_error **err);
/* The pids in the container's cgroup (malloc'd array); none when no
 * hierarchy has it. */
int cgroup_pids(const char *path, pid_t **pids, size_t *n, struct umw_error **err);
/* Removes the container's cgroup from each hierarchy (empty by then). */
int cgroup_remove(const char *path, struct umw_error **err);

#endif
