#include "policy/egress_host.h"
#include "common/error.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static struct egress_host canon_ok(const char *raw, size_t len)
{
        struct egress_host h;
        struct umw_error *err = NULL;
        int r = egress_host_canon(raw, len, &h, &err);
        cr_assert_eq(r, 0, "%s: %s", raw, err ? err->msg : "");
        cr_assert_null(err);
        return h;
}

/* Canonicalises raw as an address of family and checks its text and class. */
static void addr_is(const char *raw, int family, const char *text, enum egress_class c)
{
        struct egress_host h = canon_ok(raw, strlen(raw));
        cr_assert_eq(h.kind, EGRESS_HOST_ADDR, "%s is an address", raw);
        cr_assert_eq(h.family, family, "%s family", raw);
        cr_assert_str_eq(h.text, text, "%s", raw);
        enum egress_class got = egress_addr_class(h.family, h.addr);
        cr_assert_eq(got, c, "%s: %s, expected %s", raw, egress_class_name(got),
                     egress_class_name(c));
}

static void name_is(const char *raw, const char *text)
{
        struct egress_host h = canon_ok(raw, strlen(raw));
        cr_assert_eq(h.kind, EGRESS_HOST_NAME, "%s is a name", raw);
        cr_assert_eq(h.family, 0);
        cr_assert_str_eq(h.text, text);
}

/* Refused, with a one-line message that contains want. */
static void refused_len(const char *raw, size_t len, const char *want)
{
        struct egress_host h;
        struct umw_error *err = NULL;
        int r = egress_host_canon(raw, len, &h, &err);
        cr_assert_eq(r, -EINVAL, "%.*s accepted", (int)len, raw);
        cr_assert_not_null(err);
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
        cr_assert_null(strchr(err->msg, '\n'));
        cr_assert_not_null(strstr(err->msg, want), "%s: '%s' lacks '%s'", raw, err->msg, want);
        umw_error_free(err);
}

static void refused(const char *raw, const char *want)
{
        refused_len(raw, strlen(raw), want);
}

Test(egress_host, ipv4_every_inet_aton_form_is_an_address)
{
        addr_is("2130706433", AF_INET, "127.0.0.1", EGRESS_CLASS_LOOPBACK);
        addr_is("0x7f000001", AF_INET, "127.0.0.1", EGRESS_CLASS_LOOPBACK);
        addr_is("0X7F000001", AF_INET, "127.0.0.1", EGRESS_CLASS_LOOPBACK);
        addr_is("0x7f.1", AF_INET, "127.0.0.1", EGRESS_CLASS_LOOPBACK);
        addr_is("017700000001", AF_INET, "127.0.0.1", EGRESS_CLASS_LOOPBACK);
        addr_is("127.1", AF_INET, "127.0.0.1", EGRESS_CLASS_LOOPBACK);
        addr_is("127.0.1", AF_INET, "127.0.0.1", EGRESS_CLASS_LOOPBACK);
        addr_is("0177.0.0.01", AF_INET, "127.0.0.1", EGRESS_CLASS_LOOPBACK);
        addr_is("01.0x10.1", AF_INET, "1.16.0.1", EGRESS_CLASS_PUBLIC);
        addr_is("0xffffffff", AF_INET, "255.255.255.255", EGRESS_CLASS_RESERVED);
        addr_is("0", AF_INET, "0.0.0.0", EGRESS_CLASS_UNSPECIFIED);
        addr_is("0.0.0.0", AF_INET, "0.0.0.0", EGRESS_CLASS_UNSPECIFIED);
        addr_is("2852039166", AF_INET, "169.254.169.254", EGRESS_CLASS_LINK_LOCAL);
        addr_is("169.254.169.254", AF_INET, "169.254.169.254", EGRESS_CLASS_LINK_LOCAL);
        addr_is("169.254.43518", AF_INET, "169.254.169.254", EGRESS_CLASS_LINK_LOCAL);
        addr_is("10.1", AF_INET, "10.0.0.1", EGRESS_CLASS_PRIVATE);
        addr_is("4294967295", AF_INET, "255.255.255.255", EGRESS_CLASS_RESERVED);
        addr_is("8.8.8.8", AF_INET, "8.8.8.8", EGRESS_CLASS_PUBLIC);
}

Test(egress_host, ipv4_trailing_dot_is_still_an_address)
{
        addr_is("127.0.0.1.", AF_INET, "127.0.0.1", EGRESS_CLASS_LOOPBACK);
        addr_is("2130706433.", AF_INET, "127.0.0.1", EGRESS_CLASS_LOOPBACK);
}

