/* The user's umwelt CA: the authority the gateway signs its leaf
 * certificates with where it terminates TLS, trusted inside sandboxes only
 * (the trust bundle, tls_trust.h), never added to the host's own store.
 *
 * It is made with OpenSSL on first use in the user's state directory,
 * outside every sandbox: $XDG_STATE_HOME/umwelt/ca (or
 * ~/.local/state/umwelt/ca), a directory 0700 holding
 *   ca.key  the EC P-256 private key, PEM (PKCS#8), 0600
 *   ca.crt  the self-signed certificate, PEM, 0644
 * Each file is written to a temporary name and renamed into place without
 * replacing anything, so two sandboxes starting at once agree on one CA and
 * a crash leaves no half-written file; an existing file is never overwritten.
 * A directory or key that anyone but its owner (the caller's effective uid)
 * could read or write is refused, as is an expired CA or a key that does not
 * match the certificate.
 *
 * The certificate: CN "umwelt sandbox CA (HOST)", basicConstraints critical
 * CA:TRUE with pathlen:0 (it signs leaves, never another CA), keyUsage
 * critical keyCertSign and cRLSign, subject and authority key identifiers,
 * valid ten years. It carries no nameConstraints: the hosts it must sign for
 * are whatever path rules name, and those change while sandboxes run; the
 * key's confinement (never inside a sandbox) and the bundle's (trusted only
 * inside sandboxes) carry that weight instead. */
#ifndef UMW_NETNS_TLS_CA_H
#define UMW_NETNS_TLS_CA_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "netns/tls_paths.h"

#include <openssl/evp.h>
#include <openssl/x509.h>

struct umw_error;

#define TLS_CA_KEY_FILE "ca.key"
#define TLS_CA_DAYS     3650

struct tls_ca;

/* Writes name in dfd (dir is its path, for messages) through a temporary
 * file of this process renamed into place: replacing what is there, or with
 * replace false, only where nothing is (losing that race to another process
 * is success: the caller reads back whatever won). */
int tls_state_write(int dfd, const char *dir, const char *name, const void *buf, size_t len,
                    mode_t mode, bool replace, struct umw_error **err);

/* Loads the CA in dir. With create, a missing directory (and its missing
 * parents, 0700) and missing files are made first; without it, a missing CA
 * is an error naming dir. */
int tls_ca_open(const char *dir, bool create, struct tls_ca **out, struct umw_error **err);
void tls_ca_free(struct tls_ca *ca);

/* Borrowed: valid while ca is. */
X509 *tls_ca_cert(const struct tls_ca *ca);
EVP_PKEY *tls_ca_key(const struct tls_ca *ca);

#endif
