/* The container's root: propagation, the bind of the rootfs onto itself,
 * pivot_root (or chroot with --no-pivot), then masked and read-only paths
 * and a read-only root. */
#ifndef UMW_ROOTFS_H
#define UMW_ROOTFS_H

#include <stdbool.h>

struct spec;
struct umw_error;

/* In the new mount namespace: makes / rslave (rprivate when
 * linux.rootfsPropagation asks for private) and bind-mounts rootfs onto
 * itself. Returns an O_PATH fd of the rootfs mount in *rootfs_fd. */
int rootfs_prepare(const struct spec *spec, const char *rootfs, int *rootfs_fd,
                   struct umw_error **err);
/* Makes rootfs the root: pivot_root and detach of the old root, or with
 * no_pivot a MS_MOVE + chroot. Afterwards cwd is "/". */
int rootfs_pivot(const char *rootfs, bool no_pivot, struct umw_error **err);
/* After pivot: readonlyPaths, maskedPaths, root.readonly, and a shared or
 * unbindable linux.rootfsPropagation (which must wait for the pivot: it
 * would let the set-up mounts propagate to the host, and pivot_root refuses
 * shared mounts). */
int rootfs_finalize(const struct spec *spec, struct umw_error **err);

#endif
