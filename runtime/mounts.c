/* The spec's mounts. Every destination is resolved inside the rootfs with
 * openat2(RESOLVE_IN_ROOT) and every mount is attached to that fd with
 * move_mount(), so nothing the rootfs contains can redirect a mount outside
 * it, and no string path is looked up twice. */
#include "runtime/mounts.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"

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
#define HOST_CGROUP_ROOT "/sys/fs/cgroup"
/* tmpcopyup never descends deeper than this: a deeper tree is not an image. */
#define MAX_COPY_DEPTH 128

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

/* A source naming one of the runtime's own fds, /proc/self/fd/N (the
 * sandbox face's binds, each opened and checked once by compose), is that
 * fd's inode. The fd's mount lies in the caller's mount namespace, which
 * open_tree cannot clone from the container's (EINVAL), so the tree is
 * cloned by the fd's path in this namespace (a copy of the caller's, not yet
 * pivoted), no trailing link followed, and kept only if its root is the fd's
 * inode: a path renamed or swapped since the check is refused, never
 * followed. Any other source is the caller's path as given. */
static int clone_source(const char *source, unsigned int flags, struct umw_error **err)
{
        int n;
        char tail, path[PATH_MAX];
        if (sscanf(source, "/proc/self/fd/%d%c", &n, &tail) != 1) {
                int fd = open_tree(AT_FDCWD, source, flags);
                return fd < 0 ? umw_fail_errno(err, "bind %s", source) : fd;
        }
        struct stat want, got;
        ssize_t len = fstat(n, &want) < 0 ? -1 : readlink(source, path, sizeof(path) - 1);
        if (len < 0)
                return umw_fail_errno(err, "bind %s", source);
        path[len] = '\0';
        _cleanup_close_ int fd = open_tree(AT_FDCWD, path, flags | AT_SYMLINK_NOFOLLOW);
        if (fd < 0 || fstat(fd, &got) < 0)
                return umw_fail_errno(err, "bind %s (%s)", path, source);
        if (got.st_dev != want.st_dev || got.st_ino != want.st_ino)
                return umw_fail(err, UMW_EXIT_FAILURE, EPERM,
                                "bind %s: not the file checked before (moved or replaced since); "
                                "refusing",
                                path);
        return TAKE_FD(fd);
}

static int tree_opts(int fd, const char *source, const struct mount_opts *o, bool recursive,
                     struct umw_error **err);

/* A clone of source (with its submounts when recursive), opts applied. */
static int bind_tree(const char *source, const struct mount_opts *o, bool recursive,
                     struct umw_error **err)
{
        unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0);
        int fd = clone_source(source, flags, err);
        return fd < 0 ? fd : tree_opts(fd, source, o, recursive, err);
}

/* The same for the file open at fd (source: its name, for errors). */
static int bind_tree_at(int fd, const char *source, const struct mount_opts *o, bool recursive,
                        struct umw_error **err)
{
        unsigned int flags =
            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
        int tree = open_tree(fd, "", flags);
        if (tree < 0)
                return umw_fail_errno(err, "bind %s", source);
        return tree_opts(tree, source, o, recursive, err);
}

