/* The building blocks of the certificates the umwelt CA makes, its own and
 * the gateway's leaves: EC P-256 keys (what curl, Node, Python, git and
 * every TLS 1.2 client accept), X.509 v3 with a random 126-bit serial,
 * ECDSA with SHA-256. */
#ifndef UMW_NETNS_TLS_X509_H
#define UMW_NETNS_TLS_X509_H

#include <time.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

struct umw_error;

/* A new EC P-256 key. */
int tls_key_new(EVP_PKEY **out, struct umw_error **err);

/* A certificate for key's public half, not yet signed: version 3, a random
 * serial, subject O=umwelt plus CN=cn when cn is given, valid from
 * not_before to not_after. */
int tls_x509_new(EVP_PKEY *key, const char *cn, time_t not_before, time_t not_after, X509 **out,
                 struct umw_error **err);

/* Adds the extension nid written in OpenSSL's configuration syntax
 * ("critical,CA:TRUE,pathlen:0"). issuer is x itself for a self-signed
 * certificate (the authority key identifier is taken from it). */
int tls_x509_add_ext(X509 *x, X509 *issuer, int nid, const char *value, struct umw_error **err);

/* Sets the issuer's name and signs with its key. */
int tls_x509_sign(X509 *x, X509 *issuer, EVP_PKEY *issuer_key, struct umw_error **err);

#endif
