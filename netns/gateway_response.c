#include "netns/gateway_response.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool is_tchar(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool span_is(const char *p, size_t n, const char *s)
{
        return strlen(s) == n && strncasecmp(p, s, n) == 0;
}

/* The end of the head (just past CRLF CRLF), 0 when not there yet, or -1 for
 * a bare LF or a NUL, which no two parsers agree on. */
static long head_end(const char *buf, size_t len)
{
        for (size_t i = 0; i < len; i++) {
                if (buf[i] == '\0' || (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r')))
                        return -1;
                if (buf[i] == '\r' && i + 1 < len && buf[i + 1] != '\n')
                        return -1;
                if (i >= 3 && memcmp(buf + i - 3, "\r\n\r\n", 4) == 0)
                        return (long)i + 1;
        }
        return 0;
}

static int parse_status_line(const char *p, size_t n, struct response_head *out)
{
        if (n < 12 || (memcmp(p, "HTTP/1.1 ", 9) != 0 && memcmp(p, "HTTP/1.0 ", 9) != 0))
                return -EINVAL;
        for (size_t i = 9; i < 12; i++)
                if (p[i] < '0' || p[i] > '9')
                        return -EINVAL;
        if (n > 12 && p[12] != ' ')
                return -EINVAL;
        out->keep_alive = p[7] == '1'; /* until a Connection field says close */
        out->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
        out->status_line_len = n;
        return out->status >= 100 ? 0 : -EINVAL;
}

static int parse_field(const char *p, size_t n, struct response_head *out)
{
        size_t i = 0;
        while (i < n && is_tchar(p[i]))
                i++;
        if (i == 0 || i == n || p[i] != ':')
                return -EINVAL; /* also obs-fold: a line starting with a blank */
        if (out->n_fields == RESPONSE_FIELDS_MAX)
                return -EMSGSIZE;
        struct response_field *f = &out->fields[out->n_fields++];
        f->name = p;
        f->name_len = i;
        const char *v = p + i + 1, *end = p + n;
        while (v < end && (*v == ' ' || *v == '\t'))
                v++;
        while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
                end--;
        f->value = v;
        f->value_len = (size_t)(end - v);
        return 0;
}

static int parse_length(const struct response_field *f, uint64_t *out)
{
        if (f->value_len == 0 || f->value_len > 18)
                return -EINVAL;
        uint64_t v = 0;
        for (size_t i = 0; i < f->value_len; i++) {
                if (f->value[i] < '0' || f->value[i] > '9')
                        return -EINVAL;
                v = v * 10 + (uint64_t)(f->value[i] - '0');
        }
        *out = v;
        return 0;
}

/* The framing: Transfer-Encoding ending in chunked, else a Content-Length,
 * else until close. Both, or two lengths, are refused (request smuggling's
 * mirror image). */
static int set_framing(struct response_head *h, bool head_request)
{
        const struct response_field *te = NULL, *cl = NULL;
        for (size_t i = 0; i < h->n_fields; i++) {
                const struct response_field *f = &h->fields[i];
                bool is_te = span_is(f->name, f->name_len, "transfer-encoding");
                bool is_cl = span_is(f->name, f->name_len, "content-length");
                if ((is_te && te) || (is_cl && cl))
                        return -EINVAL;
                te = is_te ? f : te;
                cl = is_cl ? f : cl;
        }
        if (te && cl)
                return -EINVAL;
        if (head_request || h->status < 200 || h->status == 204 || h->status == 304)
                h->body = RESPONSE_BODY_NONE;
        else if (te) {
                size_t n = te->value_len;
                bool chunked = n >= 7 && strncasecmp(te->value + n - 7, "chunked", 7) == 0 &&
                               (n == 7 || te->value[n - 8] == ' ' || te->value[n - 8] == ',');
                h->body = chunked ? RESPONSE_BODY_CHUNKED : RESPONSE_BODY_CLOSE;
        } else if (cl) {
                h->body = RESPONSE_BODY_LENGTH;
                return parse_length(cl, &h->content_length);
        } else
                h->body = RESPONSE_BODY_CLOSE;
        return 0;
}

/* True when the comma-separated list in f names the field called name. */
static bool list_names(const struct response_field *f, const char *name, size_t len)
{
        const char *p = f->value, *end = f->value + f->value_len;
        while (p < end) {
                while (p < end && (*p == ',' || *p == ' ' || *p == '\t'))
                        p++;
                const char *t = p;
                while (p < end && *p != ',' && *p != ' ' && *p != '\t')
                        p++;
                if (p > t && (size_t)(p - t) == len && strncasecmp(t, name, len) == 0)
                        return true;
        }
        return false;
}

/* A close anywhere it could be read as one ends the connection. */
static void set_keep_alive(struct response_head *h)
{
        for (size_t i = 0; i < h->n_fields && h->keep_alive; i++) {
                const struct response_field *f = &h->fields[i];
                if ((span_is(f->name, f->name_len, "connection") ||
                     span_is(f->name, f->name_len, "proxy-connection")) &&
                    list_names(f, "close", 5))
                        h->keep_alive = false;
        }
}

int response_head_parse(const char *buf, size_t len, bool head_request, struct response_head *out)
{
        long end = head_end(buf, len < RESPONSE_HEAD_MAX ? len : RESPONSE_HEAD_MAX);
        if (end < 0)
                return -EINVAL;
        if (end == 0)
                return len >= RESPONSE_HEAD_MAX ? -EMSGSIZE : -EAGAIN;
        memset(out, 0, sizeof(*out));
        out->head_len = (size_t)end;
        const char *p = buf, *stop = buf + end - 2; /* the final empty line */
        const char *eol = memchr(p, '\r', (size_t)(stop - p));
        int r = parse_status_line(p, (size_t)(eol - p), out);
        for (p = eol + 2; r == 0 && p < stop; p = eol + 2) {
                eol = memchr(p, '\r', (size_t)(stop - p));
                r = parse_field(p, (size_t)(eol - p), out);
        }
        if (r < 0)
                return r;
        set_keep_alive(out);
        return set_framing(out, head_request);
}

static bool is_hop_by_hop(const struct response_head *h, const struct response_field *f)
{
        static const char *const fixed[] = {
            "connection", "proxy-connection", "keep-alive",         "te",
            "trailer",    "upgrade",          "proxy-authenticate", "proxy-authorization"};
        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
                if (span_is(f->name, f->name_len, fixed[i]))
                        return true;
        if (span_is(f->name, f->name_len, "content-length") ||
            span_is(f->name, f->name_len, "transfer-encoding"))
                return false;
        for (size_t i = 0; i < h->n_fields; i++)
                if (span_is(h->fields[i].name, h->fields[i].name_len, "connection") &&
                    list_names(&h->fields[i], f->name, f->name_len))
                        return true;
        return false;
}

char *response_head_rewrite(const char *buf, const struct response_head *h, const char *extra,
                            size_t *len)
{
        size_t extra_len = extra ? strlen(extra) : 0;
        /* "name: value" is at most one byte longer than the line it came from */
        char *out = malloc(h->head_len + h->n_fields + extra_len + 3);
        if (!out)
                return NULL;
        size_t n = 0;
        memcpy(out, buf, h->status_line_len);
        n += h->status_line_len;
        out[n++] = '\r';
        out[n++] = '\n';
        for (size_t i = 0; i < h->n_fields; i++) {
                const struct response_field *f = &h->fields[i];
                if (is_hop_by_hop(h, f))
                        continue;
                n += (size_t)sprintf(out + n, "%.*s: %.*s\r\n", (int)f->name_len, f->name,
                                     (int)f->value_len, f->value);
        }
        memcpy(out + n, extra ? extra : "", extra_len);
        n += extra_len;
        memcpy(out + n, "\r\n", 3);
        *len = n + 2;
        return out;
}
