#include "tls_trust.h"
#include "tls_ca.h"
#include "tls_io.h"
#include "src/common/cleanup.h"
#include "src/common/error.h"
#include "src/common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/pem.h>

#define ROOTS_MAX (16 << 20)

const struct tls_trust_var tls_trust_vars[] = {
    {"SSL_CERT_FILE", TLS_TRUST_BUNDLE_FILE},      {"CURL_CA_BUNDLE", TLS_TRUST_BUNDLE_FILE},
    {"REQUESTS_CA_BUNDLE", TLS_TRUST_BUNDLE_FILE}, {"GIT_SSL_CAINFO", TLS_TRUST_BUNDLE_FILE},
    {"NODE_EXTRA_CA_CERTS", TLS_TRUST_CA_FILE},
};
const size_t tls_trust_n_vars = ARRAY_SIZE(tls_trust_vars);

static int ca_pem(const struct tls_ca *ca, char **out, size_t *len, struct umw_error **err)
{
        BIO *bio = BIO_new(BIO_s_mem());
        char *p = NULL;
        long n = 0;
        if (bio && PEM_write_bio_X509(bio, tls_ca_cert(ca)) == 1)
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

static int open_trust_dir(const char *dir, int *out, struct umw_error **err)
{
        _cleanup_free_ char *parent = strdup(dir);
        char *slash = parent ? strrchr(parent, '/') : NULL;
        if (!parent)
                return umw_fail_sys(err, ENOMEM, "%s", dir);
        if (slash && slash != parent) {
                *slash = '\0';
                int r = tls_state_mkdir(parent, err);
                if (r < 0)
                        return r;
        }
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return umw_fail_errno(err, "create directory %s", dir);
        *out = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        return *out < 0 ? umw_fail_errno(err, "open %s", dir) : 0;
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
        roots = roots ? roots : TLS_TRUST_ROOTS;
        _cleanup_free_ char *host = NULL, *own = NULL, *bundle = NULL;
        size_t host_len = 0, own_len = 0;
        int r = read_roots(roots, &host, &host_len, err);
        if (r == 0)
                r = ca_pem(ca, &own, &own_len, err);
        if (r < 0)
                return umw_error_prefix(err, "trust bundle");
        bool newline = host_len > 0 && host[host_len - 1] != '\n';
        int n = asprintf(&bundle, "%s%s%s", host, newline ? "\n" : "", own);
        if (n < 0) {
                bundle = NULL;
                return umw_fail_sys(err, ENOMEM, "trust bundle");
        }
        _cleanup_close_ int dfd = -1;
        r = open_trust_dir(dir, &dfd, err);
        if (r == 0)
                r = write_if_changed(dfd, dir, TLS_TRUST_CA_FILE, own, own_len, err);
        if (r == 0)
                r = write_if_changed(dfd, dir, TLS_TRUST_BUNDLE_FILE, bundle, (size_t)n, err);
        return r < 0 ? umw_error_prefix(err, "trust bundle") : 0;
}

int tls_trust_env(const char *inside_dir, char ***out, struct umw_error **err)
{
        inside_dir = inside_dir ? inside_dir : TLS_TRUST_INSIDE;
        char **env = calloc(tls_trust_n_vars + 1, sizeof(*env));
        if (!env)
                return umw_fail_sys(err, ENOMEM, "trust environment");
        for (size_t i = 0; i < tls_trust_n_vars; i++) {
                if (asprintf(&env[i], "%s=%s/%s", tls_trust_vars[i].name, inside_dir,
                             tls_trust_vars[i].file) < 0) {
                        env[i] = NULL;
                        tls_trust_env_free(env);
                        return umw_fail_sys(err, ENOMEM, "trust environment");
                }
        }
        *out = env;
        return 0;
}

void tls_trust_env_free(char **env)
{
        if (!env)
                return;
        for (char **e = env; *e; e++)
                free(*e);
        free(env);
}
