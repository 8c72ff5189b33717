#include "policy/grants.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The tree every test works on, under T (a fresh temp directory):
 *   roots/work/            grant root
 *     data/sub/deep/  data/file.txt
 *     link-in -> T/roots/work/data    link-out -> T/outside
 *     fifo            key-link (hard link of T/secret-key)
 *   home/                  grant root
 *     .ssh/id         (never-granted: home/.ssh)
 *     ssh-link -> T/home/.ssh
 *   home2/                 grant root
 *   homelink -> T/home
 *   outside/file    secret-key (never-granted file) */
static char tmpl[] = "/tmp/test-grants-XXXXXX";
static char T[PATH_MAX];

static char *at(const char *rel)
{
        static char bufs[16][PATH_MAX];
        static unsigned next;
        char *b = bufs[next++ % 16];
        snprintf(b, PATH_MAX, "%s/%s", T, rel);
        return b;
}

static void mk(const char *rel)
{
        cr_assert_eq(mkdir(at(rel), 0755), 0, "mkdir %s", rel);
}

static void touch(const char *rel)
{
        int fd = open(at(rel), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0, "create %s", rel);
        close(fd);
}

static void ln_s(const char *target_rel, const char *rel)
{
        cr_assert_eq(symlink(at(target_rel), at(rel)), 0, "symlink %s", rel);
}

static void make_tree(void)
{
        cr_assert_not_null(mkdtemp(tmpl));
        cr_assert_not_null(realpath(tmpl, T));
        const char *dirs[] = {"roots",
                              "roots/work",
                              "roots/work/data",
                              "roots/work/data/sub",
                              "roots/work/data/sub/deep",
                              "home",
                              "home/.ssh",
                              "home2",
                              "outside"};
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
                mk(dirs[i]);
        touch("roots/work/data/file.txt");
        touch("home/.ssh/id");
        touch("outside/file");
        touch("secret-key");
        ln_s("roots/work/data", "roots/work/link-in");
        ln_s("outside", "roots/work/link-out");
        ln_s("home/.ssh", "home/ssh-link");
        ln_s("home", "homelink");
        cr_assert_eq(mkfifo(at("roots/work/fifo"), 0600), 0);
        cr_assert_eq(link(at("secret-key"), at("roots/work/key-link")), 0);
}

static void remove_tree(void)
{
        pid_t pid = fork();
        if (pid == 0) {
                execlp("rm", "rm", "-rf", tmpl, (char *)NULL);
                _exit(127);
        }
        waitpid(pid, NULL, 0);
}

TestSuite(grants, .init = make_tree, .fini = remove_tree);

struct fixture {
        const char *roots[4];
        const char *never[4];
        struct grant_policy policy;
};

static void default_policy(struct fixture *f)
{
        *f = (struct fixture){
            .roots = {strdup(at("roots/work")), strdup(at("home")), strdup(at("home2"))},
            .never = {strdup(at("home/.ssh")), strdup(at("secret-key"))},
        };
        f->policy = (struct grant_policy){f->roots, f->never};
}

static void fixture_free(struct fixture *f)
{
        for (size_t i = 0; i < 4; i++) {
                free((char *)f->roots[i]);
                free((char *)f->never[i]);
        }
}

static struct grant_list resolve_ok(const struct grant_request *req, size_t n)
{
        struct fixture f;
        default_policy(&f);
        struct grant_list list = {0};
        _cleanup_error_ struct umw_error *err = NULL;
        int r = grants_resolve(&f.policy, req, n, &list, NULL, &err);
        fixture_free(&f);
        cr_assert_eq(r, 0, "%s", err ? err->msg : "?");
        return list;
}

