/* The gateway's side of TLS towards the real server when it terminates a
 * tunnel: the client end, verified as a careful client would verify it.
 *
 * The server's chain must end at a root of the host's trust store
 * (OpenSSL's default locations: on Debian /etc/ssl/certs, the store
 * ca-certificates keeps; never the umwelt CA, which only sandboxes trust),
 * or, for tests, of a CA file given instead. Its certificate must name the
 * host (dNSName, wildcards only as a whole left-most label; iPAddress for an
 * address literal). SNI is the host (none for an address, as RFC 6066
 * says), ALPN offers HTTP/1.1 alone, TLS 1.2 is the least accepted. */
#ifndef UMW_NETNS_TLS_UPSTREAM_H
#define UMW_NETNS_TLS_UPSTREAM_H

#include <openssl/ssl.h>

#include "policy/egress_host.h"

struct umw_error;
struct tls_upstream;

/* ca_file NULL: the host's trust store. Else the PEM certificates in
 * ca_file alone. */
int tls_upstream_new(const char *ca_file, struct tls_upstream **out, struct umw_error **err);
/* The same trusting the PEM certificates in the file open at fd (read from
 * its start): the host's store, opened before the engine was confined. */
int tls_upstream_new_fd(int fd, struct tls_upstream **out, struct umw_error **err);
void tls_upstream_free(struct tls_upstream *u);

/* A client SSL for the connected non-blocking socket fd (not taken over:
 * closed by the caller after SSL_free()) to host, the very host the
 * sandbox's CONNECT, SNI and Host header named. Drive it with
 * tls_handshake(): a certificate that fails verification fails there, with
 * the reason. */
int tls_upstream_connect(struct tls_upstream *u, int fd, const struct egress_host *host, SSL **out,
                         struct umw_error **err);

#endif
