/* The three policy layers: the host floor, the user's config and the
 * project's .umwelt.toml, read strictly and each checked against the one
 * above it.
 *
 * The built-in floor, used when the floor file does not exist, and for each
 * key a floor file leaves out:
 *   grant_roots        = [HOME, "/srv", "/opt", "/mnt", "/media"]
 *                        (where people keep data and projects; never the
 *                        system's own directories)
 *   never_grant        = [] (grants_default_never() always applies)
 *   presets            = every preset of preset_names()
 *   egress             = false
 *   limits_best_effort = false
 *   ingress            = true (projects may publish ports on the host's
 *                        loopback, 127.0.0.1 and ::1 only; false forbids it)
 *
 * The floor is read only when it and its directory are owned by root and
 * writable by nobody else (a sticky directory aside), and not through a
 * symlink. A user's grant roots must exist and are kept resolved. With no
 * preset chosen, "dev" applies, or the floor's first preset where the floor
 * does not allow "dev".
 *
 * A project may write an [egress] table (enabled, allow, deny): enabling it
 * where the floor forbids egress is refused here; each rule is checked with
 * egress_rule_parse() and kept as written.
 *
 * A project may write an [ingress] table with ports = [N, ...]: at most
 * POLICY_INGRESS_PORTS_MAX distinct integers 1..65535, refused where the
 * floor says ingress = false.
 *
 * A [workspace] table's mode is "review" (the default: the agent's writes
 * go to a layer of their own, delivered after review) or "direct" (in
 * place). The user's config chooses; a project may keep review but not
 * widen it to direct, which only the user's own config (or command line)
 * may do. */
#include "policy/config.h"
#include "policy/paths.h"
#include "policy/egress_rules.h"
#include "policy/presets.h"
#include "policy/toml.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FLOOR_PATH     "/etc/umwelt/floor.toml"
#define USER_PATH      "/.config/umwelt/config.toml" /* under home */
#define PROJECT_PATH   ".umwelt.toml"
#define DEFAULT_PRESET "dev"

static const char *const default_roots[] = {"/srv", "/opt", "/mnt", "/media", NULL};

/* What the fields of a policy_config point into beyond their own copies. */
struct config_owned {
        struct toml_value *project; /* the grants' path and mode strings */
        char **origins;             /* one "FILE:LINE:COL" per grant */
};

/* What loading needs besides the result. */
struct loader {
        struct policy_config *c;
        const char *home;
        const char *floor_file; /* the floor's path, also when absent */
        char *floor_name;       /* how messages name the floor */
        char **floor_real;      /* the floor's roots, resolved */
        const char *user_file;
        const char *project_file;
        const struct policy_paths *paths;
};

static size_t strv_len(char *const *v)
{
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

/* Appends a copy of s to the NULL-terminated *v. */
static int strv_add(char ***v, const char *s, struct umw_error **err)
{
        size_t n = strv_len(*v);
        char **nv = realloc(*v, (n + 2) * sizeof(*nv));
        if (!nv)
                return umw_fail_sys(err, ENOMEM, "policy");
        *v = nv;
        nv[n] = strdup(s);
        nv[n + 1] = NULL;
        return nv[n] ? 0 : umw_fail_sys(err, ENOMEM, "policy");
}

/* An empty NULL-terminated vector: a present but empty list. */
static int strv_empty(char ***v, struct umw_error **err)
{
        *v = calloc(1, sizeof(**v));
        return *v ? 0 : umw_fail_sys(err, ENOMEM, "policy");
}

/* "a, b, c" of v, into buf (cut short when it does not fit). */
static const char *strv_join(const char *const *v, char *buf, size_t size)
{
        size_t o = 0;
        buf[0] = '\0';
        for (size_t i = 0; v && v[i] && o < size; i++)
                o += snprintf(buf + o, size - o, "%s%s", i ? ", " : "", v[i]);
        return v && v[0] ? buf : "none";
}

/* s for a one-line message: control bytes as '?', long strings cut. */
static const char *printable(const char *s, char buf[static 80])
{
        size_t i = 0;
        for (; s[i] && i < 76; i++)
                buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
        if (s[i])
                buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
        buf[i] = '\0';
        return buf;
}

static bool has_dotdot(const char *path)
{
        for (const char *p = path; (p = strstr(p, "..")); p += 2)
                if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
                        return true;
        return false;
}

/* Opens name in dirfd for reading; 0 with *fd = -1 when it does not exist.
 * path names it in messages. */
static int layer_open(int dirfd, const char *name, const char *path, int flags, int *fd,
                      struct umw_error **err)
{
        /* O_NONBLOCK: a FIFO planted under the name must not hang the open. */
        *fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | flags);
        if (*fd >= 0 || errno == ENOENT)
                return 0;
        if (errno == ELOOP && (flags & O_NOFOLLOW))
                return umw_fail(err, UMW_EXIT_CONFIG, ELOOP,
                                "%s: is a symbolic link: the floor must be a root-owned file",
                                path);
        return umw_fail_errno(err, "open %s", path);
}

