#include "runtime/seccomp.h"
#include "runtime/seccomp_cache.h"
#include "runtime/spec.h"
#include "policy/seccomp_profile.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile-spec.h"

static char root[64];
static char cache_file[160];

static void make_root(void)
{
        snprintf(root, sizeof(root), "/tmp/umwelt-scmp-cache.XXXXXX");
        cr_assert_not_null(mkdtemp(root));
}

static void remove_root(void)
{
        char path[128];
        snprintf(path, sizeof(path), "%s/.seccomp", root);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)))
                unlinkat(dirfd(d), e->d_name, 0);
        if (d)
                closedir(d);
        rmdir(path);
        for (size_t i = 0; i < 2; i++) {
                snprintf(path, sizeof(path), "%s/%s", root, i ? "moved" : "elsewhere");
                unlink(path);
        }
        rmdir(root);
}

TestSuite(seccomp_cache, .init = make_root, .fini = remove_root);

/* The one file in ROOT/.seccomp, into cache_file. */
static void find_cache_file(void)
{
        char dir[96];
        snprintf(dir, sizeof(dir), "%s/.seccomp", root);
        DIR *d = opendir(dir);
        cr_assert_not_null(d, "no cache directory");
        struct dirent *e;
        size_t n = 0;
        while ((e = readdir(d)))
                if (e->d_name[0] != '.') {
                        snprintf(cache_file, sizeof(cache_file), "%s/%s", dir, e->d_name);
                        n++;
                }
        closedir(d);
        cr_assert_eq(n, 1, "%zu cache files", n);
}

static struct seccomp_filter *build(const struct spec_seccomp *s, const char *cache_root)
{
        struct seccomp_filter *f = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        int r = cache_root ? seccomp_filter_build_cached(s, cache_root, &f, &err)
                           : seccomp_filter_build(s, &f, &err);
        cr_assert_eq(r, 0, "build: %s", err ? err->msg : "?");
        return f;
}

static bool same_program(const struct seccomp_filter *a, const struct seccomp_filter *b)
{
        size_t na, nb;
        const struct sock_filter *pa = seccomp_filter_program(a, &na);
        const struct sock_filter *pb = seccomp_filter_program(b, &nb);
        return na == nb && memcmp(pa, pb, na * sizeof(*pa)) == 0;
}

/* Flips bits of the cache file at offset at (from its end when negative),
 * leaving it otherwise as the runtime wrote it. */
static void flip(off_t at, unsigned char bits)
{
        int fd = open(cache_file, O_RDWR);
        cr_assert_geq(fd, 0);
        struct stat st;
        cr_assert_eq(fstat(fd, &st), 0);
        if (at < 0)
                at += st.st_size;
        unsigned char c;
        cr_assert_eq(pread(fd, &c, 1, at), 1);
        c ^= bits;
        cr_assert_eq(pwrite(fd, &c, 1, at), 1);
        close(fd);
}

/* The k of the last instruction of the stored program. */
static void tamper_program(void)
{
        flip(-4, 0x5a);
}

Test(seccomp_cache, stored_and_loaded_programs_are_libseccomps_own)
{
        struct spec *spec = load_profile();
        struct seccomp_filter *fresh = build(spec->seccomp, NULL);
        struct seccomp_filter *stored = build(spec->seccomp, root);
        find_cache_file();
        struct seccomp_filter *loaded = build(spec->seccomp, root);
        size_t n;
        seccomp_filter_program(fresh, &n);
        cr_expect_gt(n, 100, "the default profile compiles to %zu instructions", n);
        cr_expect(same_program(fresh, stored), "the program of a cache miss differs");
        cr_expect(same_program(fresh, loaded), "the program from the cache differs");
        struct stat st;
        cr_assert_eq(stat(cache_file, &st), 0);
        cr_expect_eq(st.st_mode & 0777, 0600);
        seccomp_filter_free(fresh);
        seccomp_filter_free(stored);
        seccomp_filter_free(loaded);
        spec_free(spec);
}

/* A file the runtime's user wrote is what gets loaded: which is why only
 * such a file is read at all (the tests below). */
Test(seccomp_cache, a_trusted_file_is_used_as_it_is)
{
        struct spec *spec = load_profile();
        struct seccomp_filter *fresh = build(spec->seccomp, root);
        find_cache_file();
        tamper_program();
        struct seccomp_filter *loaded = build(spec->seccomp, root);
        cr_expect_not(same_program(fresh, loaded), "the cache file was not read");
        seccomp_filter_free(fresh);
        seccomp_filter_free(loaded);
        spec_free(spec);
}

/* Each way a file or directory could have come from someone else: the
 * tampered program must not be loaded, the compiled one is. */
static void expect_ignored(void (*untrust)(void))
{
        struct spec *spec = load_profile();
        struct seccomp_filter *fresh = build(spec->seccomp, NULL);
        seccomp_filter_free(build(spec->seccomp, root));
        find_cache_file();
        tamper_program();
        untrust();
        struct seccomp_filter *loaded = build(spec->seccomp, root);
        cr_expect(same_program(fresh, loaded), "an untrusted cache file was loaded");
        seccomp_filter_free(fresh);
        seccomp_filter_free(loaded);
        spec_free(spec);
}

static void group_writable(void)
{
        cr_assert_eq(chmod(cache_file, 0620), 0);
}

