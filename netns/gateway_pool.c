#include "netns/gateway_pool.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

bool gateway_pool_key_set(struct gateway_pool_key *k, const char *host, uint16_t port,
                          const struct gateway_addr *addr)
{
        size_t len = strlen(host);
        if (len >= sizeof(k->host))
                return false;
        memcpy(k->host, host, len + 1);
        k->port = port;
        k->addr = *addr;
        return true;
}

static bool key_equal(const struct gateway_pool_key *a, const struct gateway_pool_key *b)
{
        size_t n = a->addr.family == AF_INET ? 4 : sizeof(a->addr.addr);
        return a->port == b->port && a->addr.family == b->addr.family &&
               memcmp(a->addr.addr, b->addr.addr, n) == 0 && strcmp(a->host, b->host) == 0;
}

/* Drops entry i, keeping the others in the order they went idle. */
static void drop(struct gateway_pool *p, size_t i)
{
        close(p->e[i].fd);
        memmove(&p->e[i], &p->e[i + 1], (p->n - i - 1) * sizeof(p->e[0]));
        p->n--;
}

void gateway_pool_put(struct gateway_pool *p, const struct gateway_pool_key *k, int fd,
                      uint64_t now)
{
        if (p->n == GATEWAY_POOL_MAX)
                drop(p, 0);
        p->e[p->n++] = (struct gateway_pool_entry){.key = *k, .fd = fd, .since_ms = now};
}

/* An idle HTTP/1.1 connection has nothing to read: a byte is a server that
 * speaks out of turn, an end or an error is a server that is gone. */
static bool still_idle(int fd)
{
        char byte;
        ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

int gateway_pool_take(struct gateway_pool *p, const struct gateway_pool_key *k)
{
        for (size_t i = p->n; i-- > 0;) {
                if (!key_equal(&p->e[i].key, k))
                        continue;
                int fd = p->e[i].fd;
                if (!still_idle(fd)) {
                        drop(p, i);
                        continue;
                }
                memmove(&p->e[i], &p->e[i + 1], (p->n - i - 1) * sizeof(p->e[0]));
                p->n--;
                return fd;
        }
        return -1;
}

void gateway_pool_sweep(struct gateway_pool *p, uint64_t now)
{
        /* the oldest first: stop at the first one still young enough */
        while (p->n > 0 && now - p->e[0].since_ms > GATEWAY_POOL_IDLE_MS)
                drop(p, 0);
}

void gateway_pool_clear(struct gateway_pool *p)
{
        while (p->n > 0)
                drop(p, p->n - 1);
}
