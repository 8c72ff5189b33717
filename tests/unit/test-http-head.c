/* The gateway's request head parser: what a well-formed proxy request gives,
 * every smuggling and confusion trick it refuses, its bounds, the head it
 * writes upstream (exact bytes), and the chunked framing tracker. */
#include "netns/http_head.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static struct http_head head;

static int parse_flags(const char *s, unsigned flags)
{
        struct umw_error *err = NULL;
        int r = http_head_parse(s, strlen(s), flags, &head, &err);
        if (r == 0 || r == -EAGAIN)
                cr_assert_null(err);
        else
                cr_assert(err && err->msg && !strchr(err->msg, '\n'), "rc %d without a line", r);
        umw_error_free(err);
        return r;
}

static int parse(const char *s)
{
        return parse_flags(s, 0);
}

static void assert_span(struct http_span s, const char *want)
{
        cr_assert_eq(s.n, strlen(want), "span '%.*s' != '%s'", (int)s.n, s.p ? s.p : "", want);
        cr_assert_eq(memcmp(s.p, want, s.n), 0, "span '%.*s' != '%s'", (int)s.n, s.p, want);
}

static void assert_refused(const char *req, int rc)
{
        cr_assert_eq(parse(req), rc, "%s", req);
}

Test(http_head, absolute_form_get)
{
        const char *req = "GET http://example.com/a/b?x=1&y HTTP/1.1\r\n"
                          "Host: example.com\r\n"
                          "User-Agent:  curl/8  \r\n"
                          "\r\n"
                          "BODY";
        cr_assert_eq(parse(req), 0);
        cr_assert_eq(head.head_len, strlen(req) - 4);
        assert_span(head.method, "GET");
        cr_assert_not(head.is_connect);
        cr_assert_eq(head.version_minor, 1);
        cr_assert_eq(head.form, HTTP_TARGET_ABSOLUTE);
        assert_span(head.target, "http://example.com/a/b?x=1&y");
        assert_span(head.authority.host, "example.com");
        cr_assert_eq(head.authority.port, 80);
        cr_assert_not(head.authority.has_port);
        assert_span(head.request_uri, "/a/b?x=1&y");
        assert_span(head.path, "/a/b");
        assert_span(head.query, "x=1&y");
        cr_assert(head.has_host_header);
        cr_assert_eq(head.n_fields, 2);
        assert_span(head.fields[1].name, "User-Agent");
        assert_span(head.fields[1].value, "curl/8");
        cr_assert_eq(head.body, HTTP_BODY_NONE);
}

Test(http_head, absolute_form_with_port_and_no_path)
{
        cr_assert_eq(parse("POST HTTP://Example.COM:8080 HTTP/1.0\r\nHost: example.com:8080\r\n"
                           "Content-Length: 12\r\n\r\n"),
                     0);
        assert_span(head.authority.host, "Example.COM");
        cr_assert_eq(head.authority.port, 8080);
        cr_assert(head.authority.has_port);
        assert_span(head.authority.text, "Example.COM:8080");
        assert_span(head.request_uri, "/");
        assert_span(head.path, "/");
        cr_assert_null(head.query.p);
        cr_assert_eq(head.version_minor, 0);
        cr_assert_eq(head.body, HTTP_BODY_LENGTH);
        cr_assert_eq(head.content_length, 12);
}

Test(http_head, ipv6_literal)
{
        cr_assert_eq(parse("GET http://[::1]:8080/ HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n"), 0);
        assert_span(head.authority.host, "::1");
        cr_assert(head.authority.ipv6);
        cr_assert_eq(head.authority.port, 8080);
        cr_assert_eq(parse("GET http://[::ffff:127.0.0.1]/ HTTP/1.1\r\nHost: [::FFFF:127.0.0.1]\r\n"
                           "\r\n"),
                     0);
        assert_span(head.authority.host, "::ffff:127.0.0.1");
        assert_refused("GET http://[fe80::1%25eth0]/ HTTP/1.1\r\nHost: x\r\n\r\n", -EINVAL);
        assert_refused("GET http://[::1/ HTTP/1.1\r\nHost: x\r\n\r\n", -EINVAL);
        assert_refused("GET http://[::1]x/ HTTP/1.1\r\nHost: x\r\n\r\n", -EINVAL);
        assert_refused("GET http://[example.com]/ HTTP/1.1\r\nHost: x\r\n\r\n", -EINVAL);
}

