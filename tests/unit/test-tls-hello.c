/* The ClientHello reader: a hello curl really sent gives its exact SNI and
 * ALPN, every prefix of it asks for more, a hello split over records reads
 * the same, and every way of lying about a length or naming two hosts is
 * refused. */
#include "netns/tls_hello.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

/* What curl 7.88 (OpenSSL 3.0) sent for https://example.com:PORT/, captured on
 * 127.0.0.1: one record, SNI example.com, ALPN h2 and http/1.1, padding. */
static const unsigned char curl_hello[] = {
    0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0x92, 0x8a, 0x5b, 0x2f, 0xf9,
    0xc6, 0x64, 0x0c, 0x4a, 0xd6, 0x5a, 0xec, 0x78, 0xaf, 0x21, 0x8a, 0x29, 0x0b, 0x3e, 0x45, 0xc3,
    0xad, 0x47, 0xa3, 0x89, 0x88, 0x7d, 0xd9, 0x25, 0xe8, 0x34, 0xe7, 0x20, 0x72, 0x34, 0x05, 0x86,
    0xb2, 0x0f, 0x05, 0x23, 0x94, 0xf4, 0xb2, 0xf6, 0x74, 0x76, 0x79, 0x45, 0x6f, 0x3e, 0x21, 0x83,
    0x2a, 0xd1, 0x07, 0xa2, 0xa6, 0x4b, 0xeb, 0x89, 0xea, 0x7f, 0x07, 0x43, 0x00, 0x3e, 0x13, 0x02,
    0x13, 0x03, 0x13, 0x01, 0xc0, 0x2c, 0xc0, 0x30, 0x00, 0x9f, 0xcc, 0xa9, 0xcc, 0xa8, 0xcc, 0xaa,
    0xc0, 0x2b, 0xc0, 0x2f, 0x00, 0x9e, 0xc0, 0x24, 0xc0, 0x28, 0x00, 0x6b, 0xc0, 0x23, 0xc0, 0x27,
    0x00, 0x67, 0xc0, 0x0a, 0xc0, 0x14, 0x00, 0x39, 0xc0, 0x09, 0xc0, 0x13, 0x00, 0x33, 0x00, 0x9d,
    0x00, 0x9c, 0x00, 0x3d, 0x00, 0x3c, 0x00, 0x35, 0x00, 0x2f, 0x00, 0xff, 0x01, 0x00, 0x01, 0x75,
    0x00, 0x00, 0x00, 0x10, 0x00, 0x0e, 0x00, 0x00, 0x0b, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65,
    0x2e, 0x63, 0x6f, 0x6d, 0x00, 0x0b, 0x00, 0x04, 0x03, 0x00, 0x01, 0x02, 0x00, 0x0a, 0x00, 0x16,
    0x00, 0x14, 0x00, 0x1d, 0x00, 0x17, 0x00, 0x1e, 0x00, 0x19, 0x00, 0x18, 0x01, 0x00, 0x01, 0x01,
    0x01, 0x02, 0x01, 0x03, 0x01, 0x04, 0x00, 0x10, 0x00, 0x0e, 0x00, 0x0c, 0x02, 0x68, 0x32, 0x08,
    0x68, 0x74, 0x74, 0x70, 0x2f, 0x31, 0x2e, 0x31, 0x00, 0x16, 0x00, 0x00, 0x00, 0x17, 0x00, 0x00,
    0x00, 0x31, 0x00, 0x00, 0x00, 0x0d, 0x00, 0x2a, 0x00, 0x28, 0x04, 0x03, 0x05, 0x03, 0x06, 0x03,
    0x08, 0x07, 0x08, 0x08, 0x08, 0x09, 0x08, 0x0a, 0x08, 0x0b, 0x08, 0x04, 0x08, 0x05, 0x08, 0x06,
    0x04, 0x01, 0x05, 0x01, 0x06, 0x01, 0x03, 0x03, 0x03, 0x01, 0x03, 0x02, 0x04, 0x02, 0x05, 0x02,
    0x06, 0x02, 0x00, 0x2b, 0x00, 0x09, 0x08, 0x03, 0x04, 0x03, 0x03, 0x03, 0x02, 0x03, 0x01, 0x00,
    0x2d, 0x00, 0x02, 0x01, 0x01, 0x00, 0x33, 0x00, 0x26, 0x00, 0x24, 0x00, 0x1d, 0x00, 0x20, 0x46,
    0x77, 0x43, 0xf0, 0x58, 0x56, 0x06, 0x06, 0x7f, 0x07, 0x54, 0x5d, 0xab, 0x37, 0xe6, 0x09, 0x1a,
    0x1a, 0x3c, 0xfd, 0x13, 0x4f, 0xe6, 0xf4, 0x04, 0x23, 0x26, 0x89, 0xd2, 0x80, 0xb1, 0x45, 0x00,
    0x15, 0x00, 0xb2, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00};

