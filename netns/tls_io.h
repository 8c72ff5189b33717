/* TLS on non-blocking sockets for the gateway's epoll loop, and OpenSSL's
 * errors as umw_error messages.
 *
 * Every step below either makes progress or says which readiness of the
 * socket it waits for (EPOLLIN or EPOLLOUT in *events): TLS may need to write
 * while the caller reads (a key update, the handshake) and to read while it
 * writes, so the caller registers what *events says, not what it was doing.
 *
 * Decrypted bytes can wait inside the SSL object with nothing left on the
 * socket, where epoll will never report them: after a read, call tls_read()
 * again until it returns -EAGAIN (or the caller's buffer is full) before
 * waiting. */
#ifndef UMW_NETNS_TLS_IO_H
#define UMW_NETNS_TLS_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <openssl/ssl.h>

struct umw_error;

/* The one application protocol the gateway speaks inside TLS, as ALPN
 * writes its list: a length byte, then the name. */
#define TLS_ALPN_HTTP11     "\x08http/1.1"
#define TLS_ALPN_HTTP11_LEN 9

/* Records a failure of OpenSSL: the formatted context, then ": " and the
 * first reason in OpenSSL's error queue (which is emptied), if any. */
int tls_fail(struct umw_error **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What both the terminating and the upstream contexts share: TLS 1.2 at
 * least, partial writes from a buffer that may move between retries (the
 * gateway compacts its buffers), a peer's EOF without close_notify read as
 * an end (HTTP framing finds truncation, as it does for plain HTTP), no
 * renegotiation, no session tickets kept past the process. */
int tls_ctx_defaults(SSL_CTX *ctx, struct umw_error **err);

/* Drives the handshake. Returns 1 when done, 0 when it waits for *events,
 * or a negative errno (-EPROTO: TLS refused; -ECONNRESET etc. from the
 * socket) with err naming the reason, e.g. a failed certificate check. */
int tls_handshake(SSL *ssl, uint32_t *events, struct umw_error **err);

/* Reads up to len bytes: the count, 0 when the peer closed, -EAGAIN when it
 * waits for *events, -EPROTO for a TLS failure (tls_fail() then says why)
 * or another -errno from the socket. */
ssize_t tls_read(SSL *ssl, void *buf, size_t len, uint32_t *events);

/* Writes up to len bytes: the count written (maybe fewer), -EAGAIN when it
 * waits for *events, or as tls_read(). After -EAGAIN the next call must
 * offer at least the same bytes again (at any address, with more after
 * them if the caller has more). */
ssize_t tls_write(SSL *ssl, const void *buf, size_t len, uint32_t *events);

/* Sends close_notify. 1 when sent, 0 when it waits for *events, -errno.
 * Does not wait for the peer's close_notify: the socket is closed next. */
int tls_shutdown(SSL *ssl, uint32_t *events);

#endif