Test(http_head, userinfo_percent_and_odd_hosts_are_refused)
{
        const char *bad[] = {
            "GET http://user@example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
            "GET http://user:pw@example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
            "GET http://example.com@evil.net/ HTTP/1.1\r\nHost: evil.net\r\n\r\n",
            "GET http://exa%6dple.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
            "GET http://ex\xc3\xa4mple.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
            "GET http:///x HTTP/1.1\r\nHost: example.com\r\n\r\n",
            "GET http://example.com:/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
            "GET http://example.com:0/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
            "GET http://example.com:65536/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
            "GET http://example.com:+80/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
            "GET http://example.com?x HTTP/1.1\r\nHost: example.com\r\n\r\n",
            "GET http://example.com/#frag HTTP/1.1\r\nHost: example.com\r\n\r\n",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                assert_refused(bad[i], -EINVAL);
}

Test(http_head, only_http_absolute_targets_outside_a_tunnel)
{
        assert_refused("GET https://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", -EINVAL);
        assert_refused("GET ftp://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", -EINVAL);
        assert_refused("GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n", -EINVAL);
        assert_refused("GET example.com:80 HTTP/1.1\r\nHost: example.com\r\n\r\n", -EINVAL);
        assert_refused("OPTIONS * HTTP/1.1\r\nHost: example.com\r\n\r\n", -EINVAL);
}

Test(http_head, origin_form_inside_a_tunnel_takes_host)
{
        cr_assert_eq(parse_flags("GET /repos/me/x?page=2 HTTP/1.1\r\nHost: api.github.com\r\n\r\n",
                                 HTTP_HEAD_ORIGIN_FORM),
                     0);
        cr_assert_eq(head.form, HTTP_TARGET_ORIGIN);
        assert_span(head.authority.host, "api.github.com");
        cr_assert_eq(head.authority.port, 443);
        assert_span(head.path, "/repos/me/x");
        assert_span(head.query, "page=2");
        cr_assert_eq(parse_flags("GET / HTTP/1.1\r\n\r\n", HTTP_HEAD_ORIGIN_FORM), -EINVAL);
        cr_assert_eq(parse_flags("GET / HTTP/1.0\r\n\r\n", HTTP_HEAD_ORIGIN_FORM), -EINVAL);
}

Test(http_head, paths_that_read_differently_upstream_are_refused)
{
        const char *bad[] = {"/a/../b",   "/a/%2e%2E/b", "/./x", "/a/.", "/a/..", "/%2e",
                             "/a\\..\\b", "/a%zz",       "/a%2", "/a b", "/a#b"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                char req[256];
                snprintf(req, sizeof(req), "GET http://h%s HTTP/1.1\r\nHost: h\r\n\r\n", bad[i]);
                cr_assert_neq(parse(req), 0, "%s", bad[i]);
        }
        const char *good[] = {"/a/..b",     "/.well-known/x", "/a/...",  "/%41%2f",
                              "/a?x=../..", "/a?b\\c",        "/~u/@x:y"};
        for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
                char req[256];
                snprintf(req, sizeof(req), "GET http://h%s HTTP/1.1\r\nHost: h\r\n\r\n", good[i]);
                cr_assert_eq(parse(req), 0, "%s", good[i]);
        }
}

