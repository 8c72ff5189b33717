#include "netns/http_head.h"
#include "netns/http_chars.h"
#include "common/error.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

/* Longest field name quoted in an error message. */
#define NAME_IN_MSG 64

static int bad(struct umw_error **err, int errnum, const char *what)
{
        return umw_fail(err, UMW_EXIT_CONFIG, errnum, "%s", what);
}

static bool is_token(const char *p, size_t n)
{
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!http_is_tchar((unsigned char)p[i]))
                        return false;
        return true;
}

static struct http_span span(const char *p, size_t n)
{
        return (struct http_span){p, n};
}

bool http_span_equal(struct http_span s, const char *str)
{
        size_t n = strlen(str);
        return s.n == n && (n == 0 || strncasecmp(s.p, str, n) == 0);
}

static bool spans_equal_nocase(struct http_span a, struct http_span b)
{
        return a.n == b.n && (a.n == 0 || strncasecmp(a.p, b.p, a.n) == 0);
}

int http_head_status(int rc)
{
        switch (rc) {
        case -ENAMETOOLONG:
                return 414;
        case -EMSGSIZE:
                return 431;
        case -EPROTONOSUPPORT:
                return 505;
        default:
                return 400;
        }
}

/* ---- authority: host[:port] ---- */

static int parse_port(const char *p, size_t n, uint16_t *port, struct umw_error **err)
{
        if (n == 0 || n > 5)
                return bad(err, EINVAL, "port: expected a decimal number 1-65535");
        unsigned long v = 0;
        for (size_t i = 0; i < n; i++) {
                if (!http_is_digit((unsigned char)p[i]))
                        return bad(err, EINVAL, "port: expected a decimal number 1-65535");
                v = v * 10 + (unsigned long)(p[i] - '0');
        }
        if (v == 0 || v > 65535)
                return bad(err, EINVAL, "port: expected a decimal number 1-65535");
        *port = (uint16_t)v;
        return 0;
}

static int check_ipv6_literal(const char *p, size_t n, struct umw_error **err)
{
        /* The shortest is "::", the longest a full form with an IPv4 tail. */
        if (n < 2 || n > 45)
                return bad(err, EINVAL, "host: bad IPv6 literal length");
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)p[i];
                if (c == '%')
                        return bad(err, EINVAL, "host: '%' (a zone or an escape) is refused");
                if (!http_is_hex(c) && c != ':' && c != '.')
                        return bad(err, EINVAL, "host: bad character in an IPv6 literal");
        }
        return 0;
}

static int check_reg_name(const char *p, size_t n, struct umw_error **err)
{
        if (n == 0)
                return bad(err, EINVAL, "host: empty");
        if (n > HTTP_HOST_MAX)
                return bad(err, EINVAL, "host: longer than 255 bytes");
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)p[i];
                if (c == '%')
                        return bad(err, EINVAL, "host: '%' escapes are refused");
                if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !http_is_digit(c) &&
                    c != '-' && c != '.' && c != '_')
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "host: character 0x%02x is refused", c);
        }
        return 0;
}

int http_authority_parse(const char *p, size_t n, uint16_t default_port, bool port_required,
                         struct http_authority *out, struct umw_error **err)
{
        *out = (struct http_authority){.text = span(p, n), .port = default_port};
        if (memchr(p, '@', n))
                return bad(err, EINVAL, "host: userinfo (user@) is refused");
        size_t host_end; /* index just past the host, brackets included */
        if (n > 0 && p[0] == '[') {
                const char *close = memchr(p, ']', n);
                if (!close)
                        return bad(err, EINVAL, "host: '[' without ']'");
                host_end = (size_t)(close - p) + 1;
                int r = check_ipv6_literal(p + 1, host_end - 2, err);
                if (r < 0)
                        return r;
                out->host = span(p + 1, host_end - 2);
                out->ipv6 = true;
        } else {
                const char *colon = memchr(p, ':', n);
                host_end = colon ? (size_t)(colon - p) : n;
                int r = check_reg_name(p, host_end, err);
                if (r < 0)
                        return r;
                out->host = span(p, host_end);
        }
        if (host_end == n) {
                if (port_required)
                        return bad(err, EINVAL, "authority: a port is required (host:port)");
                return 0;
        }
        if (p[host_end] != ':')
                return bad(err, EINVAL, "authority: expected ':' or the end after the host");
        out->has_port = true;
        return parse_port(p + host_end + 1, n - host_end - 1, &out->port, err);
}

