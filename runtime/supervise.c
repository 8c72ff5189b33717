#include "runtime/supervise.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

int supervise_block_signals(sigset_t *old, struct umw_error **err)
{
        sigset_t all;
        sigfillset(&all);
        if (sigprocmask(SIG_BLOCK, &all, old) < 0)
                return umw_fail_errno(err, "block signals");
        return 0;
}

static int copy_window_size(int from, int to)
{
        struct winsize ws;
        if (ioctl(from, TIOCGWINSZ, &ws) < 0 || ioctl(to, TIOCSWINSZ, &ws) < 0)
                return -errno;
        return 0;
}

/* Moves what is readable from in to out; false at EOF or error. */
static bool pump(int in, int out)
{
        char buf[8192];
        ssize_t n = read(in, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return true;
        if (n <= 0)
                return false;
        return umw_write_all(out, buf, (size_t)n) == 0;
}

static void drain(int in, int out)
{
        char buf[8192];
        ssize_t n;
        while ((n = read(in, buf, sizeof(buf))) > 0)
                if (umw_write_all(out, buf, (size_t)n) < 0)
                        return;
}

static bool reap(pid_t pid, int *exit_status)
{
        int status;
        pid_t r;
        bool done = false;
        /* Reap everything: as subreaper we may inherit orphans too. */
        while ((r = waitpid(-1, &status, WNOHANG)) > 0) {
                if (r != pid)
                        continue;
                *exit_status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
                done = true;
        }
        return done;
}

struct raw_tty {
        bool active;
        struct termios saved;
};

static void tty_make_raw(struct raw_tty *t)
{
        if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &t->saved) < 0)
                return;
        struct termios raw = t->saved;
        cfmakeraw(&raw);
        raw.c_oflag = t->saved.c_oflag; /* keep output processing for the host side */
        t->active = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
}

static void tty_restore(struct raw_tty *t)
{
        if (t->active)
                tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
}

int supervise(pid_t pid, int master, int *exit_status, struct umw_error **err)
{
        sigset_t all;
        sigfillset(&all);
        _cleanup_close_ int sfd = signalfd(-1, &all, SFD_CLOEXEC);
        if (sfd < 0)
                return umw_fail_errno(err, "signalfd");
        struct raw_tty tty = {0};
        if (master >= 0) {
                tty_make_raw(&tty);
                copy_window_size(STDIN_FILENO, master);
        }
        struct pollfd fds[3] = {
            {.fd = sfd, .events = POLLIN},
            {.fd = master >= 0 ? STDIN_FILENO : -1, .events = POLLIN},
            {.fd = master, .events = POLLIN},
        };
        int r = 0;
        while (!reap(pid, exit_status)) {
                if (poll(fds, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        r = umw_fail_errno(err, "poll");
                        break;
                }
                if (fds[1].revents && !pump(STDIN_FILENO, master))
                        fds[1].fd = -1;
                if (fds[2].revents && !pump(master, STDOUT_FILENO))
                        fds[2].fd = -1;
                if (!(fds[0].revents & POLLIN))
                        continue;
                struct signalfd_siginfo si;
                if (read(sfd, &si, sizeof(si)) != sizeof(si))
                        continue;
                if (si.ssi_signo == SIGCHLD)
                        continue;
                if (si.ssi_signo == SIGWINCH && master >= 0)
                        copy_window_size(STDIN_FILENO, master);
                else
                        kill(pid, (int)si.ssi_signo);
        }
        /* Output the workload wrote just before it ended is still in the pty. */
        if (master >= 0 && fds[2].fd >= 0) {
                int flags = 1;
                ioctl(master, FIONBIO, &flags);
                drain(master, STDOUT_FILENO);
        }
        tty_restore(&tty);
        return r;
}