/* Refused with exactly this message ("T" in want stands for the temp dir). */
static void expect_refused_with(const struct grant_policy *policy, const struct grant_request *req,
                                size_t n, size_t index, const char *rule, const char *want_fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void expect_refused_with(const struct grant_policy *policy, const struct grant_request *req,
                                size_t n, size_t index, const char *rule, const char *want_fmt, ...)
{
        char want[4 * PATH_MAX];
        va_list ap;
        va_start(ap, want_fmt);
        vsnprintf(want, sizeof(want), want_fmt, ap);
        va_end(ap);
        struct grant_list list = {(struct grant *)&list, 99};
        struct grant_refusal refusal = {99, "unset"};
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(grants_resolve(policy, req, n, &list, &refusal, &err), 0, "%s", want);
        cr_assert_not_null(err);
        cr_expect_str_eq(err->msg, want);
        cr_expect_eq(err->kind, UMW_EXIT_CONFIG);
        cr_expect_eq(list.len, 99, "output touched on refusal");
        if (rule) {
                cr_expect_str_eq(refusal.rule, rule);
                cr_expect_eq(refusal.index, index);
        } else {
                cr_expect_null(refusal.rule);
        }
}

#define expect_refused(req, n, index, rule, ...)                                                   \
        do {                                                                                       \
                struct fixture f_;                                                                 \
                default_policy(&f_);                                                               \
                expect_refused_with(&f_.policy, req, n, index, rule, __VA_ARGS__);                 \
                fixture_free(&f_);                                                                 \
        } while (0)

Test(grants, nested_grants_in_mount_order_with_parents)
{
        char *data = strdup(at("roots/work/data")), *sub = strdup(at("roots/work/data/sub"));
        char *deep = strdup(at("roots/work/data/sub/deep"));
        char *file = strdup(at("roots/work/data/file.txt")), *proj = strdup(at("home2"));
        /* Given out of order on purpose; T/home2 sorts before T/roots. */
        const struct grant_request req[] = {
            {deep, "ro", NULL}, {file, "rw", NULL}, {sub, "rw", NULL},
            {data, NULL, NULL}, {proj, "rw", NULL},
        };
        struct grant_list list = resolve_ok(req, ARRAY_SIZE(req));
        cr_assert_eq(list.len, 5);
        struct {
                const char *path;
                enum grant_mode mode;
                bool is_file, forced_ro;
                ssize_t parent;
        } want[] = {
            {proj, GRANT_RW, false, false, -1}, {data, GRANT_RO, false, false, -1},
            {file, GRANT_RO, true, true, 1},    {sub, GRANT_RW, false, false, 1},
            {deep, GRANT_RO, false, false, 3},
        };
        for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
                const struct grant *g = &list.items[i];
                cr_expect_str_eq(g->path, want[i].path, "[%zu]", i);
                cr_expect_str_eq(g->requested, want[i].path, "[%zu]", i);
                cr_expect_eq(g->mode, want[i].mode, "[%zu] %s mode", i, g->path);
                cr_expect_eq(g->is_file, want[i].is_file, "[%zu] %s", i, g->path);
                cr_expect_eq(g->forced_ro, want[i].forced_ro, "[%zu] %s", i, g->path);
                cr_expect_eq(g->parent, want[i].parent, "[%zu] %s parent %zd", i, g->path,
                             g->parent);
        }
        grant_list_free(&list);
        free(data), free(sub), free(deep), free(file), free(proj);
}

Test(grants, symlink_inside_a_root_resolves_to_its_target)
{
        char *link = strdup(at("roots/work/link-in"));
        const struct grant_request req[] = {{link, "rw", NULL}};
        struct grant_list list = resolve_ok(req, 1);
        cr_assert_eq(list.len, 1);
        cr_expect_str_eq(list.items[0].path, at("roots/work/data"));
        cr_expect_str_eq(list.items[0].requested, link);
        cr_expect_eq(list.items[0].mode, GRANT_RW);
        grant_list_free(&list);
        free(link);
}

