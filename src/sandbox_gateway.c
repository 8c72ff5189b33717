/* A sandbox's egress gateway as a process: found next to umwelt-run or in
 * the install's bindir, started from the host's side against the sandbox
 * init's network namespace (umwelt-gateway(1)), recorded in the bundle by
 * pid and start time so that a later down, gc or reload signals that process
 * and never another that got its pid, and stopped. */
#include "sandbox_int.h"
#include "src/common/cleanup.h"
#include "src/common/error.h"
#include "src/common/fdio.h"
#include "src/common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define GATEWAY_BIN "umwelt-gateway"
/* How long the gateway has to make its listeners and say "ready". */
#define GATEWAY_READY_MS 10000
/* How long it has to close its connections on SIGTERM. */
#define GATEWAY_STOP_MS 2000

#ifndef UMW_BINDIR
#error "UMW_BINDIR must be defined (Makefile.am)"
#endif

static char *gateway_in(const char *dir)
{
        char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, GATEWAY_BIN) < 0)
                return NULL;
        if (access(path, X_OK) == 0)
                return path;
        free(path);
        return NULL;
}

/* Next to /proc/self/exe (a build directory, or the install), then bindir. */
static int gateway_find(char **out, struct umw_error **err)
{
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        char *slash = n > 0 ? memrchr(self, '/', (size_t)n) : NULL;
        if (slash && self[0] == '/') {
                *slash = '\0';
                if ((*out = gateway_in(self)))
                        return 0;
        } else {
                snprintf(self, sizeof(self), "%s", "(unknown)");
        }
        if ((*out = gateway_in(UMW_BINDIR)))
                return 0;
        return umw_fail(err, UMW_EXIT_FAILURE, ENOENT,
                        "egress: %s is not next to umwelt-run (%s) nor in %s: egress cannot be "
                        "enforced, so the sandbox does not start",
                        GATEWAY_BIN, self, UMW_BINDIR);
}

int sandbox_gateway_locate(struct sandbox *s, struct umw_error **err)
{
        return gateway_find(&s->gateway_bin, err);
}

/* Field 22 of /proc/PID/stat: when the process started, in clock ticks
 * since boot; 0 when it is gone or a zombie. */
static unsigned long long start_time(pid_t pid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : umw_read_all(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        char state = 0;
        unsigned long long t = 0;
        if (!p || sscanf(p + 1,
                         " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                         "%*s %*s %*s %llu",
                         &state, &t) != 2)
                return 0;
        return state == 'Z' || state == 'X' ? 0 : t;
}

static int record(const struct sandbox *s, pid_t pid, struct umw_error **err)
{
        char text[64];
        int n = snprintf(text, sizeof(text), "%d %llu\n", pid, start_time(pid));
        _cleanup_close_ int dirfd = open(s->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return umw_fail_errno(err, "open %s", s->bundle);
        return umw_write_file_atomic(dirfd, GATEWAY_PID_FILE, text, (size_t)n, 0600, err);
}

/* A pidfd for the gateway recorded in bundle, checked after it is open: a
 * pid that was reused since has another start time. */
static int gateway_pidfd(const char *bundle, pid_t *pid)
{
        char path[4096];
        _cleanup_free_ char *text = NULL;
        snprintf(path, sizeof(path), "%s/%s", bundle ? bundle : "", GATEWAY_PID_FILE);
        _cleanup_error_ struct umw_error *ignored = NULL;
        int p = 0;
        unsigned long long t = 0;
        if (!bundle || umw_read_file_at(AT_FDCWD, path, 64, &text, NULL, &ignored) < 0 ||
            sscanf(text, "%d %llu", &p, &t) != 2 || p <= 0 || t == 0)
                return -1;
        int fd = (int)syscall(SYS_pidfd_open, p, 0);
        if (fd >= 0 && start_time(p) != t) {
                close(fd);
                return -1;
        }
        *pid = p;
        return fd;
}

pid_t sandbox_gateway_pid(const char *bundle)
{
        pid_t pid = 0;
        _cleanup_close_ int fd = gateway_pidfd(bundle, &pid);
        return fd >= 0 ? pid : 0;
}

bool sandbox_gateway_signal(const char *bundle, int sig)
{
        pid_t pid;
        _cleanup_close_ int fd = gateway_pidfd(bundle, &pid);
        return fd >= 0 && syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) == 0;
}

/* Whether fd (a pidfd: the process ended) is readable within ms. */
static bool wait_readable(int fd, int ms)
{
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n;
        while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR)
                ;
        return n > 0;
}

void sandbox_gateway_stop(const char *bundle)
{
        pid_t pid;
        _cleanup_close_ int fd = gateway_pidfd(bundle, &pid);
        if (fd < 0)
                return;
        if (syscall(SYS_pidfd_send_signal, fd, SIGTERM, NULL, 0) == 0 &&
            !wait_readable(fd, GATEWAY_STOP_MS))
                syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
        wait_readable(fd, GATEWAY_STOP_MS);
        /* Ours when run started it; anyone else's child is not ours to reap. */
        while (waitpid(pid, NULL, WNOHANG) < 0 && errno == EINTR)
                ;
}

