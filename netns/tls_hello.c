#include "netns/tls_hello.h"

#include <errno.h>
#include <string.h>

#define TLS_RECORD_HEADER 5
#define TLS_RECORD_MAX    16384 /* a plaintext fragment, RFC 8446 5.1 */
#define TLS_HANDSHAKE     22
#define TLS_CLIENT_HELLO  1
#define EXT_SERVER_NAME   0
#define EXT_ALPN          16
#define SNI_HOST_NAME     0

/* A bounded cursor: every read is checked against what is left. */
struct reader {
        const unsigned char *p;
        size_t n;
};

static bool take(struct reader *r, size_t n, struct reader *part)
{
        if (r->n < n)
                return false;
        if (part)
                *part = (struct reader){r->p, n};
        r->p += n;
        r->n -= n;
        return true;
}

static bool take_uint(struct reader *r, size_t bytes, size_t *v)
{
        struct reader b;
        if (!take(r, bytes, &b))
                return false;
        *v = 0;
        for (size_t i = 0; i < bytes; i++)
                *v = (*v << 8) | b.p[i];
        return true;
}

/* A vector with a length prefix of len_bytes, its length within [min, max]. */
static bool take_vec(struct reader *r, size_t len_bytes, size_t min, size_t max, struct reader *vec)
{
        size_t n;
        return take_uint(r, len_bytes, &n) && n >= min && n <= max && take(r, n, vec);
}

static int refuse(struct tls_hello *out, int rc, const char *why)
{
        out->why = why;
        return rc;
}

static int parse_sni(struct reader ext, struct tls_hello *out)
{
        struct reader list, name;
        size_t type;
        if (!take_vec(&ext, 2, 1, SIZE_MAX, &list) || ext.n != 0)
                return refuse(out, -EINVAL, "SNI: bad server_name_list length");
        if (!take_uint(&list, 1, &type) || !take_vec(&list, 2, 0, SIZE_MAX, &name))
                return refuse(out, -EINVAL, "SNI: bad server name entry length");
        if (list.n != 0)
                return refuse(out, -EINVAL, "SNI: more than one name");
        if (type != SNI_HOST_NAME)
                return refuse(out, -EINVAL, "SNI: not a host_name");
        if (name.n == 0 || name.n > TLS_SNI_MAX)
                return refuse(out, -EINVAL, "SNI: host_name empty or longer than 255 bytes");
        if (memchr(name.p, 0, name.n))
                return refuse(out, -EINVAL, "SNI: NUL byte in the host_name");
        for (size_t i = 0; i < name.n; i++)
                if (name.p[i] <= 0x20 || name.p[i] >= 0x7f)
                        return refuse(out, -EINVAL, "SNI: host_name not printable ASCII");
        memcpy(out->sni, name.p, name.n);
        out->sni[name.n] = '\0';
        out->sni_len = name.n;
        out->has_sni = true;
        return 0;
}

static int parse_alpn(struct reader ext, struct tls_hello *out)
{
        struct reader list, name;
        if (!take_vec(&ext, 2, 2, SIZE_MAX, &list) || ext.n != 0)
                return refuse(out, -EINVAL, "ALPN: bad protocol_name_list length");
        while (list.n > 0) {
                if (!take_vec(&list, 1, 1, TLS_ALPN_NAME_MAX, &name))
                        return refuse(out, -EINVAL, "ALPN: bad protocol name length");
                if (out->n_alpn_kept < TLS_ALPN_MAX) {
                        struct tls_alpn *a = &out->alpn[out->n_alpn_kept++];
                        memcpy(a->name, name.p, name.n);
                        a->len = name.n;
                }
                out->n_alpn++;
        }
        return 0;
}

