/* The gateway's monitor: the process umwelt-run started (and signals) stays
 * outside the walls and does two things only. It forwards SIGTERM and
 * SIGINT to the engine, the confined child that serves the sandbox, and on
 * SIGHUP it opens the policy files by name (the engine may not open any
 * file) and passes the open fds to the engine, which reads and parses them
 * (gateway_policy_load_fds()); it reads no byte from the engine. It exits
 * with the engine's status. */
#ifndef UMW_NETNS_GATEWAY_MONITOR_H
#define UMW_NETNS_GATEWAY_MONITOR_H

#include <stddef.h>
#include <sys/types.h>

struct umw_error;

#define GATEWAY_POLICY_MAX 16

/* Forks the engine. In the engine *pid is 0 and *ctl its end of the
 * control socket (PDEATHSIG: it dies with the monitor); in the monitor *pid
 * is the engine's and *ctl the other end. */
int gateway_monitor_fork(pid_t *pid, int *ctl, struct umw_error **err);

/* The monitor's loop, until the engine has ended: its exit status (128+N
 * when killed by signal N). ctl is closed. */
int gateway_monitor_run(pid_t engine, int ctl, const char *const *files, size_t n,
                        struct umw_error **err);

/* The engine's side: one reload message from ctl. *n the number of files,
 * fds[i] open or -1 with errs[i] set. Returns 1 with a message, 0 at the
 * monitor's end, -errno. */
int gateway_monitor_recv(int ctl, int fds[GATEWAY_POLICY_MAX], int errs[GATEWAY_POLICY_MAX],
                         size_t *n);

#endif
