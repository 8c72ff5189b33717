#include "netns/ingress_relay.h"
#include "common/cleanup.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define RELAY_BUF      (32 * 1024)
#define ACCEPT_BURST   32
#define EVENTS_AT_ONCE 64

/* Every epoll registration points at one of these, first member. */
enum watch_kind { WATCH_PIDFD, WATCH_LISTENER, WATCH_END };

struct watch {
        enum watch_kind kind;
};

struct listener {
        struct watch w;
        const struct relay_port *port;
};

enum side { CLIENT, INSIDE };

struct conn;

/* One socket of a connection. Registered edge-triggered, so what epoll
 * said is kept here until a read or write runs into EAGAIN. */
struct end {
        struct watch w;
        int fd;
        bool readable, writable;
        struct conn *conn;
};

/* Bytes read from one end and not yet written to the other. */
struct flow {
        char buf[RELAY_BUF];
        size_t start, stop;
        bool eof;  /* the source sends no more */
        bool shut; /* ...and the sink has been told */
};

struct conn {
        struct end ends[2];   /* CLIENT: accepted on the host; INSIDE: dialled in the sandbox */
        struct flow flows[2]; /* flows[s]: read from ends[s], written to the other end */
        uint16_t to_port;
        unsigned attempt; /* index into the inside addresses being dialled */
        bool connected, dead;
        struct conn *next_dead;
};

struct relay {
        int epfd;
        size_t nconns;
        struct conn *dead; /* closed during this batch of events, freed after it */
};

/* Inside addresses tried in order: a dev server bound to "localhost" may
 * listen on either. */
static int inside_addr(unsigned attempt, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
        memset(ss, 0, sizeof(*ss));
        if (attempt == 0) {
                struct sockaddr_in *a = (struct sockaddr_in *)ss;
                a->sin_family = AF_INET;
                a->sin_port = htons(port);
                a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                *len = sizeof(*a);
                return 0;
        }
        if (attempt == 1) {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
                a->sin6_family = AF_INET6;
                a->sin6_port = htons(port);
                a->sin6_addr = in6addr_loopback;
                *len = sizeof(*a);
                return 0;
        }
        return -ENOENT;
}

