/* The byte pump behind loopback ingress: accepts on listening sockets made
 * on the host's loopback, dials the same service on the loopback of the
 * network namespace the calling process is in (the sandbox's), and copies
 * bytes both ways without looking at them. */
#ifndef UMW_NETNS_INGRESS_RELAY_H
#define UMW_NETNS_INGRESS_RELAY_H

#include <stddef.h>
#include <stdint.h>

/* Connections open at once; one more is accepted and reset at once. */
#define INGRESS_CONNS_MAX 256

struct relay_port {
        int fd;           /* listening, non-blocking, close-on-exec */
        uint16_t to_port; /* dialled on 127.0.0.1, then [::1] when that refuses */
};

/* Relays until the process behind pidfd ends (0) or epoll itself fails
 * (-errno). A connection whose inside end refuses on both loopback
 * addresses, or that fails on either end, is reset on the other; an end
 * that stops sending is passed on as a half-close once its bytes are out.
 * The sockets in ports stay the caller's. */
int ingress_relay_run(const struct relay_port *ports, size_t n, int pidfd);

#endif
