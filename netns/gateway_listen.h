/* The gateway's door: listening sockets on 127.0.0.1:PORT and [::1]:PORT made
 * inside the sandbox's network namespace, while the gateway itself stays in
 * its own, so that whatever it dials leaves from the host's side. */
#ifndef UMW_NETNS_GATEWAY_LISTEN_H
#define UMW_NETNS_GATEWAY_LISTEN_H

#include <sys/types.h>

struct umw_error;

#define GATEWAY_LISTEN_MAX 2

/* Opens the network namespace at netns_path (a bind mount such as
 * /run/netns/NAME, or /proc/PID/ns/net) and makes the listeners inside it:
 * a forked child enters the user namespace that owns it (when that is not
 * ours: a rootless sandbox) and the namespace, creates, binds and listens,
 * and sends the sockets back over a socketpair. Joining a user namespace
 * cannot be undone, which is why a child does it. fds gets the sockets
 * (non-blocking, close-on-exec), *n their count: 2, or 1 where the namespace
 * has no IPv6 loopback. */
int gateway_listen_in_netns(const char *netns_path, unsigned port, int fds[GATEWAY_LISTEN_MAX],
                            size_t *n, struct umw_error **err);

#endif
