/* Inside the gateway engine: the loop (gateway.c), the request decision and
 * set-up (gateway_conn.c), the byte streams of a request or tunnel
 * (gateway_stream.c) and TLS termination (gateway_tls.c) share these. Not a
 * public API. */
#ifndef UMW_NETNS_GATEWAY_CONN_H
#define UMW_NETNS_GATEWAY_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "netns/gateway.h"
#include "netns/gateway_pool.h"
#include "netns/gateway_response.h"
#include "netns/gateway_upstream.h"
#include "netns/http_head.h"
#include "policy/egress_rules.h"

#define CONN_BUF_SIZE 32768 /* holds any head the parsers accept and fails the rest */

/* The rules as read at one time. A request holds the set it was decided
 * by until it is over, so a reload changes the next request, never one in
 * flight. */
struct gateway_rules {
        unsigned refs;
        struct egress_rules rules;
};

struct gateway_rules *gateway_rules_ref(struct gateway_rules *r);
void gateway_rules_unref(struct gateway_rules *r);

/* TLS termination with the user's umwelt CA (gateway_tls.c). term is NULL
 * while the CA cannot be used; error then says why. */
struct gateway_tls {
        struct tls_signer *signer; /* the CA's key is there (tls_signer.h) */
        int roots_fd;              /* the host's trust store, opened at the start; -1 */
        struct tls_term *term;
        struct tls_upstream *upstream;
        char *error;
};

struct gateway {
        const struct gateway_options *o;
        int epfd;
        struct gateway_rules *rules; /* for the next request */
        struct gateway_resolver *resolver;
        struct conn *conns; /* a list, for the timer's sweep */
        struct conn *dead;  /* closed during a batch of events, freed after it */
        struct gateway_tls tls;
        /* Idle upstream connections of plain HTTP, all of them allowed by
         * pool_rules (a reload empties the pool at its next use). */
        struct gateway_pool pool;
        struct gateway_rules *pool_rules;
        unsigned n_conns;
        bool stop;
        bool orphaned; /* the monitor ended first: a stop not asked for */
};

/* What an epoll event points at: the client or the upstream side of a
 * connection (or, with conn NULL, one of the loop's own fds). */
struct endpoint {
        int kind;
        struct conn *conn;
        int fd;
        uint32_t events; /* registered with epoll; 0: not registered */
        /* TLS on fd (NULL: plain bytes), freed before fd is closed. A TLS
         * read or write that would block says what it waits for: either
         * readiness, whatever it was doing. */
        struct ssl_st *ssl;
        uint32_t tls_read_wait, tls_write_wait; /* also the handshake's: read_wait */
        bool tls_write_blocked;                 /* the same bytes must be offered again */
};

enum {
        EP_CLIENT,
        EP_UPSTREAM,
        EP_LISTENER,
        EP_SIGNAL,
        EP_TIMER,
        EP_RESOLVER,
        EP_OWNER,
        EP_CONTROL,
};

/* Bytes on their way from one side to the other: first extra (a head the
 * gateway wrote), then the first fwd bytes of buf. What buf holds beyond fwd
 * has not been judged yet (the next request, or the rest of a head). */
struct flow {
        char *buf;
        size_t start, end;
        size_t fwd;
        char *extra;
        size_t extra_len, extra_off;
        bool eof;       /* the source side closed */
        bool shut;      /* the sink side got its FIN (a tunnel) */
        uint64_t bytes; /* written to the sink during this request */
        /* A tunnel, once buf is empty: the bytes go socket -> pipe ->
         * socket (splice), never through the gateway's memory. */
        int pipe[2];      /* -1: not (yet) */
        size_t piped;     /* in the pipe, not yet out */
        size_t pipe_size; /* what the pipe holds */
        bool pipe_full;   /* a splice in found no room: wait until one out */
        bool no_splice;   /* no pipe could be made: buf it is */
};

enum framing_kind { FRAME_NONE, FRAME_LENGTH, FRAME_CHUNKED, FRAME_CLOSE };

/* Where a body ends, followed as it streams past. */
struct framing {
        enum framing_kind kind;
        uint64_t remaining;
        struct http_chunked chunked;
        bool done;
};

enum conn_state {
        CONN_HEAD,        /* reading a request head */
        CONN_RESOLVING,   /* a lookup is with the resolver */
        CONN_CONNECTING,  /* dialling addrs[next_addr - 1] */
        CONN_HELLO,       /* CONNECT answered 200: reading the ClientHello */
        CONN_TLS_ACCEPT,  /* a terminated CONNECT: the handshake with the client */
        CONN_TLS_CONNECT, /* inside one: the handshake with the upstream server */
        CONN_TUNNEL,      /* CONNECT: bytes both ways */
        CONN_FORWARD,     /* HTTP (plain or in a terminated tunnel): request up, response down */
        CONN_CLOSING,     /* a last answer to the client, then close */
};

/* The request being served: what the decision and the log line need,
 * copied out of the buffer it was parsed from. */
struct request {
        bool active;
        struct gateway_rules *rules; /* what decided it */
        uint64_t started_ms;
        char *method;
        char *path; /* canonical, NULL for CONNECT */
        struct egress_host host;
        bool has_host;
        uint16_t port;
        bool is_connect, is_head, keep_alive, http10;
        bool ip_rule;   /* an address rule allowed it: a ClientHello may lack SNI */
        bool terminate; /* a CONNECT the gateway terminates: the rules need its requests */
        const char *decision;
        char *rule;
        char *reason;
        int status;
        char address[48];
        struct gateway_lookup *lookup; /* while resolving */
        struct gateway_addr addrs[GATEWAY_ADDRS_MAX];
        size_t n_addrs, next_addr;
        struct gateway_addr dialled; /* where the upstream connection goes */
        bool pooled;                 /* it came from the pool, not from a dial */
        bool reuse_upstream;         /* it goes back to the pool at the end */
        int connect_errno;
        struct framing body; /* the request's */
        bool resp_head_done;
        bool resp_keep_alive; /* the server's, see struct response_head */
        struct framing resp;  /* the response's */
};

