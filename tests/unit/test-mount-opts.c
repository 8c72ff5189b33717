/* mount_opts_parse, and the path resolution inside a root that every mount
 * destination goes through (runs unprivileged: openat2 needs no root). */
#include "runtime/mounts.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define PARSE(o, ...)                                                                              \
        do {                                                                                       \
                const char *opts_[] = {__VA_ARGS__};                                               \
                _cleanup_error_ struct umw_error *err_ = NULL;                                     \
                cr_assert_eq(mount_opts_parse(opts_, ARRAY_SIZE(opts_), (o), &err_), 0, "%s",      \
                             err_ ? err_->msg : "?");                                              \
        } while (0)

Test(mount_opts, nothing_given_is_all_zero)
{
        struct mount_opts o;
        cr_assert_eq(mount_opts_parse(NULL, 0, &o, NULL), 0);
        cr_assert_eq(o.flags, 0);
        cr_assert_eq(o.clear, 0);
        cr_assert_eq(o.propagation, 0);
        cr_assert_not(o.bind);
        cr_assert_not(o.recursive);
        cr_assert_not(o.tmpcopyup);
        cr_assert_null(o.data);
}

Test(mount_opts, podman_proc)
{
        struct mount_opts o;
        PARSE(&o, "nosuid", "noexec", "nodev");
        cr_assert_eq(o.flags, MS_NOSUID | MS_NOEXEC | MS_NODEV);
        cr_assert_eq(o.clear, 0);
        cr_assert_null(o.data);
        mount_opts_release(&o);
}

Test(mount_opts, podman_dev_tmpfs_keeps_data_in_order)
{
        struct mount_opts o;
        PARSE(&o, "nosuid", "noexec", "strictatime", "mode=755", "size=65536k");
        cr_assert_eq(o.flags, MS_NOSUID | MS_NOEXEC | MS_STRICTATIME);
        cr_assert_str_eq(o.data, "mode=755,size=65536k");
        mount_opts_release(&o);
        cr_assert_null(o.data);
}

Test(mount_opts, podman_devpts_flag_like_data_stays_data)
{
        struct mount_opts o;
        PARSE(&o, "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5");
        cr_assert_eq(o.flags, MS_NOSUID | MS_NOEXEC);
        cr_assert_str_eq(o.data, "newinstance,ptmxmode=0666,mode=0620,gid=5");
        mount_opts_release(&o);
}

Test(mount_opts, podman_cgroup)
{
        struct mount_opts o;
        PARSE(&o, "rprivate", "nosuid", "noexec", "nodev", "relatime", "ro");
        cr_assert_eq(o.flags, MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RELATIME | MS_RDONLY);
        cr_assert_eq(o.propagation, MS_PRIVATE | MS_REC);
        cr_assert_null(o.data);
        mount_opts_release(&o);
}

Test(mount_opts, podman_bind)
{
        struct mount_opts o;
        PARSE(&o, "bind", "rprivate", "nosuid", "noexec", "nodev");
        cr_assert(o.bind);
        cr_assert_not(o.recursive);
        cr_assert_eq(o.flags, MS_BIND | MS_NOSUID | MS_NOEXEC | MS_NODEV);
        cr_assert_eq(o.propagation, MS_PRIVATE | MS_REC);
        mount_opts_release(&o);
}

Test(mount_opts, rbind_is_recursive_even_after_bind)
{
        struct mount_opts o;
        PARSE(&o, "rbind", "bind");
        cr_assert(o.bind);
        cr_assert(o.recursive);
        cr_assert_eq(o.flags, MS_BIND | MS_REC);
        mount_opts_release(&o);
}

struct flag_case {
        const char *name;
        unsigned long set, clr;
};

