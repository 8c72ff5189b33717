#include "policy/grants.h"
#include "policy/paths.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A never-granted path in both spellings: as written (cleaned), so that a
 * symlink standing in its place is caught by name, and resolved, so that the
 * directory it really is is caught wherever it is reached from. */
struct never_path {
        const char *given;
        char *clean;
        char *real;
        bool exists;
        dev_t dev;
        ino_t ino;
};

struct prepared {
        char **roots;
        size_t nroots;
        struct never_path *never;
        size_t nnever;
};

static void prepared_free(struct prepared *p)
{
        for (size_t i = 0; i < p->nroots; i++)
                free(p->roots[i]);
        free(p->roots);
        for (size_t i = 0; i < p->nnever; i++) {
                free(p->never[i].clean);
                free(p->never[i].real);
        }
        free(p->never);
}

static size_t strv_len(const char *const *v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

static int check_list_path(const char *what, const char *path, struct umw_error **err)
{
        if (path[0] != '/')
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s %s: expected an absolute path",
                                what, path);
        return 0;
}

static int check_lists(const struct grant_policy *policy, struct umw_error **err)
{
        int r;
        for (size_t i = 0; policy->roots && policy->roots[i]; i++)
                if ((r = check_list_path("grant root", policy->roots[i], err)) < 0)
                        return r;
        for (size_t i = 0; policy->never && policy->never[i]; i++)
                if ((r = check_list_path("never-granted path", policy->never[i], err)) < 0)
                        return r;
        return 0;
}

/* The lists resolved, once per call, for the requests to be checked against. */
static int prepare(const struct grant_policy *policy, struct prepared *p, struct umw_error **err)
{
        size_t nroots = strv_len(policy->roots), nnever = strv_len(policy->never);
        p->roots = calloc(nroots + 1, sizeof(*p->roots));
        p->never = calloc(nnever + 1, sizeof(*p->never));
        if (!p->roots || !p->never)
                return umw_fail_sys(err, ENOMEM, "grant policy");
        for (; p->nroots < nroots; p->nroots++) {
                _cleanup_free_ char *clean = path_clean(policy->roots[p->nroots]);
                if (!clean || !(p->roots[p->nroots] = path_resolve_prefix(clean)))
                        return umw_fail_sys(err, ENOMEM, "grant policy");
        }
        for (; p->nnever < nnever; p->nnever++) {
                struct never_path *n = &p->never[p->nnever];
                n->given = policy->never[p->nnever];
                if (!(n->clean = path_clean(n->given)) ||
                    !(n->real = path_resolve_prefix(n->clean)))
                        return umw_fail_sys(err, ENOMEM, "grant policy");
                struct stat st;
                n->exists = stat(n->real, &st) == 0;
                if (n->exists) {
                        n->dev = st.st_dev;
                        n->ino = st.st_ino;
                }
        }
        return 0;
}

static int refuse(const struct grant_request *req, const char *real, size_t index, const char *rule,
                  struct grant_refusal *refusal, struct umw_error **err, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* "ORIGIN: grant PATH (resolves to REAL): WHY" */
static int refuse(const struct grant_request *req, const char *real, size_t index, const char *rule,
                  struct grant_refusal *refusal, struct umw_error **err, const char *fmt, ...)
{
        _cleanup_free_ char *why = NULL;
        va_list ap;
        va_start(ap, fmt);
        int w = vasprintf(&why, fmt, ap);
        va_end(ap);
        if (w < 0) {
                why = NULL;
                return umw_fail_sys(err, ENOMEM, "grant %s", req->path);
        }
        char resolves[PATH_MAX + 32] = "";
        if (real && strcmp(real, req->path) != 0)
                snprintf(resolves, sizeof(resolves), " (resolves to %s)", real);
        if (refusal)
                *refusal = (struct grant_refusal){index, rule};
        return umw_fail(err, UMW_EXIT_CONFIG, EACCES, "%s%sgrant %s%s: %s",
                        req->origin ? req->origin : "", req->origin ? ": " : "", req->path,
                        resolves, why);
}

/* Which never-granted path g is, lies in or contains, by name; NULL if none. */
static const struct never_path *never_by_name(const struct prepared *p, const char *path,
                                              const char **how)
{
        for (size_t i = 0; i < p->nnever; i++) {
                const struct never_path *n = &p->never[i];
                const char *names[] = {n->clean, n->real};
                for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
                        if (strcmp(path, names[k]) == 0)
                                *how = "is";
                        else if (path_within(path, names[k]))
                                *how = "lies inside";
                        else if (path_within(names[k], path))
                                *how = "contains";
                        else
                                continue;
                        return n;
                }
        }
        return NULL;
}

