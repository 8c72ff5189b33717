#include "netns/gateway.h"
#include "netns/gateway_conn.h"
#include "netns/gateway_confine.h"
#include "netns/gateway_monitor.h"
#include "netns/gateway_log.h"
#include "netns/gateway_policy.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#define SWEEP_INTERVAL_MS 250

/* The loop's own fds. */
struct loop {
        struct gateway *gw;
        struct endpoint listeners[8];
        size_t n_listeners;
        bool listeners_paused; /* out of fds: accept again at the next sweep */
        struct endpoint signal, timer, resolver, owner, control;
};

uint64_t gateway_now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int ep_set(int epfd, struct endpoint *ep, uint32_t want)
{
        if (ep->fd < 0 || ep->events == want)
                return 0;
        int op = !ep->events ? EPOLL_CTL_ADD : !want ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
        struct epoll_event ev = {.events = want, .data.ptr = ep};
        if (epoll_ctl(epfd, op, ep->fd, &ev) < 0)
                return -errno;
        ep->events = want;
        return 0;
}

/* What reading and writing on ep wait for: through TLS, whatever its last
 * step that would block asked for. */
static uint32_t read_wait(const struct endpoint *ep)
{
        return ep->ssl ? ep->tls_read_wait : EPOLLIN;
}

static uint32_t write_wait(const struct endpoint *ep)
{
        return ep->ssl ? ep->tls_write_wait : EPOLLOUT;
}

static uint32_t client_events(const struct conn *c)
{
        uint32_t out = flow_pending(&c->down) ? write_wait(&c->client) : 0;
        uint32_t in = flow_has_room(&c->up) && !c->up.eof ? read_wait(&c->client) : 0;
        switch (c->state) {
        case CONN_HEAD:
        case CONN_HELLO:
        case CONN_TUNNEL:
                return out | in;
        case CONN_FORWARD:
                return out | (!c->req.body.done ? in : 0);
        case CONN_TLS_ACCEPT:
                return c->client.tls_read_wait;
        case CONN_CLOSING: /* the answer, then the client's close */
                return out ? out : read_wait(&c->client);
        default:
                return 0;
        }
}

static uint32_t upstream_events(const struct conn *c)
{
        uint32_t out = flow_pending(&c->up) ? write_wait(&c->upstream) : 0;
        uint32_t in = flow_has_room(&c->down) && !c->down.eof ? read_wait(&c->upstream) : 0;
        switch (c->state) {
        case CONN_CONNECTING:
                return EPOLLOUT;
        case CONN_TLS_CONNECT:
                return c->upstream.tls_read_wait;
        case CONN_TUNNEL:
                return out | in;
        case CONN_FORWARD:
                return out | (!c->req.resp.done ? in : 0);
        default:
                return 0;
        }
}

void conn_update_events(struct conn *c)
{
        int epfd = c->gw->epfd;
        if (ep_set(epfd, &c->client, client_events(c)) < 0 ||
            ep_set(epfd, &c->upstream, upstream_events(c)) < 0) {
                umw_warn("gateway: epoll_ctl: %s", strerror(errno));
                conn_close(c);
        }
}

void conn_set_state(struct conn *c, enum conn_state s)
{
        c->state = s;
        c->state_since_ms = gateway_now_ms();
}

void endpoint_close(struct endpoint *ep)
{
        SSL_free(ep->ssl);
        ep->ssl = NULL;
        ep->tls_write_blocked = false;
        umw_close_fdp(&ep->fd);
        ep->events = 0;
}

void conn_close(struct conn *c)
{
        if (c->closed)
                return; /* waiting to be freed */
        c->closed = true;
        if (c->req.active)
                request_end(c);
        if (c->req.lookup) {
                c->req.lookup->owner = NULL; /* the loop frees it when it comes back */
                c->req.lookup = NULL;
        }
        endpoint_close(&c->client);
        endpoint_close(&c->upstream);
        c->state = CONN_CLOSING;
        struct gateway *gw = c->gw;
        if (c->prev)
                c->prev->next = c->next;
        else
                gw->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        gw->n_conns--;
        c->next = gw->dead;
        gw->dead = c;
}