/* The floor decides what everyone else may do, so only root may have
 * written it, and only root may swap or delete it (without it, the wider
 * built-in floor holds): the file and the directory it is opened in are
 * checked on the fds used. A sticky directory lets others remove only their
 * own entries. */
static int floor_check_owner(int fd, const char *path, bool is_dir, struct umw_error **err)
{
        const char *what = is_dir ? "the floor's directory is " : "";
        struct stat st;
        if (fstat(fd, &st) < 0)
                return umw_fail_errno(err, "stat %s", path);
        if (st.st_uid != 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "%s: %sowned by uid %u, not root: refusing the floor", path, what,
                                (unsigned)st.st_uid);
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(is_dir && (st.st_mode & S_ISVTX)))
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "%s: %swritable by %s (mode %04o): refusing the floor", path, what,
                                st.st_mode & S_IWOTH ? "others" : "its group",
                                (unsigned)(st.st_mode & 07777));
        return 0;
}

/* Opens the floor without a window between check and use: its directory,
 * then the file in it, each checked on its fd. A missing directory or file
 * is an absent floor (*fd = -1). */
static int floor_open(const char *path, int *fd, struct umw_error **err)
{
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *dir =
            slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
        if (!dir)
                return umw_fail_sys(err, ENOMEM, "policy");
        *fd = -1;
        _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 && errno == ENOENT)
                return 0;
        if (dfd < 0)
                return umw_fail_errno(err, "open %s", dir);
        int r;
        if ((r = floor_check_owner(dfd, dir, true, err)) < 0 ||
            (r = layer_open(dfd, slash ? slash + 1 : path, path, O_NOFOLLOW, fd, err)) < 0)
                return r;
        return *fd >= 0 ? floor_check_owner(*fd, path, false, err) : 0;
}

/* The parsed file, or NULL when it does not exist. */
static int layer_read(const char *path, bool is_floor, struct toml_value **out,
                      struct umw_error **err)
{
        _cleanup_close_ int fd = -1;
        *out = NULL;
        int r =
            is_floor ? floor_open(path, &fd, err) : layer_open(AT_FDCWD, path, path, 0, &fd, err);
        if (r < 0 || fd < 0)
                return r;
        return toml_parse_fd(fd, path, out, err);
}

/* The array of strings under key: 0 when absent, 1 with *out set. */
static int get_strings(const struct toml_value *t, const char *key, const char *file,
                       const struct toml_value **out, struct umw_error **err)
{
        int r = toml_get(t, key, TOML_ARRAY, file, out, err);
        if (r <= 0)
                return r;
        for (size_t i = 0; i < (*out)->array.n; i++) {
                const struct toml_value *v = (*out)->array.items[i];
                if (v->kind != TOML_STRING)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "%s:%u:%u: '%s': expected an array of strings, found %s",
                                        file, v->line, v->column, key, toml_kind_name(v->kind));
        }
        return 1;
}

static int check_absolute(const struct toml_value *v, const char *key, const char *file, bool roots,
                          struct umw_error **err)
{
        char buf[80];
        if (v->string[0] != '/')
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: '%s': expected an absolute path, found '%s'", file,
                                v->line, v->column, key, printable(v->string, buf));
        /* ".." after a name that does not exist yet means nothing until it
         * does; a root has to say where it is. */
        if (roots && has_dotdot(v->string))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: '%s': expected a path without '..', found '%s'", file,
                                v->line, v->column, key, printable(v->string, buf));
        return 0;
}