/* The same check by identity: path or one of its parents is a never-granted
 * file or directory reached under another name (a hard link to it, or
 * another mount of it). */
static const struct never_path *never_by_inode(const struct prepared *p, const char *path,
                                               const char **how)
{
        char at[PATH_MAX];
        snprintf(at, sizeof(at), "%s", path);
        for (*how = "is";; *how = "lies inside") {
                struct stat st;
                if (stat(at, &st) == 0) {
                        for (size_t i = 0; i < p->nnever; i++) {
                                const struct never_path *n = &p->never[i];
                                if (n->exists && n->dev == st.st_dev && n->ino == st.st_ino)
                                        return n;
                        }
                }
                char *slash = strrchr(at, '/');
                if (!slash || strcmp(at, "/") == 0)
                        return NULL;
                slash[slash == at ? 1 : 0] = '\0';
        }
}

static bool within_a_root(const struct prepared *p, const char *path)
{
        for (size_t i = 0; i < p->nroots; i++) {
                if (path_within(path, p->roots[i]))
                        return true;
        }
        return false;
}

static int parse_mode(const char *mode, enum grant_mode *out)
{
        if (!mode || strcmp(mode, "ro") == 0)
                *out = GRANT_RO;
        else if (strcmp(mode, "rw") == 0)
                *out = GRANT_RW;
        else
                return -EINVAL;
        return 0;
}

static int resolve_one(const struct prepared *p, const struct grant_request *req, size_t index,
                       const struct grant_list *done, struct grant *g,
                       struct grant_refusal *refusal, struct umw_error **err)
{
        if (parse_mode(req->mode, &g->mode) < 0)
                return refuse(req, NULL, index, "mode", refusal, err,
                              "mode \"%s\": expected \"ro\" or \"rw\"", req->mode);
        if (req->path[0] != '/')
                return refuse(req, NULL, index, "relative", refusal, err,
                              "expected an absolute path");
        g->requested = req->path;
        g->path = realpath(req->path, NULL);
        if (!g->path && errno == ENOMEM)
                return umw_fail_sys(err, ENOMEM, "grant %s", req->path);
        if (!g->path)
                return refuse(req, NULL, index, "missing", refusal, err, "%s",
                              errno == ENOENT ? "does not exist" : strerror(errno));
        struct stat st;
        if (stat(g->path, &st) < 0)
                return refuse(req, g->path, index, "missing", refusal, err, "%s", strerror(errno));
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return refuse(req, g->path, index, "type", refusal, err,
                              "neither a directory nor a regular file");
        const char *how = NULL;
        const struct never_path *n = never_by_name(p, g->path, &how);
        if (n)
                return refuse(req, g->path, index, "never-granted", refusal, err,
                              "%s never-granted %s", how, n->given);
        n = never_by_inode(p, g->path, &how);
        if (n)
                return refuse(req, g->path, index, "never-granted", refusal, err,
                              "%s never-granted %s under another name", how, n->given);
        if (!within_a_root(p, g->path))
                return refuse(req, g->path, index, "outside-roots", refusal, err,
                              "outside every grant root");
        for (size_t i = 0; i < done->len; i++) {
                if (strcmp(done->items[i].path, g->path) == 0)
                        return refuse(req, g->path, index, "duplicate", refusal, err,
                                      "same path as grant %s", done->items[i].requested);
        }
        g->is_file = S_ISREG(st.st_mode);
        g->forced_ro = g->is_file && g->mode == GRANT_RW;
        if (g->is_file)
                g->mode = GRANT_RO;
        return 0;
}

static int by_path(const void *a, const void *b)
{
        return strcmp(((const struct grant *)a)->path, ((const struct grant *)b)->path);
}

