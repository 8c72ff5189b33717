/* A command's supervisor (subreaper.h). */
#include "common/subreaper.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Rounds of killing what is left: each round's victims' children come to
 * the subreaper and die in the next. A tree deeper than this is a fork
 * bomb the pids limit bounds. */
#define KILL_ROUNDS 1000

/* One output stream of the action. */
struct stream {
        int fd; /* -1 once at its end */
        size_t limit, kept;
        uint64_t total;
        struct umw_sha256 hash;
        char *buf;
};

struct supervisor {
        pid_t action;
        bool done;  /* the action was reaped */
        int status; /* its wait status then */
        bool timed_out;
        struct stream out, err;
};

/* ------------------------------------------------------------ the action */

/* In the action's child: its session, its stdio, nothing else. */
static void __attribute__((noreturn))
run_action(const struct subreaper_spec *spec, int out, int err)
{
        sigset_t none;
        sigemptyset(&none);
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null < 0 || setsid() < 0 || dup2(null, STDIN_FILENO) < 0 ||
            dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0 ||
            umw_close_fds_from(3, NULL, 0) < 0 || sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                _exit(126);
        for (int sig = 1; sig < NSIG; sig++)
                signal(sig, SIG_DFL);
        if (chdir(spec->cwd) < 0) {
                dprintf(STDERR_FILENO, "%s: cd %s: %s\n", spec->who, spec->cwd, strerror(errno));
                _exit(126);
        }
        execve(spec->argv[0], spec->argv, (char *const *)spec->env);
        dprintf(STDERR_FILENO, "%s: exec %s: %s\n", spec->who, spec->argv[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
}

/* ------------------------------------------------------------ reaping */

static void reaped(struct supervisor *sv, pid_t pid, int status)
{
        if (pid == sv->action) {
                sv->done = true;
                sv->status = status;
        }
}

static void reap_ready(struct supervisor *sv)
{
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
                reaped(sv, pid, status);
}

/* Our children now: the action's tree, each process that lost its parent
 * reparented to us (the subreaper). */
static size_t children(pid_t *out, size_t max)
{
        char path[64], text[4096];
        snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
        size_t count = 0;
        if (n <= 0)
                return 0;
        text[n] = '\0';
        for (char *p = text, *end; count < max; p = end) {
                long v = strtol(p, &end, 10);
                if (end == p || v <= 0)
                        break;
                out[count++] = (pid_t)v;
        }
        return count;
}

/* Everything the action left, killed and reaped, round by round. */
static void kill_all(struct supervisor *sv)
{
        for (int round = 0; round < KILL_ROUNDS; round++) {
                pid_t pids[512];
                size_t n = children(pids, ARRAY_SIZE(pids));
                if (n == 0)
                        return;
                for (size_t i = 0; i < n; i++)
                        kill(pids[i], SIGKILL);
                for (size_t i = 0; i < n; i++) {
                        int status;
                        if (waitpid(pids[i], &status, 0) == pids[i])
                                reaped(sv, pids[i], status);
                }
        }
}

/* ------------------------------------------------------------ output */

static void stream_read(struct stream *s)
{
        char chunk[16384];
        ssize_t n = read(s->fd, chunk, sizeof(chunk));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return;
        if (n <= 0) {
                umw_close_fdp(&s->fd);
                return;
        }
        umw_sha256_update(&s->hash, chunk, (size_t)n);
        s->total += (uint64_t)n;
        size_t take = s->limit - s->kept < (size_t)n ? s->limit - s->kept : (size_t)n;
        memcpy(s->buf + s->kept, chunk, take);
        s->kept += take;
}

static uint64_t ms_since(const struct timespec *t0)
{
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        return (uint64_t)((now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000);
}

static void send_result(struct supervisor *sv, int fd, const struct timespec *t0)
{
        struct subreaper_result res = {
            .exited = WIFEXITED(sv->status),
            .status = WIFEXITED(sv->status) ? WEXITSTATUS(sv->status) : WTERMSIG(sv->status),
            .timed_out = sv->timed_out,
            .duration_ms = ms_since(t0),
            .out_total = sv->out.total,
            .err_total = sv->err.total,
            .out_kept = (uint32_t)sv->out.kept,
            .err_kept = (uint32_t)sv->err.kept,
        };
        umw_sha256_hex(&sv->out.hash, res.out_sha256);
        umw_sha256_hex(&sv->err.hash, res.err_sha256);
        if (umw_write_all(fd, &res, sizeof(res)) < 0 ||
            umw_write_all(fd, sv->out.buf, sv->out.kept) < 0 ||
            umw_write_all(fd, sv->err.buf, sv->err.kept) < 0)
                _exit(1);
}

/* ------------------------------------------------------------ the loop */

struct loop_fds {
        int signals, timer;
};

/* Until the action is reaped and both streams ended. The relay's end
 * (SIGTERM by PR_SET_PDEATHSIG) kills the action and ends the loop. */
static void watch(struct supervisor *sv, const struct loop_fds *l)
{
        while (!sv->done || sv->out.fd >= 0 || sv->err.fd >= 0) {
                struct pollfd p[] = {{.fd = sv->out.fd, .events = POLLIN},
                                     {.fd = sv->err.fd, .events = POLLIN},
                                     {.fd = l->signals, .events = POLLIN},
                                     {.fd = l->timer, .events = POLLIN}};
                if (poll(p, ARRAY_SIZE(p), -1) < 0 && errno != EINTR)
                        break;
                if (p[0].revents)
                        stream_read(&sv->out);
                if (p[1].revents)
                        stream_read(&sv->err);
                if (p[3].revents) {
                        sv->timed_out = !sv->done;
                        kill(-sv->action, SIGKILL);
                        kill_all(sv);
                        uint64_t ticks;
                        (void)!read(l->timer, &ticks, sizeof(ticks));
                }
                struct signalfd_siginfo si;
                while (p[2].revents && read(l->signals, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                        if (si.ssi_signo != SIGCHLD) {
                                kill_all(sv);
                                _exit(1);
                        }
                        reap_ready(sv);
                }
                /* Nothing of the action outlives it: what it left running
                 * (a daemon holding its output open) goes with it. */
                if (sv->done)
                        kill_all(sv);
        }
}

static int arm(const struct subreaper_spec *spec, sigset_t *set, struct loop_fds *l)
{
        struct itimerspec when = {
            .it_value = {.tv_sec = spec->timeout_ms / 1000,
                         .tv_nsec = (long)(spec->timeout_ms % 1000) * 1000000}};
        l->signals = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
        l->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        return l->signals < 0 || l->timer < 0 || timerfd_settime(l->timer, 0, &when, NULL) < 0 ? -1
                                                                                               : 0;
}

static void stream_init(struct stream *s, int fd, size_t limit)
{
        *s = (struct stream){.fd = fd, .limit = limit, .buf = malloc(limit ? limit : 1)};
        umw_sha256_init(&s->hash);
        if (!s->buf)
                _exit(1);
        fcntl(fd, F_SETFL, O_NONBLOCK);
}

static void __attribute__((noreturn))
supervise(const struct subreaper_spec *spec, int result, pid_t parent)
{
        sigset_t set;
        sigemptyset(&set);
        int sigs[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP};
        for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
                sigaddset(&set, sigs[i]);
        struct loop_fds l;
        int out[2], err[2];
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (sigprocmask(SIG_SETMASK, &set, NULL) < 0 || prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 ||
            getppid() != parent || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 || setsid() < 0 ||
            umw_close_fds_from(3, &result, 1) < 0 || arm(spec, &set, &l) < 0 ||
            pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
                _exit(1);
        struct supervisor sv = {0};
        sv.action = fork();
        if (sv.action < 0)
                _exit(1);
        if (sv.action == 0)
                run_action(spec, out[1], err[1]);
        close(out[1]);
        close(err[1]);
        stream_init(&sv.out, out[0], spec->output_limit);
        stream_init(&sv.err, err[0], spec->output_limit);
        watch(&sv, &l);
        send_result(&sv, result, &t0);
        _exit(0);
}

int subreaper_run(const struct subreaper_spec *spec, int *result, pid_t *pid,
                  struct umw_error **err)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return umw_fail_errno(err, "action: pipe");
        pid_t parent = getpid();
        pid_t child = fork();
        if (child < 0) {
                int r = umw_fail_errno(err, "action: fork");
                close(p[0]);
                close(p[1]);
                return r;
        }
        if (child == 0) {
                close(p[0]);
                supervise(spec, p[1], parent);
        }
        close(p[1]);
        if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
                int r = umw_fail_errno(err, "action: pipe");
                close(p[0]);
                return r;
        }
        *result = p[0];
        *pid = child;
        return 0;
}
