#include "runtime/sync.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void seqpacket_pair(int sv[2])
{
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

/* A pipe whose read end is passed: what comes out of the received copy
 * proves it is the same file. */
Test(sync, fds_travel_with_the_message)
{
        int sv[2], p[2];
        seqpacket_pair(sv);
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        struct umw_error *err = NULL;
        cr_assert_eq(sync_send_fds(sv[0], SYNC_PLACED, &p[0], 1, &err), 0);
        int got[SYNC_MAX_FDS];
        size_t n = 99;
        cr_assert_eq(sync_expect_fds(sv[1], SYNC_PLACED, "peer", got, &n, &err), 0);
        cr_assert_eq(n, 1);
        cr_assert_neq(got[0], p[0]);
        cr_assert_eq(fcntl(got[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC, "received without O_CLOEXEC");
        cr_assert_eq(write(p[1], "x", 1), 1);
        char c = 0;
        cr_assert_eq(read(got[0], &c, 1), 1);
        cr_assert_eq(c, 'x');
        close(got[0]);
        close(p[0]);
        close(p[1]);
        close(sv[0]);
        close(sv[1]);
}

Test(sync, a_message_without_fds_gives_none)
{
        int sv[2];
        seqpacket_pair(sv);
        struct umw_error *err = NULL;
        cr_assert_eq(sync_send_fds(sv[0], SYNC_PLACED, NULL, 0, &err), 0);
        int got[SYNC_MAX_FDS];
        size_t n = 99;
        cr_assert_eq(sync_expect_fds(sv[1], SYNC_PLACED, "peer", got, &n, &err), 0);
        cr_assert_eq(n, 0);
        close(sv[0]);
        close(sv[1]);
}

Test(sync, the_wrong_message_leaves_no_fd_open)
{
        int sv[2], p[2];
        seqpacket_pair(sv);
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        struct umw_error *err = NULL;
        cr_assert_eq(sync_send_fds(sv[0], SYNC_GO, &p[0], 1, &err), 0);
        close(p[0]);
        int got[SYNC_MAX_FDS];
        size_t n = 99;
        cr_assert_lt(sync_expect_fds(sv[1], SYNC_PLACED, "peer", got, &n, &err), 0);
        cr_assert_eq(n, 0);
        cr_assert(err && strstr(err->msg, "unexpected message"), "error: %s", err ? err->msg : "");
        umw_error_freep(&err);
        /* The only read end left was the one received: closed, so a write
         * finds no reader. */
        signal(SIGPIPE, SIG_IGN);
        cr_assert_eq(write(p[1], "x", 1), -1);
        cr_assert_eq(errno, EPIPE);
        close(p[1]);
        close(sv[0]);
        close(sv[1]);
}

Test(sync, an_error_from_the_peer_becomes_the_error)
{
        int sv[2];
        seqpacket_pair(sv);
        struct umw_error *failure = NULL;
        umw_fail(&failure, UMW_EXIT_CONFIG, EINVAL, "config.json: .mounts[0]: bad");
        sync_send_error(sv[0], failure);
        umw_error_freep(&failure);
        struct umw_error *err = NULL;
        int got[SYNC_MAX_FDS];
        size_t n = 0;
        cr_assert_lt(sync_expect_fds(sv[1], SYNC_PLACED, "peer", got, &n, &err), 0);
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
        cr_assert_str_eq(err->msg, "config.json: .mounts[0]: bad");
        umw_error_freep(&err);
        close(sv[0]);
        close(sv[1]);
}

Test(sync, too_many_fds_are_refused)
{
        int sv[2];
        seqpacket_pair(sv);
        int fds[SYNC_MAX_FDS + 1];
        for (size_t i = 0; i < SYNC_MAX_FDS + 1; i++)
                fds[i] = sv[0];
        struct umw_error *err = NULL;
        cr_assert_lt(sync_send_fds(sv[0], SYNC_PLACED, fds, SYNC_MAX_FDS + 1, &err), 0);
        cr_assert_eq(err->errnum, E2BIG);
        umw_error_freep(&err);
        close(sv[0]);
        close(sv[1]);
}

Test(sync, a_closed_peer_is_named)
{
        int sv[2];
        seqpacket_pair(sv);
        close(sv[0]);
        struct umw_error *err = NULL;
        int got[SYNC_MAX_FDS];
        size_t n = 0;
        cr_assert_lt(sync_expect_fds(sv[1], SYNC_PLACED, "umwelt-run", got, &n, &err), 0);
        cr_assert_str_eq(err->msg, "umwelt-run exited unexpectedly");
        umw_error_freep(&err);
        close(sv[1]);
}
