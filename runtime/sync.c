#include "runtime/sync.h"
#include "common/error.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

union fd_control {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * SYNC_MAX_FDS)];
};

static int check_packet(struct sync_packet *p, ssize_t n, enum sync_msg type, const char *what,
                        struct umw_error **err);

/* A send that failed: when the peer sent its error and exited before
 * reading ours (EPIPE with its packet still queued), its failure is the one
 * to report, with its exit class, not the broken pipe. */
static int send_failed(int fd, struct umw_error **err)
{
        int e = errno;
        struct sync_packet p;
        ssize_t n = -1;
        /* The peer is gone: a receive returns at once, its queued packet or
         * EOF. One that closed with our last message unread leaves
         * ECONNRESET pending, reported by the first receive. */
        for (int i = 0; i < 2 && n < 0 && (e == EPIPE || e == ECONNRESET); i++)
                n = recv(fd, &p, sizeof(p), 0);
        if (n >= (ssize_t)offsetof(struct sync_packet, msg) &&
            (p.type == SYNC_ERROR || p.type == SYNC_EXEC_ERROR))
                return check_packet(&p, n, SYNC_ERROR, "container init", err);
        return umw_fail_sys(err, e, "sync with container init");
}

int sync_send_fds(int fd, enum sync_msg type, const int *fds, size_t n, struct umw_error **err)
{
        struct sync_packet p = {.type = type};
        struct iovec iov = {.iov_base = &p, .iov_len = offsetof(struct sync_packet, msg)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        union fd_control control;
        if (n > SYNC_MAX_FDS)
                return umw_fail(err, UMW_EXIT_FAILURE, E2BIG, "sync: %zu fds to pass", n);
        if (n > 0) {
                memset(&control, 0, sizeof(control));
                mh.msg_control = control.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
        }
        if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
                return send_failed(fd, err);
        return 0;
}

int sync_send(int fd, enum sync_msg type, int value, struct umw_error **err)
{
        struct sync_packet p = {.type = type, .value = value};
        if (send(fd, &p, offsetof(struct sync_packet, msg), MSG_NOSIGNAL) < 0)
                return send_failed(fd, err);
        return 0;
}

void sync_send_error(int fd, const struct umw_error *failure)
{
        struct sync_packet p = {.type = SYNC_ERROR};
        if (failure) {
                p.value = failure->kind;
                p.errnum = failure->errnum;
                strncpy(p.msg, failure->msg, sizeof(p.msg) - 1);
        }
        size_t len = offsetof(struct sync_packet, msg) + strlen(p.msg) + 1;
        /* The peer may be gone already; nothing more can be said then. */
        (void)!send(fd, &p, len, MSG_NOSIGNAL);
}

/* The fds that came with a message, into fds[max]; any beyond are closed. */
static size_t take_fds(struct msghdr *mh, int *fds, size_t max)
{
        size_t n = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < k; i++) {
                        int got;
                        memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (n < max)
                                fds[n++] = got;
                        else
                                close(got);
                }
        }
        return n;
}

static void close_all(int *fds, size_t *n)
{
        for (size_t i = 0; i < *n; i++)
                close(fds[i]);
        *n = 0;
}

static int check_packet(struct sync_packet *p, ssize_t n, enum sync_msg type, const char *what,
                        struct umw_error **err)
{
        if (n < (ssize_t)offsetof(struct sync_packet, msg))
                return umw_fail(err, UMW_EXIT_FAILURE, EPIPE, "%s exited unexpectedly", what);
        int errnum = p->errnum > 0 ? p->errnum : EINVAL;
        p->msg[sizeof(p->msg) - 1] = '\0';
        if (p->type == SYNC_ERROR)
                return umw_fail(err, (enum umw_exit)p->value, errnum, "%s", p->msg);
        if (p->type == SYNC_EXEC_ERROR)
                return umw_fail_sys(err, errnum, "%s", p->msg);
        if (p->type != (int32_t)type)
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                "%s: unexpected message %d (wanted %d)", what, p->type, type);
        return 0;
}

/* check_packet, and the fds it came with all taken. */
static int check_fd_packet(struct sync_packet *p, ssize_t got, enum sync_msg type, const char *what,
                           int msg_flags, struct umw_error **err)
{
        int r = check_packet(p, got, type, what, err);
        if (r < 0)
                return r;
        if (msg_flags & MSG_CTRUNC)
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO, "%s: too many fds passed", what);
        return 0;
}

int sync_expect_fds(int fd, enum sync_msg type, const char *what, int *fds, size_t *n,
                    struct umw_error **err)
{
        struct sync_packet p;
        union fd_control control;
        struct iovec iov = {.iov_base = &p, .iov_len = sizeof(p)};
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = control.buf,
                            .msg_controllen = sizeof(control.buf)};
        ssize_t got;
        do
                got = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
        while (got < 0 && errno == EINTR);
        if (got < 0 && errno == ECONNRESET) /* reported before the packet queued */
                got = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (got < 0)
                return umw_fail_errno(err, "sync with %s", what);
        *n = take_fds(&mh, fds, SYNC_MAX_FDS);
        int r = check_fd_packet(&p, got, type, what, mh.msg_flags, err);
        if (r < 0)
                close_all(fds, n);
        return r;
}

int sync_expect(int fd, enum sync_msg type, const char *what, int *value, struct umw_error **err)
{
        struct sync_packet p;
        ssize_t n;
        do
                n = recv(fd, &p, sizeof(p), 0);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == ECONNRESET) /* reported before the packet queued */
                n = recv(fd, &p, sizeof(p), MSG_DONTWAIT);
        if (n < 0)
                return umw_fail_errno(err, "sync with %s", what);
        int r = check_packet(&p, n, type, what, err);
        if (r < 0)
                return r;
        if (value)
                *value = p.value;
        return 0;
}
