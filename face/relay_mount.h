/* The wall moved live (umwelt-relay's grants): a host path cloned by fd and
 * attached at the same path in a running sandbox's mount namespace, where
 * processes already running see it, and detached again at a revoke.
 *
 * Root's sandbox: the tree is cloned in the host's mount namespace,
 * idmapped through the sandbox's user namespace (as its binds at the start
 * are) and made read-only, nosuid, nodev there. A user's: the user cannot
 * clone from the host's namespace, so a child joins the sandbox's user
 * namespace and makes a mount namespace of it (a copy of the host's view,
 * owned by the sandbox), reopens the path there and clones it only when it
 * is the inode the relay checked. Either way the child then joins the
 * sandbox's user and mount namespaces and walks to the mount point from
 * the sandbox's root one component at a time (openat2, no symlink, no
 * magic link), making a missing one (a directory, or an empty file for a
 * file grant) where the sandbox's view is writable (its tmpfs), and
 * attaches with move_mount on that fd. Nothing is looked up by name after
 * it was checked. The work is done in a forked child, which dies with the
 * relay (PDEATHSIG) before the attach, so a relay killed mid-grant leaves
 * the mount whole or absent. */
#ifndef UMW_FACE_RELAY_MOUNT_H
#define UMW_FACE_RELAY_MOUNT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct umw_error;

/* The sandbox's init, as the runtime's state names it. */
struct relay_target {
        pid_t pid;
        int pidfd;     /* taken while pid was still that init (start time checked) */
        bool rootless; /* a user's sandbox: the user's own ids map to themselves */
};

/* What a grant attaches: path as policy/grants.h resolved it (a realpath,
 * no link on the way), the inode it was then (refused, UMW_EXIT_STATE, if
 * another is there now), is_file: a regular file (always read-only). */
struct relay_source {
        const char *path;
        bool is_file, rw;
        dev_t dev;
        ino_t ino;
};

/* *mnt_id: the attached mount's id (statx STATX_MNT_ID), what revoke
 * checks it removes. */
int relay_mount_grant(const struct relay_target *t, const struct relay_source *src,
                      uint64_t *mnt_id, struct umw_error **err);

/* Detaches the mount at path inside when it is still the one grant
 * attached (mnt_id): else UMW_EXIT_STATE, nothing detached. Open fds on it
 * keep what they opened (MNT_DETACH). */
int relay_mount_revoke(const struct relay_target *t, const char *path, uint64_t mnt_id,
                       struct umw_error **err);

#endif
