/* The signer: the one process of a gateway that holds the umwelt CA's
 * private key (DESIGN.md, "The gateway's privilege separation"). It is
 * forked before anything reads the CA, loads the CA itself, and answers
 * one question on a SOCK_SEQPACKET socketpair: a leaf certificate for this
 * checked host and this public key (tls_signer_msg.h). It keeps no other
 * fd but stderr, has no_new_privs and a seccomp filter of its own
 * (gateway_confine_signer()), dies with its parent (PDEATHSIG) and exits
 * when the socket's other end closes.
 *
 * The leaf's key stays with the engine: the engine already makes one key
 * for all its leaves and keeps it in memory; sending its public half costs
 * 91 bytes a request, and the signer never holds a key that a TLS client
 * talks to. */
#ifndef UMW_NETNS_TLS_SIGNER_H
#define UMW_NETNS_TLS_SIGNER_H

#include <stdbool.h>
#include <sys/types.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "policy/egress_host.h"

struct umw_error;
struct tls_signer;

/* Forks the signer, which opens the CA in ca_dir (tls_ca_open(), making it
 * first with create) and says whether it could in its first record. Does
 * not wait for it. */
int tls_signer_start(const char *ca_dir, bool create, struct tls_signer **out,
                     struct umw_error **err);

/* The CA's certificate as the signer loaded it (borrowed: valid while s
 * is), or the signer's reason why it has none. Waits for the first record
 * the first time. */
int tls_signer_ca(struct tls_signer *s, X509 **out, struct umw_error **err);

/* A leaf for host and key's public half, signed by the CA, made now. */
int tls_signer_leaf(struct tls_signer *s, EVP_PKEY *key, const struct egress_host *host, X509 **out,
                    struct umw_error **err);

/* The signer's pid (its parent reaps it). */
pid_t tls_signer_pid(const struct tls_signer *s);

/* Closes this process's end: the signer exits when no end is left. */
void tls_signer_free(struct tls_signer *s);

#endif
