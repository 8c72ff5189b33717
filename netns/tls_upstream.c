#include "netns/tls_upstream.h"
#include "netns/tls_io.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>

#include <openssl/x509v3.h>

struct tls_upstream {
        SSL_CTX *ctx;
};

static int client_ctx(struct tls_upstream *u, const char *ca_file, struct umw_error **err)
{
        u->ctx = SSL_CTX_new(TLS_client_method());
        if (!u->ctx)
                return tls_fail(err, "TLS client context");
        int r = tls_ctx_defaults(u->ctx, err);
        if (r < 0)
                return r;
        /* "": the caller loads the store (tls_upstream_new_fd()). */
        bool caller_loads = ca_file && !*ca_file;
        if (!caller_loads && (ca_file ? SSL_CTX_load_verify_locations(u->ctx, ca_file, NULL) != 1
                                      : SSL_CTX_set_default_verify_paths(u->ctx) != 1))
                return tls_fail(err, "upstream TLS: trusted certificates from %s",
                                ca_file ? ca_file : "the host's trust store");
        SSL_CTX_set_verify(u->ctx, SSL_VERIFY_PEER, NULL);
        if (SSL_CTX_set_alpn_protos(u->ctx, (const unsigned char *)TLS_ALPN_HTTP11,
                                    TLS_ALPN_HTTP11_LEN) != 0)
                return tls_fail(err, "upstream TLS: ALPN");
        return 0;
}

/* Every PEM certificate in fd's text into ctx's store. */
static int load_roots_fd(SSL_CTX *ctx, int fd, struct umw_error **err)
{
        _cleanup_free_ char *pem = NULL;
        size_t len = 0, n = 0;
        if (fd < 0)
                return umw_fail(err, UMW_EXIT_CONFIG, ENOENT,
                                "upstream TLS: the host's trust store could not be opened");
        if (lseek(fd, 0, SEEK_SET) < 0)
                return umw_fail_errno(err, "upstream TLS: the host's trust store");
        int r = umw_read_fd(fd, "the host's trust store", 16 << 20, &pem, &len, err);
        if (r < 0)
                return r;
        BIO *bio = BIO_new_mem_buf(pem, (int)len);
        X509_STORE *store = SSL_CTX_get_cert_store(ctx);
        for (X509 *x; bio && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL)); X509_free(x))
                n += X509_STORE_add_cert(store, x) == 1;
        BIO_free(bio);
        ERR_clear_error(); /* the end of the text reads as an error */
        return n ? 0 : tls_fail(err, "upstream TLS: no certificate in the host's trust store");
}

int tls_upstream_new_fd(int fd, struct tls_upstream **out, struct umw_error **err)
{
        struct tls_upstream *u = NULL;
        int r;
        if ((r = tls_upstream_new("", &u, err)) < 0 || (r = load_roots_fd(u->ctx, fd, err)) < 0) {
                tls_upstream_free(u);
                return r;
        }
        *out = u;
        return 0;
}

int tls_upstream_new(const char *ca_file, struct tls_upstream **out, struct umw_error **err)
{
        struct tls_upstream *u = calloc(1, sizeof(*u));
        if (!u)
                return umw_fail_sys(err, ENOMEM, "upstream TLS");
        int r = client_ctx(u, ca_file, err);
        if (r < 0) {
                tls_upstream_free(u);
                return r;
        }
        *out = u;
        return 0;
}

void tls_upstream_free(struct tls_upstream *u)
{
        if (!u)
                return;
        SSL_CTX_free(u->ctx);
        free(u);
}

/* The name or address the server's certificate must carry, and the SNI. */
static int expect_host(SSL *ssl, const struct egress_host *host)
{
        X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
        if (host->kind == EGRESS_HOST_ADDR)
                return X509_VERIFY_PARAM_set1_ip(param, host->addr,
                                                 host->family == AF_INET ? 4 : 16) == 1
                           ? 0
                           : -1;
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        if (SSL_set1_host(ssl, host->text) != 1 || SSL_set_tlsext_host_name(ssl, host->text) != 1)
                return -1;
        return 0;
}

int tls_upstream_connect(struct tls_upstream *u, int fd, const struct egress_host *host, SSL **out,
                         struct umw_error **err)
{
        SSL *ssl = SSL_new(u->ctx);
        if (!ssl)
                return tls_fail(err, "upstream TLS to %s", host->text);
        if (SSL_set_fd(ssl, fd) != 1 || expect_host(ssl, host) < 0) {
                SSL_free(ssl);
                return tls_fail(err, "upstream TLS to %s", host->text);
        }
        SSL_set_connect_state(ssl);
        *out = ssl;
        return 0;
}
