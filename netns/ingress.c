/* The forwarder is one process that holds the host-side listeners made
 * before it left the host's network namespace, and dials from inside the
 * sandbox's: a socket stays in the namespace it was made in, so no fd has
 * to travel between namespaces, and a rootless forwarder, which cannot go
 * back once it has joined the sandbox's user namespace, never needs to. */
#include "netns/ingress.h"
#include "netns/ingress_relay.h"
#include "common/audit.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Two listeners per port, the pidfd and the report pipe stay open in the
 * forwarder: umw_close_fds_from() keeps at most 64. */
_Static_assert(2 * INGRESS_PORTS_MAX + 2 <= 64, "too many fds for the forwarder to keep");

/* What the forwarder tells its parent once: errnum 0 when it relays. */
struct ready_report {
        int errnum;
        char step[96];
};

int ingress_port_parse(const char *what, const char *arg, uint16_t *port, struct umw_error **err)
{
        unsigned long v = 0;
        size_t i = 0;
        for (; arg[i] >= '0' && arg[i] <= '9' && i < 6; i++)
                v = v * 10 + (unsigned long)(arg[i] - '0');
        if (i == 0 || arg[i] != '\0' || arg[0] == '0' || v > 65535)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "%s: expected a port number from 1 to 65535, got '%.32s'", what,
                                arg);
        *port = (uint16_t)v;
        return 0;
}

static int check_request(const struct ingress_request *req, struct umw_error **err)
{
        if (req->n_ports == 0 || req->n_ports > INGRESS_PORTS_MAX)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "ingress: expected 1 to %d ports, got %zu", INGRESS_PORTS_MAX,
                                req->n_ports);
        for (size_t i = 0; i < req->n_ports; i++) {
                if (req->ports[i] == 0)
                        return umw_fail(err, UMW_EXIT_USAGE, EINVAL, "ingress: port 0");
                for (size_t j = 0; j < i; j++)
                        if (req->ports[j] == req->ports[i])
                                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                                "ingress: port %u is published twice",
                                                req->ports[i]);
        }
        if (req->sandbox_pid <= 0)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL, "ingress: no sandbox process");
        return 0;
}

static const char *loopback_name(int family)
{
        return family == AF_INET ? "127.0.0.1" : "[::1]";
}

static int listen_loopback(int family, uint16_t port, int *out)
{
        struct sockaddr_storage ss = {0};
        socklen_t len;
        if (family == AF_INET) {
                struct sockaddr_in *a = (struct sockaddr_in *)&ss;
                a->sin_family = AF_INET;
                a->sin_port = htons(port);
                a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                len = sizeof(*a);
        } else {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
                a->sin6_family = AF_INET6;
                a->sin6_port = htons(port);
                a->sin6_addr = in6addr_loopback;
                len = sizeof(*a);
        }
        _cleanup_close_ int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        int one = 1;
        /* SO_REUSEADDR lets a restarted forwarder bind past its old
         * connections' TIME_WAIT; on Linux it never shares a port another
         * socket listens on. */
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            (family == AF_INET6 &&
             setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
            bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, SOMAXCONN) < 0)
                return -errno;
        *out = TAKE_FD(fd);
        return 0;
}

static void close_ports(struct relay_port *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                umw_close_fdp(&p[i].fd);
}

/* Fills p with the host-side listeners, 127.0.0.1's first; *n counts them. */
static int open_listeners(const struct ingress_request *req, struct relay_port *p, size_t *n,
                          bool *v6, struct umw_error **err)
{
        static const int families[] = {AF_INET, AF_INET6};
        *n = 0;
        *v6 = true;
        for (size_t i = 0; i < req->n_ports; i++) {
                uint16_t port = req->ports[i];
                for (size_t f = 0; f < ARRAY_SIZE(families); f++) {
                        if (families[f] == AF_INET6 && !*v6)
                                continue;
                        int r = listen_loopback(families[f], port, &p[*n].fd);
                        if (r == 0) {
                                p[(*n)++].to_port = port;
                        } else if (families[f] == AF_INET6 &&
                                   (r == -EADDRNOTAVAIL || r == -EAFNOSUPPORT)) {
                                umw_warn("ingress: this host has no IPv6 loopback; publishing "
                                         "on 127.0.0.1 only");
                                *v6 = false;
                        } else {
                                close_ports(p, *n);
                                return umw_fail_sys(err, -r,
                                                    "ingress: port %u: cannot listen on %s:%u",
                                                    port, loopback_name(families[f]), port);
                        }
                }
        }
        return 0;
}