/* In the child: what the gateway gets is its argv, /dev/null for stdin,
 * the bundle's GATEWAY_ERR_FILE for stdout and stderr and the ready pipe;
 * its own session, default signals; with tied, SIGTERM when we die. */
static void __attribute__((noreturn))
exec_gateway(char *const argv[], int devnull, int out, int ready, bool tied, pid_t parent)
{
        sigset_t none;
        sigemptyset(&none);
        if ((tied && (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)) ||
            setsid() < 0 || dup2(devnull, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
            dup2(out, STDERR_FILENO) < 0 || umw_close_fds_from(3, &ready, 1) < 0 ||
            fcntl(ready, F_SETFD, 0) < 0)
                _exit(127);
        signal(SIGHUP, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execv(argv[0], argv);
        _exit(127);
}

/* The last line the gateway wrote to GATEWAY_ERR_FILE, for the message. */
static void last_words(int fd, char *buf, size_t len)
{
        buf[0] = '\0';
        char text[1024];
        ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
        if (n <= 0)
                return;
        text[n] = '\0';
        while (n > 0 && text[n - 1] == '\n')
                text[--n] = '\0';
        char *line = strrchr(text, '\n');
        snprintf(buf, len, ": %s", line ? line + 1 : text);
}

static int wait_ready(int ready, int out, pid_t pid, struct umw_error **err)
{
        char buf[8] = "";
        bool answered = wait_readable(ready, GATEWAY_READY_MS);
        ssize_t n = answered ? read(ready, buf, sizeof(buf) - 1) : 0;
        if (n >= 5 && strncmp(buf, "ready", 5) == 0)
                return 0;
        kill(pid, SIGKILL);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        char why[512];
        last_words(out, why, sizeof(why));
        /* A gateway that refused bad input (a CA it may not use, say) makes
         * it the sandbox's bad input too: the same exit code. */
        bool config = WIFEXITED(status) && WEXITSTATUS(status) == UMW_EXIT_CONFIG;
        return umw_fail(err, config ? UMW_EXIT_CONFIG : UMW_EXIT_FAILURE, ECONNREFUSED,
                        "egress: the gateway did not start%s%s: the sandbox does not start "
                        "without it",
                        why[0]     ? ""
                        : answered ? " (it exited)"
                                   : " in time",
                        why);
}

static int open_outputs(const struct sandbox *s, int *devnull, int *out, struct umw_error **err)
{
        _cleanup_close_ int dirfd = open(s->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return umw_fail_errno(err, "open %s", s->bundle);
        *out = openat(dirfd, GATEWAY_ERR_FILE,
                      O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (*out < 0)
                return umw_fail_errno(err, "%s/%s", s->bundle, GATEWAY_ERR_FILE);
        *devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        return *devnull < 0 ? umw_fail_errno(err, "open /dev/null") : 0;
}

int sandbox_gateway_start(const struct sandbox *s, pid_t init, bool tied, pid_t *pid,
                          struct umw_error **err)
{
        char ns_pid[24], ready_fd[16], policy[4096];
        _cleanup_free_ char *log = sandbox_egress_log(s);
        _cleanup_close_ int devnull = -1, out = -1, ready_r = -1, ready_w = -1;
        int pipefd[2];
        int r = log ? open_outputs(s, &devnull, &out, err) : umw_fail_sys(err, ENOMEM, "egress");
        if (r < 0)
                return r;
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return umw_fail_errno(err, "egress: gateway pipe");
        ready_r = pipefd[0];
        /* Above stdio, where the child's dup2s cannot land on it. */
        ready_w = fcntl(pipefd[1], F_DUPFD_CLOEXEC, 3);
        close(pipefd[1]);
        if (ready_w < 0)
                return umw_fail_errno(err, "egress: gateway pipe");
        snprintf(ns_pid, sizeof(ns_pid), "%d", init);
        snprintf(ready_fd, sizeof(ready_fd), "%d", ready_w);
        snprintf(policy, sizeof(policy), "%s/%s", s->bundle, EGRESS_POLICY_FILE);
        /* The trust files are the gateway's to write: it links OpenSSL. */
        char *const argv[] = {
            s->gateway_bin,  "--netns-pid", ns_pid,   "--policy",
            policy,          "--log",       log,      "--sandbox",
            s->container_id, "--ready-fd",  ready_fd, s->trust_dir ? "--trust-dir" : NULL,
            s->trust_dir,    NULL};
        pid_t parent = getpid();
        pid_t child = fork();
        if (child < 0)
                return umw_fail_errno(err, "egress: fork the gateway");
        if (child == 0)
                exec_gateway(argv, devnull, out, ready_w, tied, parent);
        umw_close_fdp(&ready_w);
        if ((r = wait_ready(ready_r, out, child, err)) < 0)
                return r;
        *pid = child;
        if ((r = record(s, child, err)) < 0) {
                kill(child, SIGKILL);
                while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        return r;
}