static void other_writable(void)
{
        cr_assert_eq(chmod(cache_file, 0602), 0);
}

static void open_directory(void)
{
        char dir[96];
        snprintf(dir, sizeof(dir), "%s/.seccomp", root);
        cr_assert_eq(chmod(dir, 0755), 0);
}

static void hard_linked(void)
{
        char other[96];
        snprintf(other, sizeof(other), "%s/elsewhere", root);
        cr_assert_eq(link(cache_file, other), 0);
}

static void symlinked(void)
{
        char moved[96];
        snprintf(moved, sizeof(moved), "%s/moved", root);
        cr_assert_eq(rename(cache_file, moved), 0);
        cr_assert_eq(symlink(moved, cache_file), 0);
}

static void truncated(void)
{
        struct stat st;
        cr_assert_eq(stat(cache_file, &st), 0);
        cr_assert_eq(truncate(cache_file, st.st_size - 1), 0);
}

static void key_changed(void)
{
        flip(20, 1);
}

static void foreign_owner(void)
{
        if (geteuid() != 0)
                cr_skip_test("changing a file's owner needs root");
        cr_assert_eq(chown(cache_file, 65534, 65534), 0);
}

Test(seccomp_cache, a_group_writable_file_is_ignored)
{
        expect_ignored(group_writable);
}
Test(seccomp_cache, an_other_writable_file_is_ignored)
{
        expect_ignored(other_writable);
}
Test(seccomp_cache, a_directory_others_may_enter_is_ignored)
{
        expect_ignored(open_directory);
}
Test(seccomp_cache, a_hard_linked_file_is_ignored)
{
        expect_ignored(hard_linked);
}
Test(seccomp_cache, a_symlink_is_not_followed)
{
        expect_ignored(symlinked);
}
Test(seccomp_cache, a_file_of_another_length_is_ignored)
{
        expect_ignored(truncated);
}
Test(seccomp_cache, a_file_of_another_key_is_ignored)
{
        expect_ignored(key_changed);
}
Test(seccomp_cache, a_file_of_another_owner_is_ignored)
{
        expect_ignored(foreign_owner);
}

static const char *getcwd_name[] = {"getcwd"};
static const char *newline_names[] = {"a\nb"};
static const char *two_names[] = {"a", "b"};

Test(seccomp_cache, profiles_do_not_share_a_program)
{
        struct spec *spec = load_profile();
        struct spec_seccomp_rule rule = {
            .names = getcwd_name, .n_names = 1, .action = SPEC_SCMP_ERRNO};
        struct spec_seccomp small = {
            .default_action = SPEC_SCMP_ALLOW, .rules = &rule, .n_rules = 1};
        struct seccomp_filter *big = build(spec->seccomp, root);
        struct seccomp_filter *little = build(&small, root);
        struct seccomp_filter *big_again = build(spec->seccomp, root);
        struct seccomp_filter *little_fresh = build(&small, NULL);
        cr_expect(same_program(big, big_again));
        cr_expect(same_program(little, little_fresh));
        cr_expect_not(same_program(big, little));
        seccomp_filter_free(big);
        seccomp_filter_free(little);
        seccomp_filter_free(big_again);
        seccomp_filter_free(little_fresh);
        spec_free(spec);
}

Test(seccomp_cache, keys_tell_every_profile_apart)
{
        struct spec_seccomp_rule one = {.names = newline_names, .n_names = 1};
        struct spec_seccomp_rule two = {.names = two_names, .n_names = 2};
        struct spec_seccomp a = {.rules = &one, .n_rules = 1};
        struct spec_seccomp b = {.rules = &two, .n_rules = 1};
        size_t la, lb;
        _cleanup_free_ char *ka = seccomp_cache_key(&a, &la);
        _cleanup_free_ char *kb = seccomp_cache_key(&b, &lb);
        cr_assert(ka && kb);
        cr_expect(la != lb || memcmp(ka, kb, la) != 0, "one name \"a\\nb\" keys as \"a\", \"b\"");
        struct spec_seccomp_arg arg = {.index = 1, .value = 2, .op = SPEC_SCMP_CMP_EQ};
        struct spec_seccomp_rule with_arg = one;
        with_arg.args = &arg;
        with_arg.n_args = 1;
        struct spec_seccomp c = {.rules = &with_arg, .n_rules = 1};
        size_t lc;
        _cleanup_free_ char *kc = seccomp_cache_key(&c, &lc);
        cr_expect(la != lc || memcmp(ka, kc, la) != 0, "an argument comparison is not in the key");
}

Test(seccomp_cache, a_full_cache_starts_over)
{
        int fd = seccomp_cache_open(root);
        cr_assert_geq(fd, 0);
        struct sock_filter insn = {0};
        for (int i = 0; i < 100; i++) {
                char key[16];
                int len = snprintf(key, sizeof(key), "key %d", i);
                seccomp_cache_put(fd, key, (size_t)len, &insn, 1);
        }
        size_t files = 0;
        DIR *d = fdopendir(fd);
        struct dirent *e;
        while ((e = readdir(d)))
                files += e->d_name[0] != '.';
        closedir(d);
        cr_expect_gt(files, 0);
        cr_expect_leq(files, 64, "%zu files in the cache", files);
}
