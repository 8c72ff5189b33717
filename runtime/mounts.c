/* The spec's mounts. Every destination is resolved inside the rootfs with
 * openat2(RESOLVE_IN_ROOT) and every mount is attached to that fd with
 * move_mount(), so nothing the rootfs contains can redirect a mount outside
 * it, and no string path is looked up twice. */
#include "mounts.h"
#include "spec.h"
#include "src/common/cleanup.h"
#include "src/common/error.h"
#include "src/common/fdio.h"
#include "src/common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Same bound as the kernel's own symlink resolution. */
#define MAX_SYMLINK_HOPS 40
#define HOST_CGROUP_ROOT "/sys/fs/cgroup"
/* tmpcopyup never descends deeper than this: a deeper tree is not an image. */
#define MAX_COPY_DEPTH 128

struct flag_opt {
        const char *name;
        unsigned long set, clr;
};

/* The atime modes exclude each other: setting one clears the other two. */
static const struct flag_opt flag_opts[] = {
    {"defaults", 0, 0},
    {"ro", MS_RDONLY, 0},
    {"rw", 0, MS_RDONLY},
    {"suid", 0, MS_NOSUID},
    {"nosuid", MS_NOSUID, 0},
    {"dev", 0, MS_NODEV},
    {"nodev", MS_NODEV, 0},
    {"exec", 0, MS_NOEXEC},
    {"noexec", MS_NOEXEC, 0},
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
};

static const struct {
        const char *name;
        unsigned long flags;
} propagation_opts[] = {
    {"private", MS_PRIVATE},       {"rprivate", MS_PRIVATE | MS_REC},
    {"shared", MS_SHARED},         {"rshared", MS_SHARED | MS_REC},
    {"slave", MS_SLAVE},           {"rslave", MS_SLAVE | MS_REC},
    {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC},
};

static bool parse_flag_opt(const char *opt, struct mount_opts *o)
{
        for (size_t i = 0; i < ARRAY_SIZE(flag_opts); i++) {
                if (strcmp(opt, flag_opts[i].name) != 0)
                        continue;
                o->flags = (o->flags & ~flag_opts[i].clr) | flag_opts[i].set;
                o->clear = (o->clear & ~flag_opts[i].set) | flag_opts[i].clr;
                return true;
        }
        for (size_t i = 0; i < ARRAY_SIZE(propagation_opts); i++) {
                if (strcmp(opt, propagation_opts[i].name) == 0) {
                        o->propagation = propagation_opts[i].flags;
                        return true;
                }
        }
        if (strcmp(opt, "bind") == 0 || strcmp(opt, "rbind") == 0) {
                o->bind = true;
                o->recursive = o->recursive || opt[0] == 'r';
                o->flags |= MS_BIND | (o->recursive ? MS_REC : 0);
                return true;
        }
        if (strcmp(opt, "tmpcopyup") == 0 || strcmp(opt, "notmpcopyup") == 0) {
                o->tmpcopyup = opt[0] == 't';
                return true;
        }
        return false;
}

static int append_data(char **data, size_t *len, const char *opt)
{
        size_t n = strlen(opt);
        char *p = realloc(*data, *len + n + 2);
        if (!p)
                return -ENOMEM;
        if (*len > 0)
                p[(*len)++] = ',';
        memcpy(p + *len, opt, n + 1);
        *len += n;
        *data = p;
        return 0;
}

int mount_opts_parse(const char *const *options, size_t n, struct mount_opts *out,
                     struct umw_error **err)
{
        struct mount_opts o = {0};
        size_t len = 0;
        for (size_t i = 0; i < n; i++) {
                const char *opt = options[i];
                if (!opt || !*opt || parse_flag_opt(opt, &o))
                        continue;
                if (strcmp(opt, "idmap") == 0 || strcmp(opt, "ridmap") == 0 ||
                    strncmp(opt, "idmap=", 6) == 0) {
                        mount_opts_release(&o);
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "mount option \"%s\": idmapped mounts are not supported",
                                        opt);
                }
                if (append_data(&o.data, &len, opt) < 0) {
                        mount_opts_release(&o);
                        return umw_fail_sys(err, ENOMEM, "mount options");
                }
        }
        *out = o;
        return 0;
}

void mount_opts_release(struct mount_opts *o)
{
        free(o->data);
        o->data = NULL;
}

/* ---- path resolution inside the rootfs ---- */

