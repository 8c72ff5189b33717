/* libFuzzer harness for the signer's request decoder: the signer parses
 * these bytes from the engine, the less trusted process. Any bytes are
 * refused with a one-line error or give a canonical host (whose text
 * canonicalises to itself) and a key inside the record, within bounds;
 * a decoded request encodes back to the same bytes. */
#include "netns/tls_signer_msg.h"
#include "common/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct tls_signer_req q;
        struct umw_error *err = NULL;
        if (tls_signer_req_decode(data, size, &q, &err) < 0) {
                if (!err || strchr(err->msg, '\n'))
                        abort();
                umw_error_free(err);
                return 0;
        }
        if (q.key < data || q.key + q.key_len != data + size || q.key_len == 0 ||
            q.key_len > TLS_SIGNER_KEY_MAX || strlen(q.host.text) > EGRESS_NAME_MAX)
                abort();
        unsigned char again[TLS_SIGNER_REQ_MAX];
        int n = tls_signer_req_encode(&q.host, q.key, q.key_len, again, sizeof(again));
        if (n < 0 || (size_t)n != size || memcmp(again, data, size) != 0)
                abort();
        return 0;
}