Test(http_head, connect_authority_form)
{
        cr_assert_eq(parse("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"), 0);
        cr_assert(head.is_connect);
        cr_assert_eq(head.form, HTTP_TARGET_AUTHORITY);
        assert_span(head.authority.host, "example.com");
        cr_assert_eq(head.authority.port, 443);
        cr_assert_eq(head.request_uri.n, 0);
        cr_assert_eq(parse("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n"), 0);
        assert_span(head.authority.host, "2001:db8::1");
        cr_assert_eq(parse("CONNECT example.com:443 HTTP/1.1\r\nHost: Example.com\r\n\r\n"), 0);
        assert_refused("CONNECT example.com HTTP/1.1\r\n\r\n", -EINVAL);
        assert_refused("CONNECT http://example.com:443/ HTTP/1.1\r\n\r\n", -EINVAL);
        assert_refused("CONNECT example.com:443 HTTP/1.1\r\nHost: evil.net:443\r\n\r\n", -EINVAL);
        assert_refused("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:80\r\n\r\n", -EINVAL);
        assert_refused("CONNECT example.com:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n", -EINVAL);
        assert_refused("CONNECT example.com:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                       -EINVAL);
        assert_refused("CONNECT user@example.com:443 HTTP/1.1\r\n\r\n", -EINVAL);
}

Test(http_head, host_header_rules)
{
        assert_refused("GET http://example.com/ HTTP/1.1\r\n\r\n", -EINVAL);
        cr_assert_eq(parse("GET http://example.com/ HTTP/1.0\r\n\r\n"), 0);
        cr_assert_not(head.has_host_header);
        assert_refused("GET http://example.com/ HTTP/1.1\r\nHost: evil.net\r\n\r\n", -EINVAL);
        assert_refused("GET http://example.com/ HTTP/1.1\r\nHost: example.com:81\r\n\r\n", -EINVAL);
        assert_refused("GET http://example.com:81/ HTTP/1.1\r\nHost: example.com\r\n\r\n", -EINVAL);
        assert_refused("GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n"
                       "Host: example.com\r\n\r\n",
                       -EINVAL);
        assert_refused("GET http://example.com/ HTTP/1.1\r\nHost:\r\n\r\n", -EINVAL);
        assert_refused("GET http://example.com/ HTTP/1.1\r\nHost: u@example.com\r\n\r\n", -EINVAL);
        cr_assert_eq(parse("GET http://example.com/ HTTP/1.1\r\nhost: EXAMPLE.com:80\r\n\r\n"), 0);
}

Test(http_head, smuggling_framing_is_refused)
{
        const char *bad[] = {
            "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
            "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
            "Content-Length: 5\r\nContent-Length: 6\r\n",
            "Content-Length: 5, 6\r\n",
            "Content-Length: +5\r\n",
            "Content-Length: -1\r\n",
            "Content-Length: 0x10\r\n",
            "Content-Length: \r\n",
            "Content-Length: 5,\r\n",
            "Content-Length: 99999999999999999999\r\n",
            "Transfer-Encoding: gzip\r\n",
            "Transfer-Encoding: chunked, gzip\r\n",
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
            "Transfer-Encoding: xchunked\r\n",
            "Transfer-Encoding: chunked;q=1\r\n",
            "Transfer-Encoding: ,chunked\r\n",
            "Transfer-Encoding : chunked\r\n",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                char req[512];
                snprintf(req, sizeof(req), "POST http://h/ HTTP/1.1\r\nHost: h\r\n%s\r\n", bad[i]);
                assert_refused(req, -EINVAL);
        }
        assert_refused("POST http://h/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", -EINVAL);
}

Test(http_head, accepted_framing)
{
        cr_assert_eq(parse("POST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
                           "Content-Length: 5\r\n\r\n"),
                     0);
        cr_assert_eq(head.content_length, 5);
        cr_assert_eq(parse("POST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 7, 7\r\n\r\n"),
                     0);
        cr_assert_eq(head.content_length, 7);
        cr_assert_eq(parse("POST http://h/ HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"), 0);
        cr_assert_eq(head.body, HTTP_BODY_NONE);
        cr_assert_eq(parse("POST http://h/ HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n"
                           "transfer-encoding: CHUNKED\r\n\r\n"),
                     0);
        cr_assert_eq(head.body, HTTP_BODY_CHUNKED);
}

Test(http_head, field_syntax)
{
        const char *bad[] = {
            "X-A: 1\r\n folded\r\n",  /* obs-fold */
            "X-A: 1\r\n\tfolded\r\n", /* obs-fold */
            "X-A : 1\r\n",            /* blank before the colon */
            ": 1\r\n",                /* no name */
            "X(A): 1\r\n",            /* not a token */
            "X-A 1\r\n",              /* no colon */
            "X-A: a\0b\r\n",          /* NUL in the value, see below */
            "X-A: a\rb\r\n",          /* bare CR */
            "X-A: a\nb\r\n",          /* bare LF */
            "X-A: a\x7f\r\n",         /* DEL */
            "X-A: a\x01\r\n",         /* control */
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                char req[256];
                int n = snprintf(req, sizeof(req), "GET http://h/ HTTP/1.1\r\nHost: h\r\n");
                size_t fl = strlen(bad[i]) + (i == 6 ? 4 : 0);
                memcpy(req + n, bad[i], fl);
                memcpy(req + n + fl, "\r\n", 3);
                struct umw_error *err = NULL;
                cr_assert_eq(http_head_parse(req, (size_t)n + fl + 2, 0, &head, &err), -EINVAL,
                             "case %zu", i);
                umw_error_free(err);
        }
        cr_assert_eq(parse("GET http://h/ HTTP/1.1\r\nHost: h\r\nX-U: caf\xc3\xa9\t x\r\n\r\n"), 0);
        assert_span(head.fields[1].value, "caf\xc3\xa9\t x");
}

Test(http_head, request_line_syntax)
{
        assert_refused("GET  http://h/ HTTP/1.1\r\nHost: h\r\n\r\n", -EINVAL);
        assert_refused("GET http://h/  HTTP/1.1\r\nHost: h\r\n\r\n", -EINVAL);
        assert_refused("GE(T http://h/ HTTP/1.1\r\nHost: h\r\n\r\n", -EINVAL);
        assert_refused("GET http://h/ HTTP/1.1 \r\nHost: h\r\n\r\n", -EINVAL);
        assert_refused("GET http://h/ http/1.1\r\nHost: h\r\n\r\n", -EINVAL);
        assert_refused("GET http://h/ HTTP/1.1\nHost: h\r\n\r\n", -EINVAL);
        assert_refused("\r\nGET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n", -EINVAL);
        assert_refused("GET http://h/ HTTP/2.0\r\nHost: h\r\n\r\n", -EPROTONOSUPPORT);
        assert_refused("GET http://h/ HTTP/1.2\r\nHost: h\r\n\r\n", -EPROTONOSUPPORT);
        cr_assert_eq(http_head_status(-EPROTONOSUPPORT), 505);
        cr_assert_eq(http_head_status(-EINVAL), 400);
}

Test(http_head, every_prefix_asks_for_more)
{
        const char *req = "POST http://example.com:8080/up?x HTTP/1.1\r\nHost: example.com:8080\r\n"
                          "Transfer-Encoding: chunked\r\nX-Long: abcdefghij\r\n\r\n";
        size_t n = strlen(req);
        for (size_t i = 0; i < n; i++) {
                struct umw_error *err = NULL;
                cr_assert_eq(http_head_parse(req, i, 0, &head, &err), -EAGAIN, "prefix %zu", i);
                cr_assert_null(err);
        }
        cr_assert_eq(parse(req), 0);
        cr_assert_eq(head.head_len, n);
}

static char *repeat(char c, size_t n)
{
        char *s = malloc(n + 1);
        cr_assert_not_null(s);
        memset(s, c, n);
        s[n] = '\0';
        return s;
}

Test(http_head, request_line_bound_is_414)
{
        _cleanup_free_ char *path = repeat('a', HTTP_LINE_MAX);
        _cleanup_free_ char *req = NULL;
        cr_assert_gt(asprintf(&req, "GET http://h/%s HTTP/1.1\r\nHost: h\r\n\r\n", path), 0);
        cr_assert_eq(parse(req), -ENAMETOOLONG);
        req[HTTP_LINE_MAX] = '\0'; /* no CRLF yet, but already too long */
        cr_assert_eq(parse(req), -ENAMETOOLONG);
        req[HTTP_LINE_MAX - 1] = '\0';
        cr_assert_eq(parse(req), -EAGAIN);
        cr_assert_eq(http_head_status(-ENAMETOOLONG), 414);
        /* exactly HTTP_LINE_MAX with its CRLF */
        path[HTTP_LINE_MAX - strlen("GET http://h/ HTTP/1.1\r\n")] = '\0';
        free(req);
        cr_assert_gt(asprintf(&req, "GET http://h/%s HTTP/1.1\r\nHost: h\r\n\r\n", path), 0);
        cr_assert_eq(parse(req), 0);
}

Test(http_head, header_bounds_are_431)
{
        _cleanup_free_ char *v = repeat('v', HTTP_FIELD_MAX);
        _cleanup_free_ char *req = NULL;
        cr_assert_gt(asprintf(&req, "GET http://h/ HTTP/1.1\r\nHost: h\r\nX: %s\r\n\r\n", v), 0);
        cr_assert_eq(parse(req), -EMSGSIZE);
        cr_assert_eq(http_head_status(-EMSGSIZE), 431);
        free(req);
        /* Four 6 KiB fields: each line fits, the head does not. */
        v[6000] = '\0';
        cr_assert_gt(asprintf(&req,
                              "GET http://h/ HTTP/1.1\r\nHost: h\r\nA: %s\r\nB: %s\r\n"
                              "C: %s\r\nD: %s\r\n\r\n",
                              v, v, v, v),
                     0);
        cr_assert_eq(parse(req), -EMSGSIZE);
        req[HTTP_HEAD_MAX] = '\0';
        cr_assert_eq(parse(req), -EMSGSIZE);
        req[HTTP_HEAD_MAX - 1] = '\0';
        cr_assert_eq(parse(req), -EAGAIN);
}

static char *many_fields(size_t n)
{
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);
        cr_assert_not_null(f);
        fputs("GET http://h/ HTTP/1.1\r\nHost: h\r\n", f);
        for (size_t i = 1; i < n; i++)
                fprintf(f, "X-%zu: %zu\r\n", i, i);
        fputs("\r\n", f);
        cr_assert_eq(fclose(f), 0);
        return s;
}