int root_openat(int root_fd, const char *path, int flags, unsigned long long resolve)
{
        struct open_how how = {
            .flags = (unsigned long long)(flags | O_CLOEXEC),
            .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | resolve,
        };
        while (*path == '/')
                path++;
        if (*path == '\0')
                path = ".";
        /* EAGAIN: a concurrent rename made ".." ambiguous; the kernel asks to retry. */
        for (int tries = 0; tries < 16; tries++) {
                int fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
                if (fd >= 0)
                        return fd;
                if (errno != EAGAIN)
                        return -errno;
        }
        return -EAGAIN;
}

/* Replaces the dangling symlink at cur[start,...) by its target, followed by
 * rest: an absolute target restarts from the root, a relative one from the
 * link's directory. */
static int splice_symlink(char **cur, size_t start, const char *rest, int parent_fd)
{
        char target[PATH_MAX];
        ssize_t n = readlinkat(parent_fd, *cur + start, target, sizeof(target) - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';
        char *next = NULL;
        int r;
        const char *sep = *rest ? "/" : "";
        if (target[0] == '/')
                r = asprintf(&next, "%s%s%s", target, sep, rest);
        else
                r = asprintf(&next, "%.*s%s%s%s", (int)start, *cur, target, sep, rest);
        if (r < 0)
                return -ENOMEM;
        free(*cur);
        *cur = next;
        return 0;
}

/* The component at cur[start] (NUL-terminated for now; rest is what followed
 * it) does not resolve. Creates it in its parent without following anything,
 * or, when it is a dangling symlink, splices the link in and returns 1 so the
 * walk restarts. */
static int create_component(int root_fd, char **cur, size_t start, const char *rest, bool last,
                            enum root_create create, struct umw_error **err)
{
        char *name = *cur + start;
        _cleanup_free_ char *parent = strndup(*cur, start);
        if (!parent)
                return umw_fail_sys(err, ENOMEM, "path");
        _cleanup_close_ int parent_fd = root_openat(root_fd, parent, O_PATH | O_DIRECTORY, 0);
        if (parent_fd < 0)
                return umw_fail_sys(err, -parent_fd, "open %s in rootfs", *cur);
        struct stat st;
        if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (!S_ISLNK(st.st_mode))
                        return 0; /* appeared meanwhile */
                int r = splice_symlink(cur, start, rest, parent_fd);
                return r < 0 ? umw_fail_sys(err, -r, "follow symlink %s in rootfs", name) : 1;
        }
        if (errno != ENOENT)
                return umw_fail_errno(err, "stat %s in rootfs", *cur);
        if (last && create == ROOT_CREATE_FILE) {
                int fd = openat(parent_fd, name,
                                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd < 0 && errno != EEXIST)
                        return umw_fail_errno(err, "create %s in rootfs", *cur);
                if (fd >= 0)
                        close(fd);
                return 0;
        }
        if (mkdirat(parent_fd, name, 0755) < 0 && errno != EEXIST)
                return umw_fail_errno(err, "mkdir %s in rootfs", *cur);
        return 0;
}

int root_open_create(int root_fd, const char *path, enum root_create create, struct umw_error **err)
{
        _cleanup_free_ char *cur = strdup(path);
        if (!cur)
                return umw_fail_sys(err, ENOMEM, "path");
        int hops = 0;
        size_t end = 0;
        while (cur[end] != '\0') {
                size_t start = end + strspn(cur + end, "/");
                end = start + strcspn(cur + start, "/");
                if (start == end)
                        break;
                bool last = cur[end + strspn(cur + end, "/")] == '\0';
                char saved = cur[end];
                cur[end] = '\0';
                int fd = root_openat(root_fd, cur, O_PATH, 0);
                if (fd == -ENOENT) {
                        const char *rest = saved ? cur + end + 1 : "";
                        int r = create_component(root_fd, &cur, start, rest, last, create, err);
                        if (r < 0)
                                return umw_error_prefix(err, "mount point %s", path);
                        if (r > 0) {
                                if (++hops > MAX_SYMLINK_HOPS)
                                        return umw_fail_sys(err, ELOOP, "mount point %s", path);
                                end = 0;
                                continue;
                        }
                        fd = root_openat(root_fd, cur, O_PATH, 0);
                }
                if (fd < 0)
                        return umw_fail_sys(err, -fd, "open %s in rootfs", cur);
                close(fd);
                cur[end] = saved;
        }
        int fd = root_openat(root_fd, cur, O_PATH, 0);
        if (fd < 0)
                return umw_fail_sys(err, -fd, "open %s in rootfs", path);
        return fd;
}