/* The array of absolute paths under key, appended to *v. */
static int get_paths(const struct toml_value *t, const char *key, const char *file, bool roots,
                     char ***v, struct umw_error **err)
{
        const struct toml_value *a = NULL;
        int r = get_strings(t, key, file, &a, err);
        if (r <= 0)
                return r;
        if (!*v && (r = strv_empty(v, err)) < 0)
                return r;
        for (size_t i = 0; i < a->array.n; i++) {
                if ((r = check_absolute(a->array.items[i], key, file, roots, err)) < 0 ||
                    (r = strv_add(v, a->array.items[i]->string, err)) < 0)
                        return r;
        }
        return 1;
}

static int check_preset_name(const struct toml_value *v, const char *key, const char *file,
                             struct umw_error **err)
{
        char buf[80], list[200];
        if (umw_strv_contains(preset_names(), v->string))
                return 0;
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                        "%s:%u:%u: '%s': expected one of %s, found '%s'", file, v->line, v->column,
                        key, strv_join(preset_names(), list, sizeof(list)),
                        printable(v->string, buf));
}

static int floor_presets(const struct toml_value *t, const char *file, char ***out,
                         struct umw_error **err)
{
        const struct toml_value *a = NULL;
        int r = get_strings(t, "presets", file, &a, err);
        if (r < 0)
                return r;
        if (r == 0) {
                for (const char *const *n = preset_names(); *n; n++)
                        if ((r = strv_add(out, *n, err)) < 0)
                                return r;
                return 0;
        }
        if (a->array.n == 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: 'presets': expected at least one preset (with none, "
                                "no sandbox could start)",
                                file, a->line, a->column);
        for (size_t i = 0; i < a->array.n; i++)
                if ((r = check_preset_name(a->array.items[i], "presets", file, err)) < 0 ||
                    (r = strv_add(out, a->array.items[i]->string, err)) < 0)
                        return r;
        return 0;
}

static int floor_roots_resolve(struct loader *l, struct umw_error **err)
{
        int r = strv_empty(&l->floor_real, err);
        if (r < 0)
                return r;
        for (size_t i = 0; l->c->grant_roots[i]; i++) {
                /* A root that does not exist yet still has a place. */
                _cleanup_free_ char *clean = path_clean(l->c->grant_roots[i]);
                _cleanup_free_ char *real = clean ? path_resolve_prefix(clean) : NULL;
                if (!real)
                        return umw_fail_sys(err, ENOMEM, "policy");
                if ((r = strv_add(&l->floor_real, real, err)) < 0)
                        return r;
        }
        return 0;
}

static int load_floor(struct loader *l, const struct policy_paths *paths, struct umw_error **err)
{
        static const char *const keys[] = {"grant_roots",        "never_grant", "presets", "egress",
                                           "limits_best_effort", "ingress",     NULL};
        struct policy_config *c = l->c;
        const char *file = l->floor_file;
        _cleanup_toml_ struct toml_value *t = NULL;
        /* Egress stays off until a project enables it, and then goes only
         * through the gateway: the built-in floor lets it (a user without
         * root has no floor to write), an admin's floor may forbid it. */
        c->egress_allowed = true;
        c->ingress_allowed = true;
        int r = layer_read(file, true, &t, err);
        if (r < 0)
                return r;
        if (t)
                l->floor_name = strdup(file);
        else if (asprintf(&l->floor_name, "the built-in floor (%s is absent)", file) < 0)
                l->floor_name = NULL;
        if (!l->floor_name)
                return umw_fail_sys(err, ENOMEM, "policy");

        const char *state = paths->state_home ? paths->state_home : getenv("XDG_STATE_HOME");
        const char *run = paths->runtime_dir ? paths->runtime_dir : getenv("XDG_RUNTIME_DIR");
        if ((r = grants_default_never(l->home, state, run, &c->never, err)) < 0)
                return r;
        if (t && (r = toml_check_keys(t, keys, file, err)) < 0)
                return r;
        if ((r = get_paths(t, "grant_roots", file, true, &c->grant_roots, err)) < 0 ||
            (r = get_paths(t, "never_grant", file, false, &c->never, err)) < 0 ||
            (r = floor_presets(t, file, &c->presets_allowed, err)) < 0 ||
            (r = toml_get_bool(t, "egress", file, &c->egress_allowed, err)) < 0 ||
            (r = toml_get_bool(t, "limits_best_effort", file, &c->limits_best_effort, err)) < 0 ||
            (r = toml_get_bool(t, "ingress", file, &c->ingress_allowed, err)) < 0)
                return r;
        if (!c->grant_roots) {
                if ((r = strv_add(&c->grant_roots, l->home, err)) < 0)
                        return r;
                for (size_t i = 0; default_roots[i]; i++)
                        if ((r = strv_add(&c->grant_roots, default_roots[i], err)) < 0)
                                return r;
        }
        return 0;
}

/* Checks a preset name given by a layer below the floor. */
static int check_preset(const struct loader *l, const struct toml_value *v, const char *file,
                        struct umw_error **err)
{
        char buf[80], list[200];
        int r = check_preset_name(v, "preset", file, err);
        if (r < 0 || umw_strv_contains((const char *const *)l->c->presets_allowed, v->string))
                return r;
        return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                        "%s:%u:%u: preset '%s' is not allowed by %s (allowed: %s)", file, v->line,
                        v->column, printable(v->string, buf), l->floor_name,
                        strv_join((const char *const *)l->c->presets_allowed, list, sizeof(list)));
}