Test(egress_host, ipv4_overflow_and_junk_are_refused)
{
        const char *bad[] = {"4294967296",
                             "0x100000000",
                             "256.1.1.1",
                             "1.256.1.1",
                             "1.2.256.1",
                             "1.2.3.256",
                             "1.2.65536",
                             "1.16777216",
                             "099",
                             "08.1",
                             "0xg",
                             "1.2.3.4.5",
                             "99999999999999999999999",
                             "example.123",
                             "1-2.3",
                             "0x1.0x",
                             "0x",
                             "00x1"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                refused(bad[i], "IPv4");
        refused("1..2", "empty label");
        refused("1.2.3.4..", "empty label");
}

Test(egress_host, ipv6_literals)
{
        addr_is("[::]", AF_INET6, "::", EGRESS_CLASS_UNSPECIFIED);
        addr_is("[::1]", AF_INET6, "::1", EGRESS_CLASS_LOOPBACK);
        addr_is("::1", AF_INET6, "::1", EGRESS_CLASS_LOOPBACK);
        addr_is("[::ffff:127.0.0.1]", AF_INET6, "::ffff:127.0.0.1", EGRESS_CLASS_LOOPBACK);
        addr_is("[::ffff:7f00:1]", AF_INET6, "::ffff:127.0.0.1", EGRESS_CLASS_LOOPBACK);
        addr_is("[::FFFF:A9FE:A9FE]", AF_INET6, "::ffff:169.254.169.254", EGRESS_CLASS_LINK_LOCAL);
        addr_is("64:ff9b::7f00:1", AF_INET6, "64:ff9b::7f00:1", EGRESS_CLASS_LOOPBACK);
        addr_is("[64:ff9b::a9fe:a9fe]", AF_INET6, "64:ff9b::a9fe:a9fe", EGRESS_CLASS_LINK_LOCAL);
        addr_is("[64:ff9b:1::a00:1]", AF_INET6, "64:ff9b:1::a00:1", EGRESS_CLASS_PRIVATE);
        addr_is("[64:ff9b:1::808:808]", AF_INET6, "64:ff9b:1::808:808", EGRESS_CLASS_RESERVED);
        addr_is("[64:ff9b::808:808]", AF_INET6, "64:ff9b::808:808", EGRESS_CLASS_PUBLIC);
        addr_is("2002:7f00:1::", AF_INET6, "2002:7f00:1::", EGRESS_CLASS_LOOPBACK);
        addr_is("[2002:a9fe:a9fe::1]", AF_INET6, "2002:a9fe:a9fe::1", EGRESS_CLASS_LINK_LOCAL);
        addr_is("[2002:808:808::1]", AF_INET6, "2002:808:808::1", EGRESS_CLASS_PUBLIC);
        addr_is("[::127.0.0.1]", AF_INET6, "::127.0.0.1", EGRESS_CLASS_LOOPBACK);
        addr_is("[::a00:1]", AF_INET6, "::10.0.0.1", EGRESS_CLASS_PRIVATE);
        addr_is("[::ffff:0:a00:1]", AF_INET6, "::ffff:0:a00:1", EGRESS_CLASS_PRIVATE);
        addr_is("[fd00:ec2::254]", AF_INET6, "fd00:ec2::254", EGRESS_CLASS_ULA);
        addr_is("[fe80::1]", AF_INET6, "fe80::1", EGRESS_CLASS_LINK_LOCAL);
        addr_is("[febf::1]", AF_INET6, "febf::1", EGRESS_CLASS_LINK_LOCAL);
        addr_is("[fec0::1]", AF_INET6, "fec0::1", EGRESS_CLASS_RESERVED);
        addr_is("[ff02::1]", AF_INET6, "ff02::1", EGRESS_CLASS_MULTICAST);
        addr_is("[2001:db8::1]", AF_INET6, "2001:db8::1", EGRESS_CLASS_RESERVED);
        addr_is("[100::1]", AF_INET6, "100::1", EGRESS_CLASS_RESERVED);
        addr_is("[3fff::1]", AF_INET6, "3fff::1", EGRESS_CLASS_RESERVED);
        addr_is("[4000::1]", AF_INET6, "4000::1", EGRESS_CLASS_RESERVED);
        addr_is("[2606:4700::1111]", AF_INET6, "2606:4700::1111", EGRESS_CLASS_PUBLIC);
}

Test(egress_host, teredo_is_classified_by_its_inverted_client_address)
{
        /* Client 127.0.0.1 is stored as ~7f000001 = 80ff:fffe. */
        addr_is("[2001:0:4136:e378:8000:63bf:80ff:fffe]", AF_INET6,
                "2001:0:4136:e378:8000:63bf:80ff:fffe", EGRESS_CLASS_LOOPBACK);
        /* ~a9fea9fe = 5601:5601: the metadata address. */
        addr_is("[2001::5601:5601]", AF_INET6, "2001::5601:5601", EGRESS_CLASS_LINK_LOCAL);
        /* ~08080808 = f7f7:f7f7: public. */
        addr_is("[2001::f7f7:f7f7]", AF_INET6, "2001::f7f7:f7f7", EGRESS_CLASS_PUBLIC);
        unsigned char v6[16], v4[4];
        cr_assert_eq(inet_pton(AF_INET6, "2001::5601:5601", v6), 1);
        cr_assert(egress_addr_embedded_v4(v6, v4));
        cr_assert_eq(memcmp(v4, "\xa9\xfe\xa9\xfe", 4), 0);
        cr_assert_eq(inet_pton(AF_INET6, "2606:4700::1111", v6), 1);
        cr_assert_not(egress_addr_embedded_v4(v6, v4));
}

Test(egress_host, ipv6_malformed_and_zone_ids_are_refused)
{
        refused("[::1", "']'");
        refused("[fe80::1%eth0]", "zone id");
        refused("fe80::1%25eth0", "'%'");
        refused("[1::2::3]", "not an IPv6 address");
        refused("[::ffff:127.1]", "not an IPv6 address");
        refused("[]", "not an IPv6 address");
        refused("[example.com]", "hex digits");
}

Test(egress_host, ipv4_classes)
{
        addr_is("100.64.0.1", AF_INET, "100.64.0.1", EGRESS_CLASS_CGNAT);
        addr_is("100.100.100.200", AF_INET, "100.100.100.200", EGRESS_CLASS_CGNAT);
        addr_is("100.127.255.255", AF_INET, "100.127.255.255", EGRESS_CLASS_CGNAT);
        addr_is("100.128.0.1", AF_INET, "100.128.0.1", EGRESS_CLASS_PUBLIC);
        addr_is("172.16.0.1", AF_INET, "172.16.0.1", EGRESS_CLASS_PRIVATE);
        addr_is("172.31.255.255", AF_INET, "172.31.255.255", EGRESS_CLASS_PRIVATE);
        addr_is("172.32.0.1", AF_INET, "172.32.0.1", EGRESS_CLASS_PUBLIC);
        addr_is("192.168.1.1", AF_INET, "192.168.1.1", EGRESS_CLASS_PRIVATE);
        addr_is("0.1.2.3", AF_INET, "0.1.2.3", EGRESS_CLASS_RESERVED);
        addr_is("192.0.2.1", AF_INET, "192.0.2.1", EGRESS_CLASS_RESERVED);
        addr_is("198.19.0.1", AF_INET, "198.19.0.1", EGRESS_CLASS_RESERVED);
        addr_is("198.20.0.1", AF_INET, "198.20.0.1", EGRESS_CLASS_PUBLIC);
        addr_is("203.0.113.7", AF_INET, "203.0.113.7", EGRESS_CLASS_RESERVED);
        addr_is("224.0.0.1", AF_INET, "224.0.0.1", EGRESS_CLASS_MULTICAST);
        addr_is("240.0.0.1", AF_INET, "240.0.0.1", EGRESS_CLASS_RESERVED);
        cr_assert_eq(egress_addr_class(AF_UNIX, "x"), EGRESS_CLASS_RESERVED);
}

Test(egress_host, class_names)
{
        cr_assert_str_eq(egress_class_name(EGRESS_CLASS_PUBLIC), "public");
        cr_assert_str_eq(egress_class_name(EGRESS_CLASS_LINK_LOCAL), "link-local");
        cr_assert_str_eq(egress_class_name(EGRESS_CLASS_CGNAT), "cgnat");
        cr_assert_str_eq(egress_class_name(EGRESS_CLASS_ULA), "ula");
        cr_assert_str_eq(egress_class_name((enum egress_class)99), "reserved");
}

Test(egress_host, names_are_lowercased_and_lose_one_trailing_dot)
{
        name_is("Example.COM", "example.com");
        name_is("example.com.", "example.com");
        name_is("API.GitHub.com.", "api.github.com");
        name_is("xn--bcher-kva.example", "xn--bcher-kva.example");
        name_is("3com.com", "3com.com");
        name_is("my_bucket.s3.amazonaws.com", "my_bucket.s3.amazonaws.com");
        name_is("localhost", "localhost");
        refused("example.com..", "empty label");
        refused(".", "empty host name");
        refused(".example.com", "empty label");
        refused("a..b", "empty label");
}

Test(egress_host, name_lengths)
{
        char label[65], name[300];
        memset(label, 'a', 63);
        label[63] = '\0';
        name_is(label, label);
        memset(label, 'a', 64);
        label[64] = '\0';
        refused(label, "63");
        /* 4 labels of 63 and one of 1: 253 characters. */
        snprintf(name, sizeof(name), "%.63s.%.63s.%.63s.%.61s", label, label, label, label);
        cr_assert_eq(strlen(name), 253);
        name_is(name, name);
        char dotted[310];
        snprintf(dotted, sizeof(dotted), "%s.", name);
        name_is(dotted, name);
        snprintf(dotted, sizeof(dotted), "a%s", name);
        refused(dotted, "253");
}

Test(egress_host, bytes_that_do_not_belong_in_a_host_are_refused)
{
        refused_len("example.com\0.evil.net", 21, "control character");
        refused("example.com\r\nX-Injected: 1", "control character");
        refused("example.com\n", "control character");
        refused("exa mple.com", "space");
        refused("user@example.com", "'@'");
        refused("user:pass@example.com", "'@'");
        refused("ex%61mple.com", "'%'");
        refused("b\xc3\xbc"
                "cher.example",
                "ASCII");
        refused("*.example.com", "'*'");
        refused("example.com/", "only letters");
        refused("", "empty host");
}

static void authority_is(const char *raw, uint16_t def, const char *host, uint16_t port)
{
        struct egress_host h;
        uint16_t p = 0;
        struct umw_error *err = NULL;
        cr_assert_eq(egress_authority_parse(raw, strlen(raw), def, &h, &p, &err), 0, "%s: %s", raw,
                     err ? err->msg : "");
        char buf[300];
        cr_assert_geq(egress_host_format(&h, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, host);
        cr_assert_eq(p, port);
}

static void authority_refused(const char *raw, uint16_t def, const char *want)
{
        struct egress_host h;
        uint16_t p = 0;
        struct umw_error *err = NULL;
        cr_assert_eq(egress_authority_parse(raw, strlen(raw), def, &h, &p, &err), -EINVAL, "%s",
                     raw);
        cr_assert_not_null(strstr(err->msg, want), "%s: '%s' lacks '%s'", raw, err->msg, want);
        umw_error_free(err);
}

Test(egress_host, authorities)
{
        authority_is("Example.com:443", 0, "example.com", 443);
        authority_is("example.com", 80, "example.com", 80);
        authority_is("[::1]:8443", 0, "[::1]", 8443);
        authority_is("[::ffff:7f00:1]", 80, "[::ffff:127.0.0.1]", 80);
        authority_is("2130706433:80", 0, "127.0.0.1", 80);
        authority_refused("example.com", 0, "port is required");
        authority_refused("user@example.com:443", 0, "userinfo");
        authority_refused("user:pw@example.com", 80, "userinfo");
        authority_refused("example.com:0", 0, "1-65535");
        authority_refused("example.com:65536", 0, "1-65535");
        authority_refused("example.com:", 80, "1-65535");
        authority_refused("example.com:+80", 0, "1-65535");
        authority_refused("example.com:080000", 0, "1-65535");
        authority_refused("::1:443", 0, "brackets");
        authority_refused("[::1]x", 0, "':PORT'");
        authority_refused("[::1", 0, "']'");
}

Test(egress_host, equality_and_format)
{
        struct egress_host a = canon_ok("EXAMPLE.com.", 12), b = canon_ok("example.com", 11);
        cr_assert(egress_host_equal(&a, &b));
        a = canon_ok("127.1", 5);
        b = canon_ok("2130706433", 10);
        cr_assert(egress_host_equal(&a, &b));
        b = canon_ok("[::ffff:127.0.0.1]", 18);
        cr_assert_not(egress_host_equal(&a, &b), "mapped is not the same address");
        b = canon_ok("evil.example", 12);
        cr_assert_not(egress_host_equal(&a, &b));
        char small[4];
        cr_assert_eq(egress_host_format(&b, small, sizeof(small)), -ERANGE);
}
