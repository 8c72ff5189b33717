/* libFuzzer harness for the gateway's parser of upstream response heads
 * (netns/gateway_response.h), input no sandbox controls but no server is
 * trusted with either: any bytes give a head whose fields lie inside it, or
 * a refusal; a head it takes is rewritten into one that parses again to the
 * same status and ends with the empty line. The first byte says whether
 * the request was HEAD. */
#include "netns/gateway_response.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_inside(const char *p, size_t n, const char *buf, size_t len)
{
        if (n && (p < buf || p + n > buf + len))
                abort();
}

static void check_rewrite(const char *buf, const struct response_head *h, bool head)
{
        size_t len = 0;
        char *out = response_head_rewrite(buf, h, NULL, &len);
        if (!out)
                return;
        struct response_head again;
        if (len < 4 || memcmp(out + len - 4, "\r\n\r\n", 4) != 0 ||
            response_head_parse(out, len, head, &again) != 0 || again.status != h->status ||
            again.head_len != len)
                abort();
        free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        bool head = data[0] & 1;
        const char *buf = (const char *)data + 1;
        size_t len = size - 1;
        struct response_head h;
        if (response_head_parse(buf, len, head, &h) != 0)
                return 0;
        if (h.head_len > len || h.head_len > RESPONSE_HEAD_MAX || h.n_fields > RESPONSE_FIELDS_MAX)
                abort();
        for (size_t i = 0; i < h.n_fields; i++) {
                check_inside(h.fields[i].name, h.fields[i].name_len, buf, h.head_len);
                check_inside(h.fields[i].value, h.fields[i].value_len, buf, h.head_len);
                if (memchr(h.fields[i].value, '\n', h.fields[i].value_len))
                        abort();
        }
        check_rewrite(buf, &h, head);
        return 0;
}
