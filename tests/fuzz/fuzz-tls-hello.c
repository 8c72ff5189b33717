/* libFuzzer harness for the ClientHello reader: any bytes must give a
 * well-formed result (an SNI of printable ASCII, records inside the input)
 * or a refusal with a reason, never a crash or an over-read; and a hello
 * that parses must parse the same from exactly its own records. */
#include "netns/tls_hello.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ok(const struct tls_hello *h, const uint8_t *data, size_t size)
{
        if (h->why || h->records_len > size || h->records_len < 9)
                abort();
        if (h->has_sni != (h->sni_len > 0) || h->sni_len > TLS_SNI_MAX ||
            strlen(h->sni) != h->sni_len)
                abort();
        for (size_t i = 0; i < h->sni_len; i++)
                if (h->sni[i] <= 0x20 || h->sni[i] >= 0x7f)
                        abort();
        if (h->n_alpn_kept > TLS_ALPN_MAX || h->n_alpn_kept > h->n_alpn)
                abort();
        struct tls_hello again;
        if (tls_hello_parse(data, h->records_len, &again) != 0 || again.sni_len != h->sni_len ||
            memcmp(again.sni, h->sni, h->sni_len) != 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct tls_hello h;
        int r = tls_hello_parse(data, size, &h);
        switch (r) {
        case 0:
                check_ok(&h, data, size);
                break;
        case -EAGAIN:
                if (h.why)
                        abort();
                break;
        case -EPROTO:
        case -EINVAL:
        case -EMSGSIZE:
                if (!h.why)
                        abort();
                break;
        default:
                abort();
        }
        return 0;
}