/* A synthetic hello: one record, TLS 1.2 layout, one cipher suite, no
 * compression, then the given extensions (no extension block when exts is
 * NULL). Offsets: record length at 3, handshake length at 6, suites length
 * at 44, compression length at 48, extensions length at 50, first
 * extension at 52. */
struct msg {
        unsigned char b[20000];
        size_t n;
};

static void put(struct msg *m, const void *p, size_t n)
{
        cr_assert_leq(m->n + n, sizeof(m->b));
        memcpy(m->b + m->n, p, n);
        m->n += n;
}

static void put_uint(struct msg *m, size_t bytes, size_t v)
{
        for (size_t i = bytes; i > 0; i--) {
                unsigned char c = (unsigned char)(v >> (8 * (i - 1)));
                put(m, &c, 1);
        }
}

static void set_uint(struct msg *m, size_t at, size_t bytes, size_t v)
{
        for (size_t i = 0; i < bytes; i++)
                m->b[at + i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
}

static struct msg hello(const struct msg *exts)
{
        struct msg m = {.n = 0};
        put(&m, "\x16\x03\x01\0\0\x01\0\0\0\x03\x03", 11);
        for (int i = 0; i < 32; i++)
                put_uint(&m, 1, (size_t)i);
        put(&m, "\x00\x00\x02\x13\x01\x01\x00", 7);
        if (exts) {
                put_uint(&m, 2, exts->n);
                put(&m, exts->b, exts->n);
        }
        set_uint(&m, 3, 2, m.n - 5);
        set_uint(&m, 6, 3, m.n - 9);
        return m;
}

static void ext_sni(struct msg *e, const char *name, size_t n)
{
        put_uint(e, 2, 0);
        put_uint(e, 2, n + 5);
        put_uint(e, 2, n + 3);
        put_uint(e, 1, 0);
        put_uint(e, 2, n);
        put(e, name, n);
}

static struct msg hello_sni(const char *name)
{
        struct msg e = {.n = 0};
        ext_sni(&e, name, strlen(name));
        return hello(&e);
}

/* The same hello, its fragment cut into records at the given offsets. */
static struct msg resplit(const unsigned char *rec, size_t n, const size_t *cuts, size_t ncuts)
{
        struct msg m = {.n = 0};
        size_t from = 0, frag_n = n - 5;
        for (size_t i = 0; i <= ncuts; i++) {
                size_t to = i < ncuts ? cuts[i] : frag_n;
                put(&m, rec, 3);
                put_uint(&m, 2, to - from);
                put(&m, rec + 5 + from, to - from);
                from = to;
        }
        return m;
}

static int parse(const unsigned char *b, size_t n, struct tls_hello *h)
{
        return tls_hello_parse(b, n, h);
}

Test(tls_hello, curl_hello_gives_its_sni_and_alpn)
{
        struct tls_hello h;
        cr_assert_eq(parse(curl_hello, sizeof(curl_hello), &h), 0, "%s", h.why);
        cr_assert(h.has_sni);
        cr_assert_str_eq(h.sni, "example.com");
        cr_assert_eq(h.sni_len, 11);
        cr_assert_eq(h.records_len, sizeof(curl_hello));
        cr_assert_eq(h.legacy_version, 0x0303);
        cr_assert_eq(h.n_alpn, 2);
        cr_assert_eq(h.n_alpn_kept, 2);
        cr_assert_eq(h.alpn[0].len, 2);
        cr_assert_eq(memcmp(h.alpn[0].name, "h2", 2), 0);
        cr_assert_eq(h.alpn[1].len, 8);
        cr_assert_eq(memcmp(h.alpn[1].name, "http/1.1", 8), 0);
        cr_assert_null(h.why);
}

Test(tls_hello, every_prefix_asks_for_more)
{
        struct tls_hello h;
        for (size_t n = 0; n < sizeof(curl_hello); n++)
                cr_assert_eq(parse(curl_hello, n, &h), -EAGAIN, "prefix of %zu bytes", n);
        const size_t cuts[] = {1, 300};
        struct msg m = resplit(curl_hello, sizeof(curl_hello), cuts, 2);
        for (size_t n = 0; n < m.n; n++)
                cr_assert_eq(parse(m.b, n, &h), -EAGAIN, "split, prefix of %zu bytes", n);
        cr_assert_eq(parse(m.b, m.n, &h), 0);
}

Test(tls_hello, bytes_after_the_hello_records_are_not_its_own)
{
        struct msg m = {.n = 0};
        put(&m, curl_hello, sizeof(curl_hello));
        put(&m, "\x14\x03\x03\x00\x01\x01", 6); /* a ChangeCipherSpec record */
        struct tls_hello h;
        cr_assert_eq(parse(m.b, m.n, &h), 0);
        cr_assert_eq(h.records_len, sizeof(curl_hello));
        cr_assert_str_eq(h.sni, "example.com");
}

Test(tls_hello, split_across_records_reads_the_same)
{
        const size_t at[] = {1, 3, 4, 5, 40, 150, sizeof(curl_hello) - 6};
        for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
                struct msg m = resplit(curl_hello, sizeof(curl_hello), &at[i], 1);
                struct tls_hello h;
                cr_assert_eq(parse(m.b, m.n, &h), 0, "cut at %zu: %s", at[i], h.why);
                cr_assert_str_eq(h.sni, "example.com");
                cr_assert_eq(h.records_len, sizeof(curl_hello) + 5);
        }
        const size_t three[] = {2, 200};
        struct msg m = resplit(curl_hello, sizeof(curl_hello), three, 2);
        struct tls_hello h;
        cr_assert_eq(parse(m.b, m.n, &h), 0);
        cr_assert_eq(h.records_len, sizeof(curl_hello) + 10);
}

