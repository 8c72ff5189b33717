#include "netns/gateway_conn.h"
#include "netns/gateway_log.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *status_reason(int status)
{
        switch (status) {
        case 200:
                return "Connection established";
        case 400:
                return "Bad Request";
        case 403:
                return "Forbidden";
        case 408:
                return "Request Timeout";
        case 414:
                return "URI Too Long";
        case 431:
                return "Request Header Fields Too Large";
        case 502:
                return "Bad Gateway";
        case 503:
                return "Service Unavailable";
        case 504:
                return "Gateway Timeout";
        case 505:
                return "HTTP Version Not Supported";
        default:
                return "Error";
        }
}

static void set_reason(struct request *r, const char *reason)
{
        if (!reason)
                return;
        free(r->reason);
        r->reason = strdup(reason);
}

void request_reset(struct request *r)
{
        free(r->method);
        free(r->path);
        free(r->rule);
        free(r->reason);
        if (r->lookup)
                r->lookup->owner = NULL;
        gateway_rules_unref(r->rules);
        *r = (struct request){0};
}

static void request_start(struct conn *c)
{
        request_reset(&c->req);
        c->req.active = true;
        c->req.started_ms = gateway_now_ms();
        c->up.bytes = c->down.bytes = 0;
}

static bool pool_key(const struct request *r, const struct gateway_addr *a,
                     struct gateway_pool_key *k)
{
        return gateway_pool_key_set(k, r->host.text, r->port, a);
}

/* The pool holds connections allowed by one rule set, the current one: a
 * connection a request of older rules used is closed, and the first one
 * kept after a reload empties the pool of the older ones. */
static void pool_put(struct conn *c)
{
        struct gateway *gw = c->gw;
        struct request *r = &c->req;
        struct gateway_pool_key k;
        if (r->rules != gw->rules || !pool_key(r, &r->dialled, &k) ||
            (c->upstream.events && epoll_ctl(gw->epfd, EPOLL_CTL_DEL, c->upstream.fd, NULL) < 0)) {
                endpoint_close(&c->upstream);
                return;
        }
        c->upstream.events = 0;
        if (gw->pool_rules != gw->rules) {
                conn_pool_clear(gw);
                gw->pool_rules = gateway_rules_ref(gw->rules);
        }
        gateway_pool_put(&gw->pool, &k, TAKE_FD(c->upstream.fd), gateway_now_ms());
}

void conn_pool_clear(struct gateway *gw)
{
        gateway_pool_clear(&gw->pool);
        gateway_rules_unref(gw->pool_rules);
        gw->pool_rules = NULL;
}

void request_end(struct conn *c)
{
        struct request *r = &c->req;
        char host[EGRESS_HOST_TEXT_SIZE + 2] = "";
        if (r->has_host && egress_host_format(&r->host, host, sizeof(host)) < 0)
                host[0] = '\0';
        struct gateway_record rec = {
            .sandbox = c->gw->o->sandbox,
            .method = r->method,
            .host = host[0] ? host : NULL,
            .port = r->has_host ? r->port : 0,
            .path = r->path,
            .address = r->address[0] ? r->address : NULL,
            .decision = r->decision ? r->decision : "deny",
            .rule = r->rule,
            .reason = r->reason,
            .tls = r->terminate || c->terminated ? "terminated" : NULL,
            .status = r->status,
            .bytes_up = c->up.bytes,
            .bytes_down = c->down.bytes,
            .duration_ms = gateway_now_ms() - r->started_ms,
        };
        gateway_log_request(c->gw->o->log_fd, &rec);
        if (r->reuse_upstream)
                pool_put(c);
        else
                endpoint_close(&c->upstream);
        request_reset(r);
}

