/* The conversation between umwelt-run and the container init it cloned, over
 * a SOCK_SEQPACKET pair: each step waits for the other side, and a failure in
 * the init travels back as an error message rather than a bare exit code. */
#ifndef UMW_SYNC_H
#define UMW_SYNC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct umw_error;

enum sync_msg {
        SYNC_GO = 1, /* parent -> init: ids mapped (first), hooks run (later) */
        SYNC_PLACED, /* parent -> init: its cgroup is ready (the v1 tasks files come along) */
        SYNC_HOOKS,  /* init -> parent: run prestart and createRuntime hooks now */
        SYNC_READY,  /* init -> parent: created, waiting for start */
        SYNC_PID,    /* child -> parent: the pid of the process that will exec */
        SYNC_ERROR,  /* either way: the step failed; the message says why */
        SYNC_TREES,  /* parent -> init, right after GO: the mount trees it made, in mount order */
        /* exec trampoline -> start: the workload's execve failed with errnum;
         * msg names what was exec'd, the receiver adds strerror (the
         * trampoline has no libc to word it). */
        SYNC_EXEC_ERROR,
};

/* One message. The exec trampoline (runtime/exec_trampoline.c) writes it
 * too, without libc, so it lives here rather than in sync.c. */
struct sync_packet {
        int32_t type;
        int32_t value; /* a pid, or the error's class */
        int32_t errnum;
        char msg[2048];
};

int sync_send(int fd, enum sync_msg type, int value, struct umw_error **err);
/* A message that carries fds (SCM_RIGHTS): at most SYNC_MAX_FDS. */
#define SYNC_MAX_FDS 32
int sync_send_fds(int fd, enum sync_msg type, const int *fds, size_t n, struct umw_error **err);
/* Sends *failure itself, so the other side can report it as its own. */
void sync_send_error(int fd, const struct umw_error *failure);
/* Waits for a message of type; an SYNC_ERROR received becomes *err, and a
 * closed socket means the peer died: "what" names it in the message. */
int sync_expect(int fd, enum sync_msg type, const char *what, int *value, struct umw_error **err);
/* sync_expect for a message from sync_send_fds: its fds (O_CLOEXEC) land in
 * fds[SYNC_MAX_FDS], *n of them; on failure none are left open. */
int sync_expect_fds(int fd, enum sync_msg type, const char *what, int *fds, size_t *n,
                    struct umw_error **err);

#endif