Test(tls_hello, a_record_of_another_type_inside_the_hello_is_refused)
{
        const size_t cut = 100;
        struct msg m = resplit(curl_hello, sizeof(curl_hello), &cut, 1);
        m.b[5 + cut] = 23; /* application data where the second fragment is */
        struct tls_hello h;
        cr_assert_eq(parse(m.b, m.n, &h), -EINVAL);
        cr_assert_str_eq(h.why, "record: not a handshake record");
}

Test(tls_hello, synthetic_hello_with_sni)
{
        struct msg m = hello_sni("api.github.com");
        struct tls_hello h;
        cr_assert_eq(parse(m.b, m.n, &h), 0, "%s", h.why);
        cr_assert_str_eq(h.sni, "api.github.com");
        cr_assert_eq(h.n_alpn, 0);
}

Test(tls_hello, no_sni_is_reported_as_such)
{
        struct tls_hello h;
        struct msg m = hello(NULL);
        cr_assert_eq(parse(m.b, m.n, &h), 0, "%s", h.why);
        cr_assert_not(h.has_sni);
        cr_assert_eq(h.sni_len, 0);
        struct msg e = {.n = 0};
        put(&e, "\x00\x10\x00\x05\x00\x03\x02h2", 9); /* ALPN only */
        m = hello(&e);
        cr_assert_eq(parse(m.b, m.n, &h), 0, "%s", h.why);
        cr_assert_not(h.has_sni);
        cr_assert_eq(h.n_alpn, 1);
        e.n = 0;
        m = hello(&e); /* an empty extension block */
        cr_assert_eq(parse(m.b, m.n, &h), 0, "%s", h.why);
        cr_assert_not(h.has_sni);
}

static void assert_exts_refused(const struct msg *exts, const char *why)
{
        struct msg m = hello(exts);
        struct tls_hello h;
        cr_assert_eq(parse(m.b, m.n, &h), -EINVAL);
        cr_assert_str_eq(h.why, why);
}

Test(tls_hello, duplicate_sni_extension_is_refused)
{
        struct msg e = {.n = 0};
        ext_sni(&e, "example.com", 11);
        ext_sni(&e, "evil.net", 8);
        assert_exts_refused(&e, "extension: the same type twice");
}

Test(tls_hello, any_duplicate_extension_type_is_refused)
{
        struct msg e = {.n = 0};
        put(&e, "\x00\x17\x00\x00\x00\x17\x00\x00", 8);
        assert_exts_refused(&e, "extension: the same type twice");
}

Test(tls_hello, two_names_in_one_sni_are_refused)
{
        struct msg e = {.n = 0};
        put(&e, "\x00\x00\x00\x0e\x00\x0c\x00\x00\x03one\x00\x00\x03two", 18);
        assert_exts_refused(&e, "SNI: more than one name");
}

Test(tls_hello, bad_names_are_refused)
{
        struct tls_hello h;
        struct msg m = {.n = 0};
        struct msg e = {.n = 0};
        ext_sni(&e, "evil.net\0.example.com", 21);
        m = hello(&e);
        cr_assert_eq(parse(m.b, m.n, &h), -EINVAL);
        cr_assert_str_eq(h.why, "SNI: NUL byte in the host_name");
        const char *bad[] = {"", "a b", "caf\xc3\xa9", "a\r\nb"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                m = hello_sni(bad[i]);
                cr_assert_eq(parse(m.b, m.n, &h), -EINVAL, "%s", bad[i]);
        }
        char name[257];
        memset(name, 'a', sizeof(name));
        name[255] = '\0';
        m = hello_sni(name);
        cr_assert_eq(parse(m.b, m.n, &h), 0, "255 bytes: %s", h.why);
        cr_assert_eq(h.sni_len, 255);
        name[255] = 'a';
        name[256] = '\0';
        m = hello_sni(name);
        cr_assert_eq(parse(m.b, m.n, &h), -EINVAL);
}

