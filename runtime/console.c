#include "runtime/console.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

/* sun_path holds 107 characters; a longer path is reached through its
 * directory's /proc/self/fd entry, which the short name stands in for. */
static int console_sockaddr(const char *path, struct sockaddr_un *sa, int *dirfd,
                            struct umw_error **err)
{
        *sa = (struct sockaddr_un){.sun_family = AF_UNIX};
        if (strlen(path) < sizeof(sa->sun_path)) {
                strcpy(sa->sun_path, path);
                return 0;
        }
        _cleanup_free_ char *dir_copy = strdup(path);
        _cleanup_free_ char *base_copy = strdup(path);
        if (!dir_copy || !base_copy)
                return umw_fail_sys(err, ENOMEM, "console socket %s", path);
        *dirfd = open(dirname(dir_copy), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (*dirfd < 0)
                return umw_fail_errno(err, "open the directory of console socket %s", path);
        int n = snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/%s", *dirfd,
                         basename(base_copy));
        if (n < 0 || (size_t)n >= sizeof(sa->sun_path))
                return umw_fail(err, UMW_EXIT_USAGE, ENAMETOOLONG,
                                "console socket %s: file name too long", path);
        return 0;
}

int console_socket_connect(const char *path, int *out, struct umw_error **err)
{
        struct sockaddr_un sa;
        _cleanup_close_ int dirfd = -1;
        int r = console_sockaddr(path, &sa, &dirfd, err);
        if (r < 0)
                return r;
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return umw_fail_errno(err, "console socket: socket");
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return umw_fail_errno(err, "connect to console socket %s", path);
        *out = TAKE_FD(fd);
        return 0;
}

static int console_set_size(int fd, const struct spec_process *p, struct umw_error **err)
{
        if (p->console_width == 0 && p->console_height == 0)
                return 0;
        struct winsize ws = {.ws_row = (unsigned short)p->console_height,
                             .ws_col = (unsigned short)p->console_width};
        if (ioctl(fd, TIOCSWINSZ, &ws) < 0)
                return umw_fail_errno(err, "set the terminal size");
        return 0;
}

/* The slave becomes the controlling terminal of a new session, and the
 * process's stdin, stdout and stderr. */
static int console_take_slave(int slave, struct umw_error **err)
{
        /* A session leader already (the init may have called setsid) keeps
         * its session; setsid() then fails with EPERM. */
        if (setsid() < 0 && !(errno == EPERM && getsid(0) == getpid()))
                return umw_fail_errno(err, "setsid");
        if (ioctl(slave, TIOCSCTTY, 0) < 0)
                return umw_fail_errno(err, "make the pty the controlling terminal");
        for (int target = 0; target <= 2; target++) {
                /* dup2 onto itself would keep O_CLOEXEC, and exec close it. */
                if (slave == target && fcntl(slave, F_SETFD, 0) < 0)
                        return umw_fail_errno(err, "clear FD_CLOEXEC on the pty");
                if (slave != target && dup2(slave, target) < 0)
                        return umw_fail_errno(err, "dup2 the pty to fd %d", target);
        }
        return 0;
}

int console_setup_pty(int sock, const struct spec_process *p, struct umw_error **err)
{
        _cleanup_close_ int master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0)
                return umw_fail_errno(err, "open /dev/ptmx");
        if (unlockpt(master) < 0)
                return umw_fail_errno(err, "unlockpt");
        /* TIOCGPTPEER opens the slave of this very master, with no path
         * lookup in /dev/pts for anyone to swap underneath. */
        _cleanup_close_ int slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (slave < 0)
                return umw_fail_errno(err, "open the pty slave");
        int r = console_set_size(slave, p, err);
        if (r < 0)
                return r;
        r = console_take_slave(slave, err);
        if (r < 0)
                return r;
        if (slave <= 2)
                TAKE_FD(slave);
        r = console_send_fd(sock, master, err);
        if (r < 0)
                return umw_error_prefix(err, "send the pty master to the console socket");
        return 0;
}

int console_send_fd(int sock, int fd, struct umw_error **err)
{
        /* conmon reads at least one byte before it looks for the fd. */
        char byte = '\0';
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } control = {0};
        struct msghdr msg = {
            .msg_iov = &iov,
            .msg_iovlen = 1,
            .msg_control = control.buf,
            .msg_controllen = sizeof(control.buf),
        };
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        ssize_t n;
        do
                n = sendmsg(sock, &msg, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return umw_fail_errno(err, "sendmsg");
        return 0;
}

int console_recv_fd(int sock, int *fd, struct umw_error **err)
{
        char byte;
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } control = {0};
        struct msghdr msg = {
            .msg_iov = &iov,
            .msg_iovlen = 1,
            .msg_control = control.buf,
            .msg_controllen = sizeof(control.buf),
        };
        ssize_t n;
        do
                n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return umw_fail_errno(err, "recvmsg");
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        if (n == 0 || !c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
            c->cmsg_len != CMSG_LEN(sizeof(int)))
                return umw_fail(err, UMW_EXIT_FAILURE, EBADMSG,
                                "console socket: expected a message carrying one fd");
        memcpy(fd, CMSG_DATA(c), sizeof(int));
        return 0;
}
