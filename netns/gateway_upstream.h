/* The gateway's way out: name lookups that never block the event loop, and
 * non-blocking connects to exactly the address that was checked.
 *
 * Lookups: getaddrinfo() blocks, so a few worker threads run it and hand
 * finished lookups back over a pipe the loop polls; the threads touch
 * nothing but the lookup they were given. With a hosts file, names are
 * looked up in it alone and answered at once (tests, and hosts that want
 * pinned addresses). */
#ifndef UMW_NETNS_GATEWAY_UPSTREAM_H
#define UMW_NETNS_GATEWAY_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "policy/egress_host.h"

struct umw_error;

#define GATEWAY_ADDRS_MAX 16

struct gateway_addr {
        int family;             /* AF_INET or AF_INET6 */
        unsigned char addr[16]; /* network order */
};

/* One lookup: the name goes in, the addresses come out. While it is with
 * the resolver, only the resolver writes it; whoever asked may drop its
 * interest by clearing owner, and the loop frees it when it comes back. */
struct gateway_lookup {
        char name[EGRESS_HOST_TEXT_SIZE];
        void *owner;
        int rc; /* 0, or -errno (ENOENT: no such name) */
        size_t n;
        struct gateway_addr addrs[GATEWAY_ADDRS_MAX];
        struct gateway_lookup *next; /* the resolver's queue */
};

struct gateway_resolver;

/* hosts_file NULL: getaddrinfo() in worker threads, started by the first
 * lookup (one that cannot start any is answered at once with its error). */
int gateway_resolver_new(const char *hosts_file, struct gateway_resolver **out,
                         struct umw_error **err);
/* Stops and joins the workers (waiting for lookups in progress) and frees
 * every lookup still queued or finished. */
void gateway_resolver_free(struct gateway_resolver *r);
/* Readable when finished lookups are waiting for gateway_resolver_done(). */
int gateway_resolver_fd(const struct gateway_resolver *r);
/* Hands l over. Returns 1 when it was answered at once (l is the caller's
 * again), 0 when it is queued, or -errno (l is the caller's). */
int gateway_resolver_submit(struct gateway_resolver *r, struct gateway_lookup *l);
/* The next finished lookup, or NULL. */
struct gateway_lookup *gateway_resolver_done(struct gateway_resolver *r);

/* The socket address of a and port; returns its length. */
socklen_t gateway_sockaddr(const struct gateway_addr *a, uint16_t port,
                           struct sockaddr_storage *ss);
/* TCP_NODELAY on fd: the gateway writes a head and then a body, or a body
 * as it comes, and a second small write must not wait for the ACK of the
 * first (Nagle with delayed ACKs: 40 ms a request). 0 or -1 with errno. */
int gateway_nodelay(int fd);
/* A non-blocking, close-on-exec socket connecting to a: 0 with *fd set
 * (connected or in progress), or -errno. */
int gateway_dial(const struct gateway_addr *a, uint16_t port, int *fd);
/* The address as text: "192.0.2.1" or "2001:db8::1". */
void gateway_addr_text(const struct gateway_addr *a, char *buf, size_t size);

#endif