Test(tls_hello, sni_entry_not_host_name_or_empty_extension_is_refused)
{
        struct tls_hello h;
        struct msg m = hello_sni("example.com");
        m.b[58] = 1; /* name_type */
        cr_assert_eq(parse(m.b, m.n, &h), -EINVAL);
        cr_assert_str_eq(h.why, "SNI: not a host_name");
        struct msg e = {.n = 0};
        put(&e, "\x00\x00\x00\x00", 4); /* server_name with no list */
        m = hello(&e);
        cr_assert_eq(parse(m.b, m.n, &h), -EINVAL);
}

/* Each length field of a hello with SNI, one too large and one too small. */
Test(tls_hello, length_fields_off_by_one_are_refused)
{
        struct msg good = hello_sni("example.com");
        const struct {
                size_t at, bytes;
                bool framing; /* record/handshake length: may also ask for more */
        } fields[] = {{3, 2, true},   {6, 3, true},   {44, 2, false}, {48, 1, false},
                      {50, 2, false}, {54, 2, false}, {56, 2, false}, {59, 2, false}};
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
                for (int d = -1; d <= 1; d += 2) {
                        struct msg m = good;
                        size_t v = 0;
                        for (size_t k = 0; k < fields[i].bytes; k++)
                                v = (v << 8) | m.b[fields[i].at + k];
                        set_uint(&m, fields[i].at, fields[i].bytes, v + (size_t)d);
                        struct tls_hello h;
                        int r = parse(m.b, m.n, &h);
                        if (fields[i].framing)
                                cr_assert(r < 0, "field at %zu %+d: %d", fields[i].at, d, r);
                        else
                                cr_assert_eq(r, -EINVAL, "field at %zu %+d: %d", fields[i].at, d,
                                             r);
                }
        }
}

Test(tls_hello, not_tls_at_all)
{
        struct tls_hello h;
        cr_assert_eq(parse((const unsigned char *)"GET / HTTP/1.1\r\n", 16, &h), -EPROTO);
        cr_assert_eq(parse((const unsigned char *)"\x80\x2e\x01\x00\x02", 5, &h), -EPROTO);
        cr_assert_eq(parse((const unsigned char *)"C", 1, &h), -EPROTO);
}

Test(tls_hello, framing_refusals)
{
        struct tls_hello h;
        struct msg m = hello_sni("example.com");
        m.b[5] = 2; /* a ServerHello */
        cr_assert_eq(parse(m.b, m.n, &h), -EINVAL);
        cr_assert_str_eq(h.why, "handshake: not a ClientHello");
        m = hello_sni("example.com");
        m.b[1] = 2; /* record version 2.1 */
        cr_assert_eq(parse(m.b, m.n, &h), -EINVAL);
        m = hello_sni("example.com");
        set_uint(&m, 3, 2, 0); /* empty record */
        cr_assert_eq(parse(m.b, 5, &h), -EINVAL);
        set_uint(&m, 3, 2, 16385);
        cr_assert_eq(parse(m.b, 5, &h), -EINVAL);
        m = hello_sni("example.com");
        set_uint(&m, 6, 3, 0x10000); /* a 64 KiB hello */
        cr_assert_eq(parse(m.b, m.n, &h), -EMSGSIZE);
        m = hello_sni("example.com");
        m.b[9] = 2; /* legacy_version 2.3 */
        cr_assert_eq(parse(m.b, m.n, &h), -EINVAL);
}

Test(tls_hello, more_alpn_names_than_kept_are_counted)
{
        struct msg e = {.n = 0};
        put_uint(&e, 2, 16);
        put_uint(&e, 2, 2 + 10 * 3);
        put_uint(&e, 2, 10 * 3);
        for (int i = 0; i < 10; i++)
                put(&e, (const char[]){2, 'p', (char)('0' + i)}, 3);
        struct msg m = hello(&e);
        struct tls_hello h;
        cr_assert_eq(parse(m.b, m.n, &h), 0, "%s", h.why);
        cr_assert_eq(h.n_alpn, 10);
        cr_assert_eq(h.n_alpn_kept, TLS_ALPN_MAX);
        cr_assert_eq(memcmp(h.alpn[7].name, "p7", 2), 0);
        m.b[54 + 4] = 0; /* an empty protocol name */
        cr_assert_eq(parse(m.b, m.n, &h), -EINVAL);
}