static int set_preset(const struct loader *l, const struct toml_value *t, const char *file,
                      struct umw_error **err)
{
        const struct toml_value *v = NULL;
        int r = toml_get(t, "preset", TOML_STRING, file, &v, err);
        if (r <= 0)
                return r;
        if ((r = check_preset(l, v, file, err)) < 0)
                return r;
        free(l->c->preset);
        l->c->preset = strdup(v->string);
        return l->c->preset ? 0 : umw_fail_sys(err, ENOMEM, "policy");
}

static int strings_copy(const struct toml_value *t, const char *key, const char *file, char ***out,
                        struct umw_error **err)
{
        const struct toml_value *a = NULL;
        int r = get_strings(t, key, file, &a, err);
        if (r <= 0)
                return r;
        if ((r = strv_empty(out, err)) < 0)
                return r;
        for (size_t i = 0; i < a->array.n; i++)
                if ((r = strv_add(out, a->array.items[i]->string, err)) < 0)
                        return r;
        return 0;
}

/* [delivery] in the user's config: hold, names (a part or a run of parts
 * of a path, "Makefile", "scripts/deploy") whose changes are held for
 * review besides the built-in list; protected_branches, branches deliver
 * apply never writes, besides main, master, the checked-out and the
 * default one. */
static bool is_name(const char *s)
{
        if (!s[0] || s[0] == '/' || s[strlen(s) - 1] == '/')
                return false;
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}

static int check_names(const struct toml_value *d, const char *key, const char *file,
                       struct umw_error **err)
{
        const struct toml_value *a = toml_table_get(d, key);
        char buf[80];
        for (size_t i = 0; a && i < a->array.n; i++) {
                const struct toml_value *v = a->array.items[i];
                if (!is_name(v->string))
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "%s:%u:%u: delivery.%s[%zu]: expected a relative name "
                                        "without control characters, found \"%s\"",
                                        file, v->line, v->column, key, i,
                                        printable(v->string, buf));
        }
        return 0;
}

static int load_delivery(struct loader *l, const struct toml_value *t, const char *file,
                         struct umw_error **err)
{
        static const char *const keys[] = {"hold", "protected_branches", NULL};
        const struct toml_value *d = NULL;
        int r = toml_get(t, "delivery", TOML_TABLE, file, &d, err);
        if (r <= 0)
                return r;
        if ((r = toml_check_keys(d, keys, file, err)) < 0 ||
            (r = strings_copy(d, "hold", file, &l->c->delivery_hold, err)) < 0 ||
            (r = strings_copy(d, "protected_branches", file, &l->c->protected_branches, err)) < 0 ||
            (r = check_names(d, "hold", file, err)) < 0)
                return r;
        return check_names(d, "protected_branches", file, err);
}

/* [relay] timeout = SECONDS, allow_ro / allow_rw = [GLOB, ...]: absolute
 * globs of the paths umwelt-relay grants without asking. Only the user's
 * own file has them: a project's is written where the agent writes. */
