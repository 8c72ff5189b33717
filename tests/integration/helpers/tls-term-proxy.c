/* tls-term-proxy CA_DIR TRUST_DIR PORT HOST UPSTREAM_PORT UPSTREAM_CA
 *
 * Stands in for the gateway's TLS termination in tls-term.sh, with the
 * gateway's pieces: makes (or loads) the umwelt CA in CA_DIR and writes the
 * sandbox's trust bundle into TRUST_DIR; listens on 127.0.0.1:PORT; for each
 * client in turn reads the ClientHello off the socket (as the gateway does
 * before it decides), terminates TLS with the leaf for HOST, connects to
 * 127.0.0.1:UPSTREAM_PORT with TLS verified against UPSTREAM_CA for HOST, and
 * relays the decrypted bytes both ways. Every socket is non-blocking: each
 * step waits for exactly what the TLS layer says it needs. Prints "ready"
 * once listening; a failed connection is one line on stderr. */
#include "netns/tls_ca.h"
#include "netns/tls_hello.h"
#include "netns/tls_io.h"
#include "netns/tls_leaf.h"
#include "netns/tls_trust.h"
#include "netns/tls_upstream.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define WAIT_MS 10000

struct proxy {
        struct tls_term *term;
        struct tls_upstream *up;
        struct egress_host host;
        uint16_t upstream_port;
};

/* Bytes on their way from one TLS end to the other. */
struct lane {
        SSL *from, *to;
        int from_fd, to_fd;
        char buf[16384];
        size_t len, off;
        bool eof;
        int wait_fd; /* what the lane waits for when it cannot move: */
        uint32_t wait_events;
};

static short poll_events(uint32_t ev)
{
        return (short)((ev & EPOLLIN ? POLLIN : 0) | (ev & EPOLLOUT ? POLLOUT : 0));
}

static int wait_for(int fd, uint32_t ev, struct umw_error **err)
{
        struct pollfd p = {.fd = fd, .events = poll_events(ev)};
        int n = poll(&p, 1, WAIT_MS);
        if (n < 0)
                return umw_fail_errno(err, "poll");
        return n == 0 ? umw_fail_sys(err, ETIMEDOUT, "waiting for the peer") : 0;
}

static int handshake(SSL *ssl, int fd, const char *side, struct umw_error **err)
{
        for (;;) {
                uint32_t ev = 0;
                int r = tls_handshake(ssl, &ev, err);
                if (r < 0)
                        return umw_error_prefix(err, "%s", side);
                if (r > 0)
                        return 0;
                r = wait_for(fd, ev, err);
                if (r < 0)
                        return umw_error_prefix(err, "%s", side);
        }
}

static int read_hello(int fd, char *buf, size_t size, size_t *len, struct umw_error **err)
{
        struct tls_hello hello;
        *len = 0;
        for (;;) {
                ssize_t n = recv(fd, buf + *len, size - *len, 0);
                if (n < 0 && errno != EAGAIN)
                        return umw_fail_errno(err, "read the ClientHello");
                if (n == 0)
                        return umw_fail(err, UMW_EXIT_FAILURE, ECONNRESET, "no ClientHello");
                if (n > 0) {
                        *len += (size_t)n;
                        int r = tls_hello_parse((unsigned char *)buf, *len, &hello);
                        if (r == 0)
                                return 0;
                        if (r != -EAGAIN)
                                return umw_fail(err, UMW_EXIT_FAILURE, -r, "ClientHello: %s",
                                                hello.why ? hello.why : "refused");
                }
                int r = wait_for(fd, EPOLLIN, err);
                if (r < 0)
                        return r;
        }
}

static int dial(uint16_t port, int *out, struct umw_error **err)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
                return umw_fail_errno(err, "connect to 127.0.0.1:%u", port);
        if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
                return umw_fail_errno(err, "O_NONBLOCK");
        *out = TAKE_FD(fd);
        return 0;
}

/* Moves what it can; 1 when bytes moved, 0 when it waits, -errno. */
static int lane_step(struct lane *l)
{
        uint32_t ev = 0;
        if (l->off < l->len) {
                ssize_t w = tls_write(l->to, l->buf + l->off, l->len - l->off, &ev);
                if (w > 0)
                        l->off += (size_t)w;
                if (w == -EAGAIN) {
                        l->wait_fd = l->to_fd;
                        l->wait_events = ev;
                }
                return w > 0 ? 1 : w == -EAGAIN ? 0 : (int)w;
        }
        if (l->eof)
                return 0;
        ssize_t n = tls_read(l->from, l->buf, sizeof(l->buf), &ev);
        l->off = 0;
        l->len = n > 0 ? (size_t)n : 0;
        if (n == 0) {
                l->eof = true;
                tls_shutdown(l->to, &ev); /* best effort: the socket closes next */
                return 1;
        }
        if (n == -EAGAIN) {
                l->wait_fd = l->from_fd;
                l->wait_events = ev;
        }
        return n > 0 ? 1 : n == -EAGAIN ? 0 : (int)n;
}

