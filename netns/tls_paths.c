/* Where the umwelt CA and a sandbox's trust files live, and the variables
 * that name those files inside a sandbox. Nothing here needs OpenSSL:
 * umwelt-run only makes the trust directory and mounts it, and stays free
 * of libcrypto's load time; the gateway makes the CA and writes the files
 * before it says ready. */
#include "tls_paths.h"
#include "src/common/cleanup.h"
#include "src/common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const struct tls_trust_var tls_trust_vars[] = {
    {"SSL_CERT_FILE", TLS_TRUST_BUNDLE_FILE},      {"CURL_CA_BUNDLE", TLS_TRUST_BUNDLE_FILE},
    {"REQUESTS_CA_BUNDLE", TLS_TRUST_BUNDLE_FILE}, {"GIT_SSL_CAINFO", TLS_TRUST_BUNDLE_FILE},
    {"NODE_EXTRA_CA_CERTS", TLS_TRUST_CA_FILE},
};
const size_t tls_trust_n_vars = ARRAY_SIZE(tls_trust_vars);

/* XDG: a relative path in these variables is invalid and is ignored. */
static const char *absolute_env(const char *name)
{
        const char *v = getenv(name);
        return v && v[0] == '/' ? v : NULL;
}

int tls_state_dir(const char *name, char **out, struct umw_error **err)
{
        const char *state = absolute_env("XDG_STATE_HOME");
        const char *home = absolute_env("HOME");
        int n;
        if (state)
                n = asprintf(out, "%s/umwelt/%s", state, name);
        else if (home)
                n = asprintf(out, "%s/.local/state/umwelt/%s", home, name);
        else
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                                "umwelt %s: neither XDG_STATE_HOME nor HOME is an absolute path",
                                name);
        if (n < 0) {
                *out = NULL;
                return umw_fail_sys(err, ENOMEM, "umwelt %s directory", name);
        }
        return 0;
}

int tls_state_mkdir(const char *path, struct umw_error **err)
{
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return umw_fail_sys(err, ENOMEM, "%s", path);
        for (char *p = dir + 1;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char c = *p;
                *p = '\0';
                if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                        return umw_fail_errno(err, "create directory %s", dir);
                if (c == '\0')
                        return 0;
                *p = c;
        }
}

int tls_trust_dir_open(const char *dir, int *out, struct umw_error **err)
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

/* A file mapped read-only (the host's roots are a few hundred kB: mapped,
 * not copied, since umwelt-run compares them on every start with egress). */
struct mapped {
        const char *p;
        size_t len;
};

static void unmap(struct mapped *m)
{
        if (m->p && m->len)
                munmap((void *)m->p, m->len);
        *m = (struct mapped){0};
}

/* false where it cannot be read or is empty. */
static bool map_at(const char *dir, const char *name, struct mapped *m)
{
        char path[4096];
        if (dir && snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
                return false;
        _cleanup_close_ int fd = open(dir ? path : name, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
                return false;
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED)
                return false;
        *m = (struct mapped){.p = p, .len = (size_t)st.st_size};
        return true;
}

static bool bundle_current(const struct mapped *ca, const struct mapped *own,
                           const struct mapped *roots, const struct mapped *bundle)
{
        size_t nl = roots->p[roots->len - 1] != '\n';
        return own->len == ca->len && memcmp(own->p, ca->p, ca->len) == 0 &&
               bundle->len == roots->len + nl + ca->len &&
               memcmp(bundle->p, roots->p, roots->len) == 0 &&
               (!nl || bundle->p[roots->len] == '\n') &&
               memcmp(bundle->p + roots->len + nl, ca->p, ca->len) == 0;
}

bool tls_trust_current(const char *trust_dir)
{
        _cleanup_free_ char *ca_dir = NULL;
        struct umw_error *err = NULL;
        if (tls_state_dir("ca", &ca_dir, &err) < 0) {
                umw_error_free(err);
                return false;
        }
        struct mapped ca = {0}, own = {0}, roots = {0}, bundle = {0};
        bool current = map_at(ca_dir, TLS_CA_CERT_FILE, &ca) &&
                       map_at(trust_dir, TLS_TRUST_CA_FILE, &own) &&
                       map_at(NULL, TLS_TRUST_ROOTS, &roots) &&
                       map_at(trust_dir, TLS_TRUST_BUNDLE_FILE, &bundle) &&
                       bundle_current(&ca, &own, &roots, &bundle);
        unmap(&ca);
        unmap(&own);
        unmap(&roots);
        unmap(&bundle);
        return current;
}