/* opts applied to the tree fd (taken: closed on failure). */
static int tree_opts(int tree, const char *source, const struct mount_opts *o, bool recursive,
                     struct umw_error **err)
{
        _cleanup_close_ int fd = tree;
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

/* held: an overlay layer's fd, which must outlive fsconfig: before 6.5
 * overlayfs took its options as one string and looked its layers up only
 * at FSCONFIG_CMD_CREATE. */
static int fs_config_data(int fs, const char *type, const char *data, bool in_userns, int *held,
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
                        int layer = -1;
                        char here[32];
                        const char *value = eq + 1;
                        if (strcmp(type, "overlay") == 0 && strcmp(opt, "lowerdir") == 0) {
                                if ((r = mounts_overlay_layer_here(value, &layer, here, err)) < 0)
                                        return r;
                                if (layer >= 0) {
                                        umw_close_fdp(held);
                                        *held = layer;
                                }
                        }
                        r = fsconfig(fs, FSCONFIG_SET_STRING, opt, layer >= 0 ? here : value, 0);
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
        _cleanup_close_ int held = -1;
        int r = fs_config_data(fs, type, o->data, in_userns, &held, err);
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

int mounts_clone_bind(const struct spec_mount *m, struct umw_error **err)
{
        if (!m->source)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "mounts: bind mount of %s has no source", m->destination);
        struct mount_opts o;
        int r = mount_opts_parse(m->options, m->n_options, &o, err);
        if (r < 0)
                return r;
        r = bind_tree(m->source, &o, o.recursive, err);
        mount_opts_release(&o);
        return r;
}

/* The tree umwelt-run made (mounts_make_trees: its flags set there, by the
 * mount's owner), taken. */
static int take_tree(int *slot)
{
        int fd = *slot;
        *slot = -1;
        return fd;
}

/* A source below the rootfs (the image's own files) is looked up in it, as
 * a destination is: a symlink the image holds stays inside the rootfs
 * instead of taking the host's file with it. "" when it is not below. */
static const char *below_rootfs(const char *source, const char *rootfs)
{
        size_t n = strlen(rootfs);
        if (n <= 1 || strncmp(source, rootfs, n) != 0 || source[n] != '/')
                return "";
        return source + n;
}

/* The tree to attach: the one umwelt-run made, or a clone of the source
 * (looked up in the rootfs when below it). */
static int source_tree(const struct spec_mount *m, const struct mount_opts *o,
                       const struct mount_root *root, int *slot, struct umw_error **err)
{
        if (slot && *slot >= 0)
                return take_tree(slot);
        if (o->idmap)
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                                "no idmapped tree of %s from umwelt-run", m->source);
        const char *inside = below_rootfs(m->source, root->path);
        if (!inside[0])
                return bind_tree(m->source, o, o->recursive, err);
        _cleanup_close_ int at = root_openat(root->fd, inside, O_PATH | O_CLOEXEC, 0);
        if (at < 0)
                return umw_fail_sys(err, -at, "bind %s (in the rootfs)", m->source);
        return bind_tree_at(at, m->source, o, o->recursive, err);
}

/* A bind's mount point is a file or a directory as the tree cloned is,
 * never as its source looks when looked up again by name. */
static enum root_create tree_kind(int tree)
{
        struct stat st;
        if (fstat(tree, &st) == 0 && !S_ISDIR(st.st_mode))
                return ROOT_CREATE_FILE;
        return ROOT_CREATE_DIR;
}

/* tree on m's destination (made as kind), then its propagation. */
static int attach_tree(int tree, const struct spec_mount *m, const struct mount_opts *o,
                       const struct mount_root *root, enum root_create kind, struct umw_error **err)
{
        _cleanup_close_ int dest_fd = root_open_create(root->fd, m->destination, kind, err);
        if (dest_fd < 0)
                return dest_fd;
        int r = attach_mount(tree, dest_fd);
        if (r < 0)
                return umw_fail_sys(err, -r, "attach %s of %s", m->type ? m->type : "bind",
                                    m->source ? m->source : m->destination);
        return apply_propagation(tree, o, err);
}

static int mount_bind(const struct spec_mount *m, const struct mount_opts *o,
                      const struct mount_root *root, int *slot, struct umw_error **err)
{
        if (!m->source)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "mounts: bind mount of %s has no source", m->destination);
        if (o->data)
                umw_debug("bind mount %s: options \"%s\" ignored", m->destination, o->data);
        _cleanup_close_ int tree = source_tree(m, o, root, slot, err);
        if (tree < 0)
                return tree;
        return attach_tree(tree, m, o, root, tree_kind(tree), err);
}

/* A filesystem umwelt-run made (an idmapped overlay), attached on its
 * directory. */