Test(http_head, header_count_bound)
{
        _cleanup_free_ char *ok = many_fields(HTTP_HEADERS_MAX);
        cr_assert_eq(parse(ok), 0);
        cr_assert_eq(head.n_fields, HTTP_HEADERS_MAX);
        _cleanup_free_ char *bad = many_fields(HTTP_HEADERS_MAX + 1);
        cr_assert_eq(parse(bad), -EMSGSIZE);
}

Test(http_head, authority_parse_direct)
{
        struct http_authority a;
        struct umw_error *err = NULL;
        cr_assert_eq(http_authority_parse("example.com.", 12, 443, false, &a, &err), 0);
        assert_span(a.host, "example.com.");
        cr_assert_eq(a.port, 443);
        const char *bad[] = {"", ":80", "a:", "a:123456", "a b", "a:8 0", "[]", "[::1]:", "a/b"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                cr_assert_lt(http_authority_parse(bad[i], strlen(bad[i]), 80, false, &a, &err), 0,
                             "%s", bad[i]);
                umw_error_free(err);
                err = NULL;
        }
        _cleanup_free_ char *longname = repeat('a', HTTP_HOST_MAX + 1);
        cr_assert_eq(http_authority_parse(longname, HTTP_HOST_MAX + 1, 80, false, &a, &err),
                     -EINVAL);
        umw_error_free(err);
}

