/* Loopback ingress: a port published by a sandbox ([ingress] ports in
 * .umwelt.toml, `sandbox up --publish`) is reachable on the host's
 * 127.0.0.1:PORT and [::1]:PORT, and on no other address, and arrives at
 * 127.0.0.1:PORT (or [::1]:PORT) inside the sandbox through a socket made in
 * the sandbox's network namespace. Publishing gives the sandbox no way out:
 * the forwarder only ever dials the sandbox's own loopback. */
#ifndef UMW_NETNS_INGRESS_H
#define UMW_NETNS_INGRESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct umw_error;

/* Ports one forwarder publishes (policy/config.h allows as many). */
#define INGRESS_PORTS_MAX 16

struct ingress_request {
        pid_t sandbox_pid;      /* the sandbox's init, as this process sees it */
        const uint16_t *ports;  /* 1..65535, no duplicates */
        size_t n_ports;         /* 1..INGRESS_PORTS_MAX */
        const char *sandbox_id; /* named in the audit lines */
        int audit_fd;           /* the project's audit log (audit_open()), or -1 */
};

/* A port number as written on a command line: decimal 1..65535, nothing
 * else. what names the option in the message (class UMW_EXIT_USAGE). */
int ingress_port_parse(const char *what, const char *arg, uint16_t *port, struct umw_error **err);

/* Listens on 127.0.0.1:PORT and [::1]:PORT (IPV6_V6ONLY) for each port in the
 * caller's network namespace, then forks the forwarder: it enters the
 * sandbox's network namespace (and the user namespace that owns it where
 * the caller has no say over it: rootless), detaches (new session, stdio on
 * /dev/null, no other fd of the caller's), drops every capability, and relays
 * until the sandbox's init exits or it is killed. Returns once the
 * forwarder is in place, with one audit line "ingress" per port, and its pid
 * in *forwarder: the caller's child, to reap or to leave behind by exiting.
 *
 * A host without an IPv6 loopback gets 127.0.0.1 only, with a warning. Any
 * failure (a port in use names the port and the address; the sandbox gone,
 * or without a network namespace of its own) is one line, and leaves no
 * listener and no process behind. */
int ingress_start(const struct ingress_request *req, pid_t *forwarder, struct umw_error **err);

#endif
