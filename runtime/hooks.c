#include "runtime/hooks.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"
#include "common/signals.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The state JSON on its way into the hook's stdin. The write end is
 * non-blocking so that a hook which never reads cannot stall the runtime
 * past its timeout. */
struct feeder {
        int fd;
        const char *buf;
        size_t left;
};

static void feeder_close(struct feeder *f)
{
        if (f->fd >= 0)
                close(f->fd);
        f->fd = -1;
}

/* Writes what the pipe takes now. The hook may exit or close its stdin
 * without reading (EPIPE): it is then done with the state, so stop feeding. */
static void feeder_write(struct feeder *f)
{
        ssize_t n = write(f->fd, f->buf, f->left);
        if (n < 0) {
                if (errno != EAGAIN && errno != EINTR)
                        feeder_close(f);
                return;
        }
        f->buf += n;
        f->left -= (size_t)n;
        if (f->left == 0)
                feeder_close(f);
}

/* Writing to a pipe whose reader is gone raises SIGPIPE. It is held blocked
 * while a hook runs and a SIGPIPE that arose meanwhile is discarded, so the
 * runtime's own signal dispositions are never changed. */
struct sigpipe_guard {
        sigset_t old_mask;
        bool was_pending;
};

static int sigpipe_block(struct sigpipe_guard *g)
{
        sigset_t pipe_only, pending;
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        int r = pthread_sigmask(SIG_BLOCK, &pipe_only, &g->old_mask);
        if (r != 0)
                return -r;
        if (sigpending(&pending) < 0) {
                r = -errno;
                pthread_sigmask(SIG_SETMASK, &g->old_mask, NULL);
                return r;
        }
        g->was_pending = sigismember(&pending, SIGPIPE) == 1;
        return 0;
}

static void sigpipe_restore(const struct sigpipe_guard *g)
{
        sigset_t pipe_only;
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        if (!g->was_pending) {
                const struct timespec now = {0, 0};
                while (sigtimedwait(&pipe_only, NULL, &now) < 0 && errno == EINTR)
                        ;
        }
        pthread_sigmask(SIG_SETMASK, &g->old_mask, NULL);
}

/* In the forked child, so async-signal-safe calls only. The hook starts with
 * default signal dispositions, an empty mask, the state pipe as stdin and no
 * fd but 0, 1 and 2; an exec failure's errno goes back on errfd. */