/* ---- forwarding ---- */

Test(http_head, write_origin_strips_hop_by_hop_fields)
{
        const char *req = "POST http://example.com/api?q=1 HTTP/1.1\r\n"
                          "Host: example.com\r\n"
                          "Proxy-Connection: keep-alive\r\n"
                          "Proxy-Authorization: Basic dTpw\r\n"
                          "Connection: keep-alive, X-Private, Content-Length, Host\r\n"
                          "Keep-Alive: timeout=5\r\n"
                          "TE: trailers\r\n"
                          "Trailer: X-Sum\r\n"
                          "Upgrade: websocket\r\n"
                          "x-private: secret\r\n"
                          "Authorization: Bearer abc\r\n"
                          "Content-Length: 3\r\n"
                          "Accept:   */*  \r\n"
                          "\r\n";
        cr_assert_eq(parse(req), 0);
        _cleanup_free_ char *out = NULL;
        size_t n = 0;
        struct umw_error *err = NULL;
        cr_assert_eq(http_head_write_origin(&head, "Connection: close\r\n", &out, &n, &err), 0);
        const char *want = "POST /api?q=1 HTTP/1.1\r\n"
                           "Host: example.com\r\n"
                           "Authorization: Bearer abc\r\n"
                           "Content-Length: 3\r\n"
                           "Accept: */*\r\n"
                           "Connection: close\r\n"
                           "\r\n";
        cr_assert_str_eq(out, want);
        cr_assert_eq(n, strlen(want));
}