static void conn_free(struct conn *c)
{
        flow_free(&c->up);
        flow_free(&c->down);
        request_reset(&c->req);
        free(c);
}

static const char busy_answer[] = "HTTP/1.1 503 Service Unavailable\r\n"
                                  "Content-Type: text/plain\r\nContent-Length: 56\r\n"
                                  "Connection: close\r\n\r\n"
                                  "umwelt-gateway: too many connections, try again later.\n";

/* Beyond the cap: a 503 written straight away (it fits any socket buffer)
 * and the connection closed. */
static void refuse_busy(struct gateway *gw, int fd)
{
        if (send(fd, busy_answer, sizeof(busy_answer) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
                /* the client is gone already */
        }
        close(fd);
        struct gateway_record r = {.sandbox = gw->o->sandbox,
                                   .decision = "deny",
                                   .reason = "connection cap reached",
                                   .status = 503};
        gateway_log_request(gw->o->log_fd, &r);
}

static void conn_new(struct gateway *gw, int fd)
{
        struct conn *c = calloc(1, sizeof(*c));
        if (!c || flow_init(&c->up) < 0 || flow_init(&c->down) < 0) {
                if (c) {
                        flow_free(&c->up);
                        flow_free(&c->down);
                }
                free(c);
                close(fd);
                return;
        }
        c->gw = gw;
        c->client = (struct endpoint){.kind = EP_CLIENT, .conn = c, .fd = fd};
        c->upstream = (struct endpoint){.kind = EP_UPSTREAM, .conn = c, .fd = -1};
        c->next = gw->conns;
        if (gw->conns)
                gw->conns->prev = c;
        gw->conns = c;
        gw->n_conns++;
        conn_set_state(c, CONN_HEAD);
        c->last_io_ms = c->state_since_ms;
        conn_update_events(c);
}

static void pause_listeners(struct loop *l, bool pause)
{
        for (size_t i = 0; i < l->n_listeners; i++)
                ep_set(l->gw->epfd, &l->listeners[i], pause ? 0 : EPOLLIN);
        l->listeners_paused = pause;
}

static void on_accept(struct loop *l, struct endpoint *ep)
{
        struct gateway *gw = l->gw;
        for (;;) {
                int fd = accept4(ep->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                            errno == ENOMEM) {
                                umw_warn("gateway: accept: %s", strerror(errno));
                                pause_listeners(l, true);
                        }
                        return; /* EAGAIN, or a connection aborted before accept */
                }
                if (gateway_nodelay(fd) < 0)
                        close(fd);
                else if (gw->n_conns >= gw->o->max_conns)
                        refuse_busy(gw, fd);
                else
                        conn_new(gw, fd);
        }
}

struct gateway_rules *gateway_rules_ref(struct gateway_rules *r)
{
        r->refs++;
        return r;
}

void gateway_rules_unref(struct gateway_rules *r)
{
        if (r && --r->refs == 0) {
                egress_rules_free(&r->rules);
                free(r);
        }
}

/* A fresh set read from the policy files (by name at the start; on a
 * reload from the fds the monitor opened: fds NULL at the start); NULL only
 * when out of memory. */
static struct gateway_rules *rules_load(const struct gateway_options *o, const int *fds,
                                        const int *errs, struct umw_error **err)
{
        struct gateway_rules *r = calloc(1, sizeof(*r));
        if (!r) {
                umw_fail_sys(err, ENOMEM, "gateway: rules");
                return NULL;
        }
        r->refs = 1;
        /* On failure the set stays empty: everything is refused. */
        if (fds)
                gateway_policy_load_fds(o->policy_files, fds, errs, o->n_policy, &r->rules, err);
        else
                gateway_policy_load(o->policy_files, o->n_policy, &r->rules, err);
        return r;
}

