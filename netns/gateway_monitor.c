#include "netns/gateway_monitor.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int gateway_monitor_fork(pid_t *pid, int *ctl, struct umw_error **err)
{
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return umw_fail_errno(err, "gateway: socketpair");
        pid_t parent = getpid();
        fflush(NULL);
        pid_t p = fork();
        if (p < 0) {
                int e = errno;
                close(sv[0]);
                close(sv[1]);
                return umw_fail_sys(err, e, "gateway: fork");
        }
        close(sv[p == 0 ? 0 : 1]);
        *ctl = sv[p == 0 ? 1 : 0];
        *pid = p;
        if (p > 0)
                return 0;
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                return umw_fail_errno(err, "gateway: PR_SET_PDEATHSIG");
        if (getppid() != parent)
                _exit(0); /* the monitor is gone already */
        if (prctl(PR_SET_NAME, "umwelt-engine") < 0)
                return umw_fail_errno(err, "gateway: PR_SET_NAME");
        return 0;
}

/* Opens every policy file and hands the fds over in one message: the data
 * is each file's errno (0: its fd is in the message, in order). */
static int send_policy(int ctl, const char *const *files, size_t n)
{
        int errs[GATEWAY_POLICY_MAX] = {0}, fds[GATEWAY_POLICY_MAX];
        size_t nfd = 0;
        for (size_t i = 0; i < n; i++) {
                /* O_NONBLOCK: a FIFO planted under the name must not hang us. */
                int fd = open(files[i], O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                if (fd < 0)
                        errs[i] = errno;
                else
                        fds[nfd++] = fd;
        }
        char cbuf[CMSG_SPACE(sizeof(fds))] = {0};
        struct iovec iov = {.iov_base = errs, .iov_len = n * sizeof(int)};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
        if (nfd) {
                m.msg_control = cbuf;
                m.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
                struct cmsghdr *c = CMSG_FIRSTHDR(&m);
                *c = (struct cmsghdr){.cmsg_len = CMSG_LEN(nfd * sizeof(int)),
                                      .cmsg_level = SOL_SOCKET,
                                      .cmsg_type = SCM_RIGHTS};
                memcpy(CMSG_DATA(c), fds, nfd * sizeof(int));
        }
        int r = sendmsg(ctl, &m, MSG_NOSIGNAL) < 0 ? -errno : 0;
        for (size_t i = 0; i < nfd; i++)
                close(fds[i]);
        return r;
}

static int open_signals(int *fd, struct umw_error **err)
{
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGHUP);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
                return umw_fail_errno(err, "gateway: sigprocmask");
        *fd = signalfd(-1, &set, SFD_CLOEXEC);
        return *fd < 0 ? umw_fail_errno(err, "gateway: signalfd") : 0;
}

/* Reaps every ended child (the signer too); 1 when the engine was one. */
static int reap(pid_t engine, int *status)
{
        int found = 0;
        for (;;) {
                int st;
                pid_t p = waitpid(-1, &st, WNOHANG);
                if (p <= 0)
                        return found;
                if (p == engine) {
                        *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                        found = 1;
                }
        }
}

static int one_signal(const struct signalfd_siginfo *si, pid_t engine, int ctl,
                      const char *const *files, size_t n, int *status)
{
        switch (si->ssi_signo) {
        case SIGHUP: {
                int r = send_policy(ctl, files, n);
                if (r < 0)
                        umw_warn("gateway: reload: %s", strerror(-r));
                return 0;
        }
        case SIGCHLD:
                return reap(engine, status);
        default:
                kill(engine, (int)si->ssi_signo);
                return 0;
        }
}

int gateway_monitor_run(pid_t engine, int ctl, const char *const *files, size_t n,
                        struct umw_error **err)
{
        _cleanup_close_ int own = ctl;
        _cleanup_close_ int sfd = -1;
        int r = open_signals(&sfd, err), status = 0;
        if (r < 0) {
                kill(engine, SIGKILL);
                return r;
        }
        /* An engine that ended before the mask above sent its SIGCHLD already. */
        if (reap(engine, &status))
                return status;
        for (;;) {
                struct signalfd_siginfo si;
                ssize_t got = read(sfd, &si, sizeof(si));
                if (got < 0 && errno == EINTR)
                        continue;
                if (got != sizeof(si)) {
                        kill(engine, SIGKILL);
                        return umw_fail_errno(err, "gateway: read signalfd");
                }
                if (one_signal(&si, engine, own, files, n, &status))
                        return status;
        }
}

int gateway_monitor_recv(int ctl, int fds[GATEWAY_POLICY_MAX], int errs[GATEWAY_POLICY_MAX],
                         size_t *n)
{
        char cbuf[CMSG_SPACE(GATEWAY_POLICY_MAX * sizeof(int))];
        struct iovec iov = {.iov_base = errs, .iov_len = GATEWAY_POLICY_MAX * sizeof(int)};
        struct msghdr m = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        ssize_t got = recvmsg(ctl, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (got < 0)
                return -errno;
        if (got == 0)
                return 0;
        size_t nfd = 0, used = 0;
        int passed[GATEWAY_POLICY_MAX];
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        memcpy(passed, CMSG_DATA(c), nfd * sizeof(int));
                }
        *n = (size_t)got / sizeof(int);
        for (size_t i = 0; i < *n; i++)
                fds[i] = errs[i] == 0 && used < nfd ? passed[used++] : -1;
        for (size_t i = 0; i < *n; i++)
                if (fds[i] < 0 && errs[i] == 0)
                        errs[i] = EPROTO; /* fewer fds than the message said */
        while (used < nfd)
                close(passed[used++]);
        return 1;
}