static int load_relay(struct loader *l, const struct toml_value *t, const char *file,
                      struct umw_error **err)
{
        static const char *const keys[] = {"timeout", "allow_ro", "allow_rw", NULL};
        const struct toml_value *d = NULL, *v = NULL;
        int r = toml_get(t, "relay", TOML_TABLE, file, &d, err);
        if (r <= 0)
                return r;
        if ((r = toml_check_keys(d, keys, file, err)) < 0 ||
            (r = toml_get(d, "timeout", TOML_INTEGER, file, &v, err)) < 0)
                return r;
        if (v && (v->integer < 1 || v->integer > 3600))
                return umw_fail(err, UMW_EXIT_CONFIG, ERANGE,
                                "%s:%u:%u: relay.timeout: expected 1 to 3600 seconds", file,
                                v->line, v->column);
        l->c->relay_timeout_s = v ? (int)v->integer : 0;
        if ((r = get_paths(d, "allow_ro", file, true, &l->c->relay_allow_ro, err)) < 0)
                return r;
        r = get_paths(d, "allow_rw", file, true, &l->c->relay_allow_rw, err);
        return r < 0 ? r : 0;
}

/* [workspace] mode = "review" | "direct"; narrow_only: a project's, which
 * may not turn the user's review into direct. */
static int load_workspace(struct loader *l, const struct toml_value *t, const char *file,
                          bool narrow_only, struct umw_error **err)
{
        static const char *const keys[] = {"mode", NULL};
        const struct toml_value *w = NULL, *mode = NULL;
        int r = toml_get(t, "workspace", TOML_TABLE, file, &w, err);
        if (r <= 0)
                return r;
        if ((r = toml_check_keys(w, keys, file, err)) < 0 ||
            (r = toml_get(w, "mode", TOML_STRING, file, &mode, err)) <= 0)
                return r;
        bool direct = strcmp(mode->string, "direct") == 0;
        char buf[80];
        if (!direct && strcmp(mode->string, "review") != 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: workspace.mode: expected \"review\" or \"direct\", "
                                "found \"%s\"",
                                file, mode->line, mode->column, printable(mode->string, buf));
        if (direct && narrow_only && !l->c->workspace_direct)
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "%s:%u:%u: workspace.mode: a project may not widen review mode "
                                "to direct (only %s or --workspace direct may)",
                                file, mode->line, mode->column, l->user_file);
        l->c->workspace_direct = direct;
        return 0;
}

/* A user root must exist and lie inside one of the floor's roots once
 * every symlink on the way is resolved; the resolved path is what is kept,
 * so a later grant is checked against what was checked here. */
static int user_root(const struct loader *l, const struct toml_value *v, char ***roots,
                     struct umw_error **err)
{
        const char *file = l->user_file;
        char buf[80], list[400];
        int r = check_absolute(v, "grant_roots", file, true, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *real = realpath(v->string, NULL);
        if (!real) {
                int e = errno;
                return umw_fail(err, UMW_EXIT_CONFIG, e, "%s:%u:%u: grant root '%s': %s", file,
                                v->line, v->column, printable(v->string, buf), strerror(e));
        }
        for (size_t i = 0; l->floor_real[i]; i++)
                if (path_within(real, l->floor_real[i]))
                        return strv_add(roots, real, err);
        return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                        "%s:%u:%u: grant root '%s' (resolved '%s') is outside the grant roots of "
                        "%s (%s)",
                        file, v->line, v->column, printable(v->string, buf), real, l->floor_name,
                        strv_join((const char *const *)l->c->grant_roots, list, sizeof(list)));
}

/* The floor's roots resolved, then the user's into *roots (the caller's to
 * free). */
static int user_roots(struct loader *l, const struct toml_value *a, char ***roots,
                      struct umw_error **err)
{
        int r;
        if ((r = floor_roots_resolve(l, err)) < 0 || (r = strv_empty(roots, err)) < 0)
                return r;
        for (size_t i = 0; i < a->array.n; i++)
                if ((r = user_root(l, a->array.items[i], roots, err)) < 0)
                        return r;
        return 0;
}