static void reload(struct gateway *gw, const int *fds, const int *errs)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct gateway_rules *r = rules_load(gw->o, fds, errs, &err);
        /* A policy that cannot be read refuses everything: never keep rules
         * the files no longer say. */
        static struct gateway_rules refuse_all = {.refs = 1}; /* never freed */
        gateway_rules_unref(gw->rules);
        gw->rules = r ? r : gateway_rules_ref(&refuse_all);
        gateway_tls_reload(gw);
        if (err) {
                umw_error_prefix(&err, "reload: every request is refused until the policy reads");
                umw_log_error(err);
        }
        gateway_log_reload(gw->o->log_fd, gw->o->sandbox, err ? err->msg : NULL);
}

static void on_signal(struct loop *l)
{
        struct signalfd_siginfo si;
        while (read(l->signal.fd, &si, sizeof(si)) == sizeof(si))
                if (si.ssi_signo != SIGHUP) /* the monitor's job: on_control() */
                        l->gw->stop = true;
}

/* The monitor's reload: the policy files it opened, as fds. */
static void on_control(struct loop *l)
{
        int fds[GATEWAY_POLICY_MAX], errs[GATEWAY_POLICY_MAX];
        size_t n = 0;
        int r = gateway_monitor_recv(l->control.fd, fds, errs, &n);
        if (r == 0)
                l->gw->stop = l->gw->orphaned = true;
        if (r <= 0)
                return;
        if (n == l->gw->o->n_policy)
                reload(l->gw, fds, errs);
        else
                umw_warn("gateway: reload: %zu files from the monitor, expected %zu", n,
                         l->gw->o->n_policy);
        for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
}

static bool expired(uint64_t now, uint64_t since, unsigned timeout)
{
        return now - since > timeout;
}

static void sweep_one(struct conn *c, uint64_t now)
{
        const struct gateway_options *o = c->gw->o;
        bool has_bytes = c->up.end > c->up.start;
        switch (c->state) {
        case CONN_HEAD:
                if (has_bytes && expired(now, c->state_since_ms, o->header_timeout_ms))
                        conn_answer(c, 408, "deny", "request head timeout",
                                    "umwelt-gateway: the request head took too long.\n");
                else if (!has_bytes && expired(now, c->state_since_ms, o->idle_timeout_ms))
                        conn_close(c);
                break;
        case CONN_HELLO:
        case CONN_TLS_ACCEPT:
                if (expired(now, c->state_since_ms, o->header_timeout_ms))
                        conn_close_because(c, NULL,
                                           c->state == CONN_HELLO ? "ClientHello timeout"
                                                                  : "TLS handshake timeout");
                break;
        case CONN_RESOLVING:
        case CONN_CONNECTING:
        case CONN_TLS_CONNECT:
                if (expired(now, c->state_since_ms, o->connect_timeout_ms))
                        conn_answer(c, 504, c->req.decision, "upstream timeout",
                                    "umwelt-gateway: the upstream server did not answer in "
                                    "time.\n");
                break;
        case CONN_CLOSING:
                if (expired(now, c->state_since_ms, o->header_timeout_ms))
                        conn_close(c);
                break;
        default:
                if (expired(now, c->last_io_ms, o->idle_timeout_ms)) {
                        free(c->req.reason);
                        c->req.reason = strdup("idle timeout");
                        conn_close(c);
                }
        }
}

static void on_timer(struct loop *l)
{
        uint64_t ticks;
        if (read(l->timer.fd, &ticks, sizeof(ticks)) < 0) {
                /* EAGAIN: nothing to count */
        }
        uint64_t now = gateway_now_ms();
        for (struct conn *c = l->gw->conns, *next; c; c = next) {
                next = c->next;
                sweep_one(c, now);
                if (!c->closed)
                        conn_update_events(c);
        }
        gateway_pool_sweep(&l->gw->pool, now);
        if (l->listeners_paused)
                pause_listeners(l, false);
}

