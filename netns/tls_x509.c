#include "netns/tls_x509.h"
#include "netns/tls_io.h"
#include "common/error.h"

#include <errno.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

int tls_key_new(EVP_PKEY **out, struct umw_error **err)
{
        *out = EVP_EC_gen("P-256");
        return *out ? 0 : tls_fail(err, "make an EC P-256 key");
}

/* RFC 5280 wants a positive serial of at most 20 bytes; 16 random ones with
 * the top bit cleared are unique enough that no two leaves ever share one. */
static int set_random_serial(X509 *x, struct umw_error **err)
{
        unsigned char raw[16];
        if (RAND_bytes(raw, sizeof(raw)) != 1)
                return tls_fail(err, "random serial number");
        raw[0] &= 0x7f;
        raw[0] |= 0x40; /* never a leading zero byte: always 16 bytes long */
        BIGNUM *bn = BN_bin2bn(raw, sizeof(raw), NULL);
        int ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
        BN_free(bn);
        return ok ? 0 : tls_fail(err, "serial number");
}

static int set_subject(X509 *x, const char *cn, struct umw_error **err)
{
        X509_NAME *name = X509_get_subject_name(x);
        if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"umwelt",
                                        -1, -1, 0))
                return tls_fail(err, "subject name");
        if (cn && !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn,
                                              -1, -1, 0))
                return tls_fail(err, "subject common name");
        return 0;
}

int tls_x509_new(EVP_PKEY *key, const char *cn, time_t not_before, time_t not_after, X509 **out,
                 struct umw_error **err)
{
        X509 *x = X509_new();
        if (!x)
                return tls_fail(err, "new certificate");
        int r;
        if (X509_set_version(x, X509_VERSION_3) != 1 || X509_set_pubkey(x, key) != 1 ||
            !ASN1_TIME_set(X509_getm_notBefore(x), not_before) ||
            !ASN1_TIME_set(X509_getm_notAfter(x), not_after))
                r = tls_fail(err, "certificate fields");
        else if ((r = set_random_serial(x, err)) == 0)
                r = set_subject(x, cn, err);
        if (r < 0) {
                X509_free(x);
                return r;
        }
        *out = x;
        return 0;
}

int tls_x509_add_ext(X509 *x, X509 *issuer, int nid, const char *value, struct umw_error **err)
{
        X509V3_CTX ctx;
        X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
        X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
        int ok = ext && X509_add_ext(x, ext, -1) == 1;
        X509_EXTENSION_free(ext);
        return ok ? 0 : tls_fail(err, "certificate extension %s = %s", OBJ_nid2sn(nid), value);
}

int tls_x509_sign(X509 *x, X509 *issuer, EVP_PKEY *issuer_key, struct umw_error **err)
{
        if (X509_set_issuer_name(x, X509_get_subject_name(issuer)) != 1)
                return tls_fail(err, "issuer name");
        if (X509_sign(x, issuer_key, EVP_sha256()) <= 0)
                return tls_fail(err, "sign the certificate");
        return 0;
}