static void set_nodelay(int fd)
{
        int one = 1;
        /* Only latency is at stake: bytes go on as they come. */
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Closes fd so that its peer sees a reset rather than an orderly end. */
static void close_reset(int fd)
{
        struct linger l = {.l_onoff = 1, .l_linger = 0};
        (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
        close(fd);
}

static int watch_end(struct relay *r, struct end *e)
{
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                                 .data.ptr = e};
        return epoll_ctl(r->epfd, EPOLL_CTL_ADD, e->fd, &ev) < 0 ? -errno : 0;
}

static void conn_close(struct relay *r, struct conn *c, bool reset)
{
        for (int s = CLIENT; s <= INSIDE; s++) {
                if (c->ends[s].fd < 0)
                        continue;
                if (reset)
                        close_reset(c->ends[s].fd);
                else
                        close(c->ends[s].fd);
                c->ends[s].fd = -1;
        }
        c->dead = true;
        c->next_dead = r->dead;
        r->dead = c;
        r->nconns--;
}

/* Starts dialling the inside address c->attempt, and the ones after it
 * while they fail at once. */
static int dial(struct relay *r, struct conn *c)
{
        struct end *e = &c->ends[INSIDE];
        struct sockaddr_storage ss;
        socklen_t len;
        int last = ECONNREFUSED;
        for (; inside_addr(c->attempt, c->to_port, &ss, &len) == 0; c->attempt++) {
                if (e->fd >= 0)
                        close(e->fd);
                e->readable = e->writable = false;
                e->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (e->fd < 0) {
                        last = errno;
                        continue;
                }
                set_nodelay(e->fd);
                if (connect(e->fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS) {
                        last = errno;
                        continue;
                }
                return watch_end(r, e);
        }
        return -last;
}

/* Whether the inside socket has finished connecting: asked of the socket
 * itself, so a stale event from an earlier attempt's socket changes
 * nothing. */
static int dial_result(struct end *e, bool *done)
{
        int soerr = 0;
        socklen_t len = sizeof(soerr);
        if (getsockopt(e->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
                return -errno;
        if (soerr != 0)
                return -soerr;
        struct sockaddr_storage ss;
        len = sizeof(ss);
        *done = getpeername(e->fd, (struct sockaddr *)&ss, &len) == 0;
        return 0;
}

/* Moves what it can from ends[from] to the other end. */
static int pump(struct conn *c, enum side from)
{
        struct flow *f = &c->flows[from];
        struct end *src = &c->ends[from], *dst = &c->ends[!from];
        bool progress = true;
        while (progress) {
                progress = false;
                if (!f->eof && src->readable && f->stop < RELAY_BUF) {
                        ssize_t n = recv(src->fd, f->buf + f->stop, RELAY_BUF - f->stop, 0);
                        if (n > 0)
                                f->stop += (size_t)n;
                        else if (n == 0)
                                f->eof = true;
                        else if (errno == EAGAIN)
                                src->readable = false;
                        else if (errno != EINTR)
                                return -errno;
                        progress = n >= 0 || errno == EINTR;
                }
                if (f->start < f->stop && dst->writable) {
                        ssize_t n =
                            send(dst->fd, f->buf + f->start, f->stop - f->start, MSG_NOSIGNAL);
                        if (n >= 0)
                                f->start += (size_t)n;
                        else if (errno == EAGAIN)
                                dst->writable = false;
                        else if (errno != EINTR)
                                return -errno;
                        if (f->start == f->stop)
                                f->start = f->stop = 0;
                        progress = progress || n > 0 || errno == EINTR;
                }
        }
        if (f->eof && !f->shut && f->start == f->stop) {
                if (shutdown(dst->fd, SHUT_WR) < 0 && errno != ENOTCONN)
                        return -errno;
                f->shut = true;
        }
        return 0;
}

static void conn_pump(struct relay *r, struct conn *c)
{
        if (!c->connected)
                return;
        if (pump(c, CLIENT) < 0 || pump(c, INSIDE) < 0)
                conn_close(r, c, true);
        else if (c->flows[CLIENT].shut && c->flows[INSIDE].shut)
                conn_close(r, c, false);
}

static void on_inside_dialled(struct relay *r, struct conn *c)
{
        bool done = false;
        int e = dial_result(&c->ends[INSIDE], &done);
        if (e < 0) {
                c->attempt++;
                if (dial(r, c) < 0)
                        conn_close(r, c, true);
                return;
        }
        c->connected = done;
}

static void on_end(struct relay *r, struct end *e, uint32_t events)
{
        struct conn *c = e->conn;
        if (c->dead)
                return;
        if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
                e->readable = true;
        if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
                e->writable = true;
        if (!c->connected && e == &c->ends[INSIDE])
                on_inside_dialled(r, c);
        if (!c->dead)
                conn_pump(r, c);
}

static void conn_open(struct relay *r, int fd, uint16_t to_port)
{
        struct conn *c = calloc(1, sizeof(*c));
        if (!c) {
                close_reset(fd);
                return;
        }
        r->nconns++;
        c->to_port = to_port;
        for (int s = CLIENT; s <= INSIDE; s++)
                c->ends[s] = (struct end){.w.kind = WATCH_END, .fd = -1, .conn = c};
        c->ends[CLIENT].fd = fd;
        set_nodelay(fd);
        if (watch_end(r, &c->ends[CLIENT]) < 0 || dial(r, c) < 0)
                conn_close(r, c, true);
}

static void on_listener(struct relay *r, const struct listener *l)
{
        for (int i = 0; i < ACCEPT_BURST; i++) {
                int fd = accept4(l->port->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                        return; /* EAGAIN, or a client gone before we took it */
                if (r->nconns >= INGRESS_CONNS_MAX)
                        close_reset(fd);
                else
                        conn_open(r, fd, l->port->to_port);
        }
}

static void bury(struct relay *r)
{
        while (r->dead) {
                struct conn *c = r->dead;
                r->dead = c->next_dead;
                free(c);
        }
}

static int watch_fd(int epfd, int fd, struct watch *w)
{
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = w};
        return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* Returns 1 when the sandbox has ended. */
static int dispatch(struct relay *r, const struct epoll_event *ev)
{
        struct watch *w = ev->data.ptr;
        switch (w->kind) {
        case WATCH_PIDFD:
                return 1;
        case WATCH_LISTENER:
                on_listener(r, (struct listener *)w);
                return 0;
        case WATCH_END:
                on_end(r, (struct end *)w, ev->events);
                return 0;
        }
        return 0;
}

int ingress_relay_run(const struct relay_port *ports, size_t n, int pidfd)
{
        _cleanup_free_ struct listener *ls = calloc(n, sizeof(*ls));
        _cleanup_close_ int epfd = epoll_create1(EPOLL_CLOEXEC);
        if (!ls || epfd < 0)
                return ls ? -errno : -ENOMEM;
        struct watch pidw = {WATCH_PIDFD};
        int rc = watch_fd(epfd, pidfd, &pidw);
        for (size_t i = 0; rc == 0 && i < n; i++) {
                ls[i] = (struct listener){.w.kind = WATCH_LISTENER, .port = &ports[i]};
                rc = watch_fd(epfd, ports[i].fd, &ls[i].w);
        }
        /* Connections still open when the sandbox ends die with this
         * process: the kernel closes their sockets. */
        struct relay r = {.epfd = epfd};
        while (rc == 0) {
                struct epoll_event ev[EVENTS_AT_ONCE];
                int k = epoll_wait(epfd, ev, EVENTS_AT_ONCE, -1);
                if (k < 0 && errno != EINTR)
                        rc = -errno;
                for (int i = 0; rc == 0 && i < k; i++)
                        rc = dispatch(&r, &ev[i]);
                bury(&r);
        }
        return rc < 0 ? rc : 0;
}
