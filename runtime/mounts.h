/* The spec's mounts, done inside the new mount namespace before pivot_root.
 * Destinations are resolved inside the rootfs with openat2(RESOLVE_IN_ROOT),
 * so no symlink in the rootfs can send a mount outside it; the mount itself is
 * attached by fd with the new mount API (fsopen/open_tree/move_mount). */
#ifndef UMW_MOUNTS_H
#define UMW_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

struct spec;
struct spec_mount;
struct umw_error;

/* The options of one mount, split into what mount(2)/mount_setattr(2) take. */
struct mount_opts {
        unsigned long flags;       /* MS_* to set */
        unsigned long clear;       /* MS_* explicitly cleared ("rw", "suid", ...) */
        unsigned long propagation; /* MS_PRIVATE|MS_SLAVE|MS_SHARED|MS_UNBINDABLE, | MS_REC */
        bool bind, recursive;      /* "bind" / "rbind" */
        char *data;                /* the rest, comma-joined, for the filesystem; malloc'd */
};

/* Pure: splits options; an unknown "flag-looking" option goes to data. */
int mount_opts_parse(const char *const *options, size_t n, struct mount_opts *out,
                     struct umw_error **err);
void mount_opts_release(struct mount_opts *o);

/* Mounts every entry of spec->mounts under the rootfs (rootfs_fd is an
 * O_PATH fd of the rootfs directory, already a mount point). in_userns: the
 * container has its own user namespace (sysfs and cgroup fall back to binds
 * where the kernel refuses a new instance). */
int mounts_setup(const struct spec *spec, int rootfs_fd, bool in_userns, struct umw_error **err);

#endif