/* In path order every grant's containers come before it, the nearest last. */
static void link_parents(struct grant_list *list)
{
        for (size_t i = 0; i < list->len; i++) {
                list->items[i].parent = -1;
                for (size_t j = i; j-- > 0;) {
                        if (path_within(list->items[i].path, list->items[j].path)) {
                                list->items[i].parent = (ssize_t)j;
                                break;
                        }
                }
        }
}

/* The lists checked and prepared, then each request into list; one that
 * failed is counted in, to be freed with the list by the caller. */
static int resolve_all(const struct grant_policy *policy, struct prepared *p,
                       const struct grant_request *requests, size_t n, struct grant_list *list,
                       struct grant_refusal *refusal, struct umw_error **err)
{
        int r;
        /* No request, nothing to resolve the lists for (~70 system calls). */
        if ((r = check_lists(policy, err)) < 0 || (n > 0 && (r = prepare(policy, p, err)) < 0))
                return r;
        for (size_t i = 0; i < n; i++) {
                r = resolve_one(p, &requests[i], i, list, &list->items[list->len], refusal, err);
                list->len++;
                if (r < 0)
                        return r;
        }
        return 0;
}

int grants_resolve(const struct grant_policy *policy, const struct grant_request *requests,
                   size_t n, struct grant_list *out, struct grant_refusal *refusal,
                   struct umw_error **err)
{
        if (refusal)
                *refusal = (struct grant_refusal){0, NULL};
        struct prepared p = {0};
        struct grant_list list = {calloc(n + 1, sizeof(struct grant)), 0};
        int r = list.items ? resolve_all(policy, &p, requests, n, &list, refusal, err)
                           : umw_fail_sys(err, ENOMEM, "grants");
        prepared_free(&p);
        if (r < 0) {
                grant_list_free(&list);
                return r;
        }
        qsort(list.items, list.len, sizeof(*list.items), by_path);
        link_parents(&list);
        *out = list;
        return 0;
}

void grant_list_free(struct grant_list *list)
{
        for (size_t i = 0; i < list->len; i++)
                free(list->items[i].path);
        free(list->items);
        list->items = NULL;
        list->len = 0;
}

void grants_strv_free(char **strv)
{
        for (size_t i = 0; strv && strv[i]; i++)
                free(strv[i]);
        free(strv);
}

int grants_default_never(const char *home, const char *state_home, const char *runtime_dir,
                         char ***out, struct umw_error **err)
{
        if (!home || home[0] != '/')
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "never-granted paths: HOME: expected an absolute path");
        /* "~" is home, "@" the state directory, "%" the runtime directory,
         * which holds the relay's sockets, the session bus, agents and
         * rootless engine sockets: all of it is the host's. */
        static const char *const templates[] = {
            "~/.ssh",
            "~/.gnupg",
            "~/.aws",
            "~/.config/umwelt",
            "@/umwelt",
            "%",
            "/etc/umwelt",
            "/run/docker.sock",
            "/var/run/docker.sock",
            "/run/podman",
            "/run/containerd",
            "/run/dbus",
            /* The host's kernel interfaces: a sandbox gets its own. */
            "/proc",
            "/sys",
            "/dev",
        };
        char **v = calloc(ARRAY_SIZE(templates) + 1, sizeof(*v));
        if (!v)
                return umw_fail_sys(err, ENOMEM, "never-granted paths");
        size_t n = 0;
        for (size_t i = 0; i < ARRAY_SIZE(templates); i++) {
                const char *t = templates[i];
                int w;
                if (t[0] == '~')
                        w = asprintf(&v[n], "%s%s", home, t + 1);
                else if (t[0] == '@' && state_home && state_home[0] == '/')
                        w = asprintf(&v[n], "%s%s", state_home, t + 1);
                else if (t[0] == '@')
                        w = asprintf(&v[n], "%s/.local/state%s", home, t + 1);
                else if (t[0] == '%' && !(runtime_dir && runtime_dir[0] == '/'))
                        continue;
                else if (t[0] == '%')
                        w = asprintf(&v[n], "%s", runtime_dir);
                else
                        w = (v[n] = strdup(t)) ? 0 : -1;
                if (w < 0) {
                        v[n] = NULL;
                        grants_strv_free(v);
                        return umw_fail_sys(err, ENOMEM, "never-granted paths");
                }
                n++;
        }
        *out = v;
        return 0;
}
