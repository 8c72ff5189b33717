/* One host action run to its end by a process of its own, the
 * supervisor, forked by the relay (DESIGN.md, "Host actions"). It is the
 * child subreaper of everything the action starts, so a process that
 * daemonised itself (setsid, double fork) is still its child to kill: at
 * the timeout, when the action itself has exited, and when the relay dies
 * (PR_SET_PDEATHSIG). The action gets argv exactly, the environment given
 * and nothing inherited, /dev/null for stdin, its own session and process
 * group, no fd of the relay's. Its output is kept up to the limit and
 * hashed whole; the result comes back on a pipe, read by the relay's
 * event loop. */
#ifndef UMW_FACE_RELAY_SUPERVISE_H
#define UMW_FACE_RELAY_SUPERVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct umw_error;

struct relay_run_spec {
        char *const *argv;
        const char *const *env;
        const char *cwd;
        unsigned timeout_ms;
        size_t output_limit; /* bytes kept of each stream */
};

/* What the supervisor writes on its pipe: this header, then out_kept
 * bytes of stdout and err_kept of stderr. */
struct relay_run_result {
        int32_t exited;    /* 1: exit_status is the action's; 0: killed by signal */
        int32_t status;    /* exit status, or the signal */
        int32_t timed_out; /* 1: killed at the timeout */
        uint64_t duration_ms;
        uint64_t out_total, err_total; /* bytes the action wrote */
        uint32_t out_kept, err_kept;
        char out_sha256[65], err_sha256[65]; /* of all it wrote */
};

/* Forks the supervisor, which runs spec and writes its result on *result
 * (the read end, non-blocking, close-on-exec) before it exits. */
int relay_supervise(const struct relay_run_spec *spec, int *result, pid_t *pid,
                    struct umw_error **err);

#endif
