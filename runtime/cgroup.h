/* The container's cgroup: found in every mounted hierarchy (cgroup v1, v2, or
 * both on a hybrid host, read from /proc/self/mountinfo, never assumed),
 * created with its limits (linux.resources through cgroup_map) before its
 * first process enters, frozen and thawed, killed, and removed. */
#ifndef UMW_CGROUP_H
#define UMW_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <yajl/yajl_tree.h>

struct umw_error;
struct spec_device;

enum cgroup_manager { CGROUP_MANAGER_CGROUPFS, CGROUP_MANAGER_SYSTEMD, CGROUP_MANAGER_DISABLED };

/* The relative cgroup path for a container: cgroupsPath as given (checked:
 * no "..", no empty components), its systemd "slice:prefix:name" form turned
 * into a cgroupfs path, or "umwelt-run/<id>" when absent. *out is malloc'd.
 * A bad one is a UMW_EXIT_CONFIG error starting at its JSON path
 * (".linux.cgroupsPath: ..."): the caller prefixes the document's name. */
int cgroup_path_resolve(const char *cgroups_path, const char *id, enum cgroup_manager manager,
                        char **out, struct umw_error **err);

/* What a new container's cgroup needs. */
struct cgroup_request {
        const char *path;                  /* from cgroup_path_resolve */
        yajl_val resources;                /* linux.resources, may be NULL */
        const struct spec_device *devices; /* linux.devices: always allowed */
        size_t n_devices;
        const char *file; /* the config, named in errors */
        bool strict;      /* root: every hierarchy must take the container */
};

/* Every write a container's cgroup needs, worked out before anything exists:
 * a bad value, a controller this host lacks or has not delegated to us, or a
 * cgroup of that path that already holds processes is refused here. */
struct cgroup_plan;
int cgroup_plan_new(const struct cgroup_request *req, struct cgroup_plan **out,
                    struct umw_error **err);
void cgroup_plan_free(struct cgroup_plan *plan);
/* Creates the container's cgroup2 directory (pure v2, or the unified part
 * of a hybrid host) with its v2 limits before the init exists, so that
 * clone3 starts the init in it (CLONE_INTO_CGROUP) and no migration is
 * needed. *fd is a directory fd of it, or -1 when the host has no cgroup2
 * hierarchy or, without strict, it is not ours and carries no limit. */
int cgroup_plan_prepare_unified(const struct cgroup_plan *plan, int *fd, struct umw_error **err);
/* Creates the cgroup in each hierarchy and writes the limits and device
 * rules. pid is moved into the cgroup2 one unless in_unified (the init was
 * born there); the v1 ones the init joins itself: joins[CGROUP_MAX_JOINS]
 * receives a writable fd of each one's tasks file, *n_joins of them, for
 * cgroup_join_self. Without strict, a hierarchy we may not write and that
 * carries no limit is skipped. */
#define CGROUP_MAX_JOINS 32
int cgroup_plan_enter(const struct cgroup_plan *plan, pid_t pid, bool in_unified, int *joins,
                      size_t *n_joins, struct umw_error **err);
/* In the init: joins each cgroup by writing "0" (the calling thread) to its
 * tasks fd, then closes them all. Moving one's own thread takes no global
 * lock, where a pid written to a v1 cgroup.procs waits for an RCU grace
 * period (1 to 20 ms); the init has one thread, so the whole process moves.
 * The fds are opened by umwelt-run, whose credentials the kernel checks. */
int cgroup_join_self(int *joins, size_t *n, struct umw_error **err);
void cgroup_join_close(int *joins, size_t *n);

/* The existing cgroup at path opened for a new process to join itself
 * (exec), where we may: a writable fd of each v1 hierarchy's tasks file into
 * joins[CGROUP_MAX_JOINS] (*n_joins, for cgroup_join_self) and a directory
 * fd of the cgroup2 one for clone3's CLONE_INTO_CGROUP (*unified_fd, -1
 * without). Neither migration takes the global lock a pid written to
 * cgroup.procs waits on. All O_CLOEXEC. */
int cgroup_open_joins(const char *path, int *joins, size_t *n_joins, int *unified_fd,
                      struct umw_error **err);
/* Changes the limits of a live container's cgroup: resources is a
 * linux.resources object; file names it in errors. */
int cgroup_update(const char *path, yajl_val resources, const char *file, struct umw_error **err);
/* Freezes (v1 freezer and/or v2 cgroup.freeze) or thaws, waiting until the
 * kernel says every process is frozen. */
int cgroup_freeze(const char *path, bool frozen, struct umw_error **err);
bool cgroup_is_frozen(const char *path);
/* SIGKILL for every process at once through cgroup.kill (v2); *done false
 * when no hierarchy has it, and the caller signals each pid. */
int cgroup_kill(const char *path, bool *done, struct umw_error **err);
/* The pids in the container's cgroup (malloc'd array); none when no
 * hierarchy has it. */
int cgroup_pids(const char *path, pid_t **pids, size_t *n, struct umw_error **err);
/* Removes the container's cgroup from each hierarchy (empty by then). */
int cgroup_remove(const char *path, struct umw_error **err);

#endif
