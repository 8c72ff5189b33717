/* What a sandbox trusts where its gateway may terminate TLS: the host's
 * trusted roots plus the umwelt CA, as files in a directory of the user's
 * state ($XDG_STATE_HOME/umwelt/trust, see tls_state_dir()) that the sandbox
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

#include <stddef.h>

struct tls_ca;
struct umw_error;

#define TLS_TRUST_ROOTS       "/etc/ssl/certs/ca-certificates.crt"
#define TLS_TRUST_BUNDLE_FILE "ca-bundle.crt"
#define TLS_TRUST_CA_FILE     "umwelt-ca.crt"
#define TLS_TRUST_INSIDE      "/run/umwelt/tls"

struct tls_trust_var {
        const char *name;
        const char *file; /* TLS_TRUST_BUNDLE_FILE or TLS_TRUST_CA_FILE */
};

/* SSL_CERT_FILE, CURL_CA_BUNDLE, REQUESTS_CA_BUNDLE, GIT_SSL_CAINFO (the
 * bundle) and NODE_EXTRA_CA_CERTS (the CA alone). */
extern const struct tls_trust_var tls_trust_vars[];
extern const size_t tls_trust_n_vars;

/* Writes both files into dir (made 0755 if missing, its missing parents
 * 0700), each replaced atomically and only when its content changed, so
 * running sandboxes see the old file or the new one. roots NULL:
 * TLS_TRUST_ROOTS; it must hold at least one PEM certificate. */
int tls_trust_write(const struct tls_ca *ca, const char *roots, const char *dir,
                    struct umw_error **err);

/* "NAME=INSIDE/FILE" for each of tls_trust_vars, inside_dir NULL meaning
 * TLS_TRUST_INSIDE: a NULL-terminated array for the sandbox's environment,
 * freed with tls_trust_env_free(). */
int tls_trust_env(const char *inside_dir, char ***out, struct umw_error **err);
void tls_trust_env_free(char **env);

#endif
