/* What a sandbox trusts where its gateway may terminate TLS: the host's
 * trusted roots plus the umwelt CA, as files in a directory of the user's
 * state ($XDG_STATE_HOME/umwelt/trust, see umw_state_dir()) that the sandbox
 * gets bind-mounted read-only at TLS_TRUST_INSIDE, and the environment
 * variables that point each TLS stack at them. The directory holds no key:
 * the CA's key stays in its own directory, never mounted anywhere.
 *
 *   ca-bundle.crt  the host's roots, then the umwelt CA: for the variables
 *                  that replace a program's trust store (OpenSSL's
 *                  SSL_CERT_FILE, curl, Python requests and pip, git)
 *   umwelt-ca.crt  the umwelt CA alone: NODE_EXTRA_CA_CERTS adds to Node's
 *                  built-in roots rather than replacing them */
#ifndef UMW_NETNS_TLS_TRUST_H
#define UMW_NETNS_TLS_TRUST_H

#include "netns/tls_paths.h"

#include <stddef.h>

#include <openssl/x509.h>

struct tls_ca;
struct umw_error;

/* Writes both files into dir (made as tls_trust_dir_open() does), each
 * replaced atomically and only when its content changed, so running
 * sandboxes see the old file or the new one. roots NULL: TLS_TRUST_ROOTS;
 * it must hold at least one PEM certificate. ca NULL (no usable CA, and no
 * rule that needs one): the host's roots alone, and an empty CA file. */
int tls_trust_write(const struct tls_ca *ca, const char *roots, const char *dir,
                    struct umw_error **err);
/* The same from the CA's certificate alone (the signer's hello). */
int tls_trust_write_cert(X509 *ca, const char *roots, const char *dir, struct umw_error **err);

#endif
