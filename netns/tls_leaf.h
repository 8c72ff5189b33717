/* The gateway's side of a terminated tunnel: a leaf certificate per host,
 * signed by the user's umwelt CA, and the server end of TLS on the socket
 * from the sandbox.
 *
 * Leaves: subject O=umwelt, CN=the name (when it fits in 64 characters);
 * subjectAltName dNSName = the host, or iPAddress for an address literal;
 * basicConstraints critical CA:FALSE; keyUsage critical digitalSignature;
 * extendedKeyUsage serverAuth; key identifiers; valid from a minute ago for
 * TLS_LEAF_HOURS; a random serial. All share one EC P-256 key made when the
 * gateway starts and held in its memory only; in the gateway the signer
 * process (tls_signer.h) signs them, given that key's public half. Leaves are cached per host in
 * a bounded cache (least recently used out) and made again once half their
 * life has passed.
 *
 * The server end offers only HTTP/1.1 by ALPN (or nothing, when the client
 * offers no http/1.1), since the gateway reads HTTP/1.1 requests, and
 * refuses a ClientHello whose SNI is not the host it was made for (a missing
 * SNI only for an address literal): the gateway has held the SNI against the
 * CONNECT host already, and this is the same check where the keys are. */
#ifndef UMW_NETNS_TLS_LEAF_H
#define UMW_NETNS_TLS_LEAF_H

#include <stddef.h>
#include <time.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "policy/egress_host.h"

struct tls_ca;
struct umw_error;

#define TLS_LEAF_HOURS         24
#define TLS_LEAF_CACHE_DEFAULT 256

/* A leaf for host with key's public half, signed by the CA (ca_cert,
 * ca_key: tls_ca_cert(), tls_ca_key()), made at now. */
int tls_leaf_make(X509 *ca_cert, EVP_PKEY *ca_key, EVP_PKEY *key, const struct egress_host *host,
                  time_t now, X509 **out, struct umw_error **err);

struct tls_term;

/* The CA's certificate and key are referenced, not copied: ca may be freed
 * after. cache_max 0: TLS_LEAF_CACHE_DEFAULT. */
int tls_term_new(const struct tls_ca *ca, size_t cache_max, struct tls_term **out,
                 struct umw_error **err);
/* The same with leaves made by the signer process (tls_signer.h), which
 * stays the caller's and must outlive t: the engine's way, where the CA's
 * key is not in this process. */
struct tls_signer;
int tls_term_new_signer(struct tls_signer *signer, size_t cache_max, struct tls_term **out,
                        struct umw_error **err);
void tls_term_free(struct tls_term *t);

/* The leaf for host, from the cache or made now. Borrowed: valid until the
 * next call on t. */
int tls_term_leaf(struct tls_term *t, const struct egress_host *host, X509 **out,
                  struct umw_error **err);

/* A server SSL for the non-blocking socket fd (not taken over: closed by the
 * caller after SSL_free()) presenting host's leaf. prefix holds the bytes
 * the caller has read from fd already (the ClientHello it checked); they are
 * read first. Drive it with tls_handshake(), then tls_read()/tls_write(). */
int tls_term_accept(struct tls_term *t, int fd, const struct egress_host *host, const void *prefix,
                    size_t prefix_len, SSL **out, struct umw_error **err);

#endif
