#include "netns/tls_leaf.h"
#include "netns/tls_ca.h"
#include "netns/tls_signer.h"
#include "netns/tls_io.h"
#include "netns/tls_x509.h"
#include "common/error.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/x509v3.h>

#define CN_MAX 64 /* ub-common-name */

struct leaf_entry {
        struct egress_host host;
        X509 *cert;
        time_t made;
        uint64_t used;
};

struct tls_term {
        SSL_CTX *ctx;
        X509 *ca_cert; /* in-process signing (tests), or */
        EVP_PKEY *ca_key;
        struct tls_signer *signer; /* the signer process: borrowed */
        EVP_PKEY *key;
        int host_idx; /* SSL ex_data: the egress_host a connection is for */
        struct leaf_entry *cache;
        size_t n, max;
        uint64_t tick;
};

static int add_san(X509 *x, const struct egress_host *host, struct umw_error **err)
{
        GENERAL_NAMES *names = sk_GENERAL_NAME_new_null();
        GENERAL_NAME *gn = GENERAL_NAME_new();
        ASN1_OCTET_STRING *value = ASN1_OCTET_STRING_new(); /* IA5STRING is the same type */
        bool ok = names && gn && value;
        if (ok && host->kind == EGRESS_HOST_NAME)
                ok = ASN1_STRING_set(value, host->text, (int)strlen(host->text)) == 1;
        else if (ok)
                ok = ASN1_OCTET_STRING_set(value, host->addr, host->family == AF_INET ? 4 : 16);
        if (ok) {
                GENERAL_NAME_set0_value(gn, host->kind == EGRESS_HOST_NAME ? GEN_DNS : GEN_IPADD,
                                        value);
                value = NULL;
                ok = sk_GENERAL_NAME_push(names, gn) > 0;
        }
        if (ok)
                gn = NULL;
        ok = ok && X509_add1_ext_i2d(x, NID_subject_alt_name, names, 0, X509V3_ADD_DEFAULT) == 1;
        ASN1_OCTET_STRING_free(value);
        GENERAL_NAME_free(gn);
        GENERAL_NAMES_free(names);
        return ok ? 0 : tls_fail(err, "leaf certificate: subjectAltName %s", host->text);
}

