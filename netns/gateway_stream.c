/* The bytes of a request once it is decided: the ClientHello check and the
 * tunnel of a CONNECT, the request and response of plain HTTP (or of a
 * request inside a terminated tunnel, through TLS on both sides) with their
 * bodies streamed as they come (followed only far enough to know where each
 * ends), and the last answer before a close. */
#include "netns/gateway_conn.h"
#include "netns/tls_hello.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* What a tunnel's pipe is asked to hold: a few of the largest segments
 * loopback and veth deliver, so that one splice moves a lot, without
 * taking a user's pipe pages from the rest of the user's processes
 * (fs.pipe-user-pages-soft). A direction that fills it is a bulk transfer:
 * its pipe grows to TUNNEL_PIPE_BULK (fs.pipe-max-size's default), which
 * halves the splices and wakeups per byte (the gateway's CPU for a 1 GiB
 * CONNECT transfer on loopback: 0.58 -> 0.41 s); where the user's pages or
 * the limit do not allow it, it stays as it is. */
#define TUNNEL_PIPE_SIZE (256 * 1024)
#define TUNNEL_PIPE_BULK (1024 * 1024)

int flow_init(struct flow *f)
{
        *f = (struct flow){.pipe = {-1, -1}};
        f->buf = malloc(CONN_BUF_SIZE);
        return f->buf ? 0 : -ENOMEM;
}

void flow_free(struct flow *f)
{
        free(f->buf);
        free(f->extra);
        umw_close_fdp(&f->pipe[0]);
        umw_close_fdp(&f->pipe[1]);
        *f = (struct flow){.pipe = {-1, -1}};
}

int flow_add_extra(struct flow *f, char *text, size_t len)
{
        if (!f->extra) {
                f->extra = text;
                f->extra_len = len;
                f->extra_off = 0;
                return 0;
        }
        char *joined = realloc(f->extra, f->extra_len + len);
        if (!joined) {
                free(text);
                return -ENOMEM;
        }
        memcpy(joined + f->extra_len, text, len);
        free(text);
        f->extra = joined;
        f->extra_len += len;
        return 0;
}

void flow_discard(struct flow *f)
{
        free(f->extra);
        f->extra = NULL;
        f->extra_len = f->extra_off = 0;
        f->start = f->end = f->fwd = 0;
}

bool flow_pending(const struct flow *f)
{
        return f->extra || f->fwd > 0 || f->piped > 0;
}

bool flow_has_room(const struct flow *f)
{
        if (f->pipe[0] >= 0)
                return !f->pipe_full && f->piped < f->pipe_size;
        return f->end - f->start < CONN_BUF_SIZE;
}

static bool would_block(int e)
{
        return e == EAGAIN || e == EWOULDBLOCK || e == EINTR;
}

static ssize_t recv_some(struct endpoint *ep, char *p, size_t n)
{
        if (ep->ssl)
                return endpoint_tls_recv(ep, p, n);
        ssize_t r = recv(ep->fd, p, n, 0);
        return r >= 0 ? r : would_block(errno) ? -EAGAIN : -errno;
}

int flow_read(struct flow *f, struct endpoint *ep)
{
        int moved = 0;
        do {
                if (f->eof)
                        return moved;
                if (f->start > 0 && (f->start == f->end || f->end == CONN_BUF_SIZE)) {
                        memmove(f->buf, f->buf + f->start, f->end - f->start);
                        f->end -= f->start;
                        f->start = 0;
                }
                if (f->end == CONN_BUF_SIZE)
                        return moved;
                ssize_t n = recv_some(ep, f->buf + f->end, CONN_BUF_SIZE - f->end);
                if (n == -EAGAIN)
                        return moved;
                if (n < 0)
                        return (int)n;
                if (n == 0)
                        f->eof = true;
                f->end += (size_t)n;
                moved = 1;
        } while (ep->ssl);
        return moved;
}

static ssize_t send_some(struct endpoint *ep, const char *p, size_t n)
{
        ssize_t w;
        if (ep->ssl)
                w = endpoint_tls_send(ep, p, n);
        else if ((w = send(ep->fd, p, n, MSG_NOSIGNAL)) < 0)
                w = would_block(errno) ? -EAGAIN : -errno;
        return w == -EAGAIN ? 0 : w;
}

/* The extra text is freed once all of it is out. */
static void extra_sent(struct flow *f)
{
        if (f->extra_off == f->extra_len) {
                free(f->extra);
                f->extra = NULL;
                f->extra_len = f->extra_off = 0;
        }
}

/* A head the gateway wrote and the bytes after it in one sendmsg() (one
 * segment for a small response, one system call): plain sockets only. */
static int write_both(struct flow *f, struct endpoint *ep)
{
        size_t head = f->extra_len - f->extra_off;
        struct iovec iov[2] = {{f->extra + f->extra_off, head}, {f->buf + f->start, f->fwd}};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
        ssize_t w = sendmsg(ep->fd, &m, MSG_NOSIGNAL);
        if (w < 0)
                return would_block(errno) ? 0 : -errno;
        f->bytes += (uint64_t)w;
        size_t from_head = (size_t)w < head ? (size_t)w : head;
        f->extra_off += from_head;
        f->start += (size_t)w - from_head;
        f->fwd -= (size_t)w - from_head;
        extra_sent(f);
        return 1;
}

int flow_write(struct flow *f, struct endpoint *ep)
{
        if (f->extra && f->fwd > 0 && !ep->ssl)
                return write_both(f, ep);
        if (f->extra) {
                ssize_t w = send_some(ep, f->extra + f->extra_off, f->extra_len - f->extra_off);
                if (w <= 0)
                        return (int)w;
                f->bytes += (uint64_t)w;
                f->extra_off += (size_t)w;
                extra_sent(f);
                return 1;
        }
        if (f->fwd == 0)
                return 0;
        ssize_t w = send_some(ep, f->buf + f->start, f->fwd);
        if (w <= 0)
                return (int)w;
        f->bytes += (uint64_t)w;
        f->start += (size_t)w;
        f->fwd -= (size_t)w;
        return 1;
}

void framing_start(struct framing *fr, enum framing_kind kind, uint64_t length)
{
        *fr = (struct framing){.kind = kind, .remaining = length};
        if (kind == FRAME_CHUNKED)
                http_chunked_init(&fr->chunked);
        fr->done = kind == FRAME_NONE || (kind == FRAME_LENGTH && length == 0);
}

int framing_take(struct framing *fr, struct flow *f)
{
        size_t judged = f->start + f->fwd, n = f->end - judged;
        if (fr->done || n == 0)
                return 0;
        size_t used = n;
        if (fr->kind == FRAME_LENGTH) {
                used = n < fr->remaining ? n : (size_t)fr->remaining;
                fr->remaining -= used;
                fr->done = fr->remaining == 0;
        } else if (fr->kind == FRAME_CHUNKED) {
                _cleanup_error_ struct umw_error *err = NULL;
                int r = http_chunked_feed(&fr->chunked, f->buf + judged, n, &used, &err);
                if (r < 0)
                        return r;
                fr->done = r == 1;
        }
        f->fwd += used;
        return 0;
}

void conn_close_because(struct conn *c, const char *decision, const char *reason)
{
        if (decision)
                c->req.decision = decision;
        free(c->req.reason);
        c->req.reason = strdup(reason);
        conn_close(c);
}

/* The ClientHello must name the CONNECT host; without SNI, only a tunnel an
 * address rule allowed may go on. Returns 1 when the tunnel may open, 0 to
 * wait for more, -1 when refused (closed). */
static int judge_hello(struct conn *c)
{
        struct tls_hello th;
        const unsigned char *p = (const unsigned char *)c->up.buf + c->up.start;
        int r = tls_hello_parse(p, c->up.end - c->up.start, &th);
        if (r == -EAGAIN && !c->up.eof)
                return 0;
        if (r < 0) {
                conn_close_because(c, "deny",
                                   r == -EAGAIN     ? "client closed before its ClientHello"
                                   : r == -EPROTO   ? "not TLS after CONNECT"
                                   : r == -EMSGSIZE ? "ClientHello too large"
                                                    : (th.why ? th.why : "bad ClientHello"));
                return -1;
        }
        if (!th.has_sni) {
                if (c->req.ip_rule)
                        return 1;
                conn_close_because(c, "deny", "ClientHello without SNI");
                return -1;
        }
        struct egress_host sni;
        _cleanup_error_ struct umw_error *err = NULL;
        if (egress_host_canon(th.sni, th.sni_len, &sni, &err) < 0) {
                conn_close_because(c, "deny", "SNI is not a host name");
                return -1;
        }
        if (!egress_host_equal(&sni, &c->req.host)) {
                char why[EGRESS_HOST_TEXT_SIZE + 48];
                snprintf(why, sizeof(why), "SNI %s differs from the CONNECT host", sni.text);
                conn_close_because(c, "deny", why);
                return -1;
        }
        return 1;
}

static int step_hello(struct conn *c)
{
        int w = flow_write(&c->down, &c->client);
        int r = flow_read(&c->up, &c->client);
        if (w < 0 || r < 0) {
                conn_close_because(c, NULL, "client connection failed");
                return 0;
        }
        int ok = judge_hello(c);
        if (ok <= 0)
                return ok < 0 ? 0 : (w | r);
        if (c->req.terminate)
                return conn_tls_accept(c);
        c->up.fwd = c->up.end - c->up.start; /* the hello and whatever followed it */
        conn_set_state(c, CONN_TUNNEL);
        return 1;
}

/* The pipe for a direction whose buffer is empty; false where none can
 * be made (out of fds: the buffer carries on). */
static bool splice_start(struct flow *f)
{
        int p[2];
        if (f->no_splice || pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0) {
                f->no_splice = true;
                return false;
        }
        int size = fcntl(p[1], F_SETPIPE_SZ, TUNNEL_PIPE_SIZE);
        if (size < 0) /* beyond the user's pipe pages: the default size */
                size = fcntl(p[1], F_GETPIPE_SZ);
        if (size <= 0) {
                close(p[0]);
                close(p[1]);
                f->no_splice = true;
                return false;
        }
        f->pipe[0] = p[0];
        f->pipe[1] = p[1];
        f->pipe_size = (size_t)size;
        return true;
}

/* A pipe a splice filled grows, where the user's pipe pages allow (else
 * it is asked again at its next fill: one cheap failing fcntl). */
static void pipe_grow(struct flow *f)
{
        if (f->pipe_size >= TUNNEL_PIPE_BULK || f->piped < f->pipe_size)
                return;
        int size = fcntl(f->pipe[1], F_SETPIPE_SZ, TUNNEL_PIPE_BULK);
        if (size > 0)
                f->pipe_size = (size_t)size;
}

static int splice_in(struct flow *f, const struct endpoint *from)
{
        if (f->eof || !flow_has_room(f))
                return 0;
        ssize_t n = splice(from->fd, NULL, f->pipe[1], NULL, f->pipe_size - f->piped,
                           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n < 0 && !would_block(errno))
                return -errno;
        if (n < 0) {
                /* Either no bytes, or the pipe's slots are taken by partly
                 * filled pages: with bytes in it, wait for their way out,
                 * or level-triggered readiness would spin. */
                f->pipe_full = f->piped > 0;
                return 0;
        }
        if (n == 0)
                f->eof = true;
        f->piped += (size_t)n;
        pipe_grow(f);
        return 1;
}

static int splice_out(struct flow *f, const struct endpoint *to)
{
        if (f->piped == 0)
                return 0;
        ssize_t n =
            splice(f->pipe[0], NULL, to->fd, NULL, f->piped, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n < 0)
                return would_block(errno) ? 0 : -errno;
        f->piped -= (size_t)n;
        f->bytes += (uint64_t)n;
        f->pipe_full = false;
        return 1;
}

/* One direction of a tunnel: what is buffered first (the ClientHello and
 * whatever came with it), then spliced. Returns 1 when bytes moved, 0, or
 * -errno. */
static int tunnel_move(struct flow *f, struct endpoint *from, struct endpoint *to)
{
        int r, moved;
        if (f->pipe[0] >= 0 || (f->start == f->end && !f->extra && splice_start(f))) {
                if ((moved = splice_in(f, from)) < 0)
                        return moved;
                return (r = splice_out(f, to)) < 0 ? r : (moved | r);
        }
        if ((moved = flow_read(f, from)) < 0)
                return moved;
        f->fwd = f->end - f->start;
        return (r = flow_write(f, to)) < 0 ? r : (moved | r);
}

/* A side that reached its end gets a FIN once everything for it is out. */
static void half_close(struct flow *f, int fd)
{
        if (f->eof && !flow_pending(f) && !f->shut && f->end == f->start) {
                if (shutdown(fd, SHUT_WR) < 0) {
                        /* the peer is gone: the other direction will say so */
                }
                f->shut = true;
        }
}

static int step_tunnel(struct conn *c)
{
        int up = tunnel_move(&c->up, &c->client, &c->upstream);
        int down = up < 0 ? 0 : tunnel_move(&c->down, &c->upstream, &c->client);
        if (up < 0 || down < 0) {
                conn_close_because(c, NULL, "connection reset");
                return 0;
        }
        int moved = up | down;
        half_close(&c->up, c->upstream.fd);
        half_close(&c->down, c->client.fd);
        if (c->up.shut && c->down.shut) {
                conn_close(c);
                return 0;
        }
        return moved;
}

static enum framing_kind response_framing(enum response_body b)
{
        switch (b) {
        case RESPONSE_BODY_LENGTH:
                return FRAME_LENGTH;
        case RESPONSE_BODY_CHUNKED:
                return FRAME_CHUNKED;
        case RESPONSE_BODY_CLOSE:
                return FRAME_CLOSE;
        default:
                return FRAME_NONE;
        }
}

/* The response heads waiting in down: interim (1xx) ones are passed on as
 * they come, the final one sets where the body ends. Returns 0, or -1 when
 * the connection was answered or closed. */
static int take_response_heads(struct conn *c)
{
        struct request *r = &c->req;
        struct flow *f = &c->down;
        while (!r->resp_head_done && f->end > f->start) {
                struct response_head h;
                int rc = response_head_parse(f->buf + f->start, f->end - f->start, r->is_head, &h);
                if (rc == -EAGAIN)
                        return 0;
                if (rc < 0 || h.status == 101) {
                        conn_answer(c, 502, NULL, "malformed response head from upstream",
                                    "umwelt-gateway: the upstream server's response was "
                                    "refused.\n");
                        return -1;
                }
                bool interim = h.status < 200;
                bool keep = r->keep_alive && h.body != RESPONSE_BODY_CLOSE;
                const char *extra = interim     ? NULL
                                    : !keep     ? "Connection: close\r\n"
                                    : r->http10 ? "Connection: keep-alive\r\n"
                                                : NULL;
                size_t len = 0;
                char *text = response_head_rewrite(f->buf + f->start, &h, extra, &len);
                if (!text || flow_add_extra(f, text, len) < 0) {
                        conn_close_because(c, NULL, "out of memory");
                        return -1;
                }
                f->start += h.head_len;
                if (!interim) {
                        r->status = h.status;
                        r->resp_head_done = true;
                        r->resp_keep_alive = h.keep_alive;
                        framing_start(&r->resp, response_framing(h.body), h.content_length);
                }
        }
        return 0;
}

/* Client to upstream: the request head, then the body as far as its
 * framing goes (what follows is the next request and waits). */
static int forward_up(struct conn *c)
{
        struct request *r = &c->req;
        int moved = 0, rc;
        if (!r->body.done && (rc = flow_read(&c->up, &c->client)) != 0) {
                if (rc < 0 || c->up.eof) {
                        conn_close_because(c, NULL, "client closed during the request");
                        return -1;
                }
                moved = 1;
        }
        if (framing_take(&r->body, &c->up) < 0) {
                conn_answer(c, 400, "deny", "bad chunked framing in the request body",
                            "umwelt-gateway: the request body's chunked framing is refused.\n");
                return -1;
        }
        if ((rc = flow_write(&c->up, &c->upstream)) < 0 && r->pooled && c->up.bytes == 0) {
                /* gone between the pool's look at it and this request:
                 * nothing of the request went out, so it may go again */
                conn_redial(c);
                return -1;
        }
        if (rc < 0) {
                conn_answer(c, 502, NULL, strerror(-rc),
                            "umwelt-gateway: the upstream server closed the connection.\n");
                return -1;
        }
        return moved | rc;
}

/* Upstream to client: the response heads rewritten, the body as it comes. */
static int forward_down(struct conn *c)
{
        struct request *r = &c->req;
        int moved = 0, rc;
        if (!r->resp.done || !r->resp_head_done) {
                if ((rc = flow_read(&c->down, &c->upstream)) < 0) {
                        conn_answer(c, 502, NULL, strerror(-rc),
                                    "umwelt-gateway: the upstream connection failed.\n");
                        return -1;
                }
                moved = rc;
        }
        if (take_response_heads(c) < 0)
                return -1;
        if (r->resp_head_done && framing_take(&r->resp, &c->down) < 0) {
                conn_close_because(c, NULL, "bad chunked framing from upstream");
                return -1;
        }
        if (c->down.eof && !r->resp.done) {
                if (!r->resp_head_done) {
                        conn_answer(c, 502, NULL, "upstream closed without a response",
                                    "umwelt-gateway: the upstream server sent no response.\n");
                        return -1;
                }
                if (r->resp.kind != FRAME_CLOSE) {
                        conn_close_because(c, NULL, "upstream closed during the response");
                        return -1;
                }
                r->resp.done = true;
        }
        if ((rc = flow_write(&c->down, &c->client)) < 0) {
                conn_close_because(c, NULL, "client connection failed");
                return -1;
        }
        return moved | rc;
}

/* The upstream connection may serve another request when both messages
 * ended where their framing said, the server meant to keep it (HTTP/1.1,
 * no close), and it sent nothing beyond its response. */
static bool upstream_reusable(const struct conn *c)
{
        const struct request *r = &c->req;
        return !c->terminated && !r->http10 && r->resp_keep_alive && r->body.done &&
               !flow_pending(&c->up) && r->resp.kind != FRAME_CLOSE && !c->down.eof &&
               c->down.start == c->down.end && !c->upstream.ssl;
}

static int step_forward(struct conn *c)
{
        struct request *r = &c->req;
        int up = forward_up(c);
        if (up < 0)
                return 0;
        int down = forward_down(c);
        if (down < 0)
                return 0;
        if (!r->resp.done || !r->resp_head_done || flow_pending(&c->down))
                return up | down;
        /* Answered. The connection goes on only where both framings held:
         * a server that answered before the request body was through leaves
         * the rest of that body on the wire. */
        bool keep = r->keep_alive && r->body.done && r->resp.kind != FRAME_CLOSE && !c->up.eof;
        r->reuse_upstream = upstream_reusable(c);
        request_end(c);
        if (keep)
                conn_next_request(c);
        else
                conn_set_state(c, CONN_CLOSING);
        return 1;
}

/* The last answer out, then a FIN, then whatever the client still sends is
 * read and dropped until it closes: closing with unread bytes would reset
 * the connection and could destroy the answer before the client reads it. */
static int step_closing(struct conn *c)
{
        int w = flow_write(&c->down, &c->client);
        if (w < 0) {
                conn_close(c);
                return 0;
        }
        if (flow_pending(&c->down))
                return w;
        if (!c->down.shut) {
                endpoint_tls_close_notify(&c->client);
                if (shutdown(c->client.fd, SHUT_WR) < 0) {
                        conn_close(c);
                        return 0;
                }
                c->down.shut = true;
        }
        c->up.start = c->up.end = c->up.fwd = 0;
        int r = flow_read(&c->up, &c->client);
        if (r < 0 || c->up.eof) {
                conn_close(c);
                return 0;
        }
        return r;
}

void conn_stream(struct conn *c)
{
        int progress = 1;
        bool outer = c->streaming;
        c->streaming = true;
        while (progress > 0 && !c->closed) {
                switch (c->state) {
                case CONN_HELLO:
                        progress = step_hello(c);
                        break;
                case CONN_TLS_ACCEPT:
                        progress = step_tls_accept(c);
                        break;
                case CONN_TLS_CONNECT:
                        progress = step_tls_connect(c);
                        break;
                case CONN_TUNNEL:
                        progress = step_tunnel(c);
                        break;
                case CONN_FORWARD:
                        progress = step_forward(c);
                        break;
                case CONN_CLOSING:
                        progress = step_closing(c);
                        break;
                default:
                        progress = 0;
                }
        }
        c->streaming = outer;
}

void conn_next_request(struct conn *c)
{
        free(c->up.extra);
        c->up.extra = NULL;
        c->up.extra_len = c->up.extra_off = 0;
        c->up.fwd = 0;
        flow_discard(&c->down);
        c->down.eof = c->down.shut = false;
        conn_set_state(c, CONN_HEAD);
        conn_on_head(c);
}
