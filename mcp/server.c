/* umwelt-mcp's event loop (server.h). */
#include "mcp/server_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define TICK_MS 1000 /* progress, while a call that asked for it runs */

static void on_line(void *ctx, char *line, size_t len)
{
        server_message(ctx, line, len);
}

static void on_too_long(void *ctx, char *line, size_t len)
{
        (void)line, (void)len;
        server_too_long(ctx);
}

static bool ticking(const struct server *S)
{
        for (size_t i = 0; i < CALLS_MAX; i++)
                if (S->calls[i].seq && S->calls[i].token)
                        return true;
        return false;
}

static void worker_ready(struct server *S)
{
        _cleanup_error_ struct umw_error *err = NULL;
        int r = mcp_link_read(&S->link, &err);
        server_frames(S);
        if (r >= 0 || S->link.fd < 0)
                return;
        int status;
        mcp_link_stop(&S->link, &status);
        char why[128];
        snprintf(why, sizeof(why), "umwelt-run sandbox exec ended with %d", status);
        umw_log(UMW_LOG_WARNING, "the worker ended: %s", why);
        server_worker_gone(S, why);
}

/* poll's set: stdin, signals, the worker, each call at the relay. */
struct fds {
        struct pollfd p[3 + CALLS_MAX];
        struct call *owner[3 + CALLS_MAX];
        size_t n;
};

static void gather(struct server *S, int signals, struct fds *f)
{
        f->n = 0;
        f->p[f->n++] = (struct pollfd){.fd = S->in.eof ? -1 : STDIN_FILENO, .events = POLLIN};
        f->p[f->n++] = (struct pollfd){.fd = signals, .events = POLLIN};
        f->p[f->n++] = (struct pollfd){.fd = S->link.fd, .events = POLLIN};
        for (size_t i = 0; i < CALLS_MAX; i++)
                if (S->calls[i].seq && S->calls[i].ask.fd >= 0) {
                        f->owner[f->n] = &S->calls[i];
                        f->p[f->n++] = (struct pollfd){.fd = S->calls[i].ask.fd, .events = POLLIN};
                }
}

static void dispatch(struct server *S, struct fds *f)
{
        if (f->p[0].revents) {
                int r = mcp_lines_read(&S->in, on_line, on_too_long, S);
                if (r < 0 || S->in.eof)
                        S->stop = true;
        }
        if (f->p[1].revents)
                S->stop = true;
        if (f->p[2].revents && S->link.fd >= 0)
                worker_ready(S);
        for (size_t i = 3; i < f->n; i++)
                if (f->p[i].revents && f->owner[i]->seq && f->owner[i]->ask.fd == f->p[i].fd)
                        server_ask_ready(S, f->owner[i]);
}

static void loop(struct server *S, int signals)
{
        struct timespec last;
        clock_gettime(CLOCK_MONOTONIC, &last);
        while (!S->stop) {
                struct fds f;
                gather(S, signals, &f);
                int n = poll(f.p, f.n, ticking(S) ? TICK_MS : -1);
                if (n < 0 && errno != EINTR)
                        return;
                if (n > 0)
                        dispatch(S, &f);
                struct timespec now;
                clock_gettime(CLOCK_MONOTONIC, &now);
                if ((now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000 >=
                    TICK_MS) {
                        server_tick(S);
                        last = now;
                }
        }
}

static int signals_open(struct umw_error **err)
{
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        signal(SIGPIPE, SIG_IGN);
        int fd = sigprocmask(SIG_BLOCK, &set, NULL) < 0
                     ? -1
                     : signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        return fd < 0 ? umw_fail_errno(err, "signals") : fd;
}

static void finish(struct server *S)
{
        for (size_t i = 0; i < CALLS_MAX; i++)
                if (S->calls[i].seq)
                        server_call_free(&S->calls[i]);
        /* The worker ends what it runs once its socket closes. */
        mcp_link_stop(&S->link, NULL);
        mcp_lines_free(&S->in);
        free(S->relay_socket);
        if (S->audit_fd >= 0)
                close(S->audit_fd);
}

int mcp_serve(const struct mcp_server_opts *o, struct umw_error **err)
{
        struct server S = {
            .o = o, .audit_fd = -1, .link = MCP_LINK_INIT, .in = {.fd = STDIN_FILENO}};
        for (size_t i = 0; i < CALLS_MAX; i++)
                S.calls[i].ask.fd = -1;
        _cleanup_close_ int signals = signals_open(err);
        if (signals < 0)
                return signals;
        loop(&S, signals);
        finish(&S);
        return o->down_on_exit ? mcp_link_down(&o->target, err) : 0;
}