static int leaf_extensions(X509 *x, X509 *issuer, struct umw_error **err)
{
        static const struct {
                int nid;
                const char *value;
        } exts[] = {
            {NID_basic_constraints, "critical,CA:FALSE"},
            {NID_key_usage, "critical,digitalSignature"},
            {NID_ext_key_usage, "serverAuth"},
            {NID_subject_key_identifier, "hash"},
            {NID_authority_key_identifier, "keyid:always"},
        };
        for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
                int r = tls_x509_add_ext(x, issuer, exts[i].nid, exts[i].value, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int tls_leaf_make(X509 *ca_cert, EVP_PKEY *ca_key, EVP_PKEY *key, const struct egress_host *host,
                  time_t now, X509 **out, struct umw_error **err)
{
        /* An address goes in the iPAddress name alone: as a CN it would
         * pass a client's name check for the address's text. */
        const char *cn =
            host->kind == EGRESS_HOST_NAME && strlen(host->text) <= CN_MAX ? host->text : NULL;
        X509 *x = NULL;
        int r = tls_x509_new(key, cn, now - 60, now + TLS_LEAF_HOURS * 3600, &x, err);
        if (r < 0)
                return r;
        if ((r = add_san(x, host, err)) < 0 || (r = leaf_extensions(x, ca_cert, err)) < 0 ||
            (r = tls_x509_sign(x, ca_cert, ca_key, err)) < 0) {
                X509_free(x);
                return r;
        }
        *out = x;
        return 0;
}

static void free_host(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
        free(ptr);
}

/* The SNI a client sends is what it will check the leaf against; it must
 * name the host the leaf is for. */
static int on_servername(SSL *ssl, int *alert, void *arg)
{
        struct tls_term *t = arg;
        const struct egress_host *want = SSL_get_ex_data(ssl, t->host_idx);
        const char *sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        *alert = SSL_AD_UNRECOGNIZED_NAME;
        if (!want)
                return SSL_TLSEXT_ERR_ALERT_FATAL;
        if (!sni)
                return want->kind == EGRESS_HOST_ADDR ? SSL_TLSEXT_ERR_OK
                                                      : SSL_TLSEXT_ERR_ALERT_FATAL;
        struct egress_host got;
        struct umw_error *e = NULL;
        int r = egress_host_canon(sni, strlen(sni), &got, &e);
        umw_error_free(e);
        return r == 0 && egress_host_equal(&got, want) ? SSL_TLSEXT_ERR_OK
                                                       : SSL_TLSEXT_ERR_ALERT_FATAL;
}

static int on_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                   const unsigned char *in, unsigned int inlen, void *arg)
{
        unsigned char *chosen = NULL;
        if (SSL_select_next_proto(&chosen, outlen, (const unsigned char *)TLS_ALPN_HTTP11,
                                  TLS_ALPN_HTTP11_LEN, in, inlen) != OPENSSL_NPN_NEGOTIATED)
                return SSL_TLSEXT_ERR_NOACK;
        *out = chosen;
        return SSL_TLSEXT_ERR_OK;
}

static int server_ctx(struct tls_term *t, struct umw_error **err)
{
        t->ctx = SSL_CTX_new(TLS_server_method());
        if (!t->ctx)
                return tls_fail(err, "TLS server context");
        int r = tls_ctx_defaults(t->ctx, err);
        if (r < 0)
                return r;
        SSL_CTX_set_tlsext_servername_callback(t->ctx, on_servername);
        SSL_CTX_set_tlsext_servername_arg(t->ctx, t);
        SSL_CTX_set_alpn_select_cb(t->ctx, on_alpn, t);
        return 0;
}

static int term_alloc(size_t cache_max, struct tls_term **out, struct umw_error **err)
{
        struct tls_term *t = calloc(1, sizeof(*t));
        if (!t)
                return umw_fail_sys(err, ENOMEM, "TLS termination");
        t->max = cache_max ? cache_max : TLS_LEAF_CACHE_DEFAULT;
        t->cache = calloc(t->max, sizeof(*t->cache));
        t->host_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, free_host);
        *out = t;
        if (!t->cache || t->host_idx < 0)
                return umw_fail_sys(err, ENOMEM, "TLS termination");
        return 0;
}

static int term_finish(struct tls_term *t, struct tls_term **out, struct umw_error **err)
{
        int r;
        if ((r = tls_key_new(&t->key, err)) < 0 || (r = server_ctx(t, err)) < 0) {
                tls_term_free(t);
                return r;
        }
        *out = t;
        return 0;
}

/* Leaves signed in this process by ca, or by the signer process. */
static int term_new(const struct tls_ca *ca, struct tls_signer *signer, size_t cache_max,
                    struct tls_term **out, struct umw_error **err)
{
        struct tls_term *t = NULL;
        int r = term_alloc(cache_max, &t, err);
        if (r < 0) {
                tls_term_free(t);
                return r;
        }
        t->signer = signer;
        if (ca) {
                t->ca_cert = tls_ca_cert(ca);
                t->ca_key = tls_ca_key(ca);
                X509_up_ref(t->ca_cert);
                EVP_PKEY_up_ref(t->ca_key);
        }
        return term_finish(t, out, err);
}

int tls_term_new(const struct tls_ca *ca, size_t cache_max, struct tls_term **out,
                 struct umw_error **err)
{
        return term_new(ca, NULL, cache_max, out, err);
}

int tls_term_new_signer(struct tls_signer *signer, size_t cache_max, struct tls_term **out,
                        struct umw_error **err)
{
        return term_new(NULL, signer, cache_max, out, err);
}

void tls_term_free(struct tls_term *t)
{
        if (!t)
                return;
        for (size_t i = 0; t->cache && i < t->n; i++)
                X509_free(t->cache[i].cert);
        free(t->cache);
        SSL_CTX_free(t->ctx);
        EVP_PKEY_free(t->key);
        EVP_PKEY_free(t->ca_key);
        X509_free(t->ca_cert);
        free(t);
}

