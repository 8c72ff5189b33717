/* The gateway's HTTP/1.x request head parser: untrusted bytes from inside
 * the sandbox become a request the policy can judge, or a refusal. Pure
 * code, no allocation while parsing: every string handed out is a span into
 * the caller's buffer (or a static string), so the caller keeps that buffer
 * alive and unchanged while it uses the result.
 *
 * Feeding: the server appends bytes as they arrive and calls
 * http_head_parse() on everything received so far. -EAGAIN means "read
 * more"; 0 means the head is complete and took exactly out->head_len bytes;
 * whatever follows is body (or the next request) and is streamed untouched.
 * Strictness is the point: anything two parsers could read differently
 * (folding, bare LF, Content-Length with Transfer-Encoding, ...) is refused. */
#ifndef UMW_HTTP_HEAD_H
#define UMW_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct umw_error;

#define HTTP_HEAD_MAX    16384 /* the whole head, request line to the empty line */
#define HTTP_LINE_MAX    8192  /* the request line, CRLF included */
#define HTTP_FIELD_MAX   8192  /* one header line, CRLF included */
#define HTTP_HEADERS_MAX 100   /* header fields in one head */
#define HTTP_HOST_MAX    255   /* a host name or literal, brackets excluded */

/* http_head_parse() flags. */
enum {
        /* Inside a TLS tunnel the gateway terminated: accept origin-form
         * targets ("/path?q", the authority then comes from Host, which must
         * be there) and default Host's port to 443. */
        HTTP_HEAD_ORIGIN_FORM = 1 << 0,
};

/* Bytes inside the caller's buffer (or a static string); not NUL-terminated.
 * An absent part has p == NULL and n == 0. */
struct http_span {
        const char *p;
        size_t n;
};

/* "host[:port]" taken apart. */
struct http_authority {
        struct http_span text; /* the authority as written, e.g. "[::1]:8080" */
        struct http_span host; /* raw, as written (case kept), brackets removed */
        bool ipv6;             /* host was a bracketed IPv6 literal */
        bool has_port;         /* a port was written */
        uint16_t port;         /* the written port, else the default given */
};

enum http_target_form {
        HTTP_TARGET_ABSOLUTE,  /* http://host[:port]/path?query */
        HTTP_TARGET_AUTHORITY, /* host:port, CONNECT only */
        HTTP_TARGET_ORIGIN,    /* /path?query, with HTTP_HEAD_ORIGIN_FORM only */
};

enum http_body {
        HTTP_BODY_NONE,    /* no body: neither Content-Length nor Transfer-Encoding */
        HTTP_BODY_LENGTH,  /* exactly content_length bytes follow the head */
        HTTP_BODY_CHUNKED, /* chunked framing: follow it with struct http_chunked */
};

struct http_field {
        struct http_span name;  /* a token, case as sent */
        struct http_span value; /* leading and trailing blanks removed */
};

struct http_head {
        size_t head_len;         /* bytes the head took, the final CRLF CRLF included */
        struct http_span method; /* a token, case-sensitive ("GET", "CONNECT") */
        bool is_connect;
        int version_minor; /* 0 or 1: HTTP/1.0 or HTTP/1.1 */

        enum http_target_form form;
        struct http_span target; /* the request-target exactly as sent */
        /* Absolute and authority form: the target's authority, port
         * defaulting to 80. Origin form: taken from the Host header. */
        struct http_authority authority;
        /* Path and query (the origin-form target to send upstream): starts
         * with '/'; "/" when an absolute-form target had no path. Empty for
         * CONNECT. */
        struct http_span request_uri;
        struct http_span path;  /* request_uri up to '?' */
        struct http_span query; /* after '?', absent when there is no '?' */

        /* The Host field (port defaulting to 80, 443 with
         * HTTP_HEAD_ORIGIN_FORM). When the target has an authority, Host
         * must name the same host and port (CONNECT: the port only when
         * Host has one) or the head is refused. */
        bool has_host_header;
        struct http_authority host_header;

        enum http_body body;
        uint64_t content_length; /* HTTP_BODY_LENGTH only */

        size_t n_fields;
        struct http_field fields[HTTP_HEADERS_MAX]; /* in the order sent */
};