static int load_user(struct loader *l, struct umw_error **err)
{
        static const char *const keys[] = {"grant_roots", "preset", "workspace",
                                           "delivery",    "relay",  NULL};
        const char *file = l->user_file;
        _cleanup_toml_ struct toml_value *t = NULL;
        int r = layer_read(file, false, &t, err);
        if (r < 0 || !t)
                return r;
        const struct toml_value *a = NULL;
        if ((r = toml_check_keys(t, keys, file, err)) < 0 ||
            (r = get_strings(t, "grant_roots", file, &a, err)) < 0 ||
            (r = set_preset(l, t, file, err)) < 0 ||
            (r = load_workspace(l, t, file, false, err)) < 0 ||
            (r = load_delivery(l, t, file, err)) < 0 || (r = load_relay(l, t, file, err)) < 0)
                return r;
        if (!a)
                return 0;
        /* Resolved only here: without a user's roots, grants_resolve is the
         * one that resolves the floor's. */
        char **roots = NULL;
        if ((r = user_roots(l, a, &roots, err)) < 0) {
                grants_strv_free(roots);
                return r;
        }
        grants_strv_free(l->c->grant_roots);
        l->c->grant_roots = roots;
        return 0;
}

static int grant_one(struct loader *l, const struct toml_value *g, size_t i, struct umw_error **err)
{
        static const char *const keys[] = {"path", "mode", NULL};
        const char *file = l->project_file;
        struct config_owned *own = l->c->owned;
        struct grant_request *req = &l->c->grants[i];
        char buf[80];
        if (g->kind != TOML_TABLE)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: 'grant': expected [[grant]] tables, found %s", file,
                                g->line, g->column, toml_kind_name(g->kind));
        const struct toml_value *path = NULL, *mode = NULL;
        int r;
        if ((r = toml_check_keys(g, keys, file, err)) < 0 ||
            (r = toml_get(g, "path", TOML_STRING, file, &path, err)) < 0 ||
            (r = toml_get(g, "mode", TOML_STRING, file, &mode, err)) < 0)
                return r;
        if (!path)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: [[grant]]: expected a 'path'", file, g->line, g->column);
        if ((r = check_absolute(path, "path", file, false, err)) < 0)
                return r;
        if (mode && strcmp(mode->string, "ro") != 0 && strcmp(mode->string, "rw") != 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: 'mode': expected \"ro\" or \"rw\", found '%s'", file,
                                mode->line, mode->column, printable(mode->string, buf));
        if (asprintf(&own->origins[i], "%s:%u:%u", file, g->line, g->column) < 0) {
                own->origins[i] = NULL;
                return umw_fail_sys(err, ENOMEM, "policy");
        }
        *req = (struct grant_request){
            .path = path->string,
            .mode = mode ? mode->string : "ro",
            .origin = own->origins[i],
        };
        return 0;
}

static int load_grants(struct loader *l, const struct toml_value *t, struct umw_error **err)
{
        struct config_owned *own = l->c->owned;
        const struct toml_value *a = NULL;
        int r = toml_get(t, "grant", TOML_ARRAY, l->project_file, &a, err);
        if (r <= 0 || a->array.n == 0)
                return r < 0 ? r : 0;
        l->c->grants = calloc(a->array.n, sizeof(*l->c->grants));
        own->origins = calloc(a->array.n + 1, sizeof(*own->origins));
        if (!l->c->grants || !own->origins)
                return umw_fail_sys(err, ENOMEM, "policy");
        for (size_t i = 0; i < a->array.n; i++)
                if ((r = grant_one(l, a->array.items[i], i, err)) < 0)
                        return r;
        l->c->n_grants = a->array.n;
        return 0;
}

static bool env_name_valid(const char *s)
{
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
                return false;
        return s[strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")] ==
               '\0';
}

static int load_env(struct loader *l, const struct toml_value *t, struct umw_error **err)
{
        const char *file = l->project_file;
        const struct toml_value *a = NULL;
        char buf[80];
        int r = get_strings(t, "env", file, &a, err);
        if (r <= 0)
                return r;
        if ((r = strv_empty(&l->c->env, err)) < 0)
                return r;
        for (size_t i = 0; i < a->array.n; i++) {
                const struct toml_value *v = a->array.items[i];
                if (!env_name_valid(v->string))
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "%s:%u:%u: 'env': expected a variable name "
                                        "([A-Za-z_][A-Za-z0-9_]*), found '%s'",
                                        file, v->line, v->column, printable(v->string, buf));
                if ((r = strv_add(&l->c->env, v->string, err)) < 0)
                        return r;
        }
        return 0;
}