struct conn {
        struct gateway *gw;
        struct conn *prev, *next;
        struct endpoint client, upstream;
        bool closed;
        bool streaming; /* inside conn_stream(), which goes on with a new state */
        enum conn_state state;
        uint64_t state_since_ms, last_io_ms;
        struct flow up;   /* client -> upstream */
        struct flow down; /* upstream -> client */
        struct request req;
        /* A terminated tunnel: the client speaks TLS with the gateway and
         * every request in it must name this host and port. */
        bool terminated;
        struct egress_host tls_host;
        uint16_t tls_port;
};

uint64_t gateway_now_ms(void);

/* gateway.c: the loop registers what each connection waits for after every
 * handler below has run; conn_close() may be called from any of them (the
 * connection is freed after the batch of events). */
void conn_set_state(struct conn *c, enum conn_state s);
void conn_update_events(struct conn *c);
void conn_close(struct conn *c);
/* Frees the endpoint's TLS, then closes its fd. */
void endpoint_close(struct endpoint *ep);

/* gateway_conn.c */
/* Reads what the client sent in CONN_HEAD and, once a head is complete,
 * decides it: a local answer, a lookup, or a dial. */
void conn_on_head(struct conn *c);
/* A lookup came back (l->owner == c). */
void conn_on_lookup(struct conn *c, struct gateway_lookup *l);
/* The upstream socket became writable while connecting. */
void conn_on_connected(struct conn *c);
/* Answers a CONNECT with 200, then reads its ClientHello. */
void conn_established(struct conn *c);
/* Answers the client with a status and a text body, then closes; the
 * request is logged with decision (NULL: as decided before) and reason.
 * Where the client has had a status line already, only closes. */
void conn_answer(struct conn *c, int status, const char *decision, const char *reason,
                 const char *body);
/* The same with a printf-formatted body. */
void conn_answerf(struct conn *c, int status, const char *decision, const char *reason,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Ends the request: its log line, and the upstream side closed. */
void request_end(struct conn *c);
void request_reset(struct request *r);
/* Back to reading the next request head (it may be buffered already). */
void conn_next_request(struct conn *c);
/* A pooled upstream connection failed before any byte of the request went
 * out on it: the request is dialled afresh. */
void conn_redial(struct conn *c);
/* Closes the idle upstream connections (at the end). */
void conn_pool_clear(struct gateway *gw);

/* gateway_stream.c */
int flow_init(struct flow *f);
void flow_free(struct flow *f);
/* Queues text (taken over, freed on failure) after whatever extra is
 * pending. Returns 0 or -ENOMEM. */
int flow_add_extra(struct flow *f, char *text, size_t len);
/* Drops everything buffered or pending. */
void flow_discard(struct flow *f);
bool flow_pending(const struct flow *f);
bool flow_has_room(const struct flow *f);
/* Moves bytes: reads into the buffer (through TLS: until it would block or
 * the buffer is full, since TLS may hold bytes epoll will not report),
 * writes pending bytes out. Each returns 1 when bytes moved, 0 when the
 * endpoint would block, -errno. */
int flow_read(struct flow *f, struct endpoint *ep);
int flow_write(struct flow *f, struct endpoint *ep);
void framing_start(struct framing *fr, enum framing_kind kind, uint64_t length);
/* Judges the bytes of f not yet judged: the ones fr's body takes join fwd.
 * Returns 0 or -errno (bad chunked framing). */
int framing_take(struct framing *fr, struct flow *f);
/* Runs a connection in CONN_HELLO, CONN_TLS_*, CONN_TUNNEL, CONN_FORWARD
 * or CONN_CLOSING as far as its sockets let it. */
void conn_stream(struct conn *c);
/* Logs the request as refused or failed for reason and closes. */
void conn_close_because(struct conn *c, const char *decision, const char *reason);

/* gateway_tls.c */
/* At the start: TLS termination when the CA can be used. Without it, an
 * error only when a rule needs the method or path (the CA is named). */
int gateway_tls_setup(struct gateway *gw, const char *upstream_ca, const char *trust_dir,
                      struct umw_error **err);
/* After a reload: the CA is tried again when new rules need it. */
void gateway_tls_reload(struct gateway *gw);
void gateway_tls_free(struct gateway *gw);
/* Plain recv()/send() semantics over the endpoint's TLS: n bytes, 0 at the
 * peer's end (read), -EAGAIN with the wait recorded, -errno. */
ssize_t endpoint_tls_recv(struct endpoint *ep, void *buf, size_t len);
ssize_t endpoint_tls_send(struct endpoint *ep, const void *buf, size_t len);
/* Sends close_notify where it fits now; the socket's FIN follows. */
void endpoint_tls_close_notify(struct endpoint *ep);
/* The ClientHello of a CONNECT to terminate was judged: the gateway takes
 * the handshake with the hello bytes it read. Returns 1 to go on, 0 to wait
 * (the 200 is not out yet) or when closed. */
int conn_tls_accept(struct conn *c);
/* The upstream socket of a request in a terminated tunnel is connected:
 * TLS to the server, verified for the request's host. */
void conn_tls_connect(struct conn *c);
int step_tls_accept(struct conn *c);
int step_tls_connect(struct conn *c);

#endif
