/* The gateway's listeners, made inside a sandbox's network namespace: by
 * umwelt-run before the sandbox starts (socket activation: the door exists
 * before the workload's first instruction, whether or not the gateway has
 * finished starting) or by umwelt-gateway --netns itself. */
#include "netns/gateway_listen.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the child reports: errnum 0 and the sockets as SCM_RIGHTS, or the
 * step that failed. */
struct listen_report {
        int errnum;
        unsigned n;
        char step[96];
};

static bool same_inode(int fd, const char *path)
{
        struct stat a, b;
        return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
               a.st_ino == b.st_ino;
}

/* The user namespace that owns netns_fd when it is not ours, else -1. */
static int foreign_owner(int netns_fd)
{
        int fd = ioctl(netns_fd, NS_GET_USERNS);
        if (fd < 0)
                return -1; /* EPERM: owned outside our reach; setns alone may still work */
        if (same_inode(fd, "/proc/self/ns/user")) {
                close(fd);
                return -1;
        }
        return fd;
}

static socklen_t loopback(int family, unsigned port, struct sockaddr_storage *ss)
{
        memset(ss, 0, sizeof(*ss));
        if (family == AF_INET) {
                struct sockaddr_in *s = (struct sockaddr_in *)ss;
                s->sin_family = AF_INET;
                s->sin_port = htons((uint16_t)port);
                s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                return sizeof(*s);
        }
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;
        s->sin6_family = AF_INET6;
        s->sin6_port = htons((uint16_t)port);
        s->sin6_addr = in6addr_loopback;
        return sizeof(*s);
}

static int listen_on(int family, unsigned port, int *out)
{
        struct sockaddr_storage ss;
        socklen_t len = loopback(family, port, &ss);
        int one = 1;
        int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            (family == AF_INET6 &&
             setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
            bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, SOMAXCONN) < 0) {
                int e = errno;
                close(fd);
                return -e;
        }
        *out = fd;
        return 0;
}

static void send_report(int sock, const struct listen_report *rep, const int *fds)
{
        struct iovec iov = {.iov_base = (void *)rep, .iov_len = sizeof(*rep)};
        union {
                char buf[CMSG_SPACE(sizeof(int) * GATEWAY_LISTEN_MAX)];
                struct cmsghdr align;
        } u;
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
        if (rep->n > 0) {
                msg.msg_control = u.buf;
                msg.msg_controllen = CMSG_SPACE(sizeof(int) * rep->n);
                struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * rep->n);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * rep->n);
        }
        if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0) {
                /* the parent sees a short read and reports it */
        }
}

static void fail_report(int sock, struct listen_report *rep, int errnum, const char *step)
{
        rep->errnum = errnum;
        rep->n = 0;
        snprintf(rep->step, sizeof(rep->step), "%s", step);
        send_report(sock, rep, NULL);
}

/* Both listeners in the namespace the calling thread is in; *step says
 * which failed. The IPv6 one is left out where there is no IPv6 loopback. */
static int make_listeners(unsigned port, int fds[GATEWAY_LISTEN_MAX], unsigned *n,
                          const char **step)
{
        *n = 0;
        int r = listen_on(AF_INET, port, &fds[0]);
        if (r < 0) {
                *step = "listen on 127.0.0.1";
                return r;
        }
        *n = 1;
        r = listen_on(AF_INET6, port, &fds[1]);
        if (r == 0)
                *n = 2;
        else if (r != -EADDRNOTAVAIL && r != -EAFNOSUPPORT) {
                close(fds[0]);
                *n = 0;
                *step = "listen on [::1]";
                return r;
        }
        return 0;
}

/* In the child: never returns. */
static void __attribute__((noreturn))
child_listen(int sock, int userns_fd, int netns_fd, unsigned port)
{
        struct listen_report rep = {0};
        int fds[GATEWAY_LISTEN_MAX];
        const char *step = NULL;
        if (userns_fd >= 0 && setns(userns_fd, CLONE_NEWUSER) < 0) {
                fail_report(sock, &rep, errno, "enter the user namespace that owns it");
                _exit(1);
        }
        if (setns(netns_fd, CLONE_NEWNET) < 0) {
                fail_report(sock, &rep, errno, "enter it");
                _exit(1);
        }
        int r = make_listeners(port, fds, &rep.n, &step);
        if (r < 0) {
                fail_report(sock, &rep, -r, step);
                _exit(1);
        }
        send_report(sock, &rep, fds);
        _exit(0);
}