static bool pidfd_exited(int pidfd)
{
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        return poll(&p, 1, 0) != 0;
}

/* A pidfd for the sandbox's init, refused when the init has exited or
 * shares the caller's network namespace (forwarding there would only reach
 * the host's own loopback). The namespace is read through /proc while the
 * pidfd shows the pid has not been reused meanwhile. */
static int sandbox_open(pid_t pid, int *out, struct umw_error **err)
{
        _cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0)
                return umw_fail(err, UMW_EXIT_STATE, errno, "ingress: sandbox process %d: %s", pid,
                                strerror(errno));
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
        struct stat theirs, ours;
        bool seen = stat(path, &theirs) == 0 && stat("/proc/self/ns/net", &ours) == 0;
        int stat_errno = errno;
        if (!seen && !pidfd_exited(pidfd))
                return umw_fail_sys(err, stat_errno,
                                    "ingress: network namespace of sandbox process %d", pid);
        if (!seen || pidfd_exited(pidfd))
                return umw_fail(err, UMW_EXIT_STATE, ESRCH,
                                "ingress: sandbox process %d has exited", pid);
        if (theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino)
                return umw_fail(err, UMW_EXIT_STATE, EINVAL,
                                "ingress: sandbox process %d has no network namespace of its own",
                                pid);
        *out = TAKE_FD(pidfd);
        return 0;
}

/* ------------------------------------------------------------ the forwarder */

static int fail_step(struct ready_report *rep, const char *step)
{
        rep->errnum = errno ? errno : EINVAL;
        snprintf(rep->step, sizeof(rep->step), "%s", step);
        return -1;
}

/* The network namespace alone where the caller may enter it (root); else
 * the user namespace that owns it too, as its owner may. */
static int enter_sandbox(int pidfd, struct ready_report *rep)
{
        if (setns(pidfd, CLONE_NEWNET) == 0)
                return 0;
        if (errno != EPERM)
                return fail_step(rep, "enter the sandbox's network namespace");
        if (setns(pidfd, CLONE_NEWUSER | CLONE_NEWNET) < 0)
                return fail_step(rep, "enter the sandbox's user and network namespaces");
        return 0;
}

/* Leaves the caller's session, terminal, signal handlers and files behind. */
static int detach(const int *keep, size_t nkeep, struct ready_report *rep)
{
        if (setsid() < 0)
                return fail_step(rep, "setsid");
        /* How ps and ss -p name it, whichever program started it. */
        (void)prctl(PR_SET_NAME, "umwelt-ingress", 0, 0, 0);
        if (chdir("/") < 0)
                return fail_step(rep, "chdir /");
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0)
                return fail_step(rep, "open /dev/null");
        for (int fd = 0; fd <= 2; fd++)
                if (dup2(null, fd) < 0)
                        return fail_step(rep, "stdio on /dev/null");
        if (null > 2)
                close(null);
        int r = umw_close_fds_from(3, keep, nkeep);
        if (r < 0) {
                errno = -r;
                return fail_step(rep, "close inherited files");
        }
        sigset_t none;
        sigemptyset(&none);
        for (int s = 1; s < NSIG; s++)
                (void)signal(s, SIG_DFL); /* SIGKILL, SIGSTOP and RT internals refuse */
        if (signal(SIGPIPE, SIG_IGN) == SIG_ERR || sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                return fail_step(rep, "reset signals");
        return 0;
}

/* From here on the forwarder only accepts, dials loopback and copies. */
static int drop_privileges(struct ready_report *rep)
{
        /* Up to the kernel's last capability, which EINVAL marks. */
        for (int cap = 0;; cap++) {
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
                        continue;
                if (errno == EINVAL)
                        break;
                return fail_step(rep, "drop the capability bounding set");
        }
        cap_t none = cap_init();
        if (!none)
                return fail_step(rep, "drop capabilities");
        int r = cap_set_proc(none);
        cap_free(none);
        if (r < 0)
                return fail_step(rep, "drop capabilities");
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return fail_step(rep, "prctl");
        return 0;
}

static void report(int fd, const struct ready_report *rep)
{
        /* A short write shows as a forwarder that died before it was ready. */
        (void)umw_write_all(fd, rep, sizeof(*rep));
}

/* Moves fd above stdio, which detach() points at /dev/null. */
static int lift(int *fd)
{
        if (*fd > 2)
                return 0;
        int moved = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
        if (moved < 0)
                return -1;
        close(*fd);
        *fd = moved;
        return 0;
}

