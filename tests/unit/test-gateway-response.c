#include "netns/gateway_response.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct response_head parsed(const char *text, bool head_request)
{
        struct response_head h;
        int r = response_head_parse(text, strlen(text), head_request, &h);
        cr_assert_eq(r, 0, "refused (%d): %s", r, text);
        return h;
}

static void refused(const char *text, int want)
{
        struct response_head h;
        cr_assert_eq(response_head_parse(text, strlen(text), false, &h), want, "%s", text);
}

Test(gateway_response, framing_by_length_chunked_or_close)
{
        struct response_head h = parsed("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nbody", false);
        cr_assert_eq(h.status, 200);
        cr_assert_eq(h.body, RESPONSE_BODY_LENGTH);
        cr_assert_eq(h.content_length, 12);
        cr_assert_eq(h.head_len, strlen("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"));
        h = parsed("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", false);
        cr_assert_eq(h.body, RESPONSE_BODY_CHUNKED);
        h = parsed("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false);
        cr_assert_eq(h.body, RESPONSE_BODY_CLOSE);
        h = parsed("HTTP/1.0 200 OK\r\nServer: x\r\n\r\n", false);
        cr_assert_eq(h.body, RESPONSE_BODY_CLOSE);
}

Test(gateway_response, no_body_for_head_1xx_204_304)
{
        cr_assert_eq(parsed("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", true).body,
                     RESPONSE_BODY_NONE);
        cr_assert_eq(parsed("HTTP/1.1 100 Continue\r\n\r\n", false).body, RESPONSE_BODY_NONE);
        cr_assert_eq(parsed("HTTP/1.1 204 No Content\r\n\r\n", false).body, RESPONSE_BODY_NONE);
        cr_assert_eq(parsed("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", false).body,
                     RESPONSE_BODY_NONE);
}

Test(gateway_response, incomplete_and_too_long)
{
        refused("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n", -EAGAIN);
        refused("", -EAGAIN);
        size_t n = RESPONSE_HEAD_MAX + 10;
        char *big = malloc(n + 1);
        memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
        memset(big + 20, 'a', n - 20);
        big[n] = '\0';
        refused(big, -EMSGSIZE);
        free(big);
}

Test(gateway_response, ambiguous_heads_refused)
{
        refused("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", -EINVAL);
        refused("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
                -EINVAL);
        refused("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", -EINVAL);
        refused("HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n", -EINVAL);
        refused("HTTP/1.1 200 OK\nContent-Length: 1\r\n\r\n", -EINVAL);
        refused("HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n", -EINVAL);
        refused("HTTP/1.1 200 OK\r\nBad Name: a\r\n\r\n", -EINVAL);
        refused("HTTP/2 200 OK\r\n\r\n", -EINVAL);
        refused("HTTP/1.1 20 OK\r\n\r\n", -EINVAL);
        refused("HTTP/1.1 200OK\r\n\r\n", -EINVAL);
        refused("HTTP/1.1 099 Odd\r\n\r\n", -EINVAL);
        char nul[] = "HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n";
        struct response_head h;
        cr_assert_eq(response_head_parse(nul, sizeof(nul) - 1, false, &h), -EINVAL);
}

Test(gateway_response, rewrite_drops_hop_by_hop_fields)
{
        const char *text = "HTTP/1.1 200 OK\r\n"
                           "Connection: keep-alive, X-Secret-Hop\r\n"
                           "Keep-Alive: timeout=5\r\n"
                           "X-Secret-Hop: 1\r\n"
                           "Proxy-Authenticate: Basic\r\n"
                           "Upgrade: h2c\r\n"
                           "Content-Length:3\r\n"
                           "Set-Cookie: a=b\r\n\r\n";
        struct response_head h = parsed(text, false);
        size_t len = 0;
        char *out = response_head_rewrite(text, &h, "Connection: close\r\n", &len);
        cr_assert_not_null(out);
        cr_assert_str_eq(out, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nSet-Cookie: a=b\r\n"
                              "Connection: close\r\n\r\n");
        cr_assert_eq(len, strlen(out));
        free(out);
}

Test(gateway_response, rewrite_of_bare_fields_fits)
{
        /* "a:b" lines grow by the space the rewrite adds after the colon */
        char text[4096] = "HTTP/1.1 200 OK\r\n";
        for (int i = 0; i < RESPONSE_FIELDS_MAX; i++)
                strcat(text, "a:b\r\n");
        strcat(text, "\r\n");
        struct response_head h = parsed(text, false);
        size_t len = 0;
        char *out = response_head_rewrite(text, &h, NULL, &len);
        cr_assert_not_null(out);
        cr_assert_eq(len, strlen(text) + RESPONSE_FIELDS_MAX);
        free(out);
        strcpy(text + strlen(text) - 2, "a:b\r\n\r\n");
        refused(text, -EMSGSIZE);
}

Test(gateway_response, keep_alive_only_for_http11_without_close)
{
        cr_assert(parsed("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n", false).keep_alive);
        cr_assert(
            parsed("HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\n\r\n", false).keep_alive);
        cr_assert(!parsed("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n", false).keep_alive);
        cr_assert(!parsed("HTTP/1.1 200 OK\r\nConnection: Close\r\n\r\n", false).keep_alive);
        cr_assert(!parsed("HTTP/1.1 200 OK\r\nConnection: x, close\r\n\r\n", false).keep_alive);
        cr_assert(!parsed("HTTP/1.1 200 OK\r\nProxy-Connection: close\r\n\r\n", false).keep_alive);
        cr_assert(!parsed("HTTP/1.1 200 OK\r\nConnection: a\r\nConnection: close\r\n\r\n", false)
                       .keep_alive);
        cr_assert(parsed("HTTP/1.1 200 OK\r\nConnection: closed\r\n\r\n", false).keep_alive);
}