static int receive_report(int sock, struct listen_report *rep, int fds[GATEWAY_LISTEN_MAX])
{
        struct iovec iov = {.iov_base = rep, .iov_len = sizeof(*rep)};
        union {
                char buf[CMSG_SPACE(sizeof(int) * GATEWAY_LISTEN_MAX)];
                struct cmsghdr align;
        } u;
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = u.buf,
                             .msg_controllen = sizeof(u.buf)};
        ssize_t n;
        do
                n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if ((size_t)n != sizeof(*rep))
                return -EPIPE;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        if (rep->errnum != 0 || rep->n == 0)
                return 0;
        if (rep->n > GATEWAY_LISTEN_MAX || !c || c->cmsg_type != SCM_RIGHTS ||
            c->cmsg_len != CMSG_LEN(sizeof(int) * rep->n))
                return -EPROTO;
        memcpy(fds, CMSG_DATA(c), sizeof(int) * rep->n);
        return 0;
}

static int reap(pid_t pid)
{
        int status;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

/* Through a forked child, which may join the user namespace that owns the
 * network namespace: joining a user namespace cannot be undone. */
static int listen_from_child(const char *netns_path, int netns_fd, unsigned port,
                             int fds[GATEWAY_LISTEN_MAX], size_t *n, struct umw_error **err)
{
        _cleanup_close_ int userns_fd = foreign_owner(netns_fd);
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return umw_fail_errno(err, "socketpair");
        _cleanup_close_ int parent_end = sv[0];
        _cleanup_close_ int child_end = sv[1];
        pid_t pid = fork();
        if (pid < 0)
                return umw_fail_errno(err, "fork");
        if (pid == 0)
                child_listen(child_end, userns_fd, netns_fd, port);
        umw_close_fdp(&child_end);

        struct listen_report rep = {0};
        int r = receive_report(parent_end, &rep, fds);
        int rr = reap(pid);
        if (r < 0)
                return umw_fail_sys(err, -r, "network namespace %s: no sockets from the child",
                                    netns_path);
        if (rep.errnum != 0) {
                rep.step[sizeof(rep.step) - 1] = '\0';
                return umw_fail_sys(err, rep.errnum, "network namespace %s: %s", netns_path,
                                    rep.step);
        }
        if (rr < 0)
                return umw_fail_sys(err, -rr, "waitpid");
        *n = rep.n;
        return 0;
}

/* In this thread, where it may enter the namespace itself (root, whose
 * capabilities reach every user namespace): no fork. 1 when it may not
 * (EPERM: a rootless caller), 0 done. The thread always comes back to its
 * own namespace; where it cannot, nothing that dials may run in it. */
static int listen_here(const char *netns_path, int netns_fd, unsigned port,
                       int fds[GATEWAY_LISTEN_MAX], size_t *n, struct umw_error **err)
{
        _cleanup_close_ int own = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        if (own < 0)
                return umw_fail_errno(err, "open /proc/thread-self/ns/net");
        if (setns(netns_fd, CLONE_NEWNET) < 0)
                return errno == EPERM ? 1 : umw_fail_errno(err, "enter %s", netns_path);
        unsigned got = 0;
        const char *step = NULL;
        int r = make_listeners(port, fds, &got, &step);
        if (setns(own, CLONE_NEWNET) < 0) {
                umw_fail_errno(err, "back from %s to our own network namespace", netns_path);
                umw_log_error(*err);
                abort();
        }
        if (r < 0)
                return umw_fail_sys(err, -r, "network namespace %s: %s", netns_path, step);
        *n = got;
        return 0;
}

int gateway_listen_in_netns(const char *netns_path, unsigned port, int fds[GATEWAY_LISTEN_MAX],
                            size_t *n, struct umw_error **err)
{
        _cleanup_close_ int netns_fd = open(netns_path, O_RDONLY | O_CLOEXEC);
        if (netns_fd < 0)
                return umw_fail_errno(err, "open network namespace %s", netns_path);
        int r = listen_here(netns_path, netns_fd, port, fds, n, err);
        return r == 1 ? listen_from_child(netns_path, netns_fd, port, fds, n, err) : r;
}
