/* exec: a new process in a running container's namespaces and cgroup, set up
 * like the init (capabilities, user, no_new_privs, seccomp) from a
 * process.json or from the container's own process with overrides. */
#ifndef UMW_EXEC_H
#define UMW_EXEC_H

#include <stdbool.h>
#include <stddef.h>

struct runtime_opts;
struct umw_error;

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
};

int container_exec(const struct runtime_opts *rt, const struct exec_opts *o, int *exit_status,
                   struct umw_error **err);

#endif
