/* One spelling per host, and the class of every address (egress_host.h).
 * The IPv4 reader is our own rather than inet_aton(): it must say "this is
 * an address" for every form a resolver would take as one, refuse on
 * overflow instead of wrapping, and not depend on the C library's version. */
#include "policy/egress_host.h"
#include "common/error.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static int host_fail(struct umw_error **err, const char *what)
{
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s", what);
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
        if (!isxdigit((unsigned char)c))
                return -1;
        return is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* One part of an inet_aton address: 0x hex (with at least one digit, as
 * glibc wants), 0-prefixed octal, or decimal; false when malformed or above
 * max. */
static bool v4_part(const char *s, size_t len, uint32_t max, uint32_t *out)
{
        unsigned base = 10;
        size_t i = 0;
        if (len == 0)
                return false;
        if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
                if (len == 2)
                        return false;
                base = 16;
                i = 2;
        } else if (s[0] == '0') {
                base = 8;
        }
        uint64_t v = 0;
        for (; i < len; i++) {
                int d = base == 16 ? hex_value(s[i]) : is_digit(s[i]) ? s[i] - '0' : -1;
                if (d < 0 || (unsigned)d >= base)
                        return false;
                v = v * base + (unsigned)d;
                if (v > max)
                        return false;
        }
        *out = (uint32_t)v;
        return true;
}

/* 1 to 4 parts; all but the last are one byte each, the last fills the
 * bytes that remain (a.b.c.d, a.b.c16, a.b24, a32). */
static bool v4_parse(const char *s, size_t len, unsigned char addr[4])
{
        uint32_t parts[4], v = 0;
        size_t n = 0, start = 0;
        for (size_t i = 0; i <= len; i++) {
                if (i < len && s[i] != '.')
                        continue;
                if (n == 4)
                        return false;
                bool last = i == len;
                uint32_t max =
                    last ? (n == 0 ? UINT32_MAX : (UINT32_C(1) << (8 * (4 - n))) - 1) : 255;
                if (!v4_part(s + start, i - start, max, &parts[n++]))
                        return false;
                start = i + 1;
        }
        for (size_t i = 0; i + 1 < n; i++)
                v |= parts[i] << (8 * (3 - i));
        v |= parts[n - 1];
        v = htonl(v);
        memcpy(addr, &v, 4);
        return true;
}

static void set_addr(struct egress_host *out, int family, const void *addr)
{
        memset(out, 0, sizeof(*out));
        out->kind = EGRESS_HOST_ADDR;
        out->family = family;
        memcpy(out->addr, addr, family == AF_INET ? 4 : 16);
        inet_ntop(family, out->addr, out->text, sizeof(out->text));
}

static int v6_canon(const char *s, size_t len, struct egress_host *out, struct umw_error **err)
{
        char buf[INET6_ADDRSTRLEN];
        unsigned char a[16];
        for (size_t i = 0; i < len; i++)
                if (hex_value(s[i]) < 0 && s[i] != ':' && s[i] != '.')
                        return host_fail(err, "an IPv6 address holds only hex digits, ':' and "
                                              "'.' (no zone id)");
        if (len >= sizeof(buf))
                return host_fail(err, "not an IPv6 address");
        memcpy(buf, s, len);
        buf[len] = '\0';
        if (inet_pton(AF_INET6, buf, a) != 1)
                return host_fail(err, "not an IPv6 address");
        set_addr(out, AF_INET6, a);
        return 0;
}

