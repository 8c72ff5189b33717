#include "netns/tls_ca.h"
#include "netns/tls_io.h"
#include "netns/tls_x509.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/paths.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#define CA_FILE_MAX 65536

struct tls_ca {
        X509 *cert;
        EVP_PKEY *key;
};

/* Only the caller may own what holds the key, and nobody else may read it
 * (secret) or change it. */
static int check_private(int fd, const char *path, bool secret, struct umw_error **err)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return umw_fail_errno(err, "%s", path);
        if (st.st_uid != geteuid())
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "%s: owned by uid %u, expected %u (the user the CA belongs to)",
                                path, (unsigned)st.st_uid, (unsigned)geteuid());
        mode_t wide = st.st_mode & (secret ? 077 : 022);
        if (wide)
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "%s: mode %04o lets others %s it; expected %s", path,
                                (unsigned)(st.st_mode & 07777), secret ? "reach" : "change",
                                S_ISDIR(st.st_mode) ? "0700"
                                : secret            ? "0600"
                                                    : "0644");
        return 0;
}

static int read_ca_file(int dfd, const char *dir, const char *name, bool secret, char **buf,
                        size_t *len, struct umw_error **err)
{
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return umw_fail_sys(err, ENOMEM, "%s", dir);
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return umw_fail_errno(err, "umwelt CA: open %s", path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return umw_fail_errno(err, "umwelt CA: %s", path);
        if (!S_ISREG(st.st_mode))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "umwelt CA: %s: expected a regular file", path);
        int r = check_private(fd, path, secret, err);
        if (r < 0)
                return umw_error_prefix(err, "umwelt CA");
        return umw_read_fd(fd, path, CA_FILE_MAX, buf, len, err);
}

int tls_state_write(int dfd, const char *dir, const char *name, const void *buf, size_t len,
                    mode_t mode, bool replace, struct umw_error **err)
{
        char tmp[64];
        snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long)getpid());
        if (unlinkat(dfd, tmp, 0) < 0 && errno != ENOENT)
                return umw_fail_errno(err, "remove %s/%s", dir, tmp);
        _cleanup_close_ int fd =
            openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return umw_fail_errno(err, "create %s/%s", dir, tmp);
        int r = umw_write_all(fd, buf, len);
        if (r == 0 && (fchmod(fd, mode) < 0 || fsync(fd) < 0))
                r = -errno;
        bool lost = false;
        if (r == 0 && renameat2(dfd, tmp, dfd, name, replace ? 0 : RENAME_NOREPLACE) < 0) {
                lost = errno == EEXIST;
                r = lost ? 0 : -errno;
        }
        if (r < 0 || lost)
                unlinkat(dfd, tmp, 0);
        if (r < 0)
                return umw_fail_sys(err, -r, "write %s/%s", dir, name);
        return fsync(dfd) < 0 ? umw_fail_errno(err, "sync %s", dir) : 0;
}

/* The PEM text an encoder put in bio, as a new file name in dfd. */
static int save_pem(int dfd, const char *dir, const char *name, mode_t mode, BIO *bio,
                    struct umw_error **err)
{
        char *p = NULL;
        long n = BIO_get_mem_data(bio, &p);
        if (n <= 0)
                return tls_fail(err, "umwelt CA: PEM encoding of %s", name);
        return tls_state_write(dfd, dir, name, p, (size_t)n, mode, false, err);
}

static int make_key(int dfd, const char *dir, struct umw_error **err)
{
        EVP_PKEY *key = NULL;
        int r = tls_key_new(&key, err);
        if (r < 0)
                return r;
        BIO *bio = BIO_new(BIO_s_secmem());
        if (!bio || PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) != 1)
                r = tls_fail(err, "umwelt CA: encode the key");
        else
                r = save_pem(dfd, dir, TLS_CA_KEY_FILE, 0600, bio, err);
        BIO_free(bio);
        EVP_PKEY_free(key);
        return r;
}