void conn_answer(struct conn *c, int status, const char *decision, const char *reason,
                 const char *body)
{
        struct request *r = &c->req;
        if (!r->active)
                request_start(c);
        if (decision)
                r->decision = decision;
        set_reason(r, reason);
        if (c->down.bytes > 0 || c->state == CONN_HELLO || c->state == CONN_TUNNEL ||
            c->state == CONN_TLS_ACCEPT || c->client.tls_write_blocked) {
                /* the client has had a status line already (or TLS holds
                 * bytes that must go first): all that is left is to close */
                conn_close(c);
                return;
        }
        r->status = status;
        char *text = NULL;
        int n = asprintf(&text,
                         "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                         "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                         status, status_reason(status), strlen(body), body);
        if (n < 0) {
                conn_close(c);
                return;
        }
        endpoint_close(&c->upstream);
        flow_discard(&c->down);
        if (flow_add_extra(&c->down, text, (size_t)n) < 0) {
                conn_close(c);
                return;
        }
        conn_set_state(c, CONN_CLOSING);
        conn_stream(c);
}

void conn_answerf(struct conn *c, int status, const char *decision, const char *reason,
                  const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *body = NULL;
        if (vasprintf(&body, fmt, ap) < 0)
                body = NULL;
        va_end(ap);
        conn_answer(c, status, decision, reason, body ? body : "umwelt-gateway: refused.\n");
        free(body);
}

static void host_text(const struct request *r, char *buf, size_t size)
{
        if (egress_host_format(&r->host, buf, size) < 0)
                snprintf(buf, size, "(host)");
}

static void answer_denied(struct conn *c, const struct egress_request *er,
                          const struct egress_verdict *v)
{
        char host[EGRESS_HOST_TEXT_SIZE + 2], want[EGRESS_HOST_TEXT_SIZE + 16];
        char narrow[2 * EGRESS_HOST_TEXT_SIZE + 4096] = "";
        host_text(&c->req, host, sizeof(host));
        if (v->rule) {
                c->req.rule = strdup(v->rule);
                conn_answerf(c, 403, "deny", "deny rule",
                             "umwelt-gateway: %s:%u is denied by the egress rule \"%s\".\n", host,
                             c->req.port, v->rule);
                return;
        }
        /* The host is what people ask for; the path, where one was seen, is
         * offered as the narrower rule. */
        struct egress_request host_only = {.host = er->host, .port = er->port};
        if (egress_rule_suggest(&host_only, want, sizeof(want)) < 0)
                snprintf(want, sizeof(want), "%s", host);
        if (er->path && egress_rule_suggest(er, narrow + 2, sizeof(narrow) - 2) >= 0)
                memcpy(narrow, ", ", 2);
        conn_answerf(c, 403, "deny", "no rule",
                     "umwelt-gateway: no egress rule allows %s:%u.\n"
                     "The rule to ask for, in the [egress] table of .umwelt.toml:\n\n"
                     "    allow = [\"%s\"]\n%s%s%s",
                     host, c->req.port, want,
                     narrow[0] ? "\nor, for this path alone:\n\n    allow = [\"" : "",
                     narrow[0] ? narrow + 2 : "", narrow[0] ? "\"]\n" : "");
}

/* A rule needs the requests inside the tunnel: the gateway answers the
 * CONNECT itself and terminates the TLS that follows (the ClientHello is
 * judged first); each request is decided and dialled on its own. */
static void terminate_tunnel(struct conn *c, const struct egress_verdict *v)
{
        struct request *r = &c->req;
        r->rule = v->rule ? strdup(v->rule) : NULL;
        if (!c->gw->tls.term) {
                char host[EGRESS_HOST_TEXT_SIZE + 2];
                host_text(r, host, sizeof(host));
                conn_answerf(c, 403, "deny", "TLS termination unavailable",
                             "umwelt-gateway: the egress rule \"%s\" decides requests to %s by "
                             "method or path, which needs the gateway to terminate TLS with the "
                             "umwelt CA, and it cannot: %s.\n",
                             v->rule ? v->rule : "", host,
                             c->gw->tls.error ? c->gw->tls.error : "?");
                return;
        }
        r->decision = "allow";
        r->terminate = true;
        r->ip_rule = r->host.kind == EGRESS_HOST_ADDR;
        conn_established(c);
}

