/* The OCI lifecycle: create, start, run, kill, delete, state, list, ps. Each
 * verb of the runtime is one call here; src/ only parses arguments and
 * prints. */
#ifndef UMW_CONTAINER_H
#define UMW_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <yajl/yajl_tree.h>

#include "runtime/cgroup.h"

struct umw_error;

struct runtime_opts {
        char *const *argv; /* as umwelt-run was started: for the sealed re-exec */
        const char *root;  /* state root */
        enum cgroup_manager cgroup_manager;
        bool rootless;
};

struct create_opts {
        const char *id;
        const char *bundle;      /* absolute */
        const char *config_path; /* NULL: BUNDLE/config.json */
        /* How messages name the config; NULL: the path it is read from. For a
         * document that is no file of the user's (a memfd's /proc/self/fd/N). */
        const char *config_name;
        const char *pid_file;
        const char *console_socket;
        int preserve_fds;
        /* systemd socket activation: fds 3 .. 3+listen_fds-1 go to the
         * workload first (the preserved ones after them), with LISTEN_FDS
         * and LISTEN_PID=1 in its environment, as runc and crun do. */
        int listen_fds;
        bool no_pivot, no_new_keyring, no_subreaper;
        bool detach, keep; /* run only */
        /* run only: called once the init exists and its runtime-side walls
         * are up, before it starts, while it may still be building its
         * mounts (the sandbox face makes its egress door there); a failure
         * aborts. */
        int (*created)(pid_t init, void *data, struct umw_error **err);
        void *created_data;
};

int container_create(const struct runtime_opts *rt, const struct create_opts *o,
                     struct umw_error **err);
int container_start(const struct runtime_opts *rt, const char *id, struct umw_error **err);
/* create + start, then (unless detached) wait, forwarding signals, and
 * delete (unless keep). *exit_status: the container's (128+N for signal N). */
int container_run(const struct runtime_opts *rt, const struct create_opts *o, int *exit_status,
                  struct umw_error **err);
int container_kill(const struct runtime_opts *rt, const char *id, int sig, bool all,
                   struct umw_error **err);
int container_delete(const struct runtime_opts *rt, const char *id, bool force,
                     struct umw_error **err);
/* The OCI state document of one container (malloc'd). */
int container_state(const struct runtime_opts *rt, const char *id, char **json,
                    struct umw_error **err);
/* Every container's state as a JSON array (malloc'd), or the ids. */
int container_list(const struct runtime_opts *rt, bool pretty, char **json, struct umw_error **err);
/* Freezes or thaws every process of a running (paused) container. */
int container_pause(const struct runtime_opts *rt, const char *id, struct umw_error **err);
int container_resume(const struct runtime_opts *rt, const char *id, struct umw_error **err);
/* Changes a live container's limits: resources is a linux.resources object,
 * file names it in errors. */
int container_update(const struct runtime_opts *rt, const char *id, yajl_val resources,
                     const char *file, struct umw_error **err);
int container_pids(const struct runtime_opts *rt, const char *id, pid_t **pids, size_t *n,
                   struct umw_error **err);

#endif