/* ---- request line and target ---- */

/* A path that could mean something else to the upstream server than to the
 * policy that checks it is refused: dot segments (plain or escaped), bad
 * escapes, backslashes (read as '/' by some servers), '#'. */
static bool is_dot(const char *p, size_t n, size_t *adv)
{
        if (n >= 1 && p[0] == '.') {
                *adv = 1;
                return true;
        }
        if (n >= 3 && p[0] == '%' && p[1] == '2' && (p[2] == 'e' || p[2] == 'E')) {
                *adv = 3;
                return true;
        }
        return false;
}

static bool is_dot_segment(const char *p, size_t n)
{
        size_t dots = 0, i = 0, adv = 0;
        while (i < n && is_dot(p + i, n - i, &adv)) {
                dots++;
                i += adv;
        }
        return i == n && (dots == 1 || dots == 2);
}

static int check_escapes(const char *p, size_t n, struct umw_error **err)
{
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)p[i];
                if (c <= 0x20 || c >= 0x7f || c == '#')
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "target: character 0x%02x is refused", c);
                if (c == '%' && (i + 2 >= n || !http_is_hex((unsigned char)p[i + 1]) ||
                                 !http_is_hex((unsigned char)p[i + 2])))
                        return bad(err, EINVAL, "target: '%' not followed by two hex digits");
        }
        return 0;
}

static int check_path(const char *p, size_t n, struct umw_error **err)
{
        if (memchr(p, '\\', n))
                return bad(err, EINVAL, "target: '\\' in the path is refused");
        size_t seg = 1; /* p[0] is '/' */
        for (size_t i = 1; i <= n; i++) {
                if (i < n && p[i] != '/')
                        continue;
                if (is_dot_segment(p + seg, i - seg))
                        return bad(err, EINVAL, "target: '.' and '..' path segments are refused");
                seg = i + 1;
        }
        return 0;
}

/* Splits "/path?query" into the head's request_uri, path and query. */
static int parse_request_uri(const char *p, size_t n, struct http_head *out, struct umw_error **err)
{
        int r = check_escapes(p, n, err);
        if (r < 0)
                return r;
        const char *q = memchr(p, '?', n);
        size_t path_n = q ? (size_t)(q - p) : n;
        r = check_path(p, path_n, err);
        if (r < 0)
                return r;
        out->request_uri = span(p, n);
        out->path = span(p, path_n);
        if (q)
                out->query = span(q + 1, n - path_n - 1);
        return 0;
}

static int parse_absolute(const char *p, size_t n, struct http_head *out, struct umw_error **err)
{
        static const char scheme[] = "http://";
        const size_t sn = sizeof(scheme) - 1;
        if (n < sn || strncasecmp(p, scheme, sn) != 0) {
                if (n >= 8 && strncasecmp(p, "https://", 8) == 0)
                        return bad(err, EINVAL, "target: https:// is not proxied, use CONNECT");
                return bad(err, EINVAL, "target: expected an absolute http:// URI");
        }
        p += sn;
        n -= sn;
        size_t a = 0;
        while (a < n && p[a] != '/' && p[a] != '?' && p[a] != '#')
                a++;
        if (a < n && p[a] != '/')
                return bad(err, EINVAL, "target: expected '/' after the authority");
        out->form = HTTP_TARGET_ABSOLUTE;
        int r = http_authority_parse(p, a, 80, false, &out->authority, err);
        if (r < 0)
                return r;
        if (a == n) {
                out->request_uri = out->path = span("/", 1);
                return 0;
        }
        return parse_request_uri(p + a, n - a, out, err);
}