/* Each egress rule is parsed as the file is loaded, so a bad one is reported
 * where it is written rather than when the gateway starts. */
static int check_egress_rules(const struct toml_value *e, const char *key, const char *file,
                              struct umw_error **err)
{
        const struct toml_value *a = toml_table_get(e, key);
        for (size_t i = 0; a && i < a->array.n; i++) {
                const struct toml_value *v = a->array.items[i];
                struct egress_rule rule;
                if (egress_rule_parse(v->string, &rule, err) < 0)
                        return umw_error_prefix(err, "%s:%u:%u: egress.%s[%zu]", file, v->line,
                                                v->column, key, i);
                egress_rule_free(&rule);
        }
        return 0;
}

static int load_egress(struct loader *l, const struct toml_value *t, struct umw_error **err)
{
        static const char *const keys[] = {"enabled", "allow", "deny", NULL};
        const char *file = l->project_file;
        struct policy_config *c = l->c;
        const struct toml_value *e = NULL, *enabled = NULL;
        int r = toml_get(t, "egress", TOML_TABLE, file, &e, err);
        if (r <= 0)
                return r;
        if ((r = toml_check_keys(e, keys, file, err)) < 0 ||
            (r = toml_get(e, "enabled", TOML_BOOL, file, &enabled, err)) < 0 ||
            (r = strings_copy(e, "allow", file, &c->egress_allow, err)) < 0 ||
            (r = strings_copy(e, "deny", file, &c->egress_deny, err)) < 0 ||
            (r = check_egress_rules(e, "allow", file, err)) < 0 ||
            (r = check_egress_rules(e, "deny", file, err)) < 0)
                return r;
        c->egress_enabled = enabled && enabled->boolean;
        if (c->egress_enabled && !c->egress_allowed)
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "%s:%u:%u: egress.enabled: egress is not allowed by %s", file,
                                enabled->line, enabled->column, l->floor_name);
        return 0;
}

static int check_port(const struct toml_value *v, const uint16_t *seen, size_t n, const char *file,
                      struct umw_error **err)
{
        if (v->kind != TOML_INTEGER)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: 'ports': expected an array of port numbers, found %s",
                                file, v->line, v->column, toml_kind_name(v->kind));
        if (v->integer < 1 || v->integer > 65535)
                return umw_fail(err, UMW_EXIT_CONFIG, ERANGE,
                                "%s:%u:%u: 'ports': expected a port number from 1 to 65535, "
                                "found %lld",
                                file, v->line, v->column, (long long)v->integer);
        for (size_t i = 0; i < n; i++)
                if (seen[i] == v->integer)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "%s:%u:%u: 'ports': port %u is listed twice", file, v->line,
                                        v->column, seen[i]);
        return 0;
}

static int load_ingress(struct loader *l, const struct toml_value *t, struct umw_error **err)
{
        static const char *const keys[] = {"ports", NULL};
        const char *file = l->project_file;
        struct policy_config *c = l->c;
        const struct toml_value *in = NULL, *ports = NULL;
        int r = toml_get(t, "ingress", TOML_TABLE, file, &in, err);
        if (r <= 0)
                return r;
        if ((r = toml_check_keys(in, keys, file, err)) < 0 ||
            (r = toml_get(in, "ports", TOML_ARRAY, file, &ports, err)) <= 0)
                return r;
        if (ports->array.n > POLICY_INGRESS_PORTS_MAX)
                return umw_fail(err, UMW_EXIT_CONFIG, E2BIG,
                                "%s:%u:%u: 'ports': expected at most %d ports, found %zu", file,
                                ports->line, ports->column, POLICY_INGRESS_PORTS_MAX,
                                ports->array.n);
        if (ports->array.n > 0 && !c->ingress_allowed)
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "%s:%u:%u: 'ports': ingress is not allowed by %s", file,
                                ports->line, ports->column, l->floor_name);
        c->ingress_ports = calloc(ports->array.n + 1, sizeof(uint16_t));
        if (!c->ingress_ports)
                return umw_fail_sys(err, ENOMEM, "policy");
        for (size_t i = 0; i < ports->array.n; i++) {
                const struct toml_value *v = ports->array.items[i];
                if ((r = check_port(v, c->ingress_ports, i, file, err)) < 0)
                        return r;
                c->ingress_ports[c->n_ingress_ports++] = (uint16_t)v->integer;
        }
        return 0;
}

