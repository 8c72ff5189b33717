/* The far ends of scripts/bench-gateway.sh, fast enough that the proxy in
 * between is what is measured:
 *
 *   gateway-peer origin ADDR PORT
 *       an HTTP/1.1 server answering every request with a 13-byte body,
 *       kept alive unless the request says "Connection: close" (then the
 *       server closes first, as servers do, so TIME_WAIT stays on its side)
 *   gateway-peer source ADDR PORT BYTES
 *       accepts one connection at a time, reads what the client sends first
 *       (a ClientHello through a tunnel, a byte directly), then sends BYTES
 *       and closes
 *   gateway-peer sink ADDR PORT BYTES [TARGET HELLO_FILE]
 *       connects (with TARGET host:port: to a proxy, CONNECT TARGET, then
 *       the ClientHello in HELLO_FILE), reads to the end and prints
 *       "BYTES SECONDS"; exit 1 when fewer than BYTES arrived
 *
 * Single-threaded, epoll for the origin. Not part of umwelt: built by the
 * benchmark script from this file. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BULK (1 << 20)

static void die(const char *what)
{
        perror(what);
        exit(1);
}

static int listen_on(const char *addr, const char *port)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(port))};
        if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
                die("address");
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
        if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s, 1024) < 0)
                die("listen");
        return s;
}

static int dial(const char *addr, const char *port)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(atoi(port))};
        if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
                die("address");
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                die("connect");
        return s;
}

static void write_all(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t w = write(fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        die("write");
                p += w;
                n -= (size_t)w;
        }
}

/* ---------------------------------------------------------------- origin */

struct client {
        int fd;
        size_t len;
        char buf[8192];
};

static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                             "Content-Length: 13\r\n\r\nhello, world\n";

/* Answers every complete head in c->buf; returns -1 to close. */
static int serve_heads(struct client *c)
{
        char *p = c->buf, *end = c->buf + c->len, *h;
        while ((h = memmem(p, (size_t)(end - p), "\r\n\r\n", 4))) {
                size_t head = (size_t)(h + 4 - p);
                bool close_after = memmem(p, head, "onnection: close", 16) != NULL;
                if (send(c->fd, answer, sizeof(answer) - 1, MSG_NOSIGNAL) < 0)
                        return -1;
                if (close_after)
                        return -1;
                p += head;
        }
        c->len = (size_t)(end - p);
        memmove(c->buf, p, c->len);
        return c->len == sizeof(c->buf) ? -1 : 0;
}

static void origin(const char *addr, const char *port)
{
        int ls = listen_on(addr, port), ep = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL}, evs[64];
        if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev) < 0)
                die("epoll");
        for (;;) {
                int n = epoll_wait(ep, evs, 64, -1);
                for (int i = 0; i < n; i++) {
                        struct client *c = evs[i].data.ptr;
                        if (!c) {
                                int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
                                if (fd < 0)
                                        continue;
                                int one = 1;
                                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                                c = calloc(1, sizeof(*c));
                                if (!c)
                                        die("calloc");
                                c->fd = fd;
                                ev = (struct epoll_event){.events = EPOLLIN, .data.ptr = c};
                                if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
                                        die("epoll_ctl");
                                continue;
                        }
                        ssize_t r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
                        if (r > 0)
                                c->len += (size_t)r;
                        if (r <= 0 || serve_heads(c) < 0) {
                                close(c->fd); /* also leaves the epoll set */
                                free(c);
                        }
                }
        }
}

/* ---------------------------------------------------------------- source */

static void source(const char *addr, const char *port, unsigned long long bytes)
{
        int ls = listen_on(addr, port);
        char *buf = calloc(1, BULK);
        if (!buf)
                die("calloc");
        for (;;) {
                int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0)
                        continue;
                char first[4096];
                if (read(fd, first, sizeof(first)) > 0)
                        for (unsigned long long left = bytes; left > 0;) {
                                size_t n = left < BULK ? (size_t)left : BULK;
                                ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
                                if (w <= 0)
                                        break;
                                left -= (unsigned long long)w;
                        }
                close(fd);
        }
}

/* ---------------------------------------------------------------- sink */

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CONNECT target, the 200 read up to its blank line, then the hello. */
static void tunnel(int fd, const char *target, const char *hello_file)
{
        char req[512], resp[1024], hello[4096];
        int n =
            snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
        write_all(fd, req, (size_t)n);
        size_t len = 0;
        while (!memmem(resp, len, "\r\n\r\n", 4)) {
                ssize_t r = read(fd, resp + len, 1); /* not a byte past the head */
                if (r <= 0 || ++len == sizeof(resp))
                        die("CONNECT answer");
        }
        if (strncmp(resp, "HTTP/1.1 200", 12) != 0) {
                fprintf(stderr, "CONNECT refused: %.*s\n", (int)len, resp);
                exit(1);
        }
        int hf = open(hello_file, O_RDONLY | O_CLOEXEC);
        ssize_t hn = hf < 0 ? -1 : read(hf, hello, sizeof(hello));
        if (hn <= 0)
                die(hello_file);
        close(hf);
        write_all(fd, hello, (size_t)hn);
}

static void sink(const char *addr, const char *port, unsigned long long bytes, const char *target,
                 const char *hello_file)
{
        char *buf = malloc(BULK);
        if (!buf)
                die("malloc");
        double t0 = now();
        int fd = dial(addr, port);
        if (target)
                tunnel(fd, target, hello_file);
        else
                write_all(fd, "x", 1);
        unsigned long long got = 0;
        for (;;) {
                ssize_t r = read(fd, buf, BULK);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        die("read");
                if (r == 0)
                        break;
                got += (unsigned long long)r;
        }
        double t = now() - t0;
        printf("%llu %.6f\n", got, t);
        exit(got == bytes ? 0 : 1);
}

int main(int argc, char **argv)
{
        if (argc == 4 && strcmp(argv[1], "origin") == 0)
                origin(argv[2], argv[3]);
        else if (argc == 5 && strcmp(argv[1], "source") == 0)
                source(argv[2], argv[3], strtoull(argv[4], NULL, 10));
        else if ((argc == 5 || argc == 7) && strcmp(argv[1], "sink") == 0)
                sink(argv[2], argv[3], strtoull(argv[4], NULL, 10), argc == 7 ? argv[5] : NULL,
                     argc == 7 ? argv[6] : NULL);
        fprintf(stderr, "usage: gateway-peer origin ADDR PORT | source ADDR PORT BYTES | "
                        "sink ADDR PORT BYTES [TARGET HELLO_FILE]\n");
        return 2;
}