static _Noreturn void hook_exec(const struct spec_hook *h, char *const *env, int stdin_fd,
                                int errfd, pid_t parent)
{
        const struct sigaction dfl = {.sa_handler = SIG_DFL};
        /* SIGKILL, SIGSTOP and the C library's private signals refuse; the
         * rest are reset. */
        for (int sig = 1; sig < NSIG; sig++)
                (void)sigaction(sig, &dfl, NULL);
        sigset_t none;
        sigemptyset(&none);
        int e = 0;
        if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                e = errno;
        /* A hook dies with the runtime that waits for it: one left by a
         * SIGKILLed create would outlive its container. The runtime may have
         * died before the signal was armed. */
        if (!e && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                e = errno;
        if (getppid() != parent)
                _exit(127);
        /* dup2 clears O_CLOEXEC on the copy; a pipe that already is fd 0 needs
         * it cleared by hand. */
        if (!e && stdin_fd == STDIN_FILENO && fcntl(stdin_fd, F_SETFD, 0) < 0)
                e = errno;
        if (!e && stdin_fd != STDIN_FILENO && dup2(stdin_fd, STDIN_FILENO) < 0)
                e = errno;
        if (!e)
                e = -umw_close_fds_from(STDERR_FILENO + 1, &errfd, 1);
        if (!e) {
                const char *const argv0[] = {h->path, NULL};
                execve(h->path, (char *const *)(h->args ? h->args : argv0), env);
                e = errno;
        }
        (void)umw_write_all(errfd, &e, sizeof(e));
        _exit(127);
}

static int reap(pid_t pid, int *status)
{
        while (waitpid(pid, status, 0) < 0) {
                if (errno != EINTR)
                        return -errno;
        }
        return 0;
}

static void kill_and_reap(pid_t pid)
{
        int status;
        (void)kill(pid, SIGKILL);
        (void)reap(pid, &status);
}

/* The container's side: createContainer and startContainer run in its
 * namespaces, a program of its root. */
static bool runs_inside(enum spec_hook_kind kind)
{
        return kind == SPEC_HOOK_CREATE_CONTAINER || kind == SPEC_HOOK_START_CONTAINER;
}

/* Forks the hook and returns its pid once it has exec'd, so that a missing
 * or non-executable program is reported as such and not as exit status 127.
 * A hook without env gets the runtime's own, as runc and crun give it
 * (podman's hooks.d hooks find their tools by PATH); one in the container's
 * side only the runtime's PATH, none of the caller's other variables. */
static pid_t hook_spawn(const struct spec_hook *h, enum spec_hook_kind stage, int stdin_fd,
                        struct umw_error **err)
{
        const char *kind = spec_hook_name(stage);
        const char *path = getenv("PATH");
        _cleanup_free_ char *path_var = NULL;
        if (path && asprintf(&path_var, "PATH=%s", path) < 0)
                return umw_fail_sys(err, ENOMEM, "%s hook %s: env", kind, h->path);
        char *path_only[] = {path_var, NULL};
        char *const *env = h->env               ? (char *const *)h->env
                           : runs_inside(stage) ? path_only
                                                : environ;
        int errpipe[2];
        if (pipe2(errpipe, O_CLOEXEC) < 0)
                return umw_fail_errno(err, "%s hook %s: pipe", kind, h->path);
        _cleanup_close_ int err_rd = errpipe[0], err_wr = errpipe[1];
        pid_t parent = getpid();
        pid_t child = fork();
        if (child < 0)
                return umw_fail_errno(err, "%s hook %s: fork", kind, h->path);
        if (child == 0)
                hook_exec(h, env, stdin_fd, err_wr, parent);
        close(TAKE_FD(err_wr));
        int exec_errno;
        ssize_t n = umw_read_all(err_rd, &exec_errno, sizeof(exec_errno));
        if (n == 0)
                return child;
        kill_and_reap(child);
        if (n < 0)
                return umw_fail_sys(err, (int)-n, "%s hook %s: read exec status", kind, h->path);
        if (n != sizeof(exec_errno))
                return umw_fail(err, UMW_EXIT_FAILURE, EIO, "%s hook %s: short exec status", kind,
                                h->path);
        return umw_fail_sys(err, exec_errno, "%s hook %s: execve", kind, h->path);
}

static int ms_until(const struct timespec *deadline)
{
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long ms = (deadline->tv_sec - now.tv_sec) * 1000LL +
                       (deadline->tv_nsec - now.tv_nsec + 999999) / 1000000;
        return ms < 0 ? 0 : ms > 60 * 60 * 1000 ? 60 * 60 * 1000 : (int)ms;
}

/* Feeds the state while waiting for the hook to exit. Returns 1 when it
 * exited, 0 when timeout_s (> 0) passed first. */
static int hook_wait(int pidfd, struct feeder *f, int timeout_s, struct umw_error **err)
{
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_s;
        for (;;) {
                int ms = timeout_s > 0 ? ms_until(&deadline) : -1;
                struct pollfd p[2] = {
                    {.fd = pidfd, .events = POLLIN},
                    {.fd = f->fd, .events = POLLOUT},
                };
                int n = poll(p, ARRAY_SIZE(p), ms);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return umw_fail_errno(err, "poll");
                if (p[0].revents)
                        return 1;
                if (n == 0 && ms == 0)
                        return 0;
                if (p[1].revents)
                        feeder_write(f);
        }
}

static int hook_status_check(const struct spec_hook *h, const char *kind, int status,
                             struct umw_error **err)
{
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
        if (WIFEXITED(status))
                return umw_fail(err, UMW_EXIT_FAILURE, 0, "%s hook %s exited with status %d", kind,
                                h->path, WEXITSTATUS(status));
        int sig = WTERMSIG(status);
        const char *name = umw_signal_name(sig);
        if (name)
                return umw_fail(err, UMW_EXIT_FAILURE, 0, "%s hook %s killed by signal %s", kind,
                                h->path, name);
        return umw_fail(err, UMW_EXIT_FAILURE, 0, "%s hook %s killed by signal %d", kind, h->path,
                        sig);
}

static int hook_supervise(const struct spec_hook *h, const char *kind, pid_t pid, struct feeder *f,
                          struct umw_error **err)
{
        _cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                int r = umw_fail_errno(err, "%s hook %s: pidfd_open", kind, h->path);
                kill_and_reap(pid);
                return r;
        }
        int r = hook_wait(pidfd, f, h->timeout, err);
        if (r <= 0) {
                kill_and_reap(pid);
                if (r < 0)
                        return umw_error_prefix(err, "%s hook %s", kind, h->path);
                return umw_fail(err, UMW_EXIT_FAILURE, ETIMEDOUT, "%s hook %s timed out after %d s",
                                kind, h->path, h->timeout);
        }
        int status;
        r = reap(pid, &status);
        if (r < 0)
                return umw_fail_sys(err, -r, "%s hook %s: waitpid", kind, h->path);
        return hook_status_check(h, kind, status, err);
}

