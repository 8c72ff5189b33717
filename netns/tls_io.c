#include "netns/tls_io.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/epoll.h>

#include <openssl/err.h>
#include <openssl/x509.h>

int tls_fail(struct umw_error **err, const char *fmt, ...)
{
        _cleanup_free_ char *what = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&what, fmt, ap);
        va_end(ap);
        if (n < 0)
                what = NULL;
        unsigned long e = ERR_get_error();
        const char *reason = e ? ERR_reason_error_string(e) : NULL;
        ERR_clear_error();
        return umw_fail(err, UMW_EXIT_FAILURE, EPROTO, "%s%s%s", what ? what : "TLS",
                        reason ? ": " : "", reason ? reason : "");
}

int tls_ctx_defaults(SSL_CTX *ctx, struct umw_error **err)
{
        if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1)
                return tls_fail(err, "TLS 1.2 as the minimum version");
        SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
        SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION |
                                     SSL_OP_NO_TICKET);
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        if (SSL_CTX_set_num_tickets(ctx, 0) != 1)
                return tls_fail(err, "TLS session tickets off");
        return 0;
}

/* What SSL_get_error() says, as the steps return it: -EAGAIN with *events
 * set, 0 for the peer's close, or a negative errno. */
static int io_status(SSL *ssl, int r, int saved_errno, uint32_t *events)
{
        switch (SSL_get_error(ssl, r)) {
        case SSL_ERROR_WANT_READ:
                *events = EPOLLIN;
                return -EAGAIN;
        case SSL_ERROR_WANT_WRITE:
                *events = EPOLLOUT;
                return -EAGAIN;
        case SSL_ERROR_ZERO_RETURN:
                return 0;
        case SSL_ERROR_SYSCALL:
                return saved_errno > 0 ? -saved_errno : -ECONNRESET;
        default:
                return -EPROTO;
        }
}

int tls_handshake(SSL *ssl, uint32_t *events, struct umw_error **err)
{
        ERR_clear_error();
        errno = 0;
        int r = SSL_do_handshake(ssl);
        int saved = errno;
        if (r == 1)
                return 1;
        int st = io_status(ssl, r, saved, events);
        if (st == -EAGAIN)
                return 0;
        long v = SSL_get_verify_result(ssl);
        if (v != X509_V_OK) {
                ERR_clear_error();
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                "TLS handshake: the peer's certificate: %s",
                                X509_verify_cert_error_string(v));
        }
        if (st == -EPROTO)
                return tls_fail(err, "TLS handshake");
        if (st == 0)
                st = -ECONNRESET;
        return umw_fail_sys(err, -st, "TLS handshake");
}

/* One SSL_read_ex() or SSL_write_ex(), as tls_read() and tls_write() say. */
static ssize_t transfer(SSL *ssl, bool writing, void *buf, size_t len, uint32_t *events)
{
        ERR_clear_error();
        errno = 0;
        size_t n = 0;
        int r = writing ? SSL_write_ex(ssl, buf, len, &n) : SSL_read_ex(ssl, buf, len, &n);
        int saved = errno;
        if (r == 1)
                return (ssize_t)n;
        int st = io_status(ssl, r, saved, events);
        return writing && st == 0 ? -EPIPE : st;
}

ssize_t tls_read(SSL *ssl, void *buf, size_t len, uint32_t *events)
{
        return transfer(ssl, false, buf, len, events);
}

ssize_t tls_write(SSL *ssl, const void *buf, size_t len, uint32_t *events)
{
        return transfer(ssl, true, (void *)buf, len, events);
}

int tls_shutdown(SSL *ssl, uint32_t *events)
{
        ERR_clear_error();
        errno = 0;
        int r = SSL_shutdown(ssl);
        int saved = errno;
        if (r >= 0)
                return 1;
        int st = io_status(ssl, r, saved, events);
        if (st == -EAGAIN)
                return 0;
        return st == 0 ? 1 : st;
}
