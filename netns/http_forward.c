/* What of a parsed request head goes upstream, and what never reaches a log. */
#include "netns/http_head.h"
#include "netns/http_chars.h"
#include "common/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct http_field *http_head_field(const struct http_head *h, const char *name)
{
        for (size_t i = 0; i < h->n_fields; i++)
                if (http_span_equal(h->fields[i].name, name))
                        return &h->fields[i];
        return NULL;
}

/* Whether the comma-separated list v has an element equal to name. */
static bool list_has(struct http_span v, struct http_span name)
{
        size_t pos = 0;
        struct http_span e;
        while (http_list_next(v, &pos, &e))
                if (e.n == name.n && e.n > 0 && strncasecmp(e.p, name.p, e.n) == 0)
                        return true;
        return false;
}

/* Whether any field called field_name lists token. */
static bool fields_list(const struct http_head *h, const char *field_name, struct http_span token)
{
        for (size_t i = 0; i < h->n_fields; i++)
                if (http_span_equal(h->fields[i].name, field_name) &&
                    list_has(h->fields[i].value, token))
                        return true;
        return false;
}

static bool name_in(struct http_span name, const char *const *names, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (http_span_equal(name, names[i]))
                        return true;
        return false;
}

bool http_field_is_hop_by_hop(const struct http_head *h, const struct http_field *f)
{
        static const char *const hop[] = {
            "Connection", "Proxy-Connection", "Keep-Alive",          "TE",
            "Trailer",    "Upgrade",          "Proxy-Authorization", "Proxy-Authenticate"};
        /* Connection may not take away what frames the body or names the
         * host: the request upstream must stay the one the policy judged. */
        static const char *const kept[] = {"Host", "Content-Length", "Transfer-Encoding"};
        if (name_in(f->name, hop, sizeof(hop) / sizeof(hop[0])))
                return true;
        if (name_in(f->name, kept, sizeof(kept) / sizeof(kept[0])))
                return false;
        return fields_list(h, "Connection", f->name);
}

bool http_field_is_secret(struct http_span name)
{
        static const char *const secret[] = {"Authorization", "Cookie", "Proxy-Authorization"};
        return name_in(name, secret, sizeof(secret) / sizeof(secret[0]));
}

bool http_head_keep_alive(const struct http_head *h)
{
        struct http_span close = {"close", 5}, keep = {"keep-alive", 10};
        if (fields_list(h, "Connection", close) || fields_list(h, "Proxy-Connection", close))
                return false;
        if (h->version_minor == 1)
                return true;
        return fields_list(h, "Connection", keep) || fields_list(h, "Proxy-Connection", keep);
}

static char *put(char *w, const char *p, size_t n)
{
        memcpy(w, p, n);
        return w + n;
}

static char *put_field(char *w, struct http_span name, struct http_span value)
{
        w = put(w, name.p, name.n);
        w = put(w, ": ", 2);
        w = put(w, value.p, value.n);
        return put(w, "\r\n", 2);
}

int http_head_write_origin(const struct http_head *h, const char *extra, char **out,
                           size_t *out_len, struct umw_error **err)
{
        if (h->is_connect || h->form == HTTP_TARGET_AUTHORITY)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "a CONNECT request has no origin-form head");
        static const struct http_span host_name = {"Host", 4};
        bool add_host = !h->has_host_header;
        size_t extra_n = extra ? strlen(extra) : 0;
        size_t n = h->method.n + 1 + h->request_uri.n + sizeof(" HTTP/1.x\r\n") - 1 + extra_n + 2;
        if (add_host)
                n += host_name.n + 2 + h->authority.text.n + 2;
        for (size_t i = 0; i < h->n_fields; i++)
                n += h->fields[i].name.n + 2 + h->fields[i].value.n + 2;
        char *buf = malloc(n + 1);
        if (!buf)
                return umw_fail_sys(err, ENOMEM, "request head for upstream");
        char *w = put(buf, h->method.p, h->method.n);
        w = put(w, " ", 1);
        w = put(w, h->request_uri.p, h->request_uri.n);
        w = put(w, h->version_minor ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n", 11);
        if (add_host)
                w = put_field(w, host_name, h->authority.text);
        for (size_t i = 0; i < h->n_fields; i++)
                if (!http_field_is_hop_by_hop(h, &h->fields[i]))
                        w = put_field(w, h->fields[i].name, h->fields[i].value);
        if (extra_n)
                w = put(w, extra, extra_n);
        w = put(w, "\r\n", 2);
        *w = '\0';
        *out = buf;
        *out_len = (size_t)(w - buf);
        return 0;
}
