/* Host canonicalisation and address classes for the egress gateway. Every
 * host a request names (CONNECT target, absolute URI, Host header, SNI) goes
 * through egress_host_canon() before it is compared with anything, so that
 * one host has exactly one spelling: a lowercase name, or an address. Pure:
 * no lookups, no system calls.
 *
 * Names: ASCII letters, digits, '-' and '_' in labels of 1-63 characters,
 * at most 253 in all, lowercased, one trailing dot dropped. Anything else
 * (non-ASCII, NUL, CR, LF, space, '@', '%', '*', an empty label) is refused
 * rather than guessed at. A name whose last label starts with a digit is
 * read as an IPv4 literal and refused when it is not one: no top-level
 * domain starts with a digit, and a resolver would take "127.1" as an
 * address.
 *
 * IPv4 literals: every form inet_aton() accepts (1 to 4 parts, each decimal,
 * 0x hex or 0-prefixed octal, the last part filling the remaining bytes:
 * 2130706433, 0x7f000001, 017700000001, 127.1, 0x7f.1, 0), parsed here with
 * overflow checks. IPv6 literals in brackets ("[::1]") or bare ("::1");
 * zone ids ("%eth0") are refused. */
#ifndef UMW_POLICY_EGRESS_HOST_H
#define UMW_POLICY_EGRESS_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct umw_error;

#define EGRESS_NAME_MAX 253
/* Room for the longest name or IPv6 text (46 with its NUL) and a NUL. */
#define EGRESS_HOST_TEXT_SIZE (EGRESS_NAME_MAX + 1)

enum egress_host_kind {
        EGRESS_HOST_NAME,
        EGRESS_HOST_ADDR,
};

struct egress_host {
        enum egress_host_kind kind;
        int family;             /* AF_INET or AF_INET6 for an address, 0 for a name */
        unsigned char addr[16]; /* network order; the first 4 bytes for AF_INET */
        /* The canonical text: the name, or the address as inet_ntop writes it
         * (IPv6 without brackets). What log lines and rule matching use. */
        char text[EGRESS_HOST_TEXT_SIZE];
};

/* Canonicalises len bytes (not NUL-terminated; an embedded NUL is refused).
 * Fails with UMW_EXIT_CONFIG and a one-line message that does not echo the
 * input (it may hold control characters). */
int egress_host_canon(const char *raw, size_t len, struct egress_host *out, struct umw_error **err);

/* Splits an authority "host[:port]" ("[v6]:port" for IPv6) as a CONNECT
 * target or a Host header carries it, canonicalising the host. No userinfo
 * ('@' is refused), port 1-65535 in decimal; default_port is used when none
 * is written, and 0 makes the port required (CONNECT). */
int egress_authority_parse(const char *raw, size_t len, uint16_t default_port,
                           struct egress_host *host, uint16_t *port, struct umw_error **err);

/* The same host: same name, or same family and address. An address never
 * equals a name (SNI "1.2.3.4" is not the name of anything). */
bool egress_host_equal(const struct egress_host *a, const struct egress_host *b);

/* Writes the host as it goes into a URL or authority: the name, the IPv4
 * text, or "[v6]". Returns the length, or -ERANGE when size is too small. */
int egress_host_format(const struct egress_host *h, char *buf, size_t size);

/* Address classes. Only EGRESS_CLASS_PUBLIC may be dialled without an
 * explicit IP rule. What falls in each (IPv4 / IPv6):
 *   unspecified  0.0.0.0                    ::
 *   loopback     127.0.0.0/8                ::1
 *   private      10/8, 172.16/12, 192.168/16
 *   cgnat        100.64.0.0/10
 *   link-local   169.254.0.0/16 (the cloud metadata address)   fe80::/10
 *   multicast    224.0.0.0/4                ff00::/8
 *   ula                                     fc00::/7
 *   reserved     0/8, 192.0.0.0/24, 192.0.2.0/24, 192.88.99.0/24,
 *                198.18.0.0/15, 198.51.100.0/24, 203.0.113.0/24, 240.0.0.0/4
 *                (255.255.255.255 included);
 *                everything outside 2000::/3 not listed above or below,
 *                fec0::/10, 100::/64, 2001::/23 but Teredo, 2001:db8::/32,
 *                3fff::/20, 5f00::/16, and the local-use NAT64 prefix
 *                64:ff9b:1::/48 when what it embeds is public.
 * IPv6 addresses that carry an IPv4 address are classified by it (see
 * egress_addr_embedded_v4). */
enum egress_class {
        EGRESS_CLASS_PUBLIC,
        EGRESS_CLASS_UNSPECIFIED,
        EGRESS_CLASS_LOOPBACK,
        EGRESS_CLASS_PRIVATE,
        EGRESS_CLASS_CGNAT,
        EGRESS_CLASS_LINK_LOCAL,
        EGRESS_CLASS_MULTICAST,
        EGRESS_CLASS_ULA,
        EGRESS_CLASS_RESERVED,
};

/* addr: 4 bytes (AF_INET) or 16 (AF_INET6) in network order. Any other
 * family is EGRESS_CLASS_RESERVED. */
enum egress_class egress_addr_class(int family, const void *addr);

/* "public", "unspecified", "loopback", "private", "cgnat", "link-local",
 * "multicast", "ula", "reserved": for log lines and 403 bodies. */
const char *egress_class_name(enum egress_class c);

/* The IPv4 address an IPv6 address carries, if any: v4-mapped
 * (::ffff:0:0/96), SIIT (::ffff:0:0:0/96), v4-compatible (::/96 but :: and
 * ::1), NAT64 (64:ff9b::/96 and 64:ff9b:1::/48, the last 32 bits), 6to4
 * (2002::/16, bits 16-47) and Teredo (2001::/32, the client's address: the
 * last 32 bits inverted). */
bool egress_addr_embedded_v4(const unsigned char v6[16], unsigned char v4[4]);

#endif
