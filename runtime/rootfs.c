/* The container's root: its propagation, the bind of the rootfs onto itself
 * that pivot_root needs, the pivot itself, and what is done to the tree
 * afterwards (masked and read-only paths, a read-only root). */
#include "runtime/rootfs.h"
#include "runtime/mounts.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int set_propagation(int fd, const char *path, unsigned long prop)
{
        struct mount_attr a = {.propagation = prop & ~(unsigned long)MS_REC};
        unsigned int flags = (prop & MS_REC ? AT_RECURSIVE : 0) | (*path ? 0 : AT_EMPTY_PATH);
        return mount_setattr(fd, path, flags, &a, sizeof(a)) < 0 ? -errno : 0;
}

/* linux.rootfsPropagation as MS_* (always recursive); rslave when absent. */
static int rootfs_propagation(const struct spec *spec, unsigned long *prop, struct umw_error **err)
{
        *prop = MS_SLAVE | MS_REC;
        if (!spec->rootfs_propagation)
                return 0;
        struct mount_opts o;
        int r = mount_opts_parse(&spec->rootfs_propagation, 1, &o, err);
        if (r < 0)
                return r;
        bool only_propagation = o.propagation && !o.flags && !o.clear && !o.data;
        mount_opts_release(&o);
        if (!only_propagation)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: .linux.rootfsPropagation: expected private, shared, "
                                "slave or unbindable (optionally with an r prefix), got \"%s\"",
                                spec->file, spec->rootfs_propagation);
        *prop = o.propagation | MS_REC;
        return 0;
}

/* The rootfs's topmost mount. A lookup of "/" stops at the process's root
 * and never reaches the bind rootfs_prepare stacks on it; "/.." does. */