static void dial_next(struct conn *c)
{
        struct request *r = &c->req;
        while (r->next_addr < r->n_addrs) {
                const struct gateway_addr *a = &r->addrs[r->next_addr++];
                r->dialled = *a;
                gateway_addr_text(a, r->address, sizeof(r->address));
                int fd = -1;
                int rc = gateway_dial(a, r->port, &fd);
                if (rc < 0) {
                        r->connect_errno = -rc;
                        continue;
                }
                c->upstream.fd = fd;
                c->upstream.events = 0;
                conn_set_state(c, CONN_CONNECTING);
                return;
        }
        char host[EGRESS_HOST_TEXT_SIZE + 2];
        host_text(r, host, sizeof(host));
        conn_answerf(c, 502, "allow", strerror(r->connect_errno),
                     "umwelt-gateway: cannot connect to %s:%u (%s): %s.\n", host, r->port,
                     r->address, strerror(r->connect_errno));
}

/* A plain-HTTP request may go out on an idle connection made for exactly
 * its host and port to one of the addresses just checked for it, under
 * the rules that decided it. */
static bool take_pooled(struct conn *c)
{
        struct request *r = &c->req;
        struct gateway *gw = c->gw;
        if (r->is_connect || c->terminated || r->rules != gw->pool_rules)
                return false;
        for (size_t i = 0; i < r->n_addrs; i++) {
                struct gateway_pool_key k;
                int fd = pool_key(r, &r->addrs[i], &k) ? gateway_pool_take(&gw->pool, &k) : -1;
                if (fd < 0)
                        continue;
                r->dialled = r->addrs[i];
                gateway_addr_text(&r->dialled, r->address, sizeof(r->address));
                r->pooled = true;
                c->upstream.fd = fd;
                c->upstream.events = 0;
                conn_set_state(c, CONN_FORWARD);
                /* after a response, the loop that streamed it goes on with
                 * this request: no recursion from request to request */
                if (!c->streaming)
                        conn_stream(c);
                return true;
        }
        return false;
}

void conn_redial(struct conn *c)
{
        endpoint_close(&c->upstream);
        c->req.pooled = false;
        c->req.next_addr = 0;
        dial_next(c);
}

/* Every address the lookup gave is checked before any is dialled: one
 * private address among public ones is a rebinding attempt, not a choice. */
static void check_and_dial(struct conn *c)
{
        struct request *r = &c->req;
        for (size_t i = 0; i < r->n_addrs; i++) {
                struct egress_verdict v;
                const struct gateway_addr *a = &r->addrs[i];
                egress_addr_check(&r->rules->rules, a->family, a->addr, r->port, &v);
                if (v.decision == EGRESS_ALLOW)
                        continue;
                char host[EGRESS_HOST_TEXT_SIZE + 2], addr[48], why[160];
                host_text(r, host, sizeof(host));
                gateway_addr_text(a, addr, sizeof(addr));
                snprintf(why, sizeof(why), "address %s is %s", addr,
                         egress_class_name(v.addr_class));
                free(r->rule);
                r->rule = v.rule ? strdup(v.rule) : NULL;
                conn_answerf(c, 403, "deny", why,
                             "umwelt-gateway: %s resolves to %s, a %s address%s%s%s; refused.\n",
                             host, addr, egress_class_name(v.addr_class),
                             v.rule ? " denied by the rule \"" : " that no address rule allows",
                             v.rule ? v.rule : "", v.rule ? "\"" : "");
                return;
        }
        if (!take_pooled(c))
                dial_next(c);
}

void conn_on_lookup(struct conn *c, struct gateway_lookup *l)
{
        struct request *r = &c->req;
        r->lookup = NULL;
        if (l->rc < 0) {
                char host[EGRESS_HOST_TEXT_SIZE + 2];
                host_text(r, host, sizeof(host));
                int e = -l->rc;
                free(l);
                conn_answerf(c, 502, "allow", e == ENOENT ? "no such name" : strerror(e),
                             "umwelt-gateway: cannot resolve %s: %s.\n", host,
                             e == ENOENT ? "no such name" : strerror(e));
                return;
        }
        r->n_addrs = l->n;
        memcpy(r->addrs, l->addrs, l->n * sizeof(l->addrs[0]));
        free(l);
        check_and_dial(c);
}

