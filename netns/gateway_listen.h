/* The gateway's door: listening sockets on 127.0.0.1:PORT and [::1]:PORT made
 * inside the sandbox's network namespace, while the gateway itself stays in
 * its own, so that whatever it dials leaves from the host's side. */
#ifndef UMW_NETNS_GATEWAY_LISTEN_H
#define UMW_NETNS_GATEWAY_LISTEN_H

#include <sys/types.h>

struct umw_error;

#define GATEWAY_LISTEN_MAX 2

/* Opens the network namespace at netns_path (a bind mount such as
 * /run/netns/NAME, or /proc/PID/ns/net) and makes the listeners inside it.
 * Where the caller may enter it (root), the calling thread does, creates,
 * binds and listens, and comes back; otherwise (a rootless sandbox) a
 * forked child enters the user namespace that owns it and the namespace,
 * and sends the sockets back over a socketpair: joining a user namespace
 * cannot be undone. fds gets the sockets (non-blocking, close-on-exec), *n
 * their count: 2, or 1 where the namespace has no IPv6 loopback. A
 * connection made to them waits in their backlog until someone accepts. */
int gateway_listen_in_netns(const char *netns_path, unsigned port, int fds[GATEWAY_LISTEN_MAX],
                            size_t *n, struct umw_error **err);

#endif