Test(mount_opts, every_flag_option)
{
        static const struct flag_case cases[] = {
            {"ro", MS_RDONLY, 0},
            {"rw", 0, MS_RDONLY},
            {"nosuid", MS_NOSUID, 0},
            {"suid", 0, MS_NOSUID},
            {"nodev", MS_NODEV, 0},
            {"dev", 0, MS_NODEV},
            {"noexec", MS_NOEXEC, 0},
            {"exec", 0, MS_NOEXEC},
            {"sync", MS_SYNCHRONOUS, 0},
            {"async", 0, MS_SYNCHRONOUS},
            {"dirsync", MS_DIRSYNC, 0},
            {"remount", MS_REMOUNT, 0},
            {"mand", MS_MANDLOCK, 0},
            {"nomand", 0, MS_MANDLOCK},
            {"atime", 0, MS_NOATIME},
            {"noatime", MS_NOATIME, MS_RELATIME | MS_STRICTATIME},
            {"diratime", 0, MS_NODIRATIME},
            {"nodiratime", MS_NODIRATIME, 0},
            {"relatime", MS_RELATIME, MS_NOATIME | MS_STRICTATIME},
            {"norelatime", 0, MS_RELATIME},
            {"strictatime", MS_STRICTATIME, MS_NOATIME | MS_RELATIME},
            {"nostrictatime", 0, MS_STRICTATIME},
            {"nosymfollow", MS_NOSYMFOLLOW, 0},
            {"symfollow", 0, MS_NOSYMFOLLOW},
            {"defaults", 0, 0},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct mount_opts o;
                const char *opt[] = {cases[i].name};
                cr_assert_eq(mount_opts_parse(opt, 1, &o, NULL), 0, "%s", cases[i].name);
                cr_expect_eq(o.flags, cases[i].set, "%s: flags %#lx", cases[i].name, o.flags);
                cr_expect_eq(o.clear, cases[i].clr, "%s: clear %#lx", cases[i].name, o.clear);
                cr_expect_null(o.data, "%s went to data", cases[i].name);
                cr_expect_eq(o.propagation, 0, "%s", cases[i].name);
                mount_opts_release(&o);
        }
}

Test(mount_opts, later_option_wins)
{
        struct mount_opts o;
        PARSE(&o, "ro", "nosuid", "rw", "suid");
        cr_assert_eq(o.flags, 0);
        cr_assert_eq(o.clear, MS_RDONLY | MS_NOSUID);
        mount_opts_release(&o);

        PARSE(&o, "rw", "ro");
        cr_assert_eq(o.flags, MS_RDONLY);
        cr_assert_eq(o.clear, 0);
        mount_opts_release(&o);
}

Test(mount_opts, atime_modes_exclude_each_other)
{
        struct mount_opts o;
        PARSE(&o, "noatime", "relatime", "strictatime");
        cr_assert_eq(o.flags, MS_STRICTATIME);
        mount_opts_release(&o);

        PARSE(&o, "strictatime", "noatime", "nodiratime");
        cr_assert_eq(o.flags, MS_NOATIME | MS_NODIRATIME);
        mount_opts_release(&o);
}

