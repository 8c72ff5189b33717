/* The head of an upstream server's response to a plain-HTTP request: parsed
 * so the gateway knows where the body ends (and the client's next request
 * may begin), and rewritten without its hop-by-hop fields. Pure code. The
 * upstream is outside the sandbox but not trusted either: anything two
 * parsers could read differently is refused (502). */
#ifndef UMW_NETNS_GATEWAY_RESPONSE_H
#define UMW_NETNS_GATEWAY_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RESPONSE_HEAD_MAX   32768
#define RESPONSE_FIELDS_MAX 100

enum response_body {
        RESPONSE_BODY_NONE,    /* HEAD, 1xx, 204, 304 */
        RESPONSE_BODY_LENGTH,  /* content_length bytes */
        RESPONSE_BODY_CHUNKED, /* follow with struct http_chunked */
        RESPONSE_BODY_CLOSE,   /* until the server closes */
};

struct response_field {
        const char *name, *value; /* into the parsed buffer; not NUL-terminated */
        size_t name_len, value_len;
};

struct response_head {
        size_t head_len; /* the status line to the empty line, inclusive */
        int status;
        size_t status_line_len; /* without its CRLF */
        enum response_body body;
        uint64_t content_length;
        /* HTTP/1.1 and no Connection: close: the server means to read
         * another request on this connection once the body is through */
        bool keep_alive;
        size_t n_fields;
        struct response_field fields[RESPONSE_FIELDS_MAX];
};

/* Parses the head at the start of buf[0..len); head_request: the request was
 * HEAD (no body whatever the fields say). Returns 0, -EAGAIN (read more),
 * -EMSGSIZE (longer than RESPONSE_HEAD_MAX or too many fields) or -EINVAL. */
int response_head_parse(const char *buf, size_t len, bool head_request, struct response_head *out);

/* The head to send the client: the status line and every field that is not
 * hop-by-hop (Connection, Keep-Alive, Proxy-*, TE, Trailer, Upgrade and what
 * Connection names, framing fields excepted), then extra (whole CRLF-ended
 * lines or NULL) and the empty line. malloc'd, NUL-terminated; NULL when out
 * of memory. */
char *response_head_rewrite(const char *buf, const struct response_head *h, const char *extra,
                            size_t *len);

#endif
