#include "netns/tls_signer_msg.h"
#include "common/error.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

static void put16(unsigned char *p, size_t v)
{
        p[0] = (unsigned char)(v >> 8);
        p[1] = (unsigned char)v;
}

static size_t get16(const unsigned char *p)
{
        return (size_t)p[0] << 8 | p[1];
}

int tls_signer_req_encode(const struct egress_host *host, const void *key, size_t key_len,
                          unsigned char *buf, size_t size)
{
        size_t host_len = strlen(host->text);
        if (host_len == 0 || host_len > EGRESS_NAME_MAX || key_len == 0 ||
            key_len > TLS_SIGNER_KEY_MAX || size < TLS_SIGNER_HEAD + host_len + key_len)
                return -EINVAL;
        buf[0] = TLS_SIGNER_VERSION;
        buf[1] = TLS_SIGNER_LEAF;
        put16(buf + 2, host_len);
        put16(buf + 4, key_len);
        memcpy(buf + TLS_SIGNER_HEAD, host->text, host_len);
        memcpy(buf + TLS_SIGNER_HEAD + host_len, key, key_len);
        return (int)(TLS_SIGNER_HEAD + host_len + key_len);
}

#define refuse(err, what) umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "signer request: %s", what)

/* The host is checked again here, as if the engine had never looked: the
 * same canonicalisation every rule goes through, and only its own output
 * is accepted, so the signer signs for exactly the name it was given. */
static int check_host(const unsigned char *text, size_t len, struct egress_host *out,
                      struct umw_error **err)
{
        if (egress_host_canon((const char *)text, len, out, err) < 0)
                return umw_error_prefix(err, "signer request");
        if (strlen(out->text) != len || memcmp(out->text, text, len) != 0)
                return refuse(err, "the host is not in its canonical form");
        return 0;
}

int tls_signer_req_decode(const void *buf, size_t len, struct tls_signer_req *out,
                          struct umw_error **err)
{
        const unsigned char *p = buf;
        if (len < TLS_SIGNER_HEAD || len > TLS_SIGNER_REQ_MAX)
                return refuse(err, "wrong length");
        if (p[0] != TLS_SIGNER_VERSION || p[1] != TLS_SIGNER_LEAF)
                return refuse(err, "unknown version or type");
        size_t host_len = get16(p + 2), key_len = get16(p + 4);
        if (host_len == 0 || host_len > EGRESS_NAME_MAX || key_len == 0 ||
            key_len > TLS_SIGNER_KEY_MAX)
                return refuse(err, "a field out of bounds");
        if (TLS_SIGNER_HEAD + host_len + key_len != len)
                return refuse(err, "the fields do not fill the record");
        int r = check_host(p + TLS_SIGNER_HEAD, host_len, &out->host, err);
        if (r < 0)
                return r;
        out->key = p + TLS_SIGNER_HEAD + host_len;
        out->key_len = key_len;
        return 0;
}

int tls_signer_resp_encode(enum tls_signer_status status, const void *body, size_t body_len,
                           unsigned char *buf, size_t size)
{
        if (status == TLS_SIGNER_REFUSED && body_len > TLS_SIGNER_TEXT_MAX)
                body_len = TLS_SIGNER_TEXT_MAX;
        if ((status != TLS_SIGNER_OK && status != TLS_SIGNER_REFUSED) ||
            body_len > TLS_SIGNER_BODY_MAX || size < 4 + body_len)
                return -EINVAL;
        buf[0] = TLS_SIGNER_VERSION;
        buf[1] = (unsigned char)status;
        put16(buf + 2, body_len);
        if (body_len)
                memcpy(buf + 4, body, body_len);
        return (int)(4 + body_len);
}

/* A refusal's text, shown as it came but for anything unprintable. */
static int refused(const unsigned char *text, size_t len, struct umw_error **err)
{
        char msg[TLS_SIGNER_TEXT_MAX + 1];
        size_t n = len < TLS_SIGNER_TEXT_MAX ? len : TLS_SIGNER_TEXT_MAX;
        for (size_t i = 0; i < n; i++)
                msg[i] = text[i] >= 0x20 && text[i] < 0x7f ? (char)text[i] : '?';
        msg[n] = '\0';
        return umw_fail(err, UMW_EXIT_CONFIG, EACCES, "%s", msg);
}

int tls_signer_resp_decode(const void *buf, size_t len, const unsigned char **body,
                           size_t *body_len, struct umw_error **err)
{
        const unsigned char *p = buf;
        if (len < 4 || len > TLS_SIGNER_RESP_MAX || p[0] != TLS_SIGNER_VERSION ||
            get16(p + 2) != len - 4 || p[1] > TLS_SIGNER_REFUSED)
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO, "signer: a malformed response");
        if (p[1] == TLS_SIGNER_REFUSED)
                return refused(p + 4, len - 4, err);
        *body = p + 4;
        *body_len = len - 4;
        return 0;
}