static int parse_target(const char *p, size_t n, unsigned flags, struct http_head *out,
                        struct umw_error **err)
{
        out->target = span(p, n);
        if (out->is_connect) {
                out->form = HTTP_TARGET_AUTHORITY;
                return http_authority_parse(p, n, 0, true, &out->authority, err);
        }
        if (p[0] == '/') {
                if (!(flags & HTTP_HEAD_ORIGIN_FORM))
                        return bad(err, EINVAL,
                                   "target: a path alone is refused, expected http://host/path");
                out->form = HTTP_TARGET_ORIGIN;
                return parse_request_uri(p, n, out, err);
        }
        return parse_absolute(p, n, out, err);
}

static int parse_version(const char *p, size_t n, struct http_head *out, struct umw_error **err)
{
        if (n == 8 && memcmp(p, "HTTP/1.", 7) == 0 && (p[7] == '0' || p[7] == '1')) {
                out->version_minor = p[7] - '0';
                return 0;
        }
        if (n == 8 && memcmp(p, "HTTP/", 5) == 0 && http_is_digit((unsigned char)p[5]) &&
            p[6] == '.' && http_is_digit((unsigned char)p[7]))
                return bad(err, EPROTONOSUPPORT, "request line: only HTTP/1.0 and 1.1");
        return bad(err, EINVAL, "request line: expected HTTP/1.1 or HTTP/1.0 at the end");
}

/* "METHOD SP target SP HTTP/1.x", CRLF already removed. */
static int parse_request_line(const char *p, size_t n, unsigned flags, struct http_head *out,
                              struct umw_error **err)
{
        const char *sp1 = memchr(p, ' ', n);
        if (!sp1 || !is_token(p, (size_t)(sp1 - p)))
                return bad(err, EINVAL, "request line: expected a method token and one space");
        out->method = span(p, (size_t)(sp1 - p));
        out->is_connect = out->method.n == 7 && memcmp(p, "CONNECT", 7) == 0;
        const char *t = sp1 + 1;
        const char *end = p + n;
        const char *sp2 = memchr(t, ' ', (size_t)(end - t));
        if (!sp2 || sp2 == t)
                return bad(err, EINVAL, "request line: expected a target and one space");
        int r = parse_version(sp2 + 1, (size_t)(end - sp2 - 1), out, err);
        if (r < 0)
                return r;
        return parse_target(t, (size_t)(sp2 - t), flags, out, err);
}

/* ---- header fields ---- */

static int field_fail(struct umw_error **err, int errnum, struct http_span name, const char *what)
{
        int shown = (int)(name.n < NAME_IN_MSG ? name.n : NAME_IN_MSG);
        return umw_fail(err, UMW_EXIT_CONFIG, errnum, "header %.*s: %s", shown, name.p, what);
}

/* Calls fn for each comma-separated element of a list value, blanks around
 * it removed; an empty element is refused. */
static int each_element(struct http_span v, int (*fn)(struct http_span e, void *ctx), void *ctx)
{
        size_t pos = 0;
        struct http_span e;
        while (http_list_next(v, &pos, &e)) {
                if (e.n == 0)
                        return -EINVAL;
                int r = fn(e, ctx);
                if (r < 0)
                        return r;
        }
        return 0;
}

struct length_ctx {
        bool seen;
        uint64_t value;
};

static int length_element(struct http_span e, void *ctx)
{
        struct length_ctx *c = ctx;
        if (e.n > 19)
                return -EINVAL;
        uint64_t v = 0;
        for (size_t i = 0; i < e.n; i++) {
                if (!http_is_digit((unsigned char)e.p[i]))
                        return -EINVAL;
                v = v * 10 + (uint64_t)(e.p[i] - '0');
        }
        if (c->seen && c->value != v)
                return -EINVAL;
        c->seen = true;
        c->value = v;
        return 0;
}

struct coding_ctx {
        bool seen;
        bool chunked_last;
};

