/* exec: a new process in a running container's namespaces and cgroup, set up
 * like the init (capabilities, user, no_new_privs, seccomp) from a
 * process.json or from the container's own process with overrides. */
#ifndef UMW_EXEC_H
#define UMW_EXEC_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/state.h"

struct runtime_opts;
struct umw_error;

/* Called once the container's state is read, with its status, before
 * anything else is done (and after a re-exec from a sealed copy, so once
 * per exec); a negative return ends the exec with that error. A container
 * that is not running or created is refused after it. */
typedef int (*exec_loaded_fn)(void *ctx, const struct container_state *st,
                              enum container_status status, struct umw_error **err);

struct exec_opts {
        const char *id;
        const char *process_path; /* --process FILE; else args */
        char **args;              /* NULL-terminated command */
        bool tty, tty_set, detach;
        const char *console_socket, *pid_file, *cwd;
        const char **env; /* -e K=V, n_env of them */
        size_t n_env;
        const char *user; /* "UID[:GID]" */
        const char **caps;
        size_t n_caps;
        bool no_new_privs;
        int preserve_fds;
        exec_loaded_fn loaded; /* or NULL */
        void *loaded_ctx;
};

int container_exec(const struct runtime_opts *rt, const struct exec_opts *o, int *exit_status,
                   struct umw_error **err);

#endif
