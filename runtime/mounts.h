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
        bool tmpcopyup;            /* tmpfs: copy what the destination held into it */
        bool idmap, ridmap;        /* "idmap" / "ridmap": an idmapped bind (ridmap: recursively) */
        char *data;                /* the rest, comma-joined, for the filesystem; malloc'd */
};

/* Pure: splits options; anything it does not know goes to data for the
 * filesystem. "idmap=..." (crun's own mapping syntax) is refused
 * (UMW_EXIT_CONFIG): ignoring it would give wrong owners. */
int mount_opts_parse(const char *const *options, size_t n, struct mount_opts *out,
                     struct umw_error **err);
void mount_opts_release(struct mount_opts *o);

/* The rootfs: fd an O_PATH fd of its directory, already a mount point;
 * path its absolute host path (a bind source below it is looked up in it). */
struct mount_root {
        int fd;
        const char *path;
};

/* Mounts every entry of spec->mounts under the rootfs. in_userns: the
 * container has its own user namespace (sysfs and cgroup fall back to binds
 * where the kernel refuses a new instance). trees (NULL when there are none):
 * per mount, the tree umwelt-run made for it (mounts_make_trees), attached
 * in place of its source and taken (set to -1), or -1. */
int mounts_setup(const struct spec *spec, const struct mount_root *root, bool in_userns, int *trees,
                 struct umw_error **err);

/* Binds whose trees umwelt-run makes, not the init: idmapped ones
 * ("idmap"/"ridmap"), since only a process holding CAP_SYS_ADMIN over the
 * source's filesystem may idmap it; and, when the runtime may clone mounts
 * (runtime_clones: root's), every bind of a host path into a container
 * with a user namespace of its own, since only the runtime's credentials
 * reach a source below a directory the container's ids cannot search
 * (root's home, podman's 0700 volumes directory). rootfs: the container's
 * (a source below it is the image's, looked up inside by the init). */

/* Whether umwelt-run makes m's tree (valid once mounts_count_trees passed). */
bool mounts_tree_from_runtime(const struct spec *spec, const struct spec_mount *m,
                              const char *rootfs, bool runtime_clones);
/* How many trees umwelt-run makes for spec; refuses (UMW_EXIT_CONFIG) idmap
 * on a mount that is not a bind, or without a user namespace or a mapping
 * of its own. */
int mounts_count_trees(const struct spec *spec, const char *rootfs, bool runtime_clones,
                       struct umw_error **err);
/* For every mount i whose tree umwelt-run makes, trees[i] = a detached
 * clone of its source (with its submounts for rbind), its flags set, and
 * when asked idmapped (recursively for ridmap): through a user namespace
 * made for it when it has uidMappings/gidMappings of its own (other than
 * the container's), else through userns_fd (the container's user
 * namespace, maps written; -1 when it has none); -1 for the other mounts.
 * trees has spec->n_mounts slots; on failure all are -1. */
int mounts_make_trees(const struct spec *spec, const char *rootfs, bool runtime_clones,
                      int userns_fd, int *trees, struct umw_error **err);
/* A detached clone of bind m's source with its options' flags set. */
int mounts_clone_bind(const struct spec_mount *m, struct umw_error **err);
/* An overlay mount m with the "idmap" option (data: its lowerdir, upperdir
 * and workdir), its layers idmapped through userns_fd, created as that
 * namespace's 0 (mount_overlay.c): the tree for the init to attach. */
int mounts_overlay_tree(const struct spec_mount *m, const char *data, int userns_fd,
                        struct umw_error **err);

/* An overlay layer given as /proc/self/fd/N (opened by umwelt-run in the
 * host's mount namespace) as the same directory in this one, where a
 * rootless overlay is created: overlayfs takes its layers only from the
 * creator's own mount namespace. *fd: the directory here (-1, and value
 * left as it is, when it is no such name), here: its /proc/self/fd name. */
int mounts_overlay_layer_here(const char *value, int *fd, char here[static 32],
                              struct umw_error **err);

/* Path resolution inside a root, shared with devices.c and rootfs.c. */

/* openat2(root_fd, path, flags | O_CLOEXEC) with RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS | resolve: path is taken as if root_fd were "/".
 * Returns the fd or -errno (no error recorded: ENOENT is often expected). */
int root_openat(int root_fd, const char *path, int flags, unsigned long long resolve);

enum root_create { ROOT_CREATE_DIR, ROOT_CREATE_FILE };
/* Opens path inside root_fd as an O_PATH fd, creating missing parent
 * directories and the last component (a directory, or an empty file to
 * mount a file on). A dangling symlink on the way is followed inside the
 * root and its target created there, as runc and crun do. */
int root_open_create(int root_fd, const char *path, enum root_create create,
                     struct umw_error **err);

#endif