static int hook_run(const struct spec_hook *h, enum spec_hook_kind stage, const char *state_json,
                    size_t state_len, struct umw_error **err)
{
        const char *kind = spec_hook_name(stage);
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) < 0)
                return umw_fail_errno(err, "%s hook %s: pipe", kind, h->path);
        _cleanup_close_ int stdin_fd = fds[0];
        __attribute__((cleanup(feeder_close))) struct feeder f = {
            .fd = fds[1],
            .buf = state_json,
            .left = state_len,
        };
        if (fcntl(f.fd, F_SETFL, O_NONBLOCK) < 0)
                return umw_fail_errno(err, "%s hook %s: fcntl", kind, h->path);
        if (f.left == 0)
                feeder_close(&f);
        pid_t pid = hook_spawn(h, stage, stdin_fd, err);
        if (pid < 0)
                return pid;
        close(TAKE_FD(stdin_fd));
        return hook_supervise(h, kind, pid, &f, err);
}

/* The hooks in order, up to the first that fails. */
static int run_each(const struct spec_hooks *hooks, enum spec_hook_kind stage,
                    const char *state_json, size_t state_len, struct umw_error **err)
{
        for (size_t i = 0; i < hooks->count; i++) {
                umw_debug("running %s hook %s", spec_hook_name(stage), hooks->list[i].path);
                int r = hook_run(&hooks->list[i], stage, state_json, state_len, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int hooks_run(const struct spec_hooks *hooks, enum spec_hook_kind stage, const char *state_json,
              size_t state_len, struct umw_error **err)
{
        const char *kind = spec_hook_name(stage);
        if (!hooks || hooks->count == 0)
                return 0;
        struct sigpipe_guard guard;
        int r = sigpipe_block(&guard);
        if (r < 0)
                return umw_fail_sys(err, -r, "%s hooks: block SIGPIPE", kind);
        r = run_each(hooks, stage, state_json, state_len, err);
        sigpipe_restore(&guard);
        return r;
}

void hooks_run_all(const struct spec_hooks *hooks, enum spec_hook_kind stage,
                   const char *state_json, size_t state_len)
{
        const char *kind = spec_hook_name(stage);
        if (!hooks || hooks->count == 0)
                return;
        struct sigpipe_guard guard;
        int r = sigpipe_block(&guard);
        if (r < 0) {
                umw_warn("%s hooks: block SIGPIPE: %s", kind, strerror(-r));
                return;
        }
        for (size_t i = 0; i < hooks->count; i++) {
                _cleanup_error_ struct umw_error *err = NULL;
                umw_debug("running %s hook %s", kind, hooks->list[i].path);
                if (hook_run(&hooks->list[i], stage, state_json, state_len, &err) < 0)
                        umw_warn("%s", err->msg);
        }
        sigpipe_restore(&guard);
}