static int ca_extensions(X509 *x, struct umw_error **err)
{
        static const struct {
                int nid;
                const char *value;
        } exts[] = {
            {NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
            {NID_key_usage, "critical,keyCertSign,cRLSign"},
            {NID_subject_key_identifier, "hash"},
            {NID_authority_key_identifier, "keyid:always"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(exts); i++) {
                int r = tls_x509_add_ext(x, x, exts[i].nid, exts[i].value, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The CA's extensions, its self-signature, then the certificate on disk. */
static int sign_and_save(int dfd, const char *dir, X509 *x, EVP_PKEY *key, struct umw_error **err)
{
        int r;
        if ((r = ca_extensions(x, err)) < 0 || (r = tls_x509_sign(x, x, key, err)) < 0)
                return r;
        BIO *bio = BIO_new(BIO_s_mem());
        if (!bio || PEM_write_bio_X509(bio, x) != 1)
                r = tls_fail(err, "umwelt CA: encode the certificate");
        else
                r = save_pem(dfd, dir, TLS_CA_CERT_FILE, 0644, bio, err);
        BIO_free(bio);
        return r;
}

static int make_cert(int dfd, const char *dir, EVP_PKEY *key, struct umw_error **err)
{
        char host[HOST_NAME_MAX + 1] = "localhost", cn[HOST_NAME_MAX + 32];
        if (gethostname(host, sizeof(host)) < 0)
                return umw_fail_errno(err, "umwelt CA: host name");
        host[HOST_NAME_MAX] = '\0';
        /* Distinguishes one machine's CA from another's in a trust store;
         * the CN has room for 64 characters. */
        snprintf(cn, 64, "umwelt sandbox CA (%s)", host);
        time_t now = time(NULL);
        X509 *x = NULL;
        int r = tls_x509_new(key, cn, now - 3600, now + (time_t)TLS_CA_DAYS * 86400, &x, err);
        if (r < 0)
                return r;
        r = sign_and_save(dfd, dir, x, key, err);
        X509_free(x);
        return r;
}

static int load_key(int dfd, const char *dir, EVP_PKEY **out, struct umw_error **err)
{
        char *pem = NULL;
        size_t len = 0;
        int r = read_ca_file(dfd, dir, TLS_CA_KEY_FILE, true, &pem, &len, err);
        if (r < 0)
                return r;
        BIO *bio = BIO_new_mem_buf(pem, (int)len);
        *out = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
        BIO_free(bio);
        OPENSSL_cleanse(pem, len);
        free(pem);
        return *out
                   ? 0
                   : tls_fail(err, "umwelt CA: %s/%s: not a PEM private key", dir, TLS_CA_KEY_FILE);
}

static int load_cert(int dfd, const char *dir, X509 **out, struct umw_error **err)
{
        _cleanup_free_ char *pem = NULL;
        size_t len = 0;
        int r = read_ca_file(dfd, dir, TLS_CA_CERT_FILE, false, &pem, &len, err);
        if (r < 0)
                return r;
        BIO *bio = BIO_new_mem_buf(pem, (int)len);
        *out = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
        BIO_free(bio);
        return *out ? 0
                    : tls_fail(err, "umwelt CA: %s/%s: not a PEM certificate", dir,
                               TLS_CA_CERT_FILE);
}

/* A CA that cannot sign leaves a client would accept is refused here, where
 * the message can say which file, rather than as a failed handshake later. */
static int check_ca(const struct tls_ca *ca, const char *dir, struct umw_error **err)
{
        if (X509_check_private_key(ca->cert, ca->key) != 1)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "umwelt CA: %s/%s does not belong to the key %s/%s", dir,
                                TLS_CA_CERT_FILE, dir, TLS_CA_KEY_FILE);
        if (X509_check_ca(ca->cert) != 1)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "umwelt CA: %s/%s is not a CA certificate", dir, TLS_CA_CERT_FILE);
        /* A day of margin: leaves must not outlive their issuer. */
        time_t tomorrow = time(NULL) + 86400;
        if (X509_cmp_time(X509_get0_notAfter(ca->cert), &tomorrow) <= 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "umwelt CA: %s/%s has expired; remove %s to make a new CA", dir,
                                TLS_CA_CERT_FILE, dir);
        return 0;
}

static bool file_exists(int dfd, const char *name)
{
        struct stat st;
        return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static int open_dir(const char *dir, bool create, int *out, struct umw_error **err)
{
        if (create) {
                int r = umw_mkdir_p(dir, 0700, 0700, err);
                if (r < 0)
                        return umw_error_prefix(err, "umwelt CA");
        }
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (dfd < 0 && errno == ENOENT)
                return umw_fail(err, UMW_EXIT_CONFIG, ENOENT,
                                "umwelt CA: %s does not exist (it is made when a sandbox with an "
                                "egress path rule starts)",
                                dir);
        if (dfd < 0)
                return umw_fail_errno(err, "umwelt CA: open %s", dir);
        int r = check_private(dfd, dir, true, err);
        if (r < 0)
                return umw_error_prefix(err, "umwelt CA");
        *out = TAKE_FD(dfd);
        return 0;
}

/* The key first: the certificate is made from whichever key is on disk. */
static int create_missing(int dfd, const char *dir, struct umw_error **err)
{
        int r = 0;
        if (!file_exists(dfd, TLS_CA_KEY_FILE))
                r = make_key(dfd, dir, err);
        if (r < 0 || file_exists(dfd, TLS_CA_CERT_FILE))
                return r;
        EVP_PKEY *key = NULL;
        if ((r = load_key(dfd, dir, &key, err)) < 0)
                return r;
        r = make_cert(dfd, dir, key, err);
        EVP_PKEY_free(key);
        return r;
}

int tls_ca_open(const char *dir, bool create, struct tls_ca **out, struct umw_error **err)
{
        _cleanup_close_ int dfd = -1;
        int r = open_dir(dir, create, &dfd, err);
        if (r < 0)
                return r;
        if (create) {
                r = create_missing(dfd, dir, err);
                if (r < 0)
                        return r;
        }
        struct tls_ca *ca = calloc(1, sizeof(*ca));
        if (!ca)
                return umw_fail_sys(err, ENOMEM, "umwelt CA");
        if ((r = load_key(dfd, dir, &ca->key, err)) < 0 ||
            (r = load_cert(dfd, dir, &ca->cert, err)) < 0 || (r = check_ca(ca, dir, err)) < 0) {
                tls_ca_free(ca);
                return r;
        }
        *out = ca;
        return 0;
}

void tls_ca_free(struct tls_ca *ca)
{
        if (!ca)
                return;
        X509_free(ca->cert);
        EVP_PKEY_free(ca->key);
        free(ca);
}

X509 *tls_ca_cert(const struct tls_ca *ca)
{
        return ca->cert;
}

EVP_PKEY *tls_ca_key(const struct tls_ca *ca)
{
        return ca->key;
}
