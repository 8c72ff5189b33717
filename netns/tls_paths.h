/* Where the umwelt CA and a sandbox's trust files live, and the variables
 * that point each TLS stack inside a sandbox at them. Free of OpenSSL, for
 * umwelt-run: the gateway (netns/tls_ca.h, tls_trust.h) makes the CA and
 * writes the files; the sandbox face only makes the trust directory, mounts
 * it read-only at TLS_TRUST_INSIDE and sets the variables. */
#ifndef UMW_NETNS_TLS_PATHS_H
#define UMW_NETNS_TLS_PATHS_H

#include <stdbool.h>
#include <stddef.h>

struct umw_error;

#define TLS_CA_CERT_FILE      "ca.crt" /* in the CA's directory (tls_ca.h) */
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

/* Opens dir, made 0755 when missing (its missing parents 0700): what
 * tls_trust_write() fills and a sandbox gets read-only. */
int tls_trust_dir_open(const char *dir, int *out, struct umw_error **err);

/* Whether the trust files in trust_dir already say what the gateway would
 * write: the CA as its directory holds it, and the host's roots followed by
 * it. Compared by bytes, without OpenSSL, so that a start whose rules need
 * no termination parses no certificate at all (the host's roots cost tens
 * of milliseconds), and so that umwelt-run knows whether the sandbox's
 * trust files are there before its gateway has run. */
bool tls_trust_current(const char *trust_dir);

/* "NAME=INSIDE/FILE" for each of tls_trust_vars, inside_dir NULL meaning
 * TLS_TRUST_INSIDE: a NULL-terminated array for the sandbox's environment,
 * freed with tls_trust_env_free(). */
int tls_trust_env(const char *inside_dir, char ***out, struct umw_error **err);
void tls_trust_env_free(char **env);

#endif