static void resolve(struct conn *c)
{
        struct request *r = &c->req;
        if (r->host.kind == EGRESS_HOST_ADDR) {
                r->addrs[0].family = r->host.family;
                memcpy(r->addrs[0].addr, r->host.addr, sizeof(r->addrs[0].addr));
                r->n_addrs = 1;
                check_and_dial(c);
                return;
        }
        struct gateway_lookup *l = calloc(1, sizeof(*l));
        if (!l) {
                conn_close(c);
                return;
        }
        snprintf(l->name, sizeof(l->name), "%s", r->host.text);
        l->owner = c;
        int rc = gateway_resolver_submit(c->gw->resolver, l);
        if (rc == 1) {
                conn_on_lookup(c, l);
                return;
        }
        r->lookup = l;
        conn_set_state(c, CONN_RESOLVING);
}

void conn_on_connected(struct conn *c)
{
        int e = 0;
        socklen_t len = sizeof(e);
        if (getsockopt(c->upstream.fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
                e = errno;
        if (e == EINPROGRESS || e == EALREADY)
                return;
        if (e != 0) {
                c->req.connect_errno = e;
                endpoint_close(&c->upstream);
                dial_next(c);
                return;
        }
        if (c->req.is_connect) {
                conn_established(c);
                return;
        }
        if (c->terminated) {
                conn_tls_connect(c);
                return;
        }
        conn_set_state(c, CONN_FORWARD);
        conn_stream(c);
}

void conn_established(struct conn *c)
{
        static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        char *text = strdup(ok);
        if (!text || flow_add_extra(&c->down, text, sizeof(ok) - 1) < 0) {
                conn_close(c);
                return;
        }
        c->req.status = 200;
        conn_set_state(c, CONN_HELLO);
        conn_stream(c);
}

/* The host and port of the request target, canonical. */
static int target_host(struct conn *c, const struct http_head *h)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct request *r = &c->req;
        if (egress_host_canon(h->authority.host.p, h->authority.host.n, &r->host, &err) < 0) {
                conn_answerf(c, 400, "deny", err->msg, "umwelt-gateway: the request's host: %s.\n",
                             err->msg);
                return -EINVAL;
        }
        r->has_host = true;
        r->port = h->authority.port;
        return 0;
}

/* Plain HTTP: the Host field must name the host and port of the absolute
 * URI, so that the server cannot be told one host while the rules judged
 * another. */
static int check_host_field(struct conn *c, const struct http_head *h)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct egress_host field;
        if (!h->has_host_header)
                return 0;
        const struct http_authority *a = &h->host_header;
        if (egress_host_canon(a->host.p, a->host.n, &field, &err) == 0 &&
            egress_host_equal(&field, &c->req.host) && a->port == c->req.port)
                return 0;
        conn_answerf(c, 403, "deny", "Host field differs from the request target",
                     "umwelt-gateway: the Host field names another host than the request's URI.\n");
        return -EPERM;
}

/* Inside a terminated tunnel every request must be for the host and port
 * the CONNECT and the ClientHello named: the leaf was made for that host,
 * and the upstream end will verify that one. */
static int check_tunnel_target(struct conn *c, const struct http_head *h)
{
        if (h->is_connect) {
                conn_answerf(c, 400, "deny", "CONNECT inside a TLS tunnel",
                             "umwelt-gateway: CONNECT inside a TLS tunnel is refused.\n");
                return -EINVAL;
        }
        if (egress_host_equal(&c->req.host, &c->tls_host) && c->req.port == c->tls_port)
                return 0;
        char host[EGRESS_HOST_TEXT_SIZE + 2], sni[EGRESS_HOST_TEXT_SIZE + 2];
        host_text(&c->req, host, sizeof(host));
        if (egress_host_format(&c->tls_host, sni, sizeof(sni)) < 0)
                snprintf(sni, sizeof(sni), "(host)");
        conn_answerf(c, 403, "deny", "Host field differs from the TLS server name",
                     "umwelt-gateway: the request is for %s:%u, but this TLS connection is to "
                     "%s:%u; refused.\n",
                     host, c->req.port, sni, c->tls_port);
        return -EPERM;
}

static int canon_path(struct conn *c, const struct http_head *h)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (egress_path_canon(h->path.p, h->path.n, &c->req.path, &err) == 0)
                return 0;
        conn_answerf(c, 400, "deny", err->msg, "umwelt-gateway: the request's path: %s.\n",
                     err->msg);
        return -EINVAL;
}