/* ---- attaching mounts ---- */

static void opts_to_attr(const struct mount_opts *o, struct mount_attr *a)
{
        static const struct {
                unsigned long ms;
                uint64_t attr;
        } map[] = {
            {MS_RDONLY, MOUNT_ATTR_RDONLY},         {MS_NOSUID, MOUNT_ATTR_NOSUID},
            {MS_NODEV, MOUNT_ATTR_NODEV},           {MS_NOEXEC, MOUNT_ATTR_NOEXEC},
            {MS_NODIRATIME, MOUNT_ATTR_NODIRATIME}, {MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW},
        };
        for (size_t i = 0; i < ARRAY_SIZE(map); i++) {
                if (o->flags & map[i].ms)
                        a->attr_set |= map[i].attr;
                else if (o->clear & map[i].ms)
                        a->attr_clr |= map[i].attr;
        }
        /* The atime mode is one field: changing it means clearing all of it. */
        uint64_t atime;
        if (o->flags & MS_NOATIME)
                atime = MOUNT_ATTR_NOATIME;
        else if (o->flags & MS_STRICTATIME)
                atime = MOUNT_ATTR_STRICTATIME;
        else if (o->flags & MS_RELATIME || o->clear & (MS_NOATIME | MS_STRICTATIME))
                atime = MOUNT_ATTR_RELATIME;
        else
                return;
        a->attr_set |= atime;
        a->attr_clr |= MOUNT_ATTR__ATIME;
}

static int attach_mount(int mnt_fd, int dest_fd)
{
        if (move_mount(mnt_fd, "", dest_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) <
            0)
                return -errno;
        return 0;
}

static int set_attr(int mnt_fd, struct mount_attr *a, bool recursive)
{
        if (!a->attr_set && !a->attr_clr && !a->propagation)
                return 0;
        unsigned int flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
        if (mount_setattr(mnt_fd, "", flags, a, sizeof(*a)) < 0)
                return -errno;
        return 0;
}

/* A clone of source (with its submounts when recursive), opts applied. */
static int bind_tree(const char *source, const struct mount_opts *o, bool recursive,
                     struct umw_error **err)
{
        unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0);
        _cleanup_close_ int fd = open_tree(AT_FDCWD, source, flags);
        if (fd < 0)
                return umw_fail_errno(err, "bind %s", source);
        struct mount_attr a = {0};
        opts_to_attr(o, &a);
        int r = set_attr(fd, &a, recursive);
        if (r < 0)
                return umw_fail_sys(err, -r, "set mount flags of %s", source);
        return TAKE_FD(fd);
}

/* The filesystem context's own explanation of a failure, if it left one. */
static int fs_fail(int fs, int errnum, struct umw_error **err, const char *what, const char *key)
{
        char buf[512];
        ssize_t n = read(fs, buf, sizeof(buf) - 1);
        if (n > 2) {
                buf[n] = '\0';
                buf[strcspn(buf, "\n")] = '\0';
                return umw_fail_sys(err, errnum, "%s %s (%s)", what, key, buf + 2);
        }
        return umw_fail_sys(err, errnum, "%s %s", what, key);
}

/* Splits data at commas that are not inside double quotes (SELinux contexts). */
static char *next_data_opt(char **cursor)
{
        char *s = *cursor;
        if (!s || !*s)
                return NULL;
        bool quoted = false;
        char *p = s;
        for (; *p && (quoted || *p != ','); p++)
                if (*p == '"')
                        quoted = !quoted;
        *cursor = *p ? p + 1 : p;
        *p = '\0';
        return s;
}

