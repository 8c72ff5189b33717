#include "runtime/console.h"
#include "runtime/spec.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

Test(console, send_and_receive_fd)
{
        int sv[2], pipefd[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        cr_assert_eq(pipe2(pipefd, O_CLOEXEC), 0);
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(console_send_fd(sv[0], pipefd[1], &err), 0, "%s", err ? err->msg : "?");
        close(pipefd[1]);

        int got = -1;
        cr_assert_eq(console_recv_fd(sv[1], &got, &err), 0, "%s", err ? err->msg : "?");
        cr_assert_geq(got, 0);
        cr_expect_eq(fcntl(got, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC, "received fd not CLOEXEC");
        cr_assert_eq(write(got, "ping", 4), 4);
        close(got);
        char buf[8] = {0};
        cr_assert_eq(read(pipefd[0], buf, sizeof(buf)), 4);
        cr_expect_str_eq(buf, "ping");
        close(pipefd[0]);
        close(sv[0]);
        close(sv[1]);
}

Test(console, receive_without_fd_fails)
{
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        cr_assert_eq(write(sv[0], "x", 1), 1);
        int got = -1;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(console_recv_fd(sv[1], &got, &err), 0);
        cr_expect_eq(got, -1);

        /* and a closed peer is an error too, not a hang */
        umw_error_freep(&err);
        close(sv[0]);
        cr_assert_lt(console_recv_fd(sv[1], &got, &err), 0);
        close(sv[1]);
}

static int listen_at(const char *path)
{
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert_geq(fd, 0);
        /* bind through the directory fd, as a long path needs */
        char dirpath[PATH_MAX];
        snprintf(dirpath, sizeof(dirpath), "%s", path);
        char *slash = strrchr(dirpath, '/');
        *slash = '\0';
        int dfd = open(dirpath, O_PATH | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dfd, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd, slash + 1);
        cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "bind: %s", strerror(errno));
        close(dfd);
        cr_assert_eq(listen(fd, 1), 0);
        return fd;
}

static void connect_to(const char *path)
{
        int lfd = listen_at(path);
        int fd = -1;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(console_socket_connect(path, &fd, &err), 0, "%s", err ? err->msg : "?");
        cr_expect_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        int afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        cr_assert_geq(afd, 0);
        close(afd);
        close(fd);
        close(lfd);
        unlink(path);
}

Test(console, connect_short_and_long_paths)
{
        char dir[] = "/tmp/umw-test-console-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/sock", dir);
        connect_to(path);

        /* longer than sun_path */
        char deep[PATH_MAX];
        snprintf(deep, sizeof(deep), "%s/%0120d", dir, 0);
        cr_assert_eq(mkdir(deep, 0700), 0);
        snprintf(path, sizeof(path), "%s/sock", deep);
        cr_assert_gt(strlen(path), sizeof(((struct sockaddr_un *)0)->sun_path));
        connect_to(path);

        _cleanup_error_ struct umw_error *err = NULL;
        int fd = -1;
        cr_expect_lt(console_socket_connect(path, &fd, &err), 0, "connected to nothing");
        cr_expect(err && strstr(err->msg, path), "%s", err ? err->msg : "?");
        rmdir(deep);
        rmdir(dir);
}

/* In a child: the pty becomes stdin/out/err and the controlling terminal. */
static int pty_child(int sock)
{
        struct spec_process p = {.terminal = true, .console_width = 91, .console_height = 33};
        struct umw_error *err = NULL;
        if (console_setup_pty(sock, &p, &err) < 0)
                return 10;
        if (!isatty(0) || !isatty(1) || !isatty(2))
                return 11;
        if (tcgetpgrp(0) != getpgrp())
                return 12;
        if (write(1, "hello", 5) != 5)
                return 13;
        /* keep the slave open until the parent has read: it closes sock */
        char c;
        if (read(sock, &c, 1) < 0)
                return 14;
        return 0;
}

Test(console, setup_pty_sends_master)
{
        if (access("/dev/ptmx", R_OK | W_OK) < 0)
                cr_skip_test("no /dev/ptmx");
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                close(sv[0]);
                _exit(pty_child(sv[1]));
        }
        close(sv[1]);
        int master = -1;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(console_recv_fd(sv[0], &master, &err), 0, "%s", err ? err->msg : "?");

        char buf[16] = {0};
        size_t got = 0;
        while (got < 5) {
                ssize_t n = read(master, buf + got, sizeof(buf) - 1 - got);
                cr_assert_gt(n, 0, "read from the master: %s", strerror(errno));
                got += (size_t)n;
        }
        cr_expect_str_eq(buf, "hello");
        struct winsize ws;
        cr_assert_eq(ioctl(master, TIOCGWINSZ, &ws), 0);
        cr_expect_eq(ws.ws_col, 91);
        cr_expect_eq(ws.ws_row, 33);
        close(sv[0]);

        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
        close(master);
}
