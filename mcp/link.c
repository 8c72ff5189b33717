/* The worker's link (link.h). */
#include "mcp/link.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/paths.h"
#include "runtime/selfexe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define UP_EXISTS   5 /* UMW_EXIT_EXISTS: the sandbox runs already */
#define MESSAGE_MAX 4096

/* argv of umwelt-run [--root R] sandbox VERB -p DIR, then more. */
struct argv {
        const char *v[24];
        size_t n;
};

static void add(struct argv *a, const char *s)
{
        if (a->n < ARRAY_SIZE(a->v) - 1)
                a->v[a->n++] = s;
        a->v[a->n] = NULL;
}

static void sandbox_argv(struct argv *a, const char *rt, const struct mcp_target *t,
                         const char *verb)
{
        add(a, rt);
        if (t->root) {
                add(a, "--root");
                add(a, t->root);
        }
        add(a, "sandbox");
        add(a, verb);
        add(a, "-p");
        add(a, t->project);
}

/* Runs argv with stdin /dev/null and its output in a pipe; its last line
 * into msg. Returns the exit status, or an error. */
static int run_quiet(const struct argv *a, char *msg, size_t size, struct umw_error **err)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return umw_fail_errno(err, "pipe");
        pid_t pid = fork();
        if (pid < 0) {
                close(p[0]);
                close(p[1]);
                return umw_fail_errno(err, "fork");
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
                        _exit(127);
                execv(a->v[0], (char *const *)a->v);
                _exit(127);
        }
        close(p[1]);
        ssize_t n = umw_read_all(p[0], msg, size - 1);
        close(p[0]);
        msg[n > 0 ? n : 0] = '\0';
        /* Its last line is what went wrong. */
        for (size_t len = strlen(msg); len && msg[len - 1] == '\n';)
                msg[--len] = '\0';
        char *last = strrchr(msg, '\n');
        if (last)
                memmove(msg, last + 1, strlen(last + 1) + 1);
        int status;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return umw_fail_errno(err, "wait for umwelt-run");
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int sandbox_up(const char *rt, const struct mcp_target *t, struct umw_error **err)
{
        struct argv a = {0};
        char msg[MESSAGE_MAX];
        sandbox_argv(&a, rt, t, "up");
        if (t->preset) {
                add(&a, "--preset");
                add(&a, t->preset);
        }
        if (t->workspace) {
                add(&a, "--workspace");
                add(&a, t->workspace);
        }
        int r = run_quiet(&a, msg, sizeof(msg), err);
        if (r < 0 || r == 0 || r == UP_EXISTS)
                return r < 0 ? r : 0;
        return umw_fail(err, UMW_EXIT_STATE, EIO, "the project's sandbox did not start: %s", msg);
}

/* The child: the socket as stdin and stdout, the sealed copy as fd 3. */
static void __attribute__((noreturn)) exec_worker(const struct argv *a, int sock, int copy)
{
        if (dup2(sock, 0) < 0 || dup2(sock, 1) < 0 || dup2(copy, 3) < 0 ||
            umw_close_fds_from(4, NULL, 0) < 0)
                _exit(127);
        execv(a->v[0], (char *const *)a->v);
        _exit(127);
}

static int spawn(struct mcp_link *l, const char *rt, const struct mcp_target *t,
                 struct umw_error **err)
{
        struct argv a = {0};
        sandbox_argv(&a, rt, t, "exec");
        add(&a, "--preserve-fds");
        add(&a, "1");
        add(&a, "--");
        add(&a, "/proc/self/fd/3");
        add(&a, "worker");
        _cleanup_close_ int copy = -1;
        int sv[2], r = selfexe_sealed_copy(&copy, err);
        if (r < 0)
                return umw_error_prefix(err, "worker");
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return umw_fail_errno(err, "worker: socketpair");
        pid_t pid = fork();
        if (pid == 0)
                exec_worker(&a, sv[1], copy);
        close(sv[1]);
        if (pid < 0 || fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0) {
                close(sv[0]);
                return umw_fail_errno(err, "worker");
        }
        l->pid = pid;
        l->fd = sv[0];
        return 0;
}

int mcp_link_start(struct mcp_link *l, const struct mcp_target *t, struct umw_error **err)
{
        _cleanup_free_ char *rt = NULL;
        int r = umw_find_program("umwelt-run", &rt, err);
        if (r < 0 || (r = sandbox_up(rt, t, err)) < 0)
                return r;
        return spawn(l, rt, t, err);
}

/* The most a whole frame takes: past it, the event loop takes the frames
 * read off before more is read (a worker that writes without end grows
 * nothing). */
#define FRAME_WHOLE_MAX (sizeof(struct mcp_frame) + 2 * (size_t)MCP_PAYLOAD_MAX)

/* What is there to read, up to max bytes held. */
static int read_some(struct mcp_link *l, size_t max, struct umw_error **err)
{
        for (;;) {
                if (l->frames.have - l->frames.skip >= max)
                        return 0;
                int r = mcp_frames_room(&l->frames, 65536, err);
                if (r < 0)
                        return r;
                ssize_t n = read(l->fd, l->frames.buf + l->frames.have, 65536);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 0;
                if (n < 0)
                        return umw_fail_errno(err, "read from the worker");
                if (n == 0)
                        return umw_fail(err, UMW_EXIT_FAILURE, EPIPE, "the worker ended");
                l->frames.have += (size_t)n;
        }
}

int mcp_link_read(struct mcp_link *l, struct umw_error **err)
{
        return read_some(l, FRAME_WHOLE_MAX, err);
}

int mcp_link_send(struct mcp_link *l, const char *buf, size_t len, struct umw_error **err)
{
        while (len > 0) {
                struct pollfd p = {.fd = l->fd, .events = POLLIN | POLLOUT};
                if (poll(&p, 1, -1) < 0 && errno != EINTR)
                        return umw_fail_errno(err, "worker: poll");
                /* The worker may be blocked writing to us until we read:
                 * what it sends meanwhile is held whatever its size. */
                int r = p.revents & (POLLIN | POLLHUP) ? read_some(l, SIZE_MAX, err) : 0;
                if (r < 0)
                        return r;
                if (!(p.revents & POLLOUT))
                        continue;
                ssize_t n = write(l->fd, buf, len);
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return umw_fail_errno(err, "write to the worker");
                if (n > 0) {
                        buf += n;
                        len -= (size_t)n;
                }
        }
        return 0;
}

void mcp_link_stop(struct mcp_link *l, int *status)
{
        int st = 0;
        umw_close_fdp(&l->fd);
        if (l->pid > 0)
                while (waitpid(l->pid, &st, 0) < 0 && errno == EINTR)
                        ;
        if (status)
                *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        l->pid = 0;
        mcp_frames_free(&l->frames);
}

int mcp_link_down(const struct mcp_target *t, struct umw_error **err)
{
        _cleanup_free_ char *rt = NULL;
        struct argv a = {0};
        char msg[MESSAGE_MAX];
        int r = umw_find_program("umwelt-run", &rt, err);
        if (r < 0)
                return r;
        sandbox_argv(&a, rt, t, "down");
        r = run_quiet(&a, msg, sizeof(msg), err);
        if (r > 0)
                return umw_fail(err, UMW_EXIT_STATE, EIO, "sandbox down: %s", msg);
        return r;
}