static void on_lookups(struct loop *l)
{
        for (struct gateway_lookup *lk; (lk = gateway_resolver_done(l->gw->resolver));) {
                struct conn *c = lk->owner;
                if (!c)
                        free(lk);
                else {
                        conn_on_lookup(c, lk);
                        if (!c->closed)
                                conn_update_events(c);
                }
        }
}

static void on_conn_event(struct endpoint *ep)
{
        struct conn *c = ep->conn;
        if (c->closed)
                return; /* earlier in this batch */
        c->last_io_ms = gateway_now_ms();
        switch (c->state) {
        case CONN_HEAD:
                conn_on_head(c);
                break;
        case CONN_CONNECTING:
                if (ep->kind == EP_UPSTREAM)
                        conn_on_connected(c);
                break;
        case CONN_RESOLVING:
                break;
        default:
                conn_stream(c);
        }
        if (!c->closed)
                conn_update_events(c);
}

static void dispatch(struct loop *l, struct epoll_event *ev)
{
        struct endpoint *ep = ev->data.ptr;
        switch (ep->kind) {
        case EP_LISTENER:
                on_accept(l, ep);
                break;
        case EP_SIGNAL:
                on_signal(l);
                break;
        case EP_TIMER:
                on_timer(l);
                break;
        case EP_RESOLVER:
                on_lookups(l);
                break;
        case EP_CONTROL:
                on_control(l);
                break;
        case EP_OWNER:
                umw_warn("gateway: the sandbox's process has ended: stopping");
                l->gw->stop = true;
                break;
        default:
                on_conn_event(ep);
        }
}

static void free_dead(struct gateway *gw)
{
        while (gw->dead) {
                struct conn *c = gw->dead;
                gw->dead = c->next;
                conn_free(c);
        }
}

static int serve(struct loop *l, struct umw_error **err)
{
        struct epoll_event events[64];
        while (!l->gw->stop) {
                int n = epoll_wait(l->gw->epfd, events, ARRAY_SIZE(events), -1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return umw_fail_errno(err, "gateway: epoll_wait");
                for (int i = 0; i < n; i++)
                        dispatch(l, &events[i]);
                free_dead(l->gw);
                gateway_log_flush();
        }
        /* Not "stopped": whoever started the monitor must hear that the
         * door shut while the sandbox ran, even if this engine outlives its
         * monitor by the moment its death signal takes to arrive. */
        return l->gw->orphaned ? umw_fail(err, UMW_EXIT_FAILURE, EPIPE,
                                          "gateway: the monitor has ended: stopping")
                               : 0;
}

static int add_endpoint(struct gateway *gw, struct endpoint *ep, int kind, int fd,
                        struct umw_error **err)
{
        *ep = (struct endpoint){.kind = kind, .fd = fd};
        if (ep_set(gw->epfd, ep, EPOLLIN) < 0)
                return umw_fail_errno(err, "gateway: epoll_ctl");
        return 0;
}

/* A client's side is the sandbox's loopback, with no congestion to
 * control, yet the host's algorithm runs on it: BBR (a common default)
 * paces every burst with a timer where the qdisc is not fq, and its start
 * marks the socket as needing pacing for good, so switching an accepted
 * socket to another algorithm later does not end it. Accepted sockets take
 * the listener's algorithm: Reno (which any user may choose, and which
 * does not pace) set here is theirs from the first byte. On a BBR host a
 * 1 GiB CONNECT transfer on loopback went 0.73x -> 1.0x direct loopback.
 * The upstream side keeps the host's algorithm: it is the real network. */
static void listener_congestion(int fd)
{
        static const char reno[] = "reno";
        /* Where Reno is refused the host's algorithm stays: slower, never wrong. */
        if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, reno, sizeof(reno) - 1) < 0)
                umw_debug("gateway: a listener keeps the host's congestion control: %s",
                          strerror(errno));
}

