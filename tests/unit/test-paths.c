/* policy/paths.c: the containment every grant decision rests on. */
#include "policy/paths.h"
#include "common/cleanup.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

Test(paths, within_by_component)
{
        cr_expect(path_within("/home/a", "/home/a"));
        cr_expect(path_within("/home/a/b", "/home/a"));
        cr_expect(!path_within("/home/ab", "/home/a"));
        cr_expect(!path_within("/home", "/home/a"));
        cr_expect(path_within("/anything", "/"));
        cr_expect(path_within("/", "/"));
}

Test(paths, strictly_below_excludes_itself)
{
        cr_expect(!path_strictly_below("/home/a", "/home/a"));
        cr_expect(path_strictly_below("/home/a/b", "/home/a"));
        cr_expect(!path_strictly_below("/home/ab", "/home/a"));
        cr_expect(!path_strictly_below("/", "/"));
        cr_expect(path_strictly_below("/x", "/"));
}

static void expect_clean(const char *in, const char *want)
{
        _cleanup_free_ char *got = path_clean(in);
        cr_assert_not_null(got);
        cr_expect_str_eq(got, want, "path_clean(\"%s\")", in);
}

Test(paths, clean_is_lexical)
{
        expect_clean("/", "/");
        expect_clean("//a//b/", "/a/b");
        expect_clean("/a/./b/.", "/a/b");
        expect_clean("/a/b/../c", "/a/c");
        expect_clean("/../../a", "/a");
        expect_clean("/a/..", "/");
}

Test(paths, resolve_prefix_follows_symlinks_then_keeps_the_rest)
{
        char dir[] = "/tmp/umwelt-paths-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        _cleanup_free_ char *real = realpath(dir, NULL);
        char target[PATH_MAX], link[PATH_MAX], want[PATH_MAX];
        snprintf(target, sizeof(target), "%s/target", dir);
        snprintf(link, sizeof(link), "%s/link", dir);
        cr_assert_eq(mkdir(target, 0700), 0);
        cr_assert_eq(symlink(target, link), 0);

        /* The link resolves; what does not exist yet is kept as written. */
        char in[PATH_MAX];
        snprintf(in, sizeof(in), "%s/not/yet", link);
        _cleanup_free_ char *got = path_resolve_prefix(in);
        snprintf(want, sizeof(want), "%s/target/not/yet", real);
        cr_expect_str_eq(got, want);

        _cleanup_free_ char *none = path_resolve_prefix("/umwelt-does-not-exist/x");
        cr_expect_str_eq(none, "/umwelt-does-not-exist/x");
        _cleanup_free_ char *root = path_resolve_prefix("/");
        cr_expect_str_eq(root, "/");

        unlink(link);
        rmdir(target);
        rmdir(dir);
}