Test(grants, root_reached_through_a_symlink_or_dotdot)
{
        /* "/" as a root admits everything that is not never-granted. */
        const char *roots[] = {"/", NULL};
        const char *never[] = {NULL};
        const struct grant_policy policy = {roots, never};
        char *path = strdup(at("roots/work/data/sub/../sub"));
        const struct grant_request req[] = {{path, "ro", NULL}};
        struct grant_list list = {0};
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(grants_resolve(&policy, req, 1, &list, NULL, &err), 0);
        cr_expect_str_eq(list.items[0].path, at("roots/work/data/sub"));
        grant_list_free(&list);

        /* A root written through a symlink and ".." still holds what it names. */
        char *root = strdup(at("homelink/../roots/./work/"));
        const char *roots2[] = {root, NULL};
        const struct grant_policy policy2 = {roots2, never};
        cr_assert_eq(grants_resolve(&policy2, req, 1, &list, NULL, &err), 0);
        grant_list_free(&list);
        free(root);
        free(path);
}

Test(grants, refusal_messages)
{
        char want[3 * PATH_MAX];
        struct {
                const char *path, *mode, *rule, *why;
                bool resolves; /* the message names the resolved path */
                const char *real;
        } cases[] = {
            {"roots/work/link-out", "ro", "outside-roots", "outside every grant root", true,
             "outside"},
            {"outside/file", "ro", "outside-roots", "outside every grant root", false, NULL},
            {"roots/work/nope", "ro", "missing", "does not exist", false, NULL},
            {"roots/work/data/file.txt/x", "ro", "missing", "Not a directory", false, NULL},
            {"roots/work/fifo", "ro", "type", "neither a directory nor a regular file", false,
             NULL},
            {"roots/work/data", "wx", "mode", "mode \"wx\": expected \"ro\" or \"rw\"", false,
             NULL},
            {"home/.ssh/id", "ro", "never-granted", "lies inside never-granted T/home/.ssh", false,
             NULL},
            {"home/.ssh", "ro", "never-granted", "is never-granted T/home/.ssh", false, NULL},
            {"home", "ro", "never-granted", "contains never-granted T/home/.ssh", false, NULL},
            {"home/ssh-link", "ro", "never-granted", "is never-granted T/home/.ssh", true,
             "home/.ssh"},
            {"homelink/.ssh/id", "ro", "never-granted", "lies inside never-granted T/home/.ssh",
             true, "home/.ssh/id"},
            {"roots/work/key-link", "ro", "never-granted",
             "is never-granted T/secret-key under another name", false, NULL},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char path[PATH_MAX], why[2 * PATH_MAX], resolves[PATH_MAX + 32] = "";
                snprintf(path, sizeof(path), "%s", at(cases[i].path));
                /* Expand "T" at the start of a path in why. */
                const char *t = strstr(cases[i].why, "T/");
                if (t)
                        snprintf(why, sizeof(why), "%.*s%s%s", (int)(t - cases[i].why),
                                 cases[i].why, T, t + 1);
                else
                        snprintf(why, sizeof(why), "%s", cases[i].why);
                if (cases[i].resolves)
                        snprintf(resolves, sizeof(resolves), " (resolves to %s)",
                                 at(cases[i].real));
                snprintf(want, sizeof(want), "grant %s%s: %s", path, resolves, why);
                struct grant_request req = {path, cases[i].mode, NULL};
                expect_refused(&req, 1, 0, cases[i].rule, "%s", want);
        }
}

/* A never-granted path that does not exist yet is protected all the same: a
 * grant that would contain it the moment it is created is refused. */
Test(grants, missing_never_granted_path_still_protected)
{
        const char *roots[] = {T, NULL};
        const char *never[] = {at("home2/.aws"), NULL};
        const struct grant_policy policy = {roots, never};
        const struct grant_request req[] = {{at("home2"), "rw", NULL}};
        expect_refused_with(&policy, req, 1, 0, "never-granted",
                            "grant %s/home2: contains never-granted %s/home2/.aws", T, T);
        /* Spelt through a symlinked parent, it is still found. */
        const char *never2[] = {at("homelink/.aws"), NULL};
        const struct grant_policy policy2 = {roots, never2};
        const struct grant_request req2[] = {{at("home"), "rw", NULL}};
        expect_refused_with(&policy2, req2, 1, 0, "never-granted",
                            "grant %s/home: contains never-granted %s/homelink/.aws", T, T);
}