static void __attribute__((noreturn))
forwarder_main(int pidfd, int report_fd, struct relay_port *ports, size_t n)
{
        struct ready_report rep = {0};
        int keep[2 * INGRESS_PORTS_MAX + 2];
        size_t nkeep = 0;
        errno = 0;
        bool lifted = lift(&report_fd) == 0 && lift(&pidfd) == 0;
        for (size_t i = 0; lifted && i < n; i++)
                lifted = lift(&ports[i].fd) == 0;
        for (size_t i = 0; i < n; i++)
                keep[nkeep++] = ports[i].fd;
        keep[nkeep++] = pidfd;
        keep[nkeep++] = report_fd;
        if ((!lifted && fail_step(&rep, "move files above stdio") < 0) ||
            enter_sandbox(pidfd, &rep) < 0 || detach(keep, nkeep, &rep) < 0 ||
            drop_privileges(&rep) < 0) {
                report(report_fd, &rep);
                _exit(1);
        }
        report(report_fd, &rep);
        close(report_fd);
        _exit(ingress_relay_run(ports, n, pidfd) < 0 ? 1 : 0);
}

/* ------------------------------------------------------------ the caller */

static void kill_forwarder(pid_t pid)
{
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

static int wait_ready(int fd, pid_t pid, struct umw_error **err)
{
        struct ready_report rep = {0};
        ssize_t n = umw_read_all(fd, &rep, sizeof(rep));
        if (n == (ssize_t)sizeof(rep) && rep.errnum == 0)
                return 0;
        kill_forwarder(pid);
        if (n != (ssize_t)sizeof(rep))
                return umw_fail(err, UMW_EXIT_FAILURE, EPIPE,
                                "ingress: the forwarder died before it was ready");
        rep.step[sizeof(rep.step) - 1] = '\0';
        return umw_fail_sys(err, rep.errnum, "ingress: forwarder: %s", rep.step);
}

static int audit_ports(const struct ingress_request *req, bool v6, pid_t pid,
                       struct umw_error **err)
{
        if (req->audit_fd < 0)
                return 0;
        for (size_t i = 0; i < req->n_ports; i++) {
                unsigned p = req->ports[i];
                char port[8], listen[48], inside[24], fwd[16];
                snprintf(port, sizeof(port), "%u", p);
                snprintf(listen, sizeof(listen), v6 ? "127.0.0.1:%u [::1]:%u" : "127.0.0.1:%u", p,
                         p);
                snprintf(inside, sizeof(inside), "127.0.0.1:%u", p);
                snprintf(fwd, sizeof(fwd), "%d", (int)pid);
                const char *kv[] = {"port",          port,     "listen",
                                    listen,          "inside", inside,
                                    "forwarder",     fwd,      req->sandbox_id ? "id" : NULL,
                                    req->sandbox_id, NULL};
                int r = audit_append(req->audit_fd, "ingress", kv, err);
                if (r < 0)
                        return umw_error_prefix(err, "ingress: audit log");
        }
        return 0;
}

int ingress_start(const struct ingress_request *req, pid_t *forwarder, struct umw_error **err)
{
        int r = check_request(req, err);
        if (r < 0)
                return r;
        _cleanup_close_ int pidfd = -1;
        if ((r = sandbox_open(req->sandbox_pid, &pidfd, err)) < 0)
                return r;
        struct relay_port ports[2 * INGRESS_PORTS_MAX];
        size_t n = 0;
        bool v6 = true;
        if ((r = open_listeners(req, ports, &n, &v6, err)) < 0)
                return r;
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                close_ports(ports, n);
                return umw_fail_errno(err, "ingress: pipe");
        }
        _cleanup_close_ int ready_fd = pipefd[0];
        pid_t pid = fork();
        if (pid == 0) {
                close(ready_fd);
                forwarder_main(pidfd, pipefd[1], ports, n);
        }
        int fork_errno = errno;
        close(pipefd[1]);
        close_ports(ports, n);
        if (pid < 0)
                return umw_fail_sys(err, fork_errno, "ingress: fork");
        if ((r = wait_ready(ready_fd, pid, err)) < 0)
                return r;
        if ((r = audit_ports(req, v6, pid, err)) < 0) {
                /* A widening that cannot be written down does not happen. */
                kill_forwarder(pid);
                return r;
        }
        *forwarder = pid;
        return 0;
}