static char ascii_lower(char c)
{
        return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool name_char(char c)
{
        return is_digit(c) || (c >= 'a' && c <= 'z') || c == '-' || c == '_';
}

/* Why a byte cannot be in a host, for the one-line error (never the byte
 * itself: it may be a control character). */
static const char *bad_char_reason(unsigned char c)
{
        if (c >= 0x80)
                return "a host name must be ASCII (write IDNs as xn--)";
        if (c < 0x20 || c == 0x7f)
                return "a host may not contain a control character (NUL, CR, LF, ...)";
        switch (c) {
        case ' ':
                return "a host may not contain a space";
        case '@':
                return "a host may not contain '@' (no userinfo)";
        case '%':
                return "a host may not contain '%' (no escapes, no zone id)";
        case '*':
                return "a host may not contain '*'";
        default:
                return "a host holds only letters, digits, '-', '_' and '.'";
        }
}

/* Lowercases, drops one trailing dot and checks the labels; out->text gets
 * the result. */
static int name_canon(const char *raw, size_t len, struct egress_host *out, struct umw_error **err)
{
        if (raw[len - 1] == '.')
                len--;
        if (len == 0)
                return host_fail(err, "empty host name");
        if (len > EGRESS_NAME_MAX)
                return host_fail(err, "a host name has at most 253 characters");
        memset(out, 0, sizeof(*out));
        out->kind = EGRESS_HOST_NAME;
        size_t label = 0;
        for (size_t i = 0; i < len; i++) {
                char c = ascii_lower(raw[i]);
                out->text[i] = c;
                if (c == '.') {
                        if (label == 0)
                                return host_fail(err, "a host name has an empty label");
                        label = 0;
                        continue;
                }
                if (++label > 63)
                        return host_fail(err, "a host name label has at most 63 characters");
        }
        if (label == 0)
                return host_fail(err, "a host name has an empty label");
        return 0;
}

int egress_host_canon(const char *raw, size_t len, struct egress_host *out, struct umw_error **err)
{
        if (len == 0)
                return host_fail(err, "empty host");
        if (raw[0] == '[') {
                if (len < 2 || raw[len - 1] != ']')
                        return host_fail(err, "an IPv6 address in brackets needs its ']'");
                return v6_canon(raw + 1, len - 2, out, err);
        }
        bool colon = false;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)raw[i];
                if (c == ':')
                        colon = true;
                else if (c != '.' && !name_char(ascii_lower((char)c)))
                        return host_fail(err, bad_char_reason(c));
        }
        if (colon)
                return v6_canon(raw, len, out, err);
        struct egress_host h;
        int r = name_canon(raw, len, &h, err);
        if (r < 0)
                return r;
        size_t n = strlen(h.text);
        const char *last = memrchr(h.text, '.', n);
        last = last ? last + 1 : h.text;
        if (!is_digit(*last)) {
                *out = h;
                return 0;
        }
        unsigned char a[4];
        if (!v4_parse(h.text, n, a))
                return host_fail(err, "a host whose last label starts with a digit must be an "
                                      "IPv4 address (each part in range)");
        set_addr(out, AF_INET, a);
        return 0;
}

static int port_parse(const char *s, size_t len, uint16_t *port, struct umw_error **err)
{
        uint32_t v = 0;
        if (len == 0 || len > 5)
                return host_fail(err, "a port is 1-65535 in decimal");
        for (size_t i = 0; i < len; i++) {
                if (!is_digit(s[i]))
                        return host_fail(err, "a port is 1-65535 in decimal");
                v = v * 10 + (uint32_t)(s[i] - '0');
        }
        if (v == 0 || v > 65535)
                return host_fail(err, "a port is 1-65535 in decimal");
        *port = (uint16_t)v;
        return 0;
}

int egress_authority_parse(const char *raw, size_t len, uint16_t default_port,
                           struct egress_host *host, uint16_t *port, struct umw_error **err)
{
        if (memchr(raw, '@', len))
                return host_fail(err, "an authority may not carry userinfo ('@')");
        size_t host_len = len;
        if (len > 0 && raw[0] == '[') {
                const char *close = memchr(raw, ']', len);
                if (!close)
                        return host_fail(err, "an IPv6 address in brackets needs its ']'");
                host_len = (size_t)(close - raw) + 1;
                if (host_len < len && raw[host_len] != ':')
                        return host_fail(err, "only ':PORT' may follow ']'");
        } else {
                const char *colon = memchr(raw, ':', len);
                if (colon && memchr(colon + 1, ':', len - (size_t)(colon - raw) - 1))
                        return host_fail(err, "an IPv6 address must be written in brackets");
                if (colon)
                        host_len = (size_t)(colon - raw);
        }
        int r = egress_host_canon(raw, host_len, host, err);
        if (r < 0)
                return r;
        if (host_len < len)
                return port_parse(raw + host_len + 1, len - host_len - 1, port, err);
        if (default_port == 0)
                return host_fail(err, "a port is required (HOST:PORT)");
        *port = default_port;
        return 0;
}

