/* An agent's layer: the upper directory of a review-mode workspace (an
 * overlay whose lower directory is the project as it is on the host). What
 * the agent changed is read from the layer alone, and the layer is the
 * agent's data: read through fds, never following a link, every name and
 * size bounded. */
#ifndef UMW_LAYER_H
#define UMW_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "policy/delivery_rules.h"

struct umw_error;

/* At most this many changes, this deep, this long a path: past them the
 * layer is refused whole rather than half read. */
#define LAYER_CHANGES_MAX (1u << 20)
#define LAYER_DEPTH_MAX   256
#define LAYER_PATH_MAX    4096

enum layer_change_kind { LAYER_ADDED, LAYER_MODIFIED, LAYER_DELETED };

struct layer_change {
        char *path; /* relative to the workspace, the bytes as on disk */
        enum layer_change_kind kind;
        struct delivery_entry entry; /* entry.path is path */
        size_t added, removed;       /* lines, for text both sides could be read */
};

struct layer_changes {
        struct layer_change *v;
        size_t n, cap;
};

/* The changes in upper (the layer) against lower (the workspace), sorted
 * by path. Whiteouts are deletions, opaque directories replace what lower
 * had there, a copy-up that changed nothing is no change; a directory
 * holding a .git of its own is a nested repository. */
int layer_read_changes(int upper_fd, int lower_fd, struct layer_changes *out,
                       struct umw_error **err);
void layer_changes_free(struct layer_changes *c);

const char *layer_change_kind_name(enum layer_change_kind k);

/* The largest file a delivery reads whole (layer_file.c). */
#define LAYER_FILE_MAX (256u << 20)

/* What path (relative, '/'-separated) below root_fd is, read through
 * openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS: a regular file's bytes or
 * a symbolic link's text (readlinkat: its target is never opened), and
 * its mode in *mode. *mode is 0 when nothing is there (ENOENT, or a file
 * where a directory on the way would be);
 * a directory (errnum EISDIR), a special file (ENODEV), a link on the
 * way or more than max bytes is an error. *out malloc'd (NUL-ended). */
int layer_read_path(int root_fd, const char *path, size_t max, char **out, size_t *len,
                    mode_t *mode, struct umw_error **err);
/* The directory holding path's last part below root_fd, opened the same
 * way (made 0755 part by part where create and missing), and that part's
 * offset in path. */
int layer_open_parent(int root_fd, const char *path, bool create, int *dirfd, size_t *base,
                      struct umw_error **err);
/* Removes the directory tree name below dirfd by fd, never following a
 * link; directories that deny their owner (overlay's work/work, 000) are
 * made 0700 first. */
int layer_remove_tree(int dirfd, const char *name, struct umw_error **err);
/* Same for a tree of directories only: anything else in it is an error,
 * left where it is (sync: a directory the agent replaced by a file). */
int layer_remove_dirs(int dirfd, const char *name, struct umw_error **err);

#endif