Test(grants, relative_path_refused)
{
        struct grant_request req = {"roots/work/data", "ro", ".umwelt.toml:4:1"};
        expect_refused(&req, 1, 0, "relative",
                       ".umwelt.toml:4:1: grant roots/work/data: expected an absolute path");
}

Test(grants, duplicates_refused_after_resolution)
{
        char *data = strdup(at("roots/work/data")), *link = strdup(at("roots/work/link-in"));
        const struct grant_request req[] = {{data, "ro", "--grant"}, {link, "rw", "--grant"}};
        expect_refused(req, 2, 1, "duplicate",
                       "--grant: grant %s (resolves to %s): same path as grant %s", link, data,
                       data);
        free(data), free(link);
}

Test(grants, one_refusal_refuses_all)
{
        char *data = strdup(at("roots/work/data")), *out = strdup(at("outside"));
        const struct grant_request req[] = {{data, "ro", NULL}, {out, "ro", NULL}};
        expect_refused(req, 2, 1, "outside-roots", "grant %s: outside every grant root", out);
        free(data), free(out);
}

Test(grants, no_roots_grant_nothing)
{
        const char *none[] = {NULL};
        const struct grant_policy policy = {none, none};
        struct grant_request req = {at("roots/work/data"), "ro", NULL};
        expect_refused_with(&policy, &req, 1, 0, "outside-roots",
                            "grant %s: outside every grant root", req.path);
        struct grant_list list = {0};
        _cleanup_error_ struct umw_error *err = NULL;
        cr_expect_eq(grants_resolve(&policy, NULL, 0, &list, NULL, &err), 0);
        cr_expect_eq(list.len, 0);
        grant_list_free(&list);
}

Test(grants, relative_policy_paths_are_errors)
{
        const char *rel_root[] = {"srv", NULL};
        const char *rel_never[] = {"~/.ssh", NULL};
        const char *none[] = {NULL};
        struct grant_request req = {at("roots/work/data"), "ro", NULL};
        const struct grant_policy p1 = {rel_root, none};
        expect_refused_with(&p1, &req, 1, 0, NULL, "grant root srv: expected an absolute path");
        const struct grant_policy p2 = {none, rel_never};
        expect_refused_with(&p2, &req, 1, 0, NULL,
                            "never-granted path ~/.ssh: expected an absolute path");
}

Test(grants, default_never_list)
{
        char **v = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(grants_default_never("/home/u", NULL, "/run/user/1000", &v, &err), 0);
        const char *want[] = {
            "/home/u/.ssh",
            "/home/u/.gnupg",
            "/home/u/.aws",
            "/home/u/.config/umwelt",
            "/home/u/.local/state/umwelt",
            "/run/user/1000",
            "/etc/umwelt",
            "/run/docker.sock",
            "/var/run/docker.sock",
            "/run/podman",
            "/run/containerd",
            "/run/dbus",
            "/proc",
            "/sys",
            "/dev",
        };
        size_t n = 0;
        while (v[n])
                n++;
        cr_assert_eq(n, ARRAY_SIZE(want));
        for (size_t i = 0; i < n; i++)
                cr_expect_str_eq(v[i], want[i]);
        grants_strv_free(v);

        cr_assert_eq(grants_default_never("/home/u", "/st", NULL, &v, &err), 0);
        cr_expect_str_eq(v[4], "/st/umwelt");
        cr_expect_str_eq(v[5], "/etc/umwelt", "no runtime dir: no entry for it");
        grants_strv_free(v);

        cr_expect_eq(grants_default_never("", NULL, NULL, &v, &err), -EINVAL);
        cr_expect_str_eq(err->msg, "never-granted paths: HOME: expected an absolute path");
}

Test(grants, default_never_list_protects_a_home_grant)
{
        char **never = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(grants_default_never(at("home2"), NULL, NULL, &never, &err), 0);
        const char *roots[] = {T, NULL};
        const struct grant_policy policy = {roots, (const char *const *)never};
        struct grant_request req = {at("home2"), "rw", NULL};
        expect_refused_with(&policy, &req, 1, 0, "never-granted",
                            "grant %s: contains never-granted %s/.ssh", req.path, req.path);
        grants_strv_free(never);
}