static int fs_config_data(int fs, const char *type, const char *data, bool in_userns,
                          struct umw_error **err)
{
        _cleanup_free_ char *copy = data ? strdup(data) : NULL;
        if (data && !copy)
                return umw_fail_sys(err, ENOMEM, "mount data");
        char *cursor = copy, *opt;
        while ((opt = next_data_opt(&cursor))) {
                char *eq = strchr(opt, '=');
                int r;
                if (eq) {
                        *eq = '\0';
                        r = fsconfig(fs, FSCONFIG_SET_STRING, opt, eq + 1, 0);
                } else {
                        r = fsconfig(fs, FSCONFIG_SET_FLAG, opt, NULL, 0);
                }
                /* gid=5 for devpts names a group the user namespace may not map. */
                if (r < 0 && errno == EINVAL && in_userns && strcmp(type, "devpts") == 0 &&
                    strcmp(opt, "gid") == 0) {
                        umw_debug("devpts: gid=%s not mapped in the user namespace, dropped",
                                  eq + 1);
                        continue;
                }
                if (r < 0)
                        return fs_fail(fs, errno, err, "mount option", opt);
        }
        return 0;
}

/* A new, detached instance of filesystem `type`; -EPERM is returned with the
 * error recorded so the caller may fall back to a bind. */
static int fs_new(const char *type, const char *source, const struct mount_opts *o, bool writable,
                  bool in_userns, struct umw_error **err)
{
        static const struct {
                unsigned long ms;
                const char *key;
        } sb_flags[] = {{MS_SYNCHRONOUS, "sync"}, {MS_DIRSYNC, "dirsync"}, {MS_MANDLOCK, "mand"}};
        _cleanup_close_ int fs = fsopen(type, FSOPEN_CLOEXEC);
        if (fs < 0)
                return umw_fail_errno(err, "filesystem %s", type);
        if (source && fsconfig(fs, FSCONFIG_SET_STRING, "source", source, 0) < 0)
                return fs_fail(fs, errno, err, "mount source", source);
        for (size_t i = 0; i < ARRAY_SIZE(sb_flags); i++)
                if (o->flags & sb_flags[i].ms &&
                    fsconfig(fs, FSCONFIG_SET_FLAG, sb_flags[i].key, NULL, 0) < 0)
                        return fs_fail(fs, errno, err, "mount option", sb_flags[i].key);
        int r = fs_config_data(fs, type, o->data, in_userns, err);
        if (r < 0)
                return r;
        if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return fs_fail(fs, errno, err, "create filesystem", type);
        struct mount_attr a = {0};
        opts_to_attr(o, &a);
        if (writable)
                a.attr_set &= ~(uint64_t)MOUNT_ATTR_RDONLY;
        int mfd = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned int)a.attr_set);
        if (mfd < 0)
                return umw_fail_errno(err, "mount filesystem %s", type);
        return mfd;
}

/* ---- tmpcopyup ---- */

static int copy_tree(int src, int dst, int depth, struct umw_error **err);