Test(mount_opts, every_propagation_and_last_wins)
{
        static const struct {
                const char *name;
                unsigned long flags;
        } cases[] = {
            {"private", MS_PRIVATE},       {"rprivate", MS_PRIVATE | MS_REC},
            {"shared", MS_SHARED},         {"rshared", MS_SHARED | MS_REC},
            {"slave", MS_SLAVE},           {"rslave", MS_SLAVE | MS_REC},
            {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct mount_opts o;
                const char *opt[] = {"rshared", cases[i].name};
                cr_assert_eq(mount_opts_parse(opt, 2, &o, NULL), 0);
                cr_expect_eq(o.propagation, cases[i].flags, "%s", cases[i].name);
                cr_expect_eq(o.flags, 0, "%s", cases[i].name);
                mount_opts_release(&o);
        }
}

Test(mount_opts, tmpcopyup_and_its_negation)
{
        struct mount_opts o;
        PARSE(&o, "tmpcopyup", "mode=1777");
        cr_assert(o.tmpcopyup);
        cr_assert_str_eq(o.data, "mode=1777");
        mount_opts_release(&o);

        PARSE(&o, "tmpcopyup", "notmpcopyup");
        cr_assert_not(o.tmpcopyup);
        cr_assert_null(o.data);
        mount_opts_release(&o);
}

Test(mount_opts, idmap_and_ridmap)
{
        struct mount_opts o;
        PARSE(&o, "rbind", "idmap");
        cr_assert(o.idmap);
        cr_assert_not(o.ridmap);
        cr_assert_null(o.data);
        mount_opts_release(&o);

        PARSE(&o, "rbind", "ridmap");
        cr_assert(o.idmap);
        cr_assert(o.ridmap);
        mount_opts_release(&o);
}

Test(mount_opts, idmap_with_a_value_is_refused_as_config_error)
{
        static const char *bad[] = {"idmap=uids=0-1000-10;gids=0-1000-10", "ridmap=uids=0-1-1"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                struct mount_opts o = {0};
                _cleanup_error_ struct umw_error *err = NULL;
                const char *opt[] = {"ro", "size=1k", bad[i]};
                cr_assert_lt(mount_opts_parse(opt, 3, &o, &err), 0, "%s accepted", bad[i]);
                cr_assert_not_null(err);
                cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
                cr_assert_not_null(strstr(err->msg, bad[i]), "%s", err->msg);
                cr_assert_null(o.data);
        }
}

Test(mount_opts, unknown_and_empty_options)
{
        struct mount_opts o;
        PARSE(&o, "", "x-systemd.automount", "ro", "context=\"a,b\"", "norecovery");
        cr_assert_eq(o.flags, MS_RDONLY);
        cr_assert_str_eq(o.data, "x-systemd.automount,context=\"a,b\",norecovery");
        mount_opts_release(&o);
}

/* ---- resolution inside a root ---- */

static char tmp_root[PATH_MAX];
static int root_fd = -1;

static void make_root(void)
{
        snprintf(tmp_root, sizeof(tmp_root), "/tmp/umw-test-root.XXXXXX");
        cr_assert_not_null(mkdtemp(tmp_root));
        root_fd = open(tmp_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(root_fd, 0);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        return remove(path);
}

static void remove_root(void)
{
        close(root_fd);
        nftw(tmp_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void in_root(char *buf, size_t size, const char *rel)
{
        snprintf(buf, size, "%s/%s", tmp_root, rel);
}

static void assert_kind(const char *rel, mode_t kind)
{
        char p[PATH_MAX];
        struct stat st;
        in_root(p, sizeof(p), rel);
        cr_assert_eq(lstat(p, &st), 0, "%s missing", p);
        cr_assert_eq(st.st_mode & S_IFMT, kind, "%s: mode %o", p, st.st_mode);
}

static int create(const char *path, enum root_create kind)
{
        _cleanup_error_ struct umw_error *err = NULL;
        int fd = root_open_create(root_fd, path, kind, &err);
        cr_assert_geq(fd, 0, "%s: %s", path, err ? err->msg : "?");
        return fd;
}

static void symlink_in_root(const char *target, const char *rel)
{
        char p[PATH_MAX];
        in_root(p, sizeof(p), rel);
        cr_assert_eq(symlink(target, p), 0, "symlink %s", p);
}

TestSuite(root_path, .init = make_root, .fini = remove_root);

Test(root_path, creates_missing_directories_and_file)
{
        _cleanup_close_ int d = create("/a/b/c", ROOT_CREATE_DIR);
        _cleanup_close_ int f = create("/x/y/file", ROOT_CREATE_FILE);
        assert_kind("a/b/c", S_IFDIR);
        assert_kind("x/y", S_IFDIR);
        assert_kind("x/y/file", S_IFREG);
        struct stat st;
        cr_assert_eq(fstat(f, &st), 0);
        cr_assert(S_ISREG(st.st_mode));
}

Test(root_path, existing_path_is_opened_not_recreated)
{
        char p[PATH_MAX];
        in_root(p, sizeof(p), "etc");
        cr_assert_eq(mkdir(p, 0700), 0);
        _cleanup_close_ int fd = create("/etc", ROOT_CREATE_DIR);
        struct stat st;
        cr_assert_eq(stat(p, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0700);
}

Test(root_path, absolute_symlink_stays_inside)
{
        char outside[PATH_MAX];
        snprintf(outside, sizeof(outside), "%s-outside", tmp_root);
        cr_assert_eq(mkdir(outside, 0755), 0);
        symlink_in_root(outside, "evil");
        symlink_in_root("/", "slash");
        _cleanup_close_ int a = create("/evil/sub", ROOT_CREATE_DIR);
        _cleanup_close_ int b = create("/slash/etc/passwd-mountpoint", ROOT_CREATE_FILE);
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/sub", outside);
        cr_assert_neq(access(p, F_OK), 0, "created outside the root: %s", p);
        rmdir(outside);
        cr_assert_neq(access("/etc/passwd-mountpoint", F_OK), 0);
        /* The link target was taken inside the root. */
        snprintf(p, sizeof(p), "%s%s/sub", tmp_root, outside);
        cr_assert_eq(access(p, F_OK), 0, "%s missing", p);
        assert_kind("etc/passwd-mountpoint", S_IFREG);
}

Test(root_path, dotdot_cannot_climb_out)
{
        _cleanup_close_ int fd = create("/../../../../tmpdotdot", ROOT_CREATE_DIR);
        assert_kind("tmpdotdot", S_IFDIR);
        cr_assert_neq(access("/tmpdotdot", F_OK), 0);
}

Test(root_path, dangling_relative_symlink_is_created_at_its_target)
{
        char p[PATH_MAX];
        in_root(p, sizeof(p), "etc");
        cr_assert_eq(mkdir(p, 0755), 0);
        symlink_in_root("../run/systemd/resolve/stub-resolv.conf", "etc/resolv.conf");
        _cleanup_close_ int fd = create("/etc/resolv.conf", ROOT_CREATE_FILE);
        assert_kind("run/systemd/resolve/stub-resolv.conf", S_IFREG);
        assert_kind("etc/resolv.conf", S_IFLNK);
}

Test(root_path, dangling_symlink_in_the_middle)
{
        symlink_in_root("/real/var", "var");
        _cleanup_close_ int fd = create("/var/lib/x", ROOT_CREATE_DIR);
        assert_kind("real/var/lib/x", S_IFDIR);
}

Test(root_path, symlink_loop_is_an_error)
{
        symlink_in_root("b", "a");
        symlink_in_root("a", "b");
        _cleanup_error_ struct umw_error *err = NULL;
        int fd = root_open_create(root_fd, "/a/x", ROOT_CREATE_DIR, &err);
        cr_assert_lt(fd, 0);
        cr_assert_not_null(err);
}

Test(root_path, file_in_the_way_of_a_directory_is_an_error)
{
        _cleanup_close_ int f = create("/file", ROOT_CREATE_FILE);
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(root_open_create(root_fd, "/file/sub", ROOT_CREATE_DIR, &err), 0);
        cr_assert_not_null(err);
}

Test(root_path, root_openat_reports_errno_without_error_object)
{
        cr_assert_eq(root_openat(root_fd, "/nope", O_PATH, 0), -ENOENT);
        symlink_in_root("/", "up");
        cr_assert_eq(root_openat(root_fd, "/up", O_PATH, RESOLVE_NO_SYMLINKS), -ELOOP);
        int fd = root_openat(root_fd, "/", O_PATH | O_DIRECTORY, 0);
        cr_assert_geq(fd, 0);
        close(fd);
}
