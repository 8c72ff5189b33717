/* Inside the gateway engine: the loop (gateway.c), the request decision and
 * set-up (gateway_conn.c) and the byte streams of a request or tunnel
 * (gateway_stream.c) share these. Not a public API. */
#ifndef UMW_NETNS_GATEWAY_CONN_H
#define UMW_NETNS_GATEWAY_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway.h"
#include "gateway_response.h"
#include "gateway_upstream.h"
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

struct gateway {
        const struct gateway_options *o;
        int epfd;
        struct gateway_rules *rules; /* for the next request */
        struct gateway_resolver *resolver;
        struct conn *conns; /* a list, for the timer's sweep */
        struct conn *dead;  /* closed during a batch of events, freed after it */
        unsigned n_conns;
        bool stop;
};

/* What an epoll event points at: the client or the upstream side of a
 * connection (or, with conn NULL, one of the loop's own fds). */
struct endpoint {
        int kind;
        struct conn *conn;
        int fd;
        uint32_t events; /* registered with epoll; 0: not registered */
};

enum { EP_CLIENT, EP_UPSTREAM, EP_LISTENER, EP_SIGNAL, EP_TIMER, EP_RESOLVER };

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
        CONN_HEAD,       /* reading a request head */
        CONN_RESOLVING,  /* a lookup is with the resolver */
        CONN_CONNECTING, /* dialling addrs[next_addr - 1] */
        CONN_HELLO,      /* CONNECT answered 200: reading the ClientHello */
        CONN_TUNNEL,     /* CONNECT: bytes both ways */
        CONN_FORWARD,    /* plain HTTP: the request up, the response down */
        CONN_CLOSING,    /* a last answer to the client, then close */
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
        bool ip_rule; /* an address rule allowed it: a ClientHello may lack SNI */
        const char *decision;
        char *rule;
        char *reason;
        int status;
        char address[48];
        struct gateway_lookup *lookup; /* while resolving */
        struct gateway_addr addrs[GATEWAY_ADDRS_MAX];
        size_t n_addrs, next_addr;
        int connect_errno;
        struct framing body; /* the request's */
        bool resp_head_done;
        struct framing resp; /* the response's */
};

struct conn {
        struct gateway *gw;
        struct conn *prev, *next;
        struct endpoint client, upstream;
        bool closed;
        enum conn_state state;
        uint64_t state_since_ms, last_io_ms;
        struct flow up;   /* client -> upstream */
        struct flow down; /* upstream -> client */
        struct request req;
};

uint64_t gateway_now_ms(void);

/* gateway.c: the loop registers what each connection waits for after every
 * handler below has run; conn_close() may be called from any of them (the
 * connection is freed after the batch of events). */
void conn_set_state(struct conn *c, enum conn_state s);
void conn_update_events(struct conn *c);
void conn_close(struct conn *c);

/* gateway_conn.c */
/* Reads what the client sent in CONN_HEAD and, once a head is complete,
 * decides it: a local answer, a lookup, or a dial. */
void conn_on_head(struct conn *c);
/* A lookup came back (l->owner == c). */
void conn_on_lookup(struct conn *c, struct gateway_lookup *l);
/* The upstream socket became writable while connecting. */
void conn_on_connected(struct conn *c);
/* Answers the client with a status and a text body, then closes; the
 * request is logged with decision (NULL: as decided before) and reason.
 * Where the client has had a status line already, only closes. */
void conn_answer(struct conn *c, int status, const char *decision, const char *reason,
                 const char *body);
/* Ends the request: its log line, and the upstream side closed. */
void request_end(struct conn *c);
void request_reset(struct request *r);
/* Back to reading the next request head (it may be buffered already). */
void conn_next_request(struct conn *c);

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
/* Moves bytes: reads into the buffer, writes pending bytes out. Each
 * returns 1 when bytes moved, 0 when the socket would block, -errno. */
int flow_read(struct flow *f, int fd);
int flow_write(struct flow *f, int fd);
void framing_start(struct framing *fr, enum framing_kind kind, uint64_t length);
/* Judges the bytes of f not yet judged: the ones fr's body takes join fwd.
 * Returns 0 or -errno (bad chunked framing). */
int framing_take(struct framing *fr, struct flow *f);
/* Runs a connection in CONN_HELLO, CONN_TUNNEL or CONN_FORWARD as far as
 * its sockets let it. */
void conn_stream(struct conn *c);

#endif