static int copy_file(int src, int dst, const char *name, const struct stat *st,
                     struct umw_error **err)
{
        _cleanup_close_ int in = openat(src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (in < 0)
                return umw_fail_errno(err, "tmpcopyup: open %s", name);
        _cleanup_close_ int out = openat(
            dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st->st_mode & 07777);
        if (out < 0)
                return umw_fail_errno(err, "tmpcopyup: create %s", name);
        for (off_t left = st->st_size; left > 0;) {
                ssize_t n = sendfile(out, in, NULL, (size_t)left);
                if (n < 0)
                        return umw_fail_errno(err, "tmpcopyup: copy %s", name);
                if (n == 0)
                        break;
                left -= n;
        }
        return 0;
}

static int copy_dir(int src, int dst, const char *name, const struct stat *st, int depth,
                    struct umw_error **err)
{
        if (mkdirat(dst, name, 0700) < 0)
                return umw_fail_errno(err, "tmpcopyup: mkdir %s", name);
        _cleanup_close_ int s = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int d = openat(dst, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s < 0 || d < 0)
                return umw_fail_errno(err, "tmpcopyup: open %s", name);
        int r = copy_tree(s, d, depth + 1, err);
        if (r < 0)
                return umw_error_prefix(err, "%s", name);
        return 0;
}

static int copy_entry(int src, int dst, const char *name, int depth, struct umw_error **err)
{
        struct stat st;
        if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return umw_fail_errno(err, "tmpcopyup: stat %s", name);
        int r = 0;
        if (S_ISDIR(st.st_mode)) {
                r = copy_dir(src, dst, name, &st, depth, err);
        } else if (S_ISREG(st.st_mode)) {
                r = copy_file(src, dst, name, &st, err);
        } else if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t n = readlinkat(src, name, target, sizeof(target) - 1);
                if (n < 0)
                        return umw_fail_errno(err, "tmpcopyup: readlink %s", name);
                target[n] = '\0';
                if (symlinkat(target, dst, name) < 0)
                        return umw_fail_errno(err, "tmpcopyup: symlink %s", name);
        } else if (mknodat(dst, name, st.st_mode, st.st_rdev) < 0) {
                return umw_fail_errno(err, "tmpcopyup: mknod %s", name);
        }
        if (r < 0)
                return r;
        if (fchownat(dst, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
                return umw_fail_errno(err, "tmpcopyup: chown %s", name);
        /* Only this process writes the fresh tmpfs, so the name is what we made. */
        if (!S_ISLNK(st.st_mode) && fchmodat(dst, name, st.st_mode & 07777, 0) < 0)
                return umw_fail_errno(err, "tmpcopyup: chmod %s", name);
        return 0;
}

static int copy_tree(int src, int dst, int depth, struct umw_error **err)
{
        if (depth > MAX_COPY_DEPTH)
                return umw_fail_sys(err, ELOOP, "tmpcopyup: tree deeper than %d", MAX_COPY_DEPTH);
        int dfd = openat(src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return umw_fail_errno(err, "tmpcopyup: open directory");
        _cleanup_closedir_ DIR *dir = fdopendir(dfd);
        if (!dir) {
                close(dfd);
                return umw_fail_errno(err, "tmpcopyup: read directory");
        }
        struct dirent *de;
        while ((errno = 0, de = readdir(dir))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                int r = copy_entry(src, dst, de->d_name, depth, err);
                if (r < 0)
                        return r;
        }
        if (errno)
                return umw_fail_errno(err, "tmpcopyup: read directory");
        return 0;
}

/* ---- binds and filesystems ---- */

static bool is_bind(const struct spec_mount *m, const struct mount_opts *o)
{
        return o->bind || (m->type && strcmp(m->type, "bind") == 0);
}

/* Where a bind of source lands: a file source needs a file to mount on. */
static enum root_create mount_point_kind(const char *source)
{
        struct stat st;
        if (source && stat(source, &st) == 0 && !S_ISDIR(st.st_mode))
                return ROOT_CREATE_FILE;
        return ROOT_CREATE_DIR;
}

static int apply_propagation(int mnt_fd, const struct mount_opts *o, struct umw_error **err)
{
        if (!o->propagation)
                return 0;
        struct mount_attr a = {.propagation = o->propagation & ~(unsigned long)MS_REC};
        int r = set_attr(mnt_fd, &a, o->propagation & MS_REC);
        return r < 0 ? umw_fail_sys(err, -r, "set propagation") : 0;
}

/* The mount must have landed on a real procfs (CVE-2019-16884/19921). */
static int check_magic(int rootfs_fd, const char *dest, unsigned long magic, struct umw_error **err)
{
        _cleanup_close_ int fd =
            root_openat(rootfs_fd, dest, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
        struct statfs sfs;
        if (fd < 0 || fstatfs(fd, &sfs) < 0)
                return umw_fail_sys(err, fd < 0 ? -fd : errno, "recheck %s", dest);
        if ((unsigned long)sfs.f_type != magic)
                return umw_fail(err, UMW_EXIT_FAILURE, EPERM,
                                "%s is not the filesystem just mounted there; refusing", dest);
        return 0;
}

static int mount_bind(const struct spec_mount *m, const struct mount_opts *o, int dest_fd,
                      struct umw_error **err)
{
        if (!m->source)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "mounts: bind mount of %s has no source", m->destination);
        if (o->data)
                umw_debug("bind mount %s: options \"%s\" ignored", m->destination, o->data);
        _cleanup_close_ int tree = bind_tree(m->source, o, o->recursive, err);
        if (tree < 0)
                return tree;
        int r = attach_mount(tree, dest_fd);
        if (r < 0)
                return umw_fail_sys(err, -r, "attach bind of %s", m->source);
        return apply_propagation(tree, o, err);
}

/* tmpfs contents from what the destination held before, then its flags. */
static int tmpfs_copy_up(int mnt_fd, int src_dir, const struct mount_opts *o,
                         struct umw_error **err)
{
        int r = copy_tree(src_dir, mnt_fd, 0, err);
        if (r < 0)
                return r;
        if (!(o->flags & MS_RDONLY))
                return 0;
        struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY};
        r = set_attr(mnt_fd, &a, false);
        return r < 0 ? umw_fail_sys(err, -r, "make tmpfs read-only") : 0;
}

/* Without a netns of its own a user namespace may not mount sysfs, nor
 * mqueue without its own ipc namespace: the host's instance is bound. */
static const char *userns_fallback(const char *type)
{
        if (strcmp(type, "sysfs") == 0)
                return "/sys";
        if (strcmp(type, "mqueue") == 0)
                return "/dev/mqueue";
        if (strcmp(type, "cgroup2") == 0)
                return HOST_CGROUP_ROOT;
        return NULL;
}

static int mount_fs(const struct spec_mount *m, const struct mount_opts *o, int rootfs_fd,
                    int dest_fd, bool in_userns, struct umw_error **err)
{
        bool copyup = o->tmpcopyup && strcmp(m->type, "tmpfs") == 0;
        _cleanup_close_ int src_dir = -1;
        if (copyup) {
                src_dir = openat(dest_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (src_dir < 0)
                        return umw_fail_errno(err, "tmpcopyup: open %s", m->destination);
        }
        _cleanup_close_ int mnt = fs_new(m->type, m->source, o, copyup, in_userns, err);
        const char *host = userns_fallback(m->type);
        if (mnt == -EPERM && in_userns && host) {
                umw_debug("%s: new %s refused in the user namespace, binding %s", m->destination,
                          m->type, host);
                umw_error_freep(err);
                mnt = bind_tree(host, o, true, err);
        }
        if (mnt < 0)
                return mnt;
        int r = attach_mount(mnt, dest_fd);
        if (r < 0)
                return umw_fail_sys(err, -r, "attach %s", m->type);
        if (copyup && (r = tmpfs_copy_up(mnt, src_dir, o, err)) < 0)
                return r;
        if (strcmp(m->type, "proc") == 0 &&
            (r = check_magic(rootfs_fd, m->destination, PROC_SUPER_MAGIC, err)) < 0)
                return r;
        return apply_propagation(mnt, o, err);
}

/* ---- type "cgroup" ---- */

#define MOUNTINFO_MAX (4u * 1024 * 1024)

struct cgroup_ctx {
        const struct mount_opts *o;
        bool cgroupns, in_userns;
        char *self_cgroup; /* /proc/self/cgroup */
};

/* Whether every controller of the comma list ctrls is among superopts. */
static bool has_controllers(const char *superopts, const char *ctrls)
{
        _cleanup_free_ char *list = strdup(ctrls);
        char *save = NULL;
        if (!list)
                return false;
        for (char *c = strtok_r(list, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
                size_t n = strlen(c);
                const char *p = superopts;
                while ((p = strstr(p, c)) &&
                       !((p == superopts || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')))
                        p += n;
                if (!p)
                        return false;
        }
        return true;
}

/* Finds this process's line in /proc/self/cgroup for a hierarchy: v1 by its
 * controllers, v2 by the empty list. ctrls and path point into *copy. */
static bool own_cgroup(const char *self_cgroup, bool v2, const char *superopts, char **copy,
                       const char **ctrls, const char **path)
{
        *copy = strdup(self_cgroup);
        char *save = NULL;
        for (char *l = *copy ? strtok_r(*copy, "\n", &save) : NULL; l;
             l = strtok_r(NULL, "\n", &save)) {
                char *c1 = strchr(l, ':');
                char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2)
                        continue;
                *c2 = '\0';
                if (v2 ? c1[1] == '\0' : c1[1] != '\0' && has_controllers(superopts, c1 + 1)) {
                        *ctrls = c1 + 1;
                        *path = c2 + 1;
                        return true;
                }
        }
        return false;
}

/* A detached mount of one hierarchy: in a cgroup namespace a new instance
 * (showing the namespace's root), otherwise a bind of our own cgroup. */
static int cgroup_hierarchy(const struct cgroup_ctx *c, const char *mountpoint, const char *root,
                            const char *fstype, const char *superopts, struct umw_error **err)
{
        bool v2 = strcmp(fstype, "cgroup2") == 0;
        _cleanup_free_ char *copy = NULL;
        const char *ctrls = NULL, *path = NULL;
        if (!own_cgroup(c->self_cgroup, v2, superopts, &copy, &ctrls, &path))
                return umw_fail(err, UMW_EXIT_FAILURE, ENOENT,
                                "no entry in /proc/self/cgroup for %s", mountpoint);
        if (c->cgroupns) {
                struct mount_opts o = {.data = v2 ? NULL : (char *)ctrls};
                return fs_new(fstype, "cgroup", &o, true, c->in_userns, err);
        }
        size_t rl = strlen(root);
        if (strcmp(root, "/") != 0 && strncmp(path, root, rl) == 0)
                path += rl;
        _cleanup_free_ char *source = NULL;
        if (asprintf(&source, "%s/%s", mountpoint, path) < 0)
                return umw_fail_sys(err, ENOMEM, "cgroup path");
        static const struct mount_opts none = {0};
        return bind_tree(source, &none, false, err);
}

static int attach_at(int dir_fd, const char *name, int mnt_fd, struct umw_error **err)
{
        if (mkdirat(dir_fd, name, 0755) < 0 && errno != EEXIST)
                return umw_fail_errno(err, "mkdir %s", name);
        _cleanup_close_ int at =
            openat(dir_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (at < 0)
                return umw_fail_errno(err, "open %s", name);
        int r = attach_mount(mnt_fd, at);
        return r < 0 ? umw_fail_sys(err, -r, "attach cgroup %s", name) : 0;
}

/* One mountinfo line: "id parent dev root mountpoint opts [tags] - fstype src superopts". */
static int cgroup_mountinfo_line(const struct cgroup_ctx *c, char *line, int tmpfs_fd,
                                 struct umw_error **err)
{
        char *f[5], *save = NULL;
        char *p = line;
        for (int i = 0; i < 5; i++, p = NULL)
                if (!(f[i] = strtok_r(p, " ", &save)))
                        return 0;
        char *sep = strstr(save ? save : "", " - ");
        if (!sep)
                return 0;
        char *fstype = strtok_r(sep + 3, " ", &save);
        char *src = strtok_r(NULL, " ", &save);
        char *superopts = strtok_r(NULL, " ", &save);
        const char *prefix = HOST_CGROUP_ROOT "/";
        if (!fstype || !src || !superopts || strncmp(f[4], prefix, strlen(prefix)) != 0)
                return 0;
        const char *name = f[4] + strlen(prefix);
        if (strchr(name, '/') || (strcmp(fstype, "cgroup") != 0 && strcmp(fstype, "cgroup2") != 0))
                return 0;
        _cleanup_close_ int mnt = cgroup_hierarchy(c, f[4], f[3], fstype, superopts, err);
        if (mnt < 0)
                return umw_error_prefix(err, "cgroup hierarchy %s", name);
        return attach_at(tmpfs_fd, name, mnt, err);
}

/* Co-mounted controllers appear twice on the host ("cpu" -> "cpu,cpuacct"). */
static int cgroup_copy_links(int tmpfs_fd, struct umw_error **err)
{
        _cleanup_closedir_ DIR *dir = opendir(HOST_CGROUP_ROOT);
        if (!dir)
                return umw_fail_errno(err, "open %s", HOST_CGROUP_ROOT);
        struct dirent *de;
        while ((de = readdir(dir))) {
                if (de->d_type != DT_LNK)
                        continue;
                char target[PATH_MAX];
                ssize_t n = readlinkat(dirfd(dir), de->d_name, target, sizeof(target) - 1);
                if (n < 0)
                        return umw_fail_errno(err, "readlink %s", de->d_name);
                target[n] = '\0';
                if (symlinkat(target, tmpfs_fd, de->d_name) < 0 && errno != EEXIST)
                        return umw_fail_errno(err, "symlink %s", de->d_name);
        }
        return 0;
}

/* cgroup v1 (or hybrid): a tmpfs holding one mount per host hierarchy. */
static int cgroup_v1(const struct cgroup_ctx *c, int dest_fd, struct umw_error **err)
{
        struct mount_opts tmpfs_opts = {.flags = c->o->flags, .data = (char *)"mode=755"};
        _cleanup_close_ int tmpfs = fs_new("tmpfs", "tmpfs", &tmpfs_opts, true, c->in_userns, err);
        if (tmpfs < 0)
                return tmpfs;
        int r = attach_mount(tmpfs, dest_fd);
        if (r < 0)
                return umw_fail_sys(err, -r, "attach cgroup tmpfs");
        _cleanup_free_ char *info = NULL;
        r = umw_read_file_at(AT_FDCWD, "/proc/self/mountinfo", MOUNTINFO_MAX, &info, NULL, err);
        for (char *save = NULL, *l = r < 0 ? NULL : strtok_r(info, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save))
                if ((r = cgroup_mountinfo_line(c, l, tmpfs, err)) < 0)
                        return r;
        if (r < 0 || (r = cgroup_copy_links(tmpfs, err)) < 0)
                return r;
        struct mount_attr a = {0};
        opts_to_attr(c->o, &a);
        r = set_attr(tmpfs, &a, true);
        if (r < 0)
                return umw_fail_sys(err, -r, "set cgroup mount flags");
        return apply_propagation(tmpfs, c->o, err);
}

static int mount_cgroup(const struct spec *spec, const struct spec_mount *m,
                        const struct mount_opts *o, int rootfs_fd, int dest_fd, bool in_userns,
                        struct umw_error **err)
{
        struct statfs sfs;
        if (statfs(HOST_CGROUP_ROOT, &sfs) < 0)
                return umw_fail_errno(err, "statfs %s", HOST_CGROUP_ROOT);
        if (sfs.f_type == CGROUP2_SUPER_MAGIC) {
                struct spec_mount v2 = *m;
                v2.type = "cgroup2";
                v2.source = "cgroup2";
                return mount_fs(&v2, o, rootfs_fd, dest_fd, in_userns, err);
        }
        struct cgroup_ctx c = {
            .o = o,
            .cgroupns = spec->namespaces[SPEC_NS_CGROUP].enabled,
            .in_userns = in_userns,
        };
        int r = umw_read_file_at(AT_FDCWD, "/proc/self/cgroup", MOUNTINFO_MAX, &c.self_cgroup, NULL,
                                 err);
        if (r == 0)
                r = cgroup_v1(&c, dest_fd, err);
        free(c.self_cgroup);
        return r;
}

/* ---- one spec mount ---- */

/* /proc must be a real directory: no symlink may choose where procfs lands. */
static int open_proc_dest(int rootfs_fd, const char *dest, struct umw_error **err)
{
        int fd = root_openat(rootfs_fd, dest, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
        if (fd == -ENOENT) {
                int r = root_open_create(rootfs_fd, dest, ROOT_CREATE_DIR, err);
                if (r < 0)
                        return r;
                close(r);
                fd = root_openat(rootfs_fd, dest, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
        }
        if (fd < 0)
                return umw_fail_sys(err, -fd, "%s must be a directory in the rootfs, not a symlink",
                                    dest);
        return fd;
}

static int open_dest(const struct spec_mount *m, bool bind, int rootfs_fd, struct umw_error **err)
{
        if (!bind && strcmp(m->type, "proc") == 0)
                return open_proc_dest(rootfs_fd, m->destination, err);
        enum root_create kind = bind ? mount_point_kind(m->source) : ROOT_CREATE_DIR;
        return root_open_create(rootfs_fd, m->destination, kind, err);
}

static int mount_one(const struct spec *spec, const struct spec_mount *m, int rootfs_fd,
                     bool in_userns, struct umw_error **err)
{
        if (!m->destination || m->destination[0] != '/')
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "config.json: mounts[].destination: expected an absolute path");
        struct mount_opts o;
        int r = mount_opts_parse(m->options, m->n_options, &o, err);
        if (r < 0)
                return r;
        bool bind = is_bind(m, &o);
        _cleanup_close_ int dest = -1;
        if (!bind && !m->type)
                r = umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                             "config.json: mounts[%s]: expected a type or a bind option",
                             m->destination);
        else if ((dest = open_dest(m, bind, rootfs_fd, err)) < 0)
                r = dest;
        else if (bind)
                r = mount_bind(m, &o, dest, err);
        else if (strcmp(m->type, "cgroup") == 0)
                r = mount_cgroup(spec, m, &o, rootfs_fd, dest, in_userns, err);
        else
                r = mount_fs(m, &o, rootfs_fd, dest, in_userns, err);
        mount_opts_release(&o);
        return r;
}

int mounts_setup(const struct spec *spec, int rootfs_fd, bool in_userns, struct umw_error **err)
{
        for (size_t i = 0; i < spec->n_mounts; i++) {
                const struct spec_mount *m = &spec->mounts[i];
                int r = mount_one(spec, m, rootfs_fd, in_userns, err);
                if (r < 0)
                        return umw_error_prefix(err, "mount %s on %s", m->type ? m->type : "bind",
                                                m->destination);
        }
        return 0;
}
