/* A sandbox's egress gateway as a process: found next to umwelt-run or in
 * the install's bindir, started from the host's side with listeners this
 * process made inside the sandbox init's network namespace (socket
 * activation, umwelt-gateway(1)), recorded in the bundle by pid and start
 * time so that a later down, gc or reload signals that process and never
 * another that got its pid, and stopped. */
#include "face/sandbox_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/paths.h"
#include "common/proc.h"
#include "common/fdio.h"
#include "common/log.h"
#include "netns/gateway_listen.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define GATEWAY_BIN  "umwelt-gateway"
#define GATEWAY_PORT 3128
/* How long the gateway has to make its listeners and say "ready". */
#define GATEWAY_READY_MS 10000
/* How long it has to close its connections on SIGTERM. */
#define GATEWAY_STOP_MS 2000

int sandbox_gateway_locate(struct sandbox *s, struct umw_error **err)
{
        int r = umw_find_program(GATEWAY_BIN, &s->net.gateway_bin, err);
        return r < 0 ? umw_error_prefix(err, "egress: cannot be enforced, so the sandbox does not "
                                             "start")
                     : 0;
}

static int record(const struct sandbox *s, pid_t pid, struct umw_error **err)
{
        char text[64];
        int n = snprintf(text, sizeof(text), "%d %llu\n", pid, umw_proc_start_time(pid, NULL));
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
        bool zombie = false;
        if (fd >= 0 && (umw_proc_start_time(p, &zombie) != t || zombie)) {
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

/* What the gateway inherits besides its stdio: the listeners, a pidfd of
 * the sandbox's init, and where it is waited for, its ready pipe (-1 where
 * not). */
struct inherited {
        int fds[GATEWAY_LISTEN_MAX + 2]; /* each of them, for the child to keep */
        size_t n;
        int listen[GATEWAY_LISTEN_MAX];
        size_t n_listen;
        int owner, ready;
};

/* On demand, in the child: the gateway is exec'd once the first connection
 * waits in a listener's backlog (systemd's socket activation does the
 * same), so a sandbox that ends without one never pays for its start. The
 * init's end first: the child says "stopped", as the gateway would. */
static void wait_first_connection(const struct inherited *in)
{
        struct pollfd p[GATEWAY_LISTEN_MAX + 1];
        size_t n = 0;
        for (size_t i = 0; i < in->n_listen; i++)
                p[n++] = (struct pollfd){.fd = in->listen[i], .events = POLLIN};
        p[n++] = (struct pollfd){.fd = in->owner, .events = POLLIN};
        while (poll(p, n, -1) < 0)
                if (errno != EINTR)
                        return; /* the gateway watches them itself */
        if (!p[n - 1].revents)
                return;
        if (write(in->ready, "stopped\n", 8) < 0) {
                /* run is gone already */
        }
        _exit(0);
}

/* In the child: what the gateway gets is its argv, /dev/null for stdin,
 * the bundle's GATEWAY_ERR_FILE for stdout and stderr and the inherited
 * fds; its own session, default signals; with tied, SIGTERM when we die. */
static void __attribute__((noreturn))
exec_gateway(char *const argv[], int devnull, int out, const struct inherited *keep, bool tied,
             bool on_demand, pid_t parent)
{
        sigset_t none;
        sigemptyset(&none);
        if ((tied && (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)) ||
            setsid() < 0 || dup2(devnull, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
            dup2(out, STDERR_FILENO) < 0 || umw_close_fds_from(3, keep->fds, keep->n) < 0)
                _exit(127);
        for (size_t i = 0; i < keep->n; i++)
                if (fcntl(keep->fds[i], F_SETFD, 0) < 0)
                        _exit(127);
        signal(SIGHUP, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (on_demand)
                wait_first_connection(keep);
        execv(argv[0], argv);
        dprintf(STDERR_FILENO, "umwelt-run: exec %s: %s\n", argv[0], strerror(errno));
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

/* Reaps the gateway where run's reaping of every child left it, and
 * closes its fds. */
static void reap(struct sandbox_gateway *gw, siginfo_t *si)
{
        *si = (siginfo_t){0};
        while (waitid(P_PIDFD, (id_t)gw->pidfd, si, WEXITED) < 0 && errno == EINTR)
                ;
        umw_close_fdp(&gw->pidfd);
        umw_close_fdp(&gw->ready);
}

static void kill_reap(struct sandbox_gateway *gw, siginfo_t *si)
{
        pidfd_send_signal(gw->pidfd, SIGKILL, NULL, 0);
        reap(gw, si);
}

/* What the gateway's ready fd holds by now, appended to what it said. */
static void read_said(struct sandbox_gateway *gw)
{
        size_t have = strlen(gw->said);
        ssize_t n = gw->ready >= 0 && have + 1 < sizeof(gw->said)
                        ? read(gw->ready, gw->said + have, sizeof(gw->said) - have - 1)
                        : 0;
        gw->said[have + (n > 0 ? (size_t)n : 0)] = '\0';
}

static int wait_ready(struct sandbox_gateway *gw, int out, struct umw_error **err)
{
        bool answered = wait_readable(gw->ready, GATEWAY_READY_MS);
        if (answered)
                read_said(gw);
        if (strncmp(gw->said, "ready\n", 6) == 0)
                return 0;
        /* One that closed the fd is on its way out: its exit status says
         * whether it refused bad input. */
        if (answered)
                wait_readable(gw->pidfd, GATEWAY_STOP_MS);
        siginfo_t si;
        kill_reap(gw, &si);
        char why[512];
        last_words(out, why, sizeof(why));
        /* A gateway that refused bad input (a CA it may not use, say) makes
         * it the sandbox's bad input too: the same exit code. */
        bool config = si.si_code == CLD_EXITED && si.si_status == UMW_EXIT_CONFIG;
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

static void inherited_close(struct inherited *in)
{
        for (size_t i = 0; i < in->n; i++)
                close(in->fds[i]);
        in->n = 0;
}

/* Takes fd into *slot, moved above stdio where the child's dup2s cannot
 * land on it. */
static int inherit(struct inherited *in, int fd, int *slot, struct umw_error **err)
{
        int high = fd >= 3 ? fd : fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (high != fd)
                close(fd);
        if (high < 0)
                return umw_fail_errno(err, "egress: an fd for the gateway");
        in->fds[in->n++] = *slot = high;
        return 0;
}

/* The door: listeners on 127.0.0.1:3128 and [::1]:3128 inside the init's
 * network namespace, from the moment this returns; and the init's pidfd. */
static int make_door(pid_t init, struct inherited *in, struct umw_error **err)
{
        char netns[64];
        int fds[GATEWAY_LISTEN_MAX];
        size_t n = 0;
        snprintf(netns, sizeof(netns), "/proc/%d/ns/net", init);
        int r = gateway_listen_in_netns(netns, GATEWAY_PORT, fds, &n, err);
        if (r < 0)
                return umw_error_prefix(err, "egress: the gateway's listeners in the sandbox");
        for (size_t i = 0; i < n; i++) {
                if ((r = inherit(in, fds[i], &in->listen[in->n_listen++], err)) < 0) {
                        /* inherit took fds[i]; the ones after it are still ours */
                        while (++i < n)
                                close(fds[i]);
                        return r;
                }
        }
        int owner = pidfd_open(init, 0);
        if (owner < 0)
                return umw_fail_errno(err, "egress: pidfd of the sandbox's init %d", init);
        return inherit(in, owner, &in->owner, err);
}

/* OPTION N into argv at *i, the number's text in text. */
static void fd_arg(char *argv[], size_t *i, char *option, int fd, char text[16])
{
        snprintf(text, 16, "%d", fd);
        argv[(*i)++] = option;
        argv[(*i)++] = text;
}

static int spawn(const struct sandbox *s, const char *log, const struct inherited *in, bool tied,
                 bool on_demand, int devnull, int out, struct sandbox_gateway *gw,
                 struct umw_error **err)
{
        char policy[4096], texts[GATEWAY_LISTEN_MAX + 2][16];
        char *argv[32];
        size_t i = 0;
        snprintf(policy, sizeof(policy), "%s/%s", s->bundle, EGRESS_POLICY_FILE);
        argv[i++] = s->net.gateway_bin;
        for (size_t k = 0; k < in->n_listen; k++)
                fd_arg(argv, &i, "--listen-fd", in->listen[k], texts[k]);
        fd_arg(argv, &i, "--owner-pidfd", in->owner, texts[in->n_listen]);
        fd_arg(argv, &i, "--ready-fd", in->ready, texts[in->n_listen + 1]);
        /* The trust files are the gateway's to write: it links OpenSSL.
         * Without a trust directory (no usable CA; a gateway the relay
         * starts for a sandbox that has no trust mount) the option goes. */
        char *const rest[] = {"--policy",    policy,          "--log",
                              (char *)log,   "--sandbox",     s->project.container_id,
                              "--trust-dir", s->net.trust_dir};
        size_t n_rest = s->net.trust_dir ? ARRAY_SIZE(rest) : ARRAY_SIZE(rest) - 2;
        for (size_t k = 0; k < n_rest; k++)
                argv[i++] = rest[k];
        argv[i] = NULL;
        pid_t parent = getpid();
        pid_t child = fork();
        if (child < 0)
                return umw_fail_errno(err, "egress: start the gateway");
        if (child == 0)
                exec_gateway(argv, devnull, out, in, tied, on_demand, parent);
        /* Not waited for yet: the pid is still the child's. */
        gw->pid = child;
        gw->pidfd = pidfd_open(child, 0);
        if (gw->pidfd >= 0)
                return 0;
        int r = umw_fail_errno(err, "egress: pidfd of the gateway %d", child);
        kill(child, SIGKILL);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                ;
        return r;
}

/* The read end non-blocking: at the end it is read for what is there. */
static int ready_pipe(struct inherited *in, int *ready, struct umw_error **err)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) < 0)
                return umw_fail_errno(err, "egress: gateway pipe");
        *ready = p[0];
        return inherit(in, p[1], &in->ready, err);
}

/* The door and the gateway's ends, then the gateway: it holds them now, and
 * they close here whether it started or not. */
static int spawn_with_door(const struct sandbox *s, const char *log, pid_t init, bool tied,
                           bool wait, int devnull, int out, int *ready, struct sandbox_gateway *gw,
                           struct umw_error **err)
{
        __attribute__((cleanup(inherited_close))) struct inherited in = {.owner = -1, .ready = -1};
        int r;
        if ((r = make_door(init, &in, err)) < 0 || (r = ready_pipe(&in, ready, err)) < 0)
                return r;
        return spawn(s, log, &in, tied, !wait, devnull, out, gw, err);
}

int sandbox_gateway_start(const struct sandbox *s, pid_t init, bool tied, bool wait,
                          struct sandbox_gateway *gw, struct umw_error **err)
{
        _cleanup_free_ char *log = sandbox_egress_log(s);
        _cleanup_close_ int devnull = -1, out = -1, ready = -1;
        if (!log)
                return umw_fail_sys(err, ENOMEM, "egress");
        int r;
        if ((r = open_outputs(s, &devnull, &out, err)) < 0 ||
            (r = spawn_with_door(s, log, init, tied, wait, devnull, out, &ready, gw, err)) < 0)
                return r;
        gw->ready = TAKE_FD(ready);
        if (wait && (r = wait_ready(gw, out, err)) < 0)
                return r;
        if ((r = record(s, gw->pid, err)) < 0) {
                siginfo_t si;
                kill_reap(gw, &si);
        }
        return r;
}

/* How the gateway ended, for people, where its status was still there. */
static void how_ended(const siginfo_t *si, char *buf, size_t len)
{
        if (si->si_code == CLD_EXITED)
                snprintf(buf, len, " (exit status %d)", si->si_status);
        else if (si->si_code == CLD_KILLED || si->si_code == CLD_DUMPED)
                snprintf(buf, len, " (killed by signal %d, %s)", si->si_status,
                         strsignal(si->si_status));
        else
                buf[0] = '\0';
}

/* A gateway that ended before run stopped it, without saying it stopped
 * as asked (its own stop at the end of the sandbox's init): the door was
 * shut from then on (the listeners went with it), which the workload saw
 * as refused connections. said: what its ready fd said. */
static void report(struct sandbox *s, const char *said, const siginfo_t *si)
{
        if (strstr(said, "stopped\n"))
                return;
        bool served = strncmp(said, "ready\n", 6) == 0;
        char how[96], why[512] = "", path[4096], text[700];
        how_ended(si, how, sizeof(how));
        snprintf(path, sizeof(path), "%s/%s", s->bundle, GATEWAY_ERR_FILE);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
                last_words(fd, why, sizeof(why));
        snprintf(text, sizeof(text), "the gateway %s%s%s",
                 served ? "ended during the run" : "did not start", how, why);
        umw_warn("egress: %s; %s", text,
                 served ? "from then on the sandbox had no way out"
                        : "the sandbox ran with no way out");
        const char *kv[] = {"id", s->project.container_id, "error", text, NULL};
        sandbox_audit(s, "egress-closed", kv);
}

void sandbox_gateway_end(struct sandbox *s, struct sandbox_gateway *gw)
{
        if (gw->pidfd < 0)
                return;
        bool ended = wait_readable(gw->pidfd, 0);
        read_said(gw);
        /* Before its ready it has accepted no connection: nothing to close
         * or log, and no need to wait for the end of its start. */
        int sig = strncmp(gw->said, "ready\n", 6) == 0 ? SIGTERM : SIGKILL;
        bool asked = !ended && pidfd_send_signal(gw->pidfd, sig, NULL, 0) == 0;
        if (asked && !wait_readable(gw->pidfd, GATEWAY_STOP_MS))
                pidfd_send_signal(gw->pidfd, SIGKILL, NULL, 0);
        /* Its last words, now that it is gone. */
        read_said(gw);
        siginfo_t si;
        reap(gw, &si);
        /* One that ended by itself, or a serving one that did not answer the
         * stop with "stopped" (its engine had died and the monitor was on
         * its way out): the door had been shut. */
        if (s && (ended || (asked && sig == SIGTERM)))
                report(s, gw->said, &si);
}

void sandbox_gateway_release(struct sandbox_gateway *gw)
{
        umw_close_fdp(&gw->pidfd);
        umw_close_fdp(&gw->ready);
}