static int mount_runtime_tree(const struct spec_mount *m, const struct mount_opts *o,
                              const struct mount_root *root, int *slot, struct umw_error **err)
{
        _cleanup_close_ int tree = take_tree(slot);
        return attach_tree(tree, m, o, root, ROOT_CREATE_DIR, err);
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

/* cgroup v2 without a cgroup namespace: a bind of our own cgroup, as on v1
 * and as runc and crun do; a new cgroup2 instance there would show the
 * host's whole tree. The host's cgroup2 mount is taken to show its root. */
static int cgroup_v2_own(const struct cgroup_ctx *c, int dest_fd, struct umw_error **err)
{
        _cleanup_close_ int mnt = cgroup_hierarchy(c, HOST_CGROUP_ROOT, "/", "cgroup2", "", err);
        if (mnt < 0)
                return umw_error_prefix(err, "cgroup2 %s", HOST_CGROUP_ROOT);
        struct mount_attr a = {0};
        opts_to_attr(c->o, &a);
        int r = set_attr(mnt, &a, false);
        if (r < 0)
                return umw_fail_sys(err, -r, "set cgroup mount flags");
        if ((r = attach_mount(mnt, dest_fd)) < 0)
                return umw_fail_sys(err, -r, "attach cgroup2");
        return apply_propagation(mnt, c->o, err);
}

static int mount_cgroup(const struct spec *spec, const struct spec_mount *m,
                        const struct mount_opts *o, int rootfs_fd, int dest_fd, bool in_userns,
                        struct umw_error **err)
{
        struct statfs sfs;
        if (statfs(HOST_CGROUP_ROOT, &sfs) < 0)
                return umw_fail_errno(err, "statfs %s", HOST_CGROUP_ROOT);
        bool v2 = sfs.f_type == CGROUP2_SUPER_MAGIC;
        struct cgroup_ctx c = {
            .o = o,
            .cgroupns = spec->namespaces[SPEC_NS_CGROUP].enabled,
            .in_userns = in_userns,
        };
        if (v2 && c.cgroupns) {
                struct spec_mount v2m = *m;
                v2m.type = "cgroup2";
                v2m.source = "cgroup2";
                return mount_fs(&v2m, o, rootfs_fd, dest_fd, in_userns, err);
        }
        _cleanup_free_ char *self_cgroup = NULL;
        int r =
            umw_read_file_at(AT_FDCWD, "/proc/self/cgroup", MOUNTINFO_MAX, &self_cgroup, NULL, err);
        if (r < 0)
                return r;
        c.self_cgroup = self_cgroup;
        return v2 ? cgroup_v2_own(&c, dest_fd, err) : cgroup_v1(&c, dest_fd, err);
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

/* A filesystem's mount point: a directory. */
static int open_dest(const struct spec_mount *m, int rootfs_fd, struct umw_error **err)
{
        if (strcmp(m->type, "proc") == 0)
                return open_proc_dest(rootfs_fd, m->destination, err);
        return root_open_create(rootfs_fd, m->destination, ROOT_CREATE_DIR, err);
}

static int mount_one(const struct spec *spec, const struct spec_mount *m,
                     const struct mount_root *root, bool in_userns, int *slot,
                     struct umw_error **err)
{
        if (!m->destination || m->destination[0] != '/')
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: .mounts[].destination: expected an absolute path", spec->file);
        struct mount_opts o;
        int r = mount_opts_parse(m->options, m->n_options, &o, err);
        if (r < 0)
                return r;
        bool bind = is_bind(m, &o);
        int rootfs_fd = root->fd;
        _cleanup_close_ int dest = -1;
        if (bind)
                r = mount_bind(m, &o, root, slot, err);
        else if (slot && *slot >= 0) /* an idmapped overlay umwelt-run made */
                r = mount_runtime_tree(m, &o, root, slot, err);
        else if (!m->type)
                r = umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                             "%s: .mounts[%s]: expected a type or a bind option", spec->file,
                             m->destination);
        else if ((dest = open_dest(m, rootfs_fd, err)) < 0)
                r = dest;
        else if (strcmp(m->type, "cgroup") == 0)
                r = mount_cgroup(spec, m, &o, rootfs_fd, dest, in_userns, err);
        else
                r = mount_fs(m, &o, rootfs_fd, dest, in_userns, err);
        mount_opts_release(&o);
        return r;
}

int mounts_setup(const struct spec *spec, const struct mount_root *root, bool in_userns, int *trees,
                 struct umw_error **err)
{
        for (size_t i = 0; i < spec->n_mounts; i++) {
                const struct spec_mount *m = &spec->mounts[i];
                int r = mount_one(spec, m, root, in_userns, trees ? &trees[i] : NULL, err);
                if (r < 0)
                        return umw_error_prefix(err, "mount %s on %s", m->type ? m->type : "bind",
                                                m->destination);
        }
        return 0;
}