Test(http_head, write_origin_adds_host_for_http10)
{
        cr_assert_eq(parse("GET http://example.com:8080 HTTP/1.0\r\nAccept: x\r\n\r\n"), 0);
        _cleanup_free_ char *out = NULL;
        size_t n = 0;
        struct umw_error *err = NULL;
        cr_assert_eq(http_head_write_origin(&head, NULL, &out, &n, &err), 0);
        cr_assert_str_eq(out, "GET / HTTP/1.0\r\nHost: example.com:8080\r\nAccept: x\r\n\r\n");
}

Test(http_head, write_origin_refuses_connect)
{
        cr_assert_eq(parse("CONNECT h:443 HTTP/1.1\r\n\r\n"), 0);
        char *out = NULL;
        size_t n = 0;
        struct umw_error *err = NULL;
        cr_assert_eq(http_head_write_origin(&head, NULL, &out, &n, &err), -EINVAL);
        cr_assert_null(out);
        umw_error_free(err);
}

Test(http_head, secret_fields_and_lookup)
{
        cr_assert(http_field_is_secret((struct http_span){"cookie", 6}));
        cr_assert(http_field_is_secret((struct http_span){"AUTHORIZATION", 13}));
        cr_assert(http_field_is_secret((struct http_span){"Proxy-Authorization", 19}));
        cr_assert_not(http_field_is_secret((struct http_span){"Cookie2x", 8}));
        cr_assert_not(http_field_is_secret((struct http_span){"Accept", 6}));
        cr_assert_eq(parse("GET http://h/ HTTP/1.1\r\nHost: h\r\nCookie: a=b\r\n\r\n"), 0);
        const struct http_field *f = http_head_field(&head, "COOKIE");
        cr_assert_not_null(f);
        assert_span(f->value, "a=b");
        cr_assert_null(http_head_field(&head, "Accept"));
}

Test(http_head, keep_alive)
{
        cr_assert_eq(parse("GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n"), 0);
        cr_assert(http_head_keep_alive(&head));
        cr_assert_eq(parse("GET http://h/ HTTP/1.1\r\nHost: h\r\nConnection: foo, Close\r\n\r\n"),
                     0);
        cr_assert_not(http_head_keep_alive(&head));
        cr_assert_eq(parse("GET http://h/ HTTP/1.0\r\n\r\n"), 0);
        cr_assert_not(http_head_keep_alive(&head));
        cr_assert_eq(parse("GET http://h/ HTTP/1.0\r\nProxy-Connection: keep-alive\r\n\r\n"), 0);
        cr_assert(http_head_keep_alive(&head));
}

/* ---- chunked framing ---- */