/* The entry for host, or the one to replace: a free slot, else the least
 * recently used. */
static struct leaf_entry *cache_slot(struct tls_term *t, const struct egress_host *host)
{
        struct leaf_entry *oldest = NULL;
        for (size_t i = 0; i < t->n; i++) {
                struct leaf_entry *e = &t->cache[i];
                if (egress_host_equal(&e->host, host))
                        return e;
                if (!oldest || e->used < oldest->used)
                        oldest = e;
        }
        return t->n < t->max ? &t->cache[t->n] : oldest;
}

int tls_term_leaf(struct tls_term *t, const struct egress_host *host, X509 **out,
                  struct umw_error **err)
{
        time_t now = time(NULL);
        struct leaf_entry *e = cache_slot(t, host);
        bool fresh = e->cert && egress_host_equal(&e->host, host) &&
                     now - e->made < TLS_LEAF_HOURS * 3600 / 2 && now >= e->made;
        if (!fresh) {
                X509 *leaf = NULL;
                int r = t->signer
                            ? tls_signer_leaf(t->signer, t->key, host, &leaf, err)
                            : tls_leaf_make(t->ca_cert, t->ca_key, t->key, host, now, &leaf, err);
                if (r < 0)
                        return r;
                if (e == &t->cache[t->n])
                        t->n++;
                X509_free(e->cert);
                *e = (struct leaf_entry){.host = *host, .cert = leaf, .made = now};
        }
        e->used = ++t->tick;
        *out = e->cert;
        return 0;
}

/* The socket read through a buffer that starts with prefix: what the
 * gateway took off the socket to check the ClientHello. */
static BIO *prefixed_socket(int fd, const void *prefix, size_t prefix_len)
{
        BIO *sock = BIO_new_socket(fd, BIO_NOCLOSE);
        if (!sock || prefix_len == 0)
                return sock;
        BIO *buf = BIO_new(BIO_f_buffer());
        if (!buf || BIO_set_buffer_read_data(buf, (void *)prefix, (long)prefix_len) != 1) {
                BIO_free(buf);
                BIO_free(sock);
                return NULL;
        }
        return BIO_push(buf, sock);
}

static int set_expected_host(struct tls_term *t, SSL *ssl, const struct egress_host *host)
{
        struct egress_host *copy = malloc(sizeof(*copy));
        if (!copy)
                return -ENOMEM;
        *copy = *host;
        if (SSL_set_ex_data(ssl, t->host_idx, copy) != 1) {
                free(copy);
                return -ENOMEM;
        }
        return 0;
}

int tls_term_accept(struct tls_term *t, int fd, const struct egress_host *host, const void *prefix,
                    size_t prefix_len, SSL **out, struct umw_error **err)
{
        X509 *leaf = NULL;
        int r = tls_term_leaf(t, host, &leaf, err);
        if (r < 0)
                return r;
        SSL *ssl = SSL_new(t->ctx);
        if (!ssl)
                return tls_fail(err, "TLS server for %s", host->text);
        if (set_expected_host(t, ssl, host) < 0) {
                SSL_free(ssl);
                return umw_fail_sys(err, ENOMEM, "TLS server for %s", host->text);
        }
        BIO *rbio = prefixed_socket(fd, prefix, prefix_len);
        BIO *wbio = rbio ? BIO_new_socket(fd, BIO_NOCLOSE) : NULL;
        if (!wbio) {
                BIO_free_all(rbio);
                SSL_free(ssl);
                return tls_fail(err, "TLS server for %s: socket", host->text);
        }
        SSL_set_bio(ssl, rbio, wbio);
        if (SSL_use_certificate(ssl, leaf) != 1 || SSL_use_PrivateKey(ssl, t->key) != 1) {
                SSL_free(ssl);
                return tls_fail(err, "TLS server for %s: leaf certificate", host->text);
        }
        SSL_set_accept_state(ssl);
        *out = ssl;
        return 0;
}