static int parse_extensions(struct reader exts, struct tls_hello *out)
{
        /* One bit per extension type: a type seen twice is refused. */
        uint64_t seen[65536 / 64] = {0};
        while (exts.n > 0) {
                size_t type;
                struct reader data;
                if (!take_uint(&exts, 2, &type) || !take_vec(&exts, 2, 0, SIZE_MAX, &data))
                        return refuse(out, -EINVAL, "extension: bad length");
                if (seen[type / 64] & (UINT64_C(1) << (type % 64)))
                        return refuse(out, -EINVAL, "extension: the same type twice");
                seen[type / 64] |= UINT64_C(1) << (type % 64);
                int r = 0;
                if (type == EXT_SERVER_NAME)
                        r = parse_sni(data, out);
                else if (type == EXT_ALPN)
                        r = parse_alpn(data, out);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The ClientHello body (RFC 8446 4.1.2; TLS 1.0-1.2 hellos share the layout). */
static int parse_client_hello(struct reader r, struct tls_hello *out)
{
        size_t version;
        struct reader exts;
        if (!take_uint(&r, 2, &version) || (version >> 8) != 3)
                return refuse(out, -EINVAL, "ClientHello: legacy_version is not 3.x");
        out->legacy_version = (uint16_t)version;
        if (!take(&r, 32, NULL))
                return refuse(out, -EINVAL, "ClientHello: truncated random");
        if (!take_vec(&r, 1, 0, 32, NULL))
                return refuse(out, -EINVAL, "ClientHello: bad legacy_session_id length");
        struct reader suites;
        if (!take_vec(&r, 2, 2, 65534, &suites) || suites.n % 2 != 0)
                return refuse(out, -EINVAL, "ClientHello: bad cipher_suites length");
        if (!take_vec(&r, 1, 1, 255, NULL))
                return refuse(out, -EINVAL, "ClientHello: bad compression_methods length");
        if (r.n == 0)
                return 0; /* no extensions at all: an old client, no SNI */
        if (!take_vec(&r, 2, 0, SIZE_MAX, &exts) || r.n != 0)
                return refuse(out, -EINVAL, "ClientHello: bad extensions length");
        return parse_extensions(exts, out);
}

/* One more record of the hello at buf[*pos]: its fragment is appended to
 * msg. Returns 1 when a record was taken, -EAGAIN when it is not all there. */
static int take_record(const unsigned char *buf, size_t len, size_t *pos, unsigned char *msg,
                       size_t *have, struct tls_hello *out)
{
        struct reader r = {buf + *pos, len - *pos};
        size_t type, major, minor;
        struct reader frag;
        if (!take_uint(&r, 1, &type))
                return -EAGAIN;
        if (type != TLS_HANDSHAKE)
                return refuse(out, *pos == 0 ? -EPROTO : -EINVAL, "record: not a handshake record");
        if (!take_uint(&r, 1, &major) || !take_uint(&r, 1, &minor))
                return -EAGAIN;
        if (major != 3 || minor > 4)
                return refuse(out, -EINVAL, "record: version is not 3.0-3.4");
        size_t rlen;
        if (!take_uint(&r, 2, &rlen))
                return -EAGAIN;
        if (rlen == 0 || rlen > TLS_RECORD_MAX)
                return refuse(out, -EINVAL, "record: length 0 or above 2^14");
        if (!take(&r, rlen, &frag))
                return -EAGAIN;
        if (*have + rlen > TLS_HELLO_MAX)
                return refuse(out, -EMSGSIZE, "ClientHello: larger than 16 KiB");
        memcpy(msg + *have, frag.p, rlen);
        *have += rlen;
        *pos += TLS_RECORD_HEADER + rlen;
        return 1;
}

int tls_hello_parse(const unsigned char *buf, size_t len, struct tls_hello *out)
{
        memset(out, 0, sizeof(*out));
        unsigned char msg[TLS_HELLO_MAX];
        size_t pos = 0, have = 0, need = 0;
        while (need == 0 || have < need) {
                int r = take_record(buf, len, &pos, msg, &have, out);
                if (r < 0)
                        return r;
                if (have < 4)
                        continue;
                if (msg[0] != TLS_CLIENT_HELLO)
                        return refuse(out, -EINVAL, "handshake: not a ClientHello");
                need = 4 + ((size_t)msg[1] << 16 | (size_t)msg[2] << 8 | msg[3]);
                if (need > TLS_HELLO_MAX)
                        return refuse(out, -EMSGSIZE, "ClientHello: larger than 16 KiB");
        }
        if (have > need)
                return refuse(out, -EINVAL, "record: bytes after the ClientHello");
        out->records_len = pos;
        return parse_client_hello((struct reader){msg + 4, need - 4}, out);
}
