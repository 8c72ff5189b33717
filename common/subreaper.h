/* A command run to its end by a process of its own, the supervisor: a
 * host action forked by the relay (DESIGN.md, "Host actions"), the MCP
 * server's bash tool inside a sandbox (umwelt-mcp(1)). The supervisor is
 * the child subreaper of everything the command starts, so a process that
 * daemonised itself (setsid, double fork) is still its child to kill: at
 * the timeout, when the command itself has exited, and when the caller
 * dies (PR_SET_PDEATHSIG) or sends it SIGTERM. The command gets argv
 * exactly, the environment given and nothing inherited, /dev/null for
 * stdin, its own session and process group, no fd of the caller's. Its
 * output is kept up to the limit and hashed whole; the result comes back
 * on a pipe, read by the caller's event loop. */
#ifndef UMW_SUBREAPER_H
#define UMW_SUBREAPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct umw_error;

struct subreaper_spec {
        const char *who; /* the program named in an exec failure's message */
        char *const *argv;
        const char *const *env;
        const char *cwd;
        unsigned timeout_ms;
        size_t output_limit; /* bytes kept of each stream */
};

/* What the supervisor writes on its pipe: this header, then out_kept
 * bytes of stdout and err_kept of stderr. A supervisor that was sent
 * SIGTERM writes nothing. */
struct subreaper_result {
        int32_t exited;    /* 1: status is the command's exit status; 0: its signal */
        int32_t status;    /* exit status, or the signal */
        int32_t timed_out; /* 1: killed at the timeout */
        uint64_t duration_ms;
        uint64_t out_total, err_total; /* bytes the command wrote */
        uint32_t out_kept, err_kept;
        char out_sha256[65], err_sha256[65]; /* of all it wrote */
};

/* Forks the supervisor, which runs spec and writes its result on *result
 * (the read end, non-blocking, close-on-exec) before it exits. */
int subreaper_run(const struct subreaper_spec *spec, int *result, pid_t *pid,
                  struct umw_error **err);

#endif