bool egress_host_equal(const struct egress_host *a, const struct egress_host *b)
{
        if (a->kind != b->kind)
                return false;
        if (a->kind == EGRESS_HOST_NAME)
                return strcmp(a->text, b->text) == 0;
        return a->family == b->family &&
               memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16) == 0;
}

int egress_host_format(const struct egress_host *h, char *buf, size_t size)
{
        bool brackets = h->kind == EGRESS_HOST_ADDR && h->family == AF_INET6;
        size_t n = strlen(h->text) + (brackets ? 2 : 0);
        if (n >= size)
                return -ERANGE;
        snprintf(buf, size, brackets ? "[%s]" : "%s", h->text);
        return (int)n;
}

/* A prefix of an address and the class of everything in it. */
struct prefix {
        unsigned char bytes[16];
        unsigned len; /* in bits */
        enum egress_class class;
};

static const struct prefix v4_prefixes[] = {
    {{0, 0, 0, 0}, 32, EGRESS_CLASS_UNSPECIFIED},
    {{0}, 8, EGRESS_CLASS_RESERVED},
    {{10}, 8, EGRESS_CLASS_PRIVATE},
    {{100, 64}, 10, EGRESS_CLASS_CGNAT},
    {{127}, 8, EGRESS_CLASS_LOOPBACK},
    {{169, 254}, 16, EGRESS_CLASS_LINK_LOCAL},
    {{172, 16}, 12, EGRESS_CLASS_PRIVATE},
    {{192, 0, 0}, 24, EGRESS_CLASS_RESERVED},
    {{192, 0, 2}, 24, EGRESS_CLASS_RESERVED},
    {{192, 88, 99}, 24, EGRESS_CLASS_RESERVED},
    {{192, 168}, 16, EGRESS_CLASS_PRIVATE},
    {{198, 18}, 15, EGRESS_CLASS_RESERVED},
    {{198, 51, 100}, 24, EGRESS_CLASS_RESERVED},
    {{203, 0, 113}, 24, EGRESS_CLASS_RESERVED},
    {{224}, 4, EGRESS_CLASS_MULTICAST},
    {{240}, 4, EGRESS_CLASS_RESERVED},
};

/* Checked after ::, ::1 and the prefixes that embed IPv4; first match wins. */
static const struct prefix v6_prefixes[] = {
    {{0xfe, 0x80}, 10, EGRESS_CLASS_LINK_LOCAL},
    {{0xfe, 0xc0}, 10, EGRESS_CLASS_RESERVED},
    {{0xfc}, 7, EGRESS_CLASS_ULA},
    {{0xff}, 8, EGRESS_CLASS_MULTICAST},
    {{0x01, 0x00, 0, 0, 0, 0, 0, 0}, 64, EGRESS_CLASS_RESERVED},
    {{0x20, 0x01, 0x0d, 0xb8}, 32, EGRESS_CLASS_RESERVED},
    {{0x20, 0x01}, 23, EGRESS_CLASS_RESERVED},
    {{0x3f, 0xff}, 20, EGRESS_CLASS_RESERVED},
    {{0x5f, 0x00}, 16, EGRESS_CLASS_RESERVED},
    {{0x20}, 3, EGRESS_CLASS_PUBLIC},
};

static bool prefix_has(const unsigned char *addr, const unsigned char *prefix, unsigned len)
{
        unsigned whole = len / 8, rest = len % 8;
        if (memcmp(addr, prefix, whole) != 0)
                return false;
        if (rest == 0)
                return true;
        unsigned char mask = (unsigned char)(0xff << (8 - rest));
        return (addr[whole] & mask) == (prefix[whole] & mask);
}