/* The head to send upstream and where the request body ends. An HTTP/1.1
 * request goes up without Connection: close: the upstream connection may
 * serve a later request (see struct gateway_pool), each decided anew. */
static int prepare_forward(struct conn *c, const struct http_head *h)
{
        _cleanup_error_ struct umw_error *err = NULL;
        char *head = NULL;
        size_t len = 0;
        const char *extra = c->req.http10 ? "Connection: close\r\n" : NULL;
        if (http_head_write_origin(h, extra, &head, &len, &err) < 0) {
                conn_answerf(c, 400, "deny", err->msg, "umwelt-gateway: %s.\n", err->msg);
                return -EINVAL;
        }
        if (flow_add_extra(&c->up, head, len) < 0) {
                conn_close(c);
                return -ENOMEM;
        }
        enum framing_kind k = h->body == HTTP_BODY_LENGTH    ? FRAME_LENGTH
                              : h->body == HTTP_BODY_CHUNKED ? FRAME_CHUNKED
                                                             : FRAME_NONE;
        framing_start(&c->req.body, k, h->content_length);
        return 0;
}

static void handle_request(struct conn *c, const struct http_head *h)
{
        struct request *r = &c->req;
        request_start(c);
        r->method = strndup(h->method.p, h->method.n);
        if (!r->method) {
                conn_close(c);
                return;
        }
        r->is_connect = h->is_connect;
        r->is_head = http_span_equal(h->method, "HEAD");
        r->keep_alive = http_head_keep_alive(h);
        r->http10 = h->version_minor == 0;
        if (target_host(c, h) < 0 || (c->terminated && check_tunnel_target(c, h) < 0) ||
            (!h->is_connect && (check_host_field(c, h) < 0 || canon_path(c, h) < 0)))
                return;
        struct egress_request er = {.host = &r->host,
                                    .port = r->port,
                                    .method = h->is_connect ? NULL : r->method,
                                    .path = r->path};
        struct egress_verdict v;
        r->rules = gateway_rules_ref(c->gw->rules);
        egress_decide(&r->rules->rules, &er, &v);
        if (v.decision == EGRESS_DENY) {
                answer_denied(c, &er, &v);
                return;
        }
        if (v.decision == EGRESS_INSPECT) {
                c->up.start += h->head_len; /* h points into the buffer: last use */
                terminate_tunnel(c, &v);
                return;
        }
        r->decision = "allow";
        r->rule = v.rule ? strdup(v.rule) : NULL;
        r->ip_rule = r->host.kind == EGRESS_HOST_ADDR;
        if (!h->is_connect && prepare_forward(c, h) < 0)
                return;
        c->up.start += h->head_len; /* h points into the buffer: last use */
        resolve(c);
}

static void head_refused(struct conn *c, int rc, struct umw_error *err)
{
        int status = http_head_status(rc);
        request_start(c);
        conn_answerf(c, status, "deny", err ? err->msg : "bad request", "umwelt-gateway: %s.\n",
                     err ? err->msg : "bad request");
}

void conn_on_head(struct conn *c)
{
        for (;;) {
                size_t avail = c->up.end - c->up.start;
                if (avail > 0) {
                        _cleanup_error_ struct umw_error *err = NULL;
                        struct http_head h;
                        unsigned flags = c->terminated ? HTTP_HEAD_ORIGIN_FORM : 0;
                        int r = http_head_parse(c->up.buf + c->up.start, avail, flags, &h, &err);
                        if (r == 0) {
                                handle_request(c, &h);
                                return;
                        }
                        if (r != -EAGAIN || !flow_has_room(&c->up)) {
                                head_refused(c, r == -EAGAIN ? -EMSGSIZE : r, err);
                                return;
                        }
                }
                if (c->up.eof) {
                        conn_close(c); /* no request, nothing to log */
                        return;
                }
                int r = flow_read(&c->up, &c->client);
                if (r < 0)
                        conn_close(c);
                if (r <= 0)
                        return;
                if (avail == 0) /* the head timeout runs from its first byte */
                        c->state_since_ms = gateway_now_ms();
        }
}