static int load_project(struct loader *l, struct umw_error **err)
{
        static const char *const keys[] = {"grant",   "preset",    "env", "egress",
                                           "ingress", "workspace", NULL};
        const char *file = l->project_file;
        struct config_owned *own = l->c->owned;
        const struct policy_paths *p = l->paths;
        int r = !p->project_given ? layer_read(file, false, &own->project, err)
                : p->project_text
                    ? toml_parse(p->project_text, p->project_len, file, &own->project, err)
                    : 0;
        if (r < 0 || !own->project)
                return r;
        const struct toml_value *t = own->project;
        if ((r = toml_check_keys(t, keys, file, err)) < 0 || (r = load_grants(l, t, err)) < 0 ||
            (r = set_preset(l, t, file, err)) < 0 || (r = load_env(l, t, err)) < 0 ||
            (r = load_ingress(l, t, err)) < 0 || (r = load_workspace(l, t, file, true, err)) < 0)
                return r;
        return load_egress(l, t, err);
}

/* No layer chose: "dev", or where the floor forbids it, the floor's first. */
static int default_preset(struct policy_config *c, struct umw_error **err)
{
        const char *const *allowed = (const char *const *)c->presets_allowed;
        const char *name = umw_strv_contains(allowed, DEFAULT_PRESET) ? DEFAULT_PRESET : allowed[0];
        c->preset = strdup(name);
        return c->preset ? 0 : umw_fail_sys(err, ENOMEM, "policy");
}

static void policy_config_freep(struct policy_config *c)
{
        policy_config_free(c);
}

/* The three layers in order, then the default preset where none was set. */
static int load_layers(struct loader *l, const struct policy_paths *paths, struct umw_error **err)
{
        int r;
        if ((r = load_floor(l, paths, err)) < 0 || (r = load_user(l, err)) < 0 ||
            (r = load_project(l, err)) < 0)
                return r;
        return l->c->preset ? 0 : default_preset(l->c, err);
}

int policy_load(const struct policy_paths *paths, const char *home, struct policy_config *out,
                struct umw_error **err)
{
        static const struct policy_paths none = {0};
        if (!paths)
                paths = &none;
        if (!home || home[0] != '/')
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "policy: HOME: expected an absolute path");
        _cleanup_free_ char *user_file = NULL;
        if (!paths->user && asprintf(&user_file, "%s%s", home, USER_PATH) < 0)
                return umw_fail_sys(err, ENOMEM, "policy");
        __attribute__((cleanup(policy_config_freep))) struct policy_config c = {0};
        c.owned = calloc(1, sizeof(struct config_owned));
        if (!c.owned)
                return umw_fail_sys(err, ENOMEM, "policy");
        struct loader l = {
            .c = &c,
            .home = home,
            .floor_file = paths->floor ? paths->floor : FLOOR_PATH,
            .user_file = paths->user ? paths->user : user_file,
            .project_file = paths->project ? paths->project : PROJECT_PATH,
            .paths = paths,
        };
        int r = load_layers(&l, paths, err);
        free(l.floor_name);
        grants_strv_free(l.floor_real);
        if (r < 0)
                return r;
        *out = c;
        c = (struct policy_config){0};
        return 0;
}

void policy_config_free(struct policy_config *c)
{
        if (!c)
                return;
        struct config_owned *own = c->owned;
        if (own) {
                toml_free(own->project);
                for (size_t i = 0; own->origins && own->origins[i]; i++)
                        free(own->origins[i]);
                free(own->origins);
                free(own);
        }
        grants_strv_free(c->grant_roots);
        grants_strv_free(c->never);
        grants_strv_free(c->presets_allowed);
        grants_strv_free(c->env);
        grants_strv_free(c->egress_allow);
        grants_strv_free(c->egress_deny);
        grants_strv_free(c->delivery_hold);
        grants_strv_free(c->protected_branches);
        grants_strv_free(c->relay_allow_ro);
        grants_strv_free(c->relay_allow_rw);
        free(c->ingress_ports);
        free(c->preset);
        free(c->grants);
        *c = (struct policy_config){0};
}
