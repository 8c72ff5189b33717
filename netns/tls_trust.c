#include "netns/tls_trust.h"
#include "netns/tls_ca.h"
#include "netns/tls_io.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/pem.h>

#define ROOTS_MAX (16 << 20)

static int ca_pem(X509 *ca, char **out, size_t *len, struct umw_error **err)
{
        if (!ca) {
                *len = 0;
                *out = strdup("");
                return *out ? 0 : umw_fail_sys(err, ENOMEM, "umwelt CA");
        }
        BIO *bio = BIO_new(BIO_s_mem());
        char *p = NULL;
        long n = 0;
        if (bio && PEM_write_bio_X509(bio, ca) == 1)
                n = BIO_get_mem_data(bio, &p);
        *out = n > 0 ? strndup(p, (size_t)n) : NULL;
        *len = (size_t)n;
        BIO_free(bio);
        return *out ? 0 : tls_fail(err, "umwelt CA: PEM encoding");
}

/* Writing only what changed keeps a sandbox's start from rewriting a file
 * every other sandbox of the user has mounted. */
static int write_if_changed(int dfd, const char *dir, const char *name, const char *buf, size_t len,
                            struct umw_error **err)
{
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0) {
                _cleanup_free_ char *old = malloc(len + 1);
                if (!old)
                        return umw_fail_sys(err, ENOMEM, "%s/%s", dir, name);
                ssize_t n = umw_read_all(fd, old, len + 1);
                if (n == (ssize_t)len && memcmp(old, buf, len) == 0)
                        return 0;
        }
        return tls_state_write(dfd, dir, name, buf, len, 0644, true, err);
}

static int read_roots(const char *roots, char **buf, size_t *len, struct umw_error **err)
{
        int r = umw_read_file_at(AT_FDCWD, roots, ROOTS_MAX, buf, len, err);
        if (r < 0)
                return r;
        if (!strstr(*buf, "-----BEGIN CERTIFICATE-----"))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: expected PEM certificates (the host's trusted roots)", roots);
        return 0;
}

int tls_trust_write(const struct tls_ca *ca, const char *roots, const char *dir,
                    struct umw_error **err)
{
        return tls_trust_write_cert(ca ? tls_ca_cert(ca) : NULL, roots, dir, err);
}

int tls_trust_write_cert(X509 *ca, const char *roots, const char *dir, struct umw_error **err)
{
        roots = roots ? roots : TLS_TRUST_ROOTS;
        _cleanup_free_ char *host = NULL, *own = NULL, *bundle = NULL;
        size_t host_len = 0, own_len = 0;
        int r;
        if ((r = read_roots(roots, &host, &host_len, err)) < 0 ||
            (r = ca_pem(ca, &own, &own_len, err)) < 0)
                return umw_error_prefix(err, "trust bundle");
        bool newline = host_len > 0 && host[host_len - 1] != '\n';
        int n = asprintf(&bundle, "%s%s%s", host, newline ? "\n" : "", own);
        if (n < 0) {
                bundle = NULL;
                return umw_fail_sys(err, ENOMEM, "trust bundle");
        }
        _cleanup_close_ int dfd = -1;
        if ((r = tls_trust_dir_open(dir, &dfd, err)) < 0 ||
            (r = write_if_changed(dfd, dir, TLS_TRUST_CA_FILE, own, own_len, err)) < 0 ||
            (r = write_if_changed(dfd, dir, TLS_TRUST_BUNDLE_FILE, bundle, (size_t)n, err)) < 0)
                return umw_error_prefix(err, "trust bundle");
        return 0;
}
