/* libFuzzer harness for the gateway's request head parser, its forwarding
 * helpers and the chunked framing tracker: any bytes must give a head whose
 * spans all lie inside the input, or a one-line refusal; and the chunked
 * tracker must find the same end whether the body comes at once or in two
 * pieces. The first byte picks the flags. */
#include "netns/http_head.h"
#include "common/error.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_span(struct http_span s, const char *buf, size_t len)
{
        if (s.n == 0)
                return;
        bool inside = s.p >= buf && s.p + s.n <= buf + len;
        if (!inside && !(s.n == 1 && s.p[0] == '/'))
                abort();
}

static void check_head(const struct http_head *h, const char *buf, size_t len)
{
        if (h->head_len > len || h->head_len > HTTP_HEAD_MAX || h->n_fields > HTTP_HEADERS_MAX)
                abort();
        const struct http_span spans[] = {h->method,         h->target,          h->authority.host,
                                          h->authority.text, h->request_uri,     h->path,
                                          h->query,          h->host_header.host};
        for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++)
                check_span(spans[i], buf, h->head_len);
        for (size_t i = 0; i < h->n_fields; i++) {
                check_span(h->fields[i].name, buf, h->head_len);
                check_span(h->fields[i].value, buf, h->head_len);
                if (memchr(h->fields[i].value.p, '\n', h->fields[i].value.n))
                        abort();
                http_field_is_hop_by_hop(h, &h->fields[i]);
                http_field_is_secret(h->fields[i].name);
        }
        http_head_keep_alive(h);
}

static void check_forward(const struct http_head *h)
{
        char *out = NULL;
        size_t n = 0;
        struct umw_error *err = NULL;
        int r = http_head_write_origin(h, "Connection: close\r\n", &out, &n, &err);
        if (r == 0 && (n < 4 || memcmp(out + n - 4, "\r\n\r\n", 4) != 0 || strlen(out) != n))
                abort();
        if ((r == 0) != (err == NULL) || (r == 0) == h->is_connect)
                abort();
        free(out);
        umw_error_free(err);
}

/* The end of a chunked body found in one feed and in two must agree. */
static void check_chunked(const char *body, size_t len)
{
        struct http_chunked a, b;
        struct umw_error *err = NULL;
        size_t used_a = 0, used_b1 = 0, used_b2 = 0;
        http_chunked_init(&a);
        http_chunked_init(&b);
        int ra = http_chunked_feed(&a, body, len, &used_a, &err);
        umw_error_free(err);
        err = NULL;
        size_t half = len / 2;
        int rb = http_chunked_feed(&b, body, half, &used_b1, &err);
        if (rb == 0) {
                rb = http_chunked_feed(&b, body + half, len - half, &used_b2, &err);
                used_b1 += used_b2;
        }
        umw_error_free(err);
        if (used_a > len || (ra == 1) != (rb == 1) || (ra == 1 && used_a != used_b1) ||
            (ra < 0) != (rb < 0))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size == 0)
                return 0;
        unsigned flags = data[0] & 1 ? HTTP_HEAD_ORIGIN_FORM : 0;
        const char *buf = (const char *)data + 1;
        size_t len = size - 1;
        static struct http_head h;
        struct umw_error *err = NULL;
        int r = http_head_parse(buf, len, flags, &h, &err);
        if (r == 0) {
                if (err)
                        abort();
                check_head(&h, buf, len);
                check_forward(&h);
        } else if (r == -EAGAIN) {
                if (err || len >= HTTP_HEAD_MAX)
                        abort();
        } else if (!err || strchr(err->msg, '\n') || http_head_status(r) == 200) {
                abort();
        }
        umw_error_free(err);
        check_chunked(buf, len);
        return 0;
}