static int open_rootfs(const char *rootfs)
{
        return open(strcmp(rootfs, "/") == 0 ? "/.." : rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* A read-only root covers the mounts below the rootfs too (the host's / as
 * a rootfs brings all of the host's): they are made read-only in the clone
 * now, the rootfs mount itself only by rootfs_finalize, once the mounts of
 * config.json have their mount points. */
static int readonly_below(int tree, int before, struct umw_error **err)
{
        struct statvfs sv;
        if (fstatvfs(before, &sv) < 0)
                return umw_fail_errno(err, "statvfs rootfs");
        struct mount_attr set = {.attr_set = MOUNT_ATTR_RDONLY};
        struct mount_attr clr = {.attr_clr = MOUNT_ATTR_RDONLY};
        if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &set, sizeof(set)) < 0 ||
            (!(sv.f_flag & ST_RDONLY) &&
             mount_setattr(tree, "", AT_EMPTY_PATH, &clr, sizeof(clr)) < 0))
                return umw_fail_errno(err, "make the mounts below the rootfs read-only");
        return 0;
}

int rootfs_prepare(const struct spec *spec, const char *rootfs, int *rootfs_fd,
                   struct umw_error **err)
{
        unsigned long prop;
        int r = rootfs_propagation(spec, &prop, err);
        if (r < 0)
                return r;
        /* Until the pivot nothing set up here may propagate back to the host,
         * and pivot_root refuses shared mounts: shared and unbindable are
         * applied to the new root by rootfs_finalize. */
        unsigned long before_pivot = (prop & MS_PRIVATE ? MS_PRIVATE : MS_SLAVE) | MS_REC;
        if ((r = set_propagation(AT_FDCWD, "/", before_pivot)) < 0)
                return umw_fail_sys(err, -r, "set propagation of /");
        _cleanup_close_ int before = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (before < 0)
                return umw_fail_errno(err, "open rootfs %s", rootfs);
        _cleanup_close_ int tree = open_tree(
            before, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
        if (tree < 0)
                return umw_fail_errno(err, "bind rootfs %s", rootfs);
        if (spec->root_readonly && (r = readonly_below(tree, before, err)) < 0)
                return r;
        if (move_mount(tree, "", before, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return umw_fail_errno(err, "bind rootfs %s onto itself", rootfs);
        int fd = open_rootfs(rootfs);
        if (fd < 0)
                return umw_fail_errno(err, "open rootfs %s", rootfs);
        *rootfs_fd = fd;
        return 0;
}

/* pivot_root(".", ".") stacks the old root on the new one, so no directory
 * for it is needed. "." would name the new root's mount to mount_setattr,
 * so the old root is reached through an fd opened before the pivot. */
static int pivot(struct umw_error **err)
{
        _cleanup_close_ int old_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (old_root < 0)
                return umw_fail_errno(err, "open /");
        if (syscall(SYS_pivot_root, ".", ".") < 0)
                return umw_fail_errno(err, "pivot_root");
        /* Unmounting must not propagate to the host's copy of the old root. */
        int r = set_propagation(old_root, "", MS_SLAVE | MS_REC);
        if (r < 0)
                return umw_fail_sys(err, -r, "make the old root a slave");
        if (fchdir(old_root) < 0)
                return umw_fail_errno(err, "chdir to the old root");
        if (umount2(".", MNT_DETACH) < 0)
                return umw_fail_errno(err, "detach the old root");
        return 0;
}

static int move_to_root(int rootfs_fd, struct umw_error **err)
{
        if (move_mount(rootfs_fd, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return umw_fail_errno(err, "move the rootfs to /");
        if (chroot(".") < 0)
                return umw_fail_errno(err, "chroot");
        return 0;
}

int rootfs_pivot(const char *rootfs, bool no_pivot, struct umw_error **err)
{
        _cleanup_close_ int fd = open_rootfs(rootfs);
        if (fd < 0)
                return umw_fail_errno(err, "open rootfs %s", rootfs);
        if (fchdir(fd) < 0)
                return umw_fail_errno(err, "chdir to rootfs %s", rootfs);
        int r = no_pivot ? move_to_root(fd, err) : pivot(err);
        if (r < 0)
                return r;
        if (chdir("/") < 0)
                return umw_fail_errno(err, "chdir /");
        return 0;
}

/* ---- after the pivot ---- */

static int attach(int mnt_fd, int dest_fd)
{
        if (move_mount(mnt_fd, "", dest_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) <
            0)
                return -errno;
        return 0;
}

static int empty_ro_tmpfs(void)
{
        _cleanup_close_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return -errno;
        int mnt =
            fsmount(fs, FSMOUNT_CLOEXEC,
                    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        return mnt < 0 ? -errno : mnt;
}

/* The container's /dev/null, checked to be the real device: a rootfs could
 * have put anything there. */
static int open_dev_null(int root, struct umw_error **err)
{
        int fd = root_openat(root, "/dev/null", O_PATH | O_NOFOLLOW, RESOLVE_NO_SYMLINKS);
        if (fd < 0)
                return umw_fail_sys(err, -fd, "open /dev/null");
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
                close(fd);
                return umw_fail(err, UMW_EXIT_FAILURE, EPERM,
                                "/dev/null in the container is not the null device");
        }
        return fd;
}

/* Masks a directory with an empty read-only tmpfs: one per container, made
 * for the first masked directory and cloned (a bind) for the others, since
 * a tmpfs made and torn down costs more than a bind. Read-only, it carries
 * nothing from one masked directory to another. *empty: the fsmount fd of
 * that tmpfs, attached (a detached mount could not be cloned). */
static int mask_dir(int fd, int *empty)
{
        if (*empty >= 0) {
                _cleanup_close_ int mnt =
                    open_tree(*empty, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
                return mnt < 0 ? -errno : attach(mnt, fd);
        }
        _cleanup_close_ int mnt = empty_ro_tmpfs();
        if (mnt < 0)
                return mnt;
        int r = attach(mnt, fd);
        if (r < 0)
                return r;
        *empty = TAKE_FD(mnt);
        return 0;
}

/* Whether a path the init cannot open needs no mask: absent, or out of
 * reach of the container's own user namespace's root, which the init is
 * with every capability (EACCES: no process of the container reaches it
 * either, as root's sandbox does not reach root's 0700 state directory). */
static bool nothing_to_mask(int fd, bool own_userns)
{
        return fd == -ENOENT || (fd == -EACCES && own_userns);
}

/* A directory gets an empty read-only tmpfs, anything else /dev/null. */
static int mask_path(int root, const char *path, bool own_userns, int *dev_null, int *empty,
                     struct umw_error **err)
{
        _cleanup_close_ int fd = root_openat(root, path, O_PATH, 0);
        if (nothing_to_mask(fd, own_userns))
                return 0;
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return umw_fail_sys(err, fd < 0 ? -fd : errno, "masked path %s", path);
        int r;
        if (S_ISDIR(st.st_mode)) {
                r = mask_dir(fd, empty);
        } else {
                if (*dev_null < 0 && (*dev_null = open_dev_null(root, err)) < 0)
                        return umw_error_prefix(err, "masked path %s", path);
                _cleanup_close_ int mnt =
                    open_tree(*dev_null, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
                r = mnt < 0 ? -errno : attach(mnt, fd);
        }
        return r < 0 ? umw_fail_sys(err, -r, "mask %s", path) : 0;
}

/* A recursive bind of the path onto itself, read-only throughout. */
static int readonly_path(int root, const char *path, struct umw_error **err)
{
        _cleanup_close_ int fd = root_openat(root, path, O_PATH, 0);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return umw_fail_sys(err, -fd, "read-only path %s", path);
        _cleanup_close_ int tree =
            open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
        struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY};
        if (tree < 0 || mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
                return umw_fail_errno(err, "read-only path %s", path);
        int r = attach(tree, fd);
        return r < 0 ? umw_fail_sys(err, -r, "read-only path %s", path) : 0;
}

/* Only the root mount: mounts on top of it keep their own mode. The other
 * flags (nosuid, nodev, ...) are untouched, as a MS_REMOUNT|MS_BIND would. */
static int readonly_root(int root, struct umw_error **err)
{
        struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY};
        if (mount_setattr(root, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0)
                return umw_fail_errno(err, "make / read-only");
        return 0;
}

int rootfs_finalize(const struct spec *spec, struct umw_error **err)
{
        _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return umw_fail_errno(err, "open /");
        bool own_userns = spec->namespaces[SPEC_NS_USER].enabled;
        int r;
        for (size_t i = 0; i < spec->n_readonly_paths; i++)
                if ((r = readonly_path(root, spec->readonly_paths[i], err)) < 0)
                        return r;
        _cleanup_close_ int dev_null = -1, empty = -1;
        for (size_t i = 0; i < spec->n_masked_paths; i++)
                if ((r = mask_path(root, spec->masked_paths[i], own_userns, &dev_null, &empty,
                                   err)) < 0)
                        return r;
        if (spec->root_readonly && (r = readonly_root(root, err)) < 0)
                return r;
        unsigned long prop;
        if ((r = rootfs_propagation(spec, &prop, err)) < 0)
                return r;
        if (prop & (MS_SHARED | MS_UNBINDABLE) && (r = set_propagation(root, "", prop)) < 0)
                return umw_fail_sys(err, -r, "set propagation of /");
        return 0;
}
