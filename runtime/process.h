/* The process side of the container init: identity, limits and the exec. */
#ifndef UMW_PROCESS_H
#define UMW_PROCESS_H

#include <stddef.h>

struct spec_process;
struct umw_error;

/* setrlimit for each entry (raising a hard limit needs CAP_SYS_RESOURCE:
 * the error says so). */
int process_set_rlimits(const struct spec_process *p, struct umw_error **err);
/* /proc/self/oom_score_adj, when set. */
int process_set_oom_score_adj(const struct spec_process *p, struct umw_error **err);
/* setgroups (additionalGids; skipped when setgroups is denied in a user
 * namespace and none are asked for), fds 0-2 that are pipes or sockets
 * chowned to the process user, setresgid, setresuid, keeping
 * capabilities across the switch for caps_apply(); then the umask
 * (process.user.umask, default 0022). */
int process_set_user(const struct spec_process *p, struct umw_error **err);
/* Resolves args[0] against PATH from p->env (inside the container's root),
 * as execvp would; a missing or non-executable file is an error now rather
 * than at start. *out is malloc'd. */
int process_find_executable(const struct spec_process *p, char **out, struct umw_error **err);
/* In the container's root before it is made read-only: a p->cwd that does
 * not exist is made (mkdir -p, 0755), as crun and runc make it. */
int process_make_cwd(const struct spec_process *p, struct umw_error **err);
/* chdir to p->cwd, which must be a directory inside the root. */
int process_chdir(const struct spec_process *p, struct umw_error **err);
/* When p->env has no HOME: *out is p->env and HOME= the home of p->uid in
 * the container's /etc/passwd ("/" without one), to be called in the
 * container's root; the array and the new string are malloc'd (kept to the
 * execve). Otherwise *out is NULL: p->env as it is. */
/* env with each K=V of extra replacing the same K: a malloc'd vector of the
 * same strings, or NULL without memory. */
const char **process_env_merge(const char **env, const char **extra, size_t n_extra);
int process_env_with_home(const struct spec_process *p, const char ***out, struct umw_error **err);

#endif