static int feed_all(const char *s, size_t n, size_t *used)
{
        struct http_chunked c;
        http_chunked_init(&c);
        struct umw_error *err = NULL;
        int r = http_chunked_feed(&c, s, n, used, &err);
        cr_assert(r >= 0 ? !err : err != NULL);
        umw_error_free(err);
        return r;
}

/* The same, one byte at a time: the answer must not depend on how the
 * bytes arrive. Returns the offset just past the body, or the failure. */
static long feed_bytewise(const char *s, size_t n)
{
        struct http_chunked c;
        http_chunked_init(&c);
        for (size_t i = 0; i < n; i++) {
                size_t used = 0;
                struct umw_error *err = NULL;
                int r = http_chunked_feed(&c, s + i, 1, &used, &err);
                umw_error_free(err);
                if (r < 0)
                        return r;
                cr_assert_eq(used, 1);
                if (r == 1)
                        return (long)i + 1;
        }
        return 0;
}

Test(http_chunked, finds_the_end_of_the_body)
{
        const char *bodies[] = {
            "5\r\nhello\r\n0\r\n\r\n",
            "5;ext=\"v\"\r\nhello\r\nA\r\n0123456789\r\n000\r\n\r\n",
            "5 ; e\r\nhello\r\n0\r\nX-Sum: 1\r\nX-B:\r\n\r\n",
            "0\r\n\r\n",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bodies); i++) {
                char buf[256];
                size_t n = strlen(bodies[i]);
                snprintf(buf, sizeof(buf), "%sGET http://next/", bodies[i]);
                size_t used = 0;
                cr_assert_eq(feed_all(buf, strlen(buf), &used), 1, "%s", bodies[i]);
                cr_assert_eq(used, n, "%s", bodies[i]);
                cr_assert_eq(feed_bytewise(buf, strlen(buf)), (long)n, "%s", bodies[i]);
                size_t part = 0;
                cr_assert_eq(feed_all(buf, n - 1, &part), 0);
                cr_assert_eq(part, n - 1);
        }
}

Test(http_chunked, bad_framing_is_refused)
{
        const char *bad[] = {
            "5\nhello\r\n0\r\n\r\n",
            "g\r\n",
            "\r\n",
            "5\r\nhelloX\r\n0\r\n\r\n",
            "5 \r\nhello\r\n0\r\n\r\n",
            "-5\r\n",
            "5\r\nhello\r\n0\r\n X: 1\r\n\r\n",
            "5\r\nhello\r\n0\r\nX 1\r\n\r\n",
            "5;a\x01\r\n",
            "0\r\n\r\r\n",
            "10000000000000000\r\n",
        };
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                size_t used = 0;
                cr_assert_lt(feed_all(bad[i], strlen(bad[i]), &used), 0, "%s", bad[i]);
                cr_assert_lt(feed_bytewise(bad[i], strlen(bad[i])), 0, "%s", bad[i]);
        }
}

Test(http_chunked, bounds_and_feeding_after_the_end)
{
        _cleanup_free_ char *ext = repeat('e', HTTP_FIELD_MAX);
        _cleanup_free_ char *body = NULL;
        cr_assert_gt(asprintf(&body, "5;%s\r\nhello\r\n0\r\n\r\n", ext), 0);
        size_t used = 0;
        cr_assert_eq(feed_all(body, strlen(body), &used), -EMSGSIZE);

        struct http_chunked c;
        http_chunked_init(&c);
        struct umw_error *err = NULL;
        cr_assert_eq(http_chunked_feed(&c, "ffffffffffffffff\r\n", 18, &used, &err), 0);
        static char zeros[65536];
        for (int i = 0; i < 4; i++) {
                cr_assert_eq(http_chunked_feed(&c, zeros, sizeof(zeros), &used, &err), 0);
                cr_assert_eq(used, sizeof(zeros));
        }
        http_chunked_init(&c);
        cr_assert_eq(http_chunked_feed(&c, "0\r\n\r\n", 5, &used, &err), 1);
        cr_assert_eq(http_chunked_feed(&c, "0", 1, &used, &err), -EINVAL);
        umw_error_free(err);
}
