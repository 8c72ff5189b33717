/* Idle upstream connections of plain-HTTP requests, kept for the next
 * request to the same place. A connection goes in only after a response
 * that was read to its framed end (see gateway_conn.c); it comes out only
 * for a request that was decided and whose addresses were checked anew, and
 * only where the address dialled, the port and the host are exactly the
 * ones it was made for. A connection the server closed (or sent anything
 * on) while idle is found and dropped before it is handed out. Idle ones
 * are closed after GATEWAY_POOL_IDLE_MS and, when the pool is full, the
 * oldest makes room. No epoll: an idle connection is only looked at when it
 * is wanted. */
#ifndef UMW_NETNS_GATEWAY_POOL_H
#define UMW_NETNS_GATEWAY_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netns/gateway_upstream.h"

#define GATEWAY_POOL_MAX     64
#define GATEWAY_POOL_IDLE_MS 15000

/* What a connection was made for: the host the request named (canonical
 * text), the port, and the address that was checked and dialled. */
struct gateway_pool_key {
        char host[EGRESS_HOST_TEXT_SIZE];
        uint16_t port;
        struct gateway_addr addr;
};

struct gateway_pool_entry {
        struct gateway_pool_key key;
        int fd;
        uint64_t since_ms; /* idle since */
};

/* Zero-initialised: empty. */
struct gateway_pool {
        struct gateway_pool_entry e[GATEWAY_POOL_MAX];
        size_t n; /* e[0..n) in the order they went idle */
};

/* The key of a request for host (canonical text), port and addr; false when
 * host does not fit (such a request is not pooled). */
bool gateway_pool_key_set(struct gateway_pool_key *k, const char *host, uint16_t port,
                          const struct gateway_addr *addr);

/* Keeps fd (the pool's from now on) as idle since now; when the pool is
 * full, the oldest idle connection is closed to make room. */
void gateway_pool_put(struct gateway_pool *p, const struct gateway_pool_key *k, int fd,
                      uint64_t now);

/* The most recently idle connection for exactly k that the server has
 * neither closed nor written to (the caller's from now on), or -1. Those
 * found closed on the way are closed and dropped. */
int gateway_pool_take(struct gateway_pool *p, const struct gateway_pool_key *k);

/* Closes the connections idle for more than GATEWAY_POOL_IDLE_MS. */
void gateway_pool_sweep(struct gateway_pool *p, uint64_t now);

/* Closes every idle connection. */
void gateway_pool_clear(struct gateway_pool *p);

#endif
