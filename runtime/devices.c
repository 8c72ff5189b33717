/* /dev inside the rootfs: the default nodes, linux.devices and the standard
 * links. Every node is made by name in a directory fd resolved inside the
 * rootfs, never through a symlink the rootfs put there. */
#include "runtime/devices.h"
#include "runtime/mounts.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Without linux.devices[].fileMode a node is usable by everyone, like the
 * default set: access is decided by the device cgroup. */
#define DEFAULT_DEVICE_MODE 0666

static const struct spec_device default_devices[] = {
    {.path = "/dev/null", .type = 'c', .major = 1, .minor = 3},
    {.path = "/dev/zero", .type = 'c', .major = 1, .minor = 5},
    {.path = "/dev/full", .type = 'c', .major = 1, .minor = 7},
    {.path = "/dev/random", .type = 'c', .major = 1, .minor = 8},
    {.path = "/dev/urandom", .type = 'c', .major = 1, .minor = 9},
    {.path = "/dev/tty", .type = 'c', .major = 5, .minor = 0},
};

static const struct {
        const char *name, *target;
} dev_links[] = {
    {"fd", "/proc/self/fd"},       {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
    {"stderr", "/proc/self/fd/2"}, {"core", "/proc/kcore"},      {"ptmx", "pts/ptmx"},
};

static mode_t device_type_bits(char type)
{
        switch (type) {
        case 'b':
                return S_IFBLK;
        case 'p':
                return S_IFIFO;
        default: /* 'c' and 'u' (unbuffered character) */
                return S_IFCHR;
        }
}

static dev_t device_rdev(const struct spec_device *d)
{
        return d->type == 'p' ? 0 : makedev((unsigned int)d->major, (unsigned int)d->minor);
}

/* An existing entry may stay only when it is already this device. */
static bool is_same_node(const struct stat *st, const struct spec_device *d)
{
        return (st->st_mode & S_IFMT) == device_type_bits(d->type) &&
               (d->type == 'p' || st->st_rdev == device_rdev(d));
}

static int make_node(int dir_fd, const char *name, const struct spec_device *d,
                     struct umw_error **err)
{
        mode_t mode = d->has_file_mode ? (d->file_mode & 07777) : DEFAULT_DEVICE_MODE;
        /* The init is single-threaded: the umask is ours to lift for a moment. */
        mode_t old = umask(0);
        int r = mknodat(dir_fd, name, device_type_bits(d->type) | mode, device_rdev(d));
        umask(old);
        if (r < 0)
                return umw_fail_errno(err, "mknod %s", d->path);
        if (fchownat(dir_fd, name, d->has_uid ? d->uid : 0, d->has_gid ? d->gid : 0,
                     AT_SYMLINK_NOFOLLOW) < 0)
                return umw_fail_errno(err, "chown %s", d->path);
        return 0;
}

/* In a user namespace mknod is refused: the host's node is bound onto an
 * empty file instead, keeping the host's owner and mode. */
static int bind_node(int dir_fd, const char *name, const struct spec_device *d,
                     struct umw_error **err)
{
        int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
        if (fd < 0 && errno != EEXIST)
                return umw_fail_errno(err, "create %s", d->path);
        if (fd >= 0)
                close(fd);
        _cleanup_close_ int target = openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (target < 0)
                return umw_fail_errno(err, "open %s", d->path);
        struct stat st;
        if (fstat(target, &st) < 0 || !S_ISREG(st.st_mode))
                return umw_fail(err, UMW_EXIT_FAILURE, EEXIST,
                                "%s: not a file a device can be bound onto", d->path);
        _cleanup_close_ int tree =
            open_tree(AT_FDCWD, d->path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (tree < 0)
                return umw_fail_errno(err, "bind host device %s", d->path);
        if (move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return umw_fail_errno(err, "bind host device %s", d->path);
        return 0;
}

/* What is at name already: kept when it is the device (or, in a user
 * namespace, a file to bind onto), refused when a directory, else removed. */
static int clear_entry(int dir_fd, const char *name, const struct spec_device *d, bool use_bind,
                       bool *keep, struct umw_error **err)
{
        struct stat st;
        *keep = false;
        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : umw_fail_errno(err, "stat %s", d->path);
        if (S_ISDIR(st.st_mode))
                return umw_fail(err, UMW_EXIT_FAILURE, EISDIR,
                                "%s is a directory in the rootfs, not a device", d->path);
        if (is_same_node(&st, d)) {
                *keep = true;
                return 0;
        }
        if (use_bind && S_ISREG(st.st_mode))
                return 0;
        if (unlinkat(dir_fd, name, 0) < 0)
                return umw_fail_errno(err, "replace %s", d->path);
        return 0;
}

static int open_parent(int rootfs_fd, int dev_fd, const char *path, struct umw_error **err)
{
        _cleanup_free_ char *parent = strdup(path);
        if (!parent)
                return umw_fail_sys(err, ENOMEM, "device path");
        char *slash = strrchr(parent, '/');
        if (slash)
                *slash = '\0';
        if (strcmp(parent, "/dev") == 0) {
                int fd = fcntl(dev_fd, F_DUPFD_CLOEXEC, 3);
                return fd < 0 ? umw_fail_errno(err, "dup /dev") : fd;
        }
        return root_open_create(rootfs_fd, *parent ? parent : "/", ROOT_CREATE_DIR, err);
}

static int setup_device(int rootfs_fd, int dev_fd, const struct spec_device *d, bool in_userns,
                        struct umw_error **err)
{
        /* An absolute path with a file name (spec_linux.c). */
        const char *name = strrchr(d->path, '/') + 1;
        _cleanup_close_ int dir = open_parent(rootfs_fd, dev_fd, d->path, err);
        if (dir < 0)
                return dir;
        /* A FIFO needs no privilege, so it is made even in a user namespace. */
        bool use_bind = in_userns && d->type != 'p';
        bool keep;
        int r = clear_entry(dir, name, d, use_bind, &keep, err);
        if (r < 0 || keep)
                return r;
        return use_bind ? bind_node(dir, name, d, err) : make_node(dir, name, d, err);
}

static int make_link(int dev_fd, const char *name, const char *target, struct umw_error **err)
{
        if (symlinkat(target, dev_fd, name) == 0)
                return 0;
        if (errno != EEXIST)
                return umw_fail_errno(err, "symlink /dev/%s", name);
        char cur[PATH_MAX];
        ssize_t n = readlinkat(dev_fd, name, cur, sizeof(cur) - 1);
        if (n >= 0 && (size_t)n == strlen(target) && memcmp(cur, target, (size_t)n) == 0)
                return 0;
        struct stat st;
        if (fstatat(dev_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
                umw_warn("/dev/%s is a directory in the rootfs; not linked to %s", name, target);
                return 0;
        }
        if (unlinkat(dev_fd, name, 0) < 0 || symlinkat(target, dev_fd, name) < 0)
                return umw_fail_errno(err, "symlink /dev/%s", name);
        return 0;
}

/* /dev itself must be a directory of the rootfs, not a symlink elsewhere. */
static int open_dev(int rootfs_fd, struct umw_error **err)
{
        int fd = root_openat(rootfs_fd, "/dev", O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
        if (fd == -ENOENT) {
                int r = root_open_create(rootfs_fd, "/dev", ROOT_CREATE_DIR, err);
                if (r < 0)
                        return r;
                close(r);
                fd = root_openat(rootfs_fd, "/dev", O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
        }
        if (fd < 0)
                return umw_fail_sys(err, -fd,
                                    "/dev must be a directory in the rootfs, not a symlink");
        return fd;
}

static bool spec_has_device(const struct spec *spec, const char *path)
{
        for (size_t i = 0; i < spec->n_devices; i++)
                if (strcmp(spec->devices[i].path, path) == 0)
                        return true;
        return false;
}

int devices_setup(const struct spec *spec, int rootfs_fd, bool in_userns, struct umw_error **err)
{
        _cleanup_close_ int dev = open_dev(rootfs_fd, err);
        if (dev < 0)
                return dev;
        int r;
        for (size_t i = 0; i < ARRAY_SIZE(default_devices); i++) {
                const struct spec_device *d = &default_devices[i];
                if (spec_has_device(spec, d->path))
                        continue;
                if ((r = setup_device(rootfs_fd, dev, d, in_userns, err)) < 0)
                        return umw_error_prefix(err, "default device");
        }
        for (size_t i = 0; i < spec->n_devices; i++)
                if ((r = setup_device(rootfs_fd, dev, &spec->devices[i], in_userns, err)) < 0)
                        return umw_error_prefix(err, "linux.devices[%zu]", i);
        for (size_t i = 0; i < ARRAY_SIZE(dev_links); i++)
                if ((r = make_link(dev, dev_links[i].name, dev_links[i].target, err)) < 0)
                        return r;
        return 0;
}
