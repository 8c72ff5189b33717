/* Where the umwelt CA and a sandbox's trust files live, and the variables
 * that name those files inside a sandbox. Nothing here needs OpenSSL:
 * umwelt-run only makes the trust directory and mounts it, and stays free
 * of libcrypto's load time; the gateway makes the CA and writes the files
 * before it says ready. */
#include "netns/tls_paths.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const struct tls_trust_var tls_trust_vars[] = {
    {"SSL_CERT_FILE", TLS_TRUST_BUNDLE_FILE},      {"CURL_CA_BUNDLE", TLS_TRUST_BUNDLE_FILE},
    {"REQUESTS_CA_BUNDLE", TLS_TRUST_BUNDLE_FILE}, {"GIT_SSL_CAINFO", TLS_TRUST_BUNDLE_FILE},
    {"NODE_EXTRA_CA_CERTS", TLS_TRUST_CA_FILE},
};
const size_t tls_trust_n_vars = ARRAY_SIZE(tls_trust_vars);

int tls_trust_dir_open(const char *dir, int *out, struct umw_error **err)
{
        _cleanup_free_ char *parent = strdup(dir);
        char *slash = parent ? strrchr(parent, '/') : NULL;
        if (!parent)
                return umw_fail_sys(err, ENOMEM, "%s", dir);
        if (slash && slash != parent) {
                *slash = '\0';
                int r = umw_mkdir_p(parent, 0700, 0700, err);
                if (r < 0)
                        return r;
        }
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return umw_fail_errno(err, "create directory %s", dir);
        *out = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        return *out < 0 ? umw_fail_errno(err, "open %s", dir) : 0;
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

/* A file opened for comparing, with its size; false where it cannot be
 * read or is empty. */
static bool open_sized(const char *dir, const char *name, int *fd, size_t *len)
{
        char path[4096];
        if (dir && snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
                return false;
        *fd = open(dir ? path : name, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (*fd < 0 || fstat(*fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
                return false;
        *len = (size_t)st.st_size;
        return true;
}

/* Whether len bytes of a at a_off equal those of b at b_off: read in
 * chunks (the host's roots are a few hundred kB, compared at every start
 * with egress: no mapping to fault in and tear down). */
static bool same_bytes(int a, off_t a_off, int b, off_t b_off, size_t len)
{
        char x[32768], y[32768];
        while (len > 0) {
                size_t n = len < sizeof(x) ? len : sizeof(x);
                if (pread(a, x, n, a_off) != (ssize_t)n || pread(b, y, n, b_off) != (ssize_t)n ||
                    memcmp(x, y, n) != 0)
                        return false;
                a_off += (off_t)n;
                b_off += (off_t)n;
                len -= n;
        }
        return true;
}

/* The bundle is the roots, a newline where they end without one, the CA. */
static bool bundle_current(int ca, size_t ca_len, int own, size_t own_len, int roots,
                           size_t roots_len, int bundle, size_t bundle_len)
{
        char last = 0;
        if (pread(roots, &last, 1, (off_t)roots_len - 1) != 1)
                return false;
        size_t nl = last != '\n';
        char sep = 0;
        return own_len == ca_len && same_bytes(own, 0, ca, 0, ca_len) &&
               bundle_len == roots_len + nl + ca_len &&
               same_bytes(bundle, 0, roots, 0, roots_len) &&
               (!nl || (pread(bundle, &sep, 1, (off_t)roots_len) == 1 && sep == '\n')) &&
               same_bytes(bundle, (off_t)(roots_len + nl), ca, 0, ca_len);
}

bool tls_trust_current(const char *trust_dir)
{
        _cleanup_free_ char *ca_dir = NULL;
        struct umw_error *err = NULL;
        if (umw_state_dir("ca", &ca_dir, &err) < 0) {
                umw_error_free(err);
                return false;
        }
        _cleanup_close_ int ca = -1, own = -1, roots = -1, bundle = -1;
        size_t ca_len = 0, own_len = 0, roots_len = 0, bundle_len = 0;
        return open_sized(ca_dir, TLS_CA_CERT_FILE, &ca, &ca_len) &&
               open_sized(trust_dir, TLS_TRUST_CA_FILE, &own, &own_len) &&
               open_sized(NULL, TLS_TRUST_ROOTS, &roots, &roots_len) &&
               open_sized(trust_dir, TLS_TRUST_BUNDLE_FILE, &bundle, &bundle_len) &&
               bundle_current(ca, ca_len, own, own_len, roots, roots_len, bundle, bundle_len);
}