static int coding_element(struct http_span e, void *ctx)
{
        static const char *const codings[] = {"gzip", "deflate", "compress", "x-gzip",
                                              "x-compress"};
        struct coding_ctx *c = ctx;
        if (c->chunked_last)
                return -EINVAL; /* chunked must be the final coding, and only once */
        c->seen = true;
        if (http_span_equal(e, "chunked")) {
                c->chunked_last = true;
                return 0;
        }
        for (size_t i = 0; i < sizeof(codings) / sizeof(codings[0]); i++)
                if (http_span_equal(e, codings[i]))
                        return 0;
        return -EINVAL;
}

struct fields_state {
        uint16_t host_default_port;
        struct length_ctx length;
        struct coding_ctx coding;
};

static int take_field(const struct http_field *f, struct http_head *out, struct fields_state *st,
                      struct umw_error **err)
{
        if (http_span_equal(f->name, "Host")) {
                if (out->has_host_header)
                        return field_fail(err, EINVAL, f->name, "given twice");
                out->has_host_header = true;
                int r = http_authority_parse(f->value.p, f->value.n, st->host_default_port, false,
                                             &out->host_header, err);
                return r < 0 ? umw_error_prefix(err, "header Host") : 0;
        }
        if (http_span_equal(f->name, "Content-Length")) {
                if (each_element(f->value, length_element, &st->length) < 0)
                        return field_fail(err, EINVAL, f->name,
                                          "expected one decimal length (differing lengths are "
                                          "refused)");
                return 0;
        }
        if (http_span_equal(f->name, "Transfer-Encoding")) {
                if (each_element(f->value, coding_element, &st->coding) < 0)
                        return field_fail(err, EINVAL, f->name,
                                          "only known codings ending in one final chunked");
                return 0;
        }
        return 0;
}

/* "name: value", CRLF already removed. */
static int parse_field(const char *p, size_t n, struct http_field *f, struct umw_error **err)
{
        if (http_is_blank((unsigned char)p[0]))
                return bad(err, EINVAL, "header: obsolete line folding is refused");
        const char *colon = memchr(p, ':', n);
        size_t name_n = colon ? (size_t)(colon - p) : n;
        if (!colon || !is_token(p, name_n)) {
                bool ws = colon && name_n > 0 && http_is_blank((unsigned char)p[name_n - 1]);
                return bad(err, EINVAL,
                           ws ? "header: whitespace before ':' is refused"
                              : "header: expected a field-name token and ':'");
        }
        f->name = span(p, name_n);
        size_t s = name_n + 1, e = n;
        for (size_t i = s; i < n; i++)
                if (!http_is_field_vchar((unsigned char)p[i]))
                        return field_fail(err, EINVAL, f->name,
                                          "control character (CR, LF, NUL, ...) in the value");
        while (s < e && http_is_blank((unsigned char)p[s]))
                s++;
        while (e > s && http_is_blank((unsigned char)p[e - 1]))
                e--;
        f->value = span(p + s, e - s);
        return 0;
}

/* ---- the head ---- */

/* The end of the line starting at buf[start]: the index of its LF, which
 * must follow a CR. Returns 1 and *lf when found, 0 when no LF is within the
 * first max bytes or the buffer, -EINVAL on a bare CR or LF. */
static int find_line(const char *buf, size_t len, size_t start, size_t max, size_t *lf)
{
        size_t avail = len - start < max ? len - start : max;
        const char *nl = memchr(buf + start, '\n', avail);
        const char *cr = memchr(buf + start, '\r', nl ? (size_t)(nl - buf - start) : avail);
        if (cr && (!nl || cr + 1 != nl) && (size_t)(cr - buf) + 1 < len)
                return -EINVAL;
        if (!nl)
                return 0;
        if (!cr)
                return -EINVAL;
        *lf = (size_t)(nl - buf);
        return 1;
}