/* Parses the request head at the start of buf[0..len).
 * Returns:
 *   0             complete; out filled, out->head_len bytes consumed
 *   -EAGAIN       incomplete so far and within the limits: read more
 *                 (err untouched)
 *   -EINVAL       malformed or refused: 400
 *   -ENAMETOOLONG the request line exceeds HTTP_LINE_MAX: 414
 *   -EMSGSIZE     the head exceeds HTTP_HEAD_MAX, a header line exceeds
 *                 HTTP_FIELD_MAX or there are more than HTTP_HEADERS_MAX
 *                 fields: 431
 *   -EPROTONOSUPPORT  an HTTP version other than 1.0 and 1.1: 505
 * Every failure sets *err to one line saying what was refused (no header
 * value in it: it may be a credential). flags: HTTP_HEAD_*. */
int http_head_parse(const char *buf, size_t len, unsigned flags, struct http_head *out,
                    struct umw_error **err);

/* The status line code for a http_head_parse() or http_chunked_feed()
 * failure: 400, 414, 431 or 505. */
int http_head_status(int rc);

/* Parses "host[:port]" (a CONNECT target or a Host value): host a name of
 * letters, digits, '-', '.', '_' (no '@', no '%', nothing else), or an IPv6
 * literal in brackets; port decimal 1-65535. port_required: for CONNECT.
 * Returns 0 or -EINVAL with *err set. */
int http_authority_parse(const char *p, size_t n, uint16_t default_port, bool port_required,
                         struct http_authority *out, struct umw_error **err);

/* Case-insensitive comparison of a span with a NUL-terminated string. */
bool http_span_equal(struct http_span s, const char *str);

/* The first field named name (case-insensitive), or NULL. */
const struct http_field *http_head_field(const struct http_head *h, const char *name);

/* True when f must not be forwarded: Connection, Proxy-Connection,
 * Keep-Alive, TE, Trailer, Upgrade, Proxy-Authorization, Proxy-Authenticate,
 * and every field a Connection field of h names (except Transfer-Encoding
 * and Content-Length: the body is streamed as sent, framing and all, so its
 * framing fields go with it). */
bool http_field_is_hop_by_hop(const struct http_head *h, const struct http_field *f);

/* True for the fields whose value must never be logged: Authorization,
 * Cookie, Proxy-Authorization. */
bool http_field_is_secret(struct http_span name);

/* Whether the client wants the connection kept open after this request:
 * HTTP/1.1 unless "Connection: close", HTTP/1.0 only with
 * "Connection: keep-alive". */
bool http_head_keep_alive(const struct http_head *h);

/* The head to send upstream, malloc'd into *out (*out_len bytes, also
 * NUL-terminated): "METHOD request_uri HTTP/1.x" (the client's version),
 * a Host field (the client's; the target's authority when an HTTP/1.0
 * client sent none), every field that is not hop-by-hop in the order sent,
 * then extra verbatim (NULL or whole lines each ending in CRLF, e.g.
 * "Connection: close\r\n"), then the empty line. Not for CONNECT (-EINVAL).
 * Returns 0, -EINVAL or -ENOMEM with *err set. */
int http_head_write_origin(const struct http_head *h, const char *extra, char **out,
                           size_t *out_len, struct umw_error **err);

/* Follows the framing of a chunked body as it streams past, without
 * buffering it, so the server knows where the body (trailers included) ends
 * and the next request on the connection begins. Bounded: a chunk-size line
 * and each trailer line at most HTTP_FIELD_MAX bytes, the trailer section
 * at most HTTP_HEAD_MAX bytes and HTTP_HEADERS_MAX lines. */
struct http_chunked {
        int state;            /* private */
        uint64_t remaining;   /* private: data bytes left in the current chunk */
        size_t line_len;      /* private: bytes of the current line so far */
        size_t trailer_len;   /* private */
        size_t trailer_lines; /* private */
        bool seen_digit;      /* private */
};

void http_chunked_init(struct http_chunked *c);

/* Feeds the next len body bytes. *used is set to how many of them belong to
 * the body. Returns 0 when the body continues (*used == len), 1 when it
 * ended (the bytes after *used belong to the next request), -EINVAL on bad
 * framing or -EMSGSIZE when a bound is exceeded, with *err set. After 1 or a
 * failure, feed no more without http_chunked_init(). */
int http_chunked_feed(struct http_chunked *c, const char *buf, size_t len, size_t *used,
                      struct umw_error **err);

#endif