static enum egress_class prefix_class(const struct prefix *table, size_t n,
                                      const unsigned char *addr, enum egress_class otherwise)
{
        for (size_t i = 0; i < n; i++)
                if (prefix_has(addr, table[i].bytes, table[i].len))
                        return table[i].class;
        return otherwise;
}

static bool all_zero(const unsigned char *b, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (b[i])
                        return false;
        return true;
}

static const unsigned char nat64_local[] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01};

bool egress_addr_embedded_v4(const unsigned char v6[16], unsigned char v4[4])
{
        static const unsigned char ffff[] = {0xff, 0xff};
        static const unsigned char nat64[] = {0x00, 0x64, 0xff, 0x9b};
        static const unsigned char sixtofour[] = {0x20, 0x02};
        static const unsigned char teredo[] = {0x20, 0x01, 0x00, 0x00};
        const unsigned char *from = v6 + 12;
        bool mapped = all_zero(v6, 10) && memcmp(v6 + 10, ffff, 2) == 0;
        bool siit = all_zero(v6, 8) && memcmp(v6 + 8, ffff, 2) == 0 && all_zero(v6 + 10, 2);
        bool compat = all_zero(v6, 12) && !(all_zero(v6 + 12, 3) && v6[15] <= 1);
        bool nat64_wk = memcmp(v6, nat64, 4) == 0 && all_zero(v6 + 4, 8);
        if (memcmp(v6, sixtofour, 2) == 0) {
                from = v6 + 2;
        } else if (memcmp(v6, teredo, 4) == 0) {
                for (size_t i = 0; i < 4; i++)
                        v4[i] = (unsigned char)~v6[12 + i];
                return true;
        } else if (!mapped && !siit && !compat && !nat64_wk &&
                   memcmp(v6, nat64_local, sizeof(nat64_local)) != 0) {
                return false;
        }
        memcpy(v4, from, 4);
        return true;
}

static enum egress_class v6_class(const unsigned char *a)
{
        static const unsigned char loopback[16] = {[15] = 1};
        unsigned char v4[4];
        if (all_zero(a, 16))
                return EGRESS_CLASS_UNSPECIFIED;
        if (memcmp(a, loopback, 16) == 0)
                return EGRESS_CLASS_LOOPBACK;
        if (egress_addr_embedded_v4(a, v4)) {
                enum egress_class c = egress_addr_class(AF_INET, v4);
                /* A local-use prefix is never globally routed. */
                if (c == EGRESS_CLASS_PUBLIC && memcmp(a, nat64_local, sizeof(nat64_local)) == 0)
                        return EGRESS_CLASS_RESERVED;
                return c;
        }
        return prefix_class(v6_prefixes, sizeof(v6_prefixes) / sizeof(v6_prefixes[0]), a,
                            EGRESS_CLASS_RESERVED);
}

enum egress_class egress_addr_class(int family, const void *addr)
{
        if (family == AF_INET)
                return prefix_class(v4_prefixes, sizeof(v4_prefixes) / sizeof(v4_prefixes[0]), addr,
                                    EGRESS_CLASS_PUBLIC);
        if (family == AF_INET6)
                return v6_class(addr);
        return EGRESS_CLASS_RESERVED;
}

const char *egress_class_name(enum egress_class c)
{
        static const char *const names[] = {
            [EGRESS_CLASS_PUBLIC] = "public",       [EGRESS_CLASS_UNSPECIFIED] = "unspecified",
            [EGRESS_CLASS_LOOPBACK] = "loopback",   [EGRESS_CLASS_PRIVATE] = "private",
            [EGRESS_CLASS_CGNAT] = "cgnat",         [EGRESS_CLASS_LINK_LOCAL] = "link-local",
            [EGRESS_CLASS_MULTICAST] = "multicast", [EGRESS_CLASS_ULA] = "ula",
            [EGRESS_CLASS_RESERVED] = "reserved",
        };
        if ((unsigned)c >= sizeof(names) / sizeof(names[0]))
                return "reserved";
        return names[c];
}