static int check_framing(struct http_head *out, const struct fields_state *st,
                         struct umw_error **err)
{
        if (st->length.seen && st->coding.seen)
                return bad(err, EINVAL,
                           "header: Content-Length and Transfer-Encoding together are refused");
        if (st->coding.seen && out->version_minor == 0)
                return bad(err, EINVAL, "header: Transfer-Encoding in an HTTP/1.0 request");
        if (st->coding.seen && !st->coding.chunked_last)
                return bad(err, EINVAL, "header Transfer-Encoding: chunked must come last");
        if (st->coding.seen)
                out->body = HTTP_BODY_CHUNKED;
        else if (st->length.seen && st->length.value > 0)
                out->body = HTTP_BODY_LENGTH;
        out->content_length = out->body == HTTP_BODY_LENGTH ? st->length.value : 0;
        if (out->is_connect && out->body != HTTP_BODY_NONE)
                return bad(err, EINVAL, "CONNECT with a body is refused");
        return 0;
}

/* Host must name what the target names: a request must not say one host to
 * the policy and another to the server. CONNECT clients often leave the
 * port out of Host, so there the port is only compared when written. */
static int check_host(struct http_head *out, struct umw_error **err)
{
        if (!out->has_host_header) {
                if (out->form == HTTP_TARGET_ORIGIN)
                        return bad(err, EINVAL, "header Host: required with a path-only target");
                if (out->version_minor == 1 && !out->is_connect)
                        return bad(err, EINVAL, "header Host: required in HTTP/1.1");
                return 0;
        }
        if (out->form == HTTP_TARGET_ORIGIN) {
                out->authority = out->host_header;
                return 0;
        }
        const struct http_authority *t = &out->authority, *h = &out->host_header;
        bool port_ok = t->port == h->port || (out->is_connect && !h->has_port);
        if (!spans_equal_nocase(t->host, h->host) || t->ipv6 != h->ipv6 || !port_ok)
                return bad(err, EINVAL, "header Host: differs from the target's host or port");
        return 0;
}

/* The header lines from buf[pos] to the empty line. */
static int parse_fields(const char *buf, size_t len, size_t pos, unsigned flags,
                        struct http_head *out, struct umw_error **err)
{
        struct fields_state st = {.host_default_port = flags & HTTP_HEAD_ORIGIN_FORM ? 443 : 80};
        for (;;) {
                size_t max =
                    HTTP_HEAD_MAX - pos < HTTP_FIELD_MAX ? HTTP_HEAD_MAX - pos : HTTP_FIELD_MAX;
                size_t lf = 0;
                int r = find_line(buf, len, pos, max, &lf);
                if (r < 0)
                        return bad(err, EINVAL, "header: CR and LF must come together as CRLF");
                if (r == 0) {
                        if (len - pos < max)
                                return -EAGAIN;
                        return bad(err, EMSGSIZE,
                                   max < HTTP_FIELD_MAX ? "request head: larger than 16 KiB"
                                                        : "header: line longer than 8 KiB");
                }
                size_t line_n = lf - 1 - pos;
                if (line_n == 0) {
                        out->head_len = lf + 1;
                        break;
                }
                if (out->n_fields == HTTP_HEADERS_MAX)
                        return bad(err, EMSGSIZE, "request head: more than 100 header fields");
                struct http_field *f = &out->fields[out->n_fields++];
                r = parse_field(buf + pos, line_n, f, err);
                if (r < 0)
                        return r;
                r = take_field(f, out, &st, err);
                if (r < 0)
                        return r;
                pos = lf + 1;
        }
        int r = check_framing(out, &st, err);
        if (r < 0)
                return r;
        return check_host(out, err);
}

int http_head_parse(const char *buf, size_t len, unsigned flags, struct http_head *out,
                    struct umw_error **err)
{
        *out = (struct http_head){0};
        size_t lf = 0;
        int r = find_line(buf, len, 0, HTTP_LINE_MAX, &lf);
        if (r < 0)
                return bad(err, EINVAL, "request line: CR and LF must come together as CRLF");
        if (r == 0) {
                if (len < HTTP_LINE_MAX)
                        return -EAGAIN;
                return bad(err, ENAMETOOLONG, "request line: longer than 8 KiB");
        }
        if (lf < 2)
                return bad(err, EINVAL, "request line: empty");
        r = parse_request_line(buf, lf - 1, flags, out, err);
        if (r < 0)
                return r;
        return parse_fields(buf, len, lf + 1, flags, out, err);
}