static bool lane_done(const struct lane *l)
{
        return l->eof && l->off == l->len;
}

static int relay(SSL *down, int dfd, SSL *up, int ufd, struct umw_error **err)
{
        struct lane lanes[2] = {
            {.from = down, .to = up, .from_fd = dfd, .to_fd = ufd},
            {.from = up, .to = down, .from_fd = ufd, .to_fd = dfd},
        };
        /* Either end's close ends the exchange, as the gateway's tunnel. */
        while (!lane_done(&lanes[0]) && !lane_done(&lanes[1])) {
                int moved = 0;
                for (int i = 0; i < 2; i++) {
                        int r = lane_step(&lanes[i]);
                        if (r < 0)
                                return r == -EPROTO ? tls_fail(err, "relay")
                                                    : umw_fail_sys(err, -r, "relay");
                        moved |= r;
                }
                if (moved)
                        continue;
                struct pollfd p[2];
                for (int i = 0; i < 2; i++)
                        p[i] = (struct pollfd){.fd = lanes[i].wait_fd,
                                               .events = poll_events(lanes[i].wait_events)};
                int n = poll(p, 2, WAIT_MS);
                if (n <= 0)
                        return umw_fail_sys(err, n < 0 ? errno : ETIMEDOUT, "relay");
        }
        return 0;
}

static int serve(struct proxy *px, int cfd, struct umw_error **err)
{
        char hello[TLS_HELLO_MAX + 5 * 4];
        size_t len = 0;
        SSL *down = NULL, *up = NULL;
        _cleanup_close_ int ufd = -1;
        int r = read_hello(cfd, hello, sizeof(hello), &len, err);
        if (r == 0)
                r = tls_term_accept(px->term, cfd, &px->host, hello, len, &down, err);
        if (r == 0)
                r = handshake(down, cfd, "from the client", err);
        if (r == 0)
                r = dial(px->upstream_port, &ufd, err);
        if (r == 0)
                r = tls_upstream_connect(px->up, ufd, &px->host, &up, err);
        if (r == 0)
                r = handshake(up, ufd, "to the upstream", err);
        if (r == 0)
                r = relay(down, cfd, up, ufd, err);
        SSL_free(down);
        SSL_free(up);
        return r;
}

static int listen_on(uint16_t port, int *out, struct umw_error **err)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int one = 1;
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 16) < 0)
                return umw_fail_errno(err, "listen on 127.0.0.1:%u", port);
        *out = TAKE_FD(fd);
        return 0;
}

static int setup(char **argv, struct proxy *px, int *lfd, struct umw_error **err)
{
        struct tls_ca *ca = NULL;
        int r = tls_ca_open(argv[1], true, &ca, err);
        if (r == 0)
                r = tls_trust_write(ca, NULL, argv[2], err);
        if (r == 0)
                r = tls_term_new(ca, 0, &px->term, err);
        tls_ca_free(ca);
        if (r == 0)
                r = egress_host_canon(argv[4], strlen(argv[4]), &px->host, err);
        if (r == 0)
                r = tls_upstream_new(argv[6], &px->up, err);
        px->upstream_port = (uint16_t)atoi(argv[5]);
        if (r == 0)
                r = listen_on((uint16_t)atoi(argv[3]), lfd, err);
        return r;
}

int main(int argc, char **argv)
{
        if (argc != 7) {
                fprintf(stderr, "usage: %s CA_DIR TRUST_DIR PORT HOST UPSTREAM_PORT UPSTREAM_CA\n",
                        argv[0]);
                return 2;
        }
        struct proxy px = {0};
        _cleanup_close_ int lfd = -1;
        _cleanup_error_ struct umw_error *err = NULL;
        if (setup(argv, &px, &lfd, &err) < 0) {
                fprintf(stderr, "tls-term-proxy: %s\n", err->msg);
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        for (;;) {
                _cleanup_close_ int cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0)
                        continue;
                if (serve(&px, cfd, &err) < 0) {
                        fprintf(stderr, "tls-term-proxy: %s\n", err->msg);
                        umw_error_freep(&err);
                }
        }
}