/* SIGHUP, SIGTERM and SIGINT arrive through a signalfd; they are blocked
 * before the resolver threads start so that none of those takes them. */
static int open_signals(sigset_t *old, int *fd, struct umw_error **err)
{
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGHUP);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        if (sigprocmask(SIG_BLOCK, &set, old) < 0)
                return umw_fail_errno(err, "sigprocmask");
        *fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
        if (*fd < 0)
                return umw_fail_errno(err, "signalfd");
        signal(SIGPIPE, SIG_IGN);
        return 0;
}

static int open_timer(int *fd, struct umw_error **err)
{
        *fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (*fd < 0)
                return umw_fail_errno(err, "timerfd_create");
        struct itimerspec its = {
            .it_interval = {.tv_nsec = SWEEP_INTERVAL_MS * 1000000L},
            .it_value = {.tv_nsec = SWEEP_INTERVAL_MS * 1000000L},
        };
        if (timerfd_settime(*fd, 0, &its, NULL) < 0)
                return umw_fail_errno(err, "timerfd_settime");
        return 0;
}

static int setup(struct loop *l, sigset_t *old_mask, struct umw_error **err)
{
        struct gateway *gw = l->gw;
        const struct gateway_options *o = gw->o;
        int sfd = -1, tfd = -1, r;
        if (o->n_listen == 0 || o->n_listen > ARRAY_SIZE(l->listeners))
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL, "gateway: 1 to %zu listeners",
                                ARRAY_SIZE(l->listeners));
        if (!(gw->rules = rules_load(o, NULL, NULL, err)) || *err)
                return -EINVAL;
        if ((r = gateway_tls_setup(gw, o->upstream_ca, o->trust_dir, err)) < 0)
                return r;
        if ((gw->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
                return umw_fail_errno(err, "epoll_create1");
        /* The endpoints own these fds from here on, whatever fails next. */
        r = open_signals(old_mask, &sfd, err);
        l->signal = (struct endpoint){.kind = EP_SIGNAL, .fd = sfd};
        if (r < 0 || (r = open_timer(&tfd, err)) < 0)
                return r;
        l->timer = (struct endpoint){.kind = EP_TIMER, .fd = tfd};
        if ((r = gateway_resolver_new(o->hosts_file, &gw->resolver, err)) < 0)
                return r;
        if ((r = add_endpoint(gw, &l->signal, EP_SIGNAL, sfd, err)) < 0 ||
            (r = add_endpoint(gw, &l->timer, EP_TIMER, tfd, err)) < 0 ||
            (r = add_endpoint(gw, &l->resolver, EP_RESOLVER, gateway_resolver_fd(gw->resolver),
                              err)) < 0)
                return r;
        /* A sandbox gone without a word (killed, its runtime too) leaves
         * no gateway behind. */
        if (o->owner_pidfd >= 0 &&
            (r = add_endpoint(gw, &l->owner, EP_OWNER, o->owner_pidfd, err)) < 0)
                return r;
        for (size_t i = 0; i < o->n_listen; i++) {
                listener_congestion(o->listen_fds[i]);
                if ((r = add_endpoint(gw, &l->listeners[i], EP_LISTENER, o->listen_fds[i], err)) <
                    0)
                        return r;
                l->n_listeners++;
        }
        return 0;
}

static int announce_ready(int fd, struct umw_error **err)
{
        int r = fd < 0 ? 0 : umw_write_all(fd, "ready\n", 6);
        return r < 0 ? umw_fail_sys(err, -r, "gateway: write to the ready fd") : 0;
}

/* After a stop as asked: whoever started the gateway tells it from a death
 * (the fd closes without it), even where it could not get the exit status. */
static void announce_stopped(int fd)
{
        if (fd >= 0 && umw_write_all(fd, "stopped\n", 8) < 0) {
                /* no one listens any more */
        }
}

static void teardown(struct loop *l, const sigset_t *old_mask)
{
        struct gateway *gw = l->gw;
        while (gw->conns)
                conn_close(gw->conns);
        free_dead(gw);
        gateway_log_flush();
        conn_pool_clear(gw);
        gateway_resolver_free(gw->resolver);
        gateway_rules_unref(gw->rules);
        gateway_tls_free(gw);
        for (size_t i = 0; i < gw->o->n_listen; i++)
                close(gw->o->listen_fds[i]);
        umw_close_fdp(&l->signal.fd);
        umw_close_fdp(&l->timer.fd);
        umw_close_fdp(&l->control.fd);
        if (gw->o->owner_pidfd >= 0)
                close(gw->o->owner_pidfd);
        umw_close_fdp(&gw->epfd);
        if (old_mask)
                sigprocmask(SIG_SETMASK, old_mask, NULL);
}

/* A signalfd's readiness is registered on the signal queue of the process
 * that added it to epoll: the engine's own signals need a signalfd the
 * engine added. SIGHUP is the monitor's (the engine keeps it blocked). */
static int engine_signals(struct loop *l, struct umw_error **err)
{
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        int r = ep_set(l->gw->epfd, &l->signal, 0);
        if (r < 0)
                return umw_fail_sys(err, -r, "gateway: epoll_ctl");
        umw_close_fdp(&l->signal.fd);
        int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
        if (fd < 0)
                return umw_fail_errno(err, "signalfd");
        return add_endpoint(l->gw, &l->signal, EP_SIGNAL, fd, err);
}

/* The engine, in the forked child: confined, then serving. */
static int engine(struct loop *l, int ctl, struct umw_error **err)
{
        const struct gateway_options *o = l->gw->o;
        int r;
        if ((r = add_endpoint(l->gw, &l->control, EP_CONTROL, ctl, err)) < 0 ||
            (r = engine_signals(l, err)) < 0 || (r = gateway_confine_engine(err)) < 0 ||
            (r = announce_ready(o->ready_fd, err)) < 0)
                return r;
        umw_debug("gateway: serving %zu listeners", o->n_listen);
        return serve(l, err);
}

/* The monitor, in the parent: its copy of the engine's state freed, then
 * reloads and signals until the engine ends. */
static int monitor(struct loop *l, pid_t pid, int ctl, struct umw_error **err)
{
        const struct gateway_options *o = l->gw->o;
        teardown(l, NULL);
        if (o->ready_fd >= 0)
                close(o->ready_fd);
        int r = gateway_monitor_run(pid, ctl, o->policy_files, o->n_policy, err);
        return r;
}

/* The engine's (or a failed start's) end: its state freed, "stopped" said
 * when it stopped as asked, the ready fd closed; returns r. */
static int finish(struct loop *l, const sigset_t *old_mask, int r)
{
        const struct gateway_options *o = l->gw->o;
        teardown(l, l->signal.fd >= 0 ? old_mask : NULL);
        if (r == 0)
                announce_stopped(o->ready_fd);
        if (o->ready_fd >= 0)
                close(o->ready_fd);
        return r;
}

int gateway_run(const struct gateway_options *o, struct umw_error **err)
{
        struct gateway gw = {.o = o, .epfd = -1, .tls = {.roots_fd = -1}};
        struct loop l = {.gw = &gw};
        l.signal.fd = l.timer.fd = l.control.fd = -1;
        sigset_t old_mask;
        pid_t pid = -1;
        int ctl = -1;
        int r;
        if ((r = setup(&l, &old_mask, err)) < 0 ||
            (r = gateway_monitor_fork(&pid, &ctl, err)) < 0) {
                if (ctl >= 0)
                        close(ctl);
                return finish(&l, &old_mask, r);
        }
        if (pid > 0)
                return monitor(&l, pid, ctl, err);
        return finish(&l, &old_mask, engine(&l, ctl, err));
}
