/* The signer's wire format (netns/tls_signer_msg.h): what the engine
 * encodes decodes to the same host and key; every malformed or
 * out-of-bounds record is refused. */
#include "netns/tls_signer_msg.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

static struct egress_host host_of(const char *text)
{
        struct egress_host h;
        struct umw_error *err = NULL;
        cr_assert_eq(egress_host_canon(text, strlen(text), &h, &err), 0);
        return h;
}

static const unsigned char key[91] = {0x30, 0x59, 0x30, 0x13};

static int encode(const char *host, unsigned char *buf)
{
        struct egress_host h = host_of(host);
        return tls_signer_req_encode(&h, key, sizeof(key), buf, TLS_SIGNER_REQ_MAX);
}

static void refused(const void *buf, size_t len)
{
        struct tls_signer_req q;
        struct umw_error *err = NULL;
        cr_assert_lt(tls_signer_req_decode(buf, len, &q, &err), 0);
        cr_assert_not_null(err);
        cr_assert_null(strchr(err->msg, '\n'));
        umw_error_free(err);
}

Test(signer_msg, request_round_trip)
{
        const char *hosts[] = {"example.com", "192.0.2.1", "2001:db8::1", "a-b_c.example"};
        for (size_t i = 0; i < 4; i++) {
                unsigned char buf[TLS_SIGNER_REQ_MAX];
                int n = encode(hosts[i], buf);
                cr_assert_gt(n, 0);
                struct tls_signer_req q;
                struct umw_error *err = NULL;
                cr_assert_eq(tls_signer_req_decode(buf, (size_t)n, &q, &err), 0, "%s",
                             err ? err->msg : "");
                struct egress_host want = host_of(hosts[i]);
                cr_assert(egress_host_equal(&q.host, &want));
                cr_assert_eq(q.key_len, sizeof(key));
                cr_assert_eq(memcmp(q.key, key, sizeof(key)), 0);
        }
}

Test(signer_msg, request_bounds)
{
        unsigned char buf[TLS_SIGNER_REQ_MAX + 16];
        int n = encode("example.com", buf);
        refused(buf, 0);
        refused(buf, TLS_SIGNER_HEAD - 1);
        refused(buf, (size_t)n - 1); /* fields longer than the record */
        buf[n] = 0;
        refused(buf, (size_t)n + 1); /* a record longer than its fields */
        refused(buf, TLS_SIGNER_REQ_MAX + 1);
        buf[0] = 2;
        refused(buf, (size_t)n); /* version */
        buf[0] = TLS_SIGNER_VERSION;
        buf[1] = 9;
        refused(buf, (size_t)n); /* type */
        buf[1] = TLS_SIGNER_LEAF;
        buf[4] = 0xff; /* key length beyond the bound */
        refused(buf, (size_t)n);
}

/* Only the canonical spelling: the signer signs for exactly that text. */
Test(signer_msg, request_host_checked_again)
{
        const char *bad[] = {"Example.com", "example.com.", "127.1", "exa mple.com",
                             "a..b",        "[::1]",        "x@y"};
        for (size_t i = 0; i < 7; i++) {
                unsigned char buf[TLS_SIGNER_REQ_MAX];
                size_t hl = strlen(bad[i]);
                buf[0] = TLS_SIGNER_VERSION;
                buf[1] = TLS_SIGNER_LEAF;
                buf[2] = 0;
                buf[3] = (unsigned char)hl;
                buf[4] = 0;
                buf[5] = sizeof(key);
                memcpy(buf + TLS_SIGNER_HEAD, bad[i], hl);
                memcpy(buf + TLS_SIGNER_HEAD + hl, key, sizeof(key));
                refused(buf, TLS_SIGNER_HEAD + hl + sizeof(key));
        }
        unsigned char nul[TLS_SIGNER_REQ_MAX];
        int n = encode("example.com", nul);
        nul[TLS_SIGNER_HEAD + 3] = '\0';
        refused(nul, (size_t)n);
}

Test(signer_msg, encode_bounds)
{
        struct egress_host h = host_of("example.com");
        unsigned char buf[TLS_SIGNER_REQ_MAX];
        cr_assert_eq(tls_signer_req_encode(&h, key, 0, buf, sizeof(buf)), -EINVAL);
        cr_assert_eq(tls_signer_req_encode(&h, key, TLS_SIGNER_KEY_MAX + 1, buf, sizeof(buf)),
                     -EINVAL);
        cr_assert_eq(tls_signer_req_encode(&h, key, sizeof(key), buf, 10), -EINVAL);
}

Test(signer_msg, response_round_trip_and_refusal)
{
        unsigned char buf[TLS_SIGNER_RESP_MAX];
        const unsigned char *body = NULL;
        size_t len = 0;
        struct umw_error *err = NULL;
        int n = tls_signer_resp_encode(TLS_SIGNER_OK, "DER", 3, buf, sizeof(buf));
        cr_assert_eq(n, 7);
        cr_assert_eq(tls_signer_resp_decode(buf, (size_t)n, &body, &len, &err), 0);
        cr_assert_eq(len, 3);
        cr_assert_eq(memcmp(body, "DER", 3), 0);
        n = tls_signer_resp_encode(TLS_SIGNER_REFUSED, "no\nCA", 5, buf, sizeof(buf));
        cr_assert_eq(tls_signer_resp_decode(buf, (size_t)n, &body, &len, &err), -EACCES);
        cr_assert_str_eq(err->msg, "no?CA");
        umw_error_free(err);
        err = NULL;
        cr_assert_eq(tls_signer_resp_decode(buf, (size_t)n - 1, &body, &len, &err), -EPROTO);
        umw_error_free(err);
        err = NULL;
        buf[1] = 7;
        cr_assert_eq(tls_signer_resp_decode(buf, (size_t)n, &body, &len, &err), -EPROTO);
        umw_error_free(err);
        cr_assert_eq(
            tls_signer_resp_encode(TLS_SIGNER_OK, buf, TLS_SIGNER_BODY_MAX + 1, buf, sizeof(buf)),
            -EINVAL);
}
