/* An agent's layer: the upper directory of a review-mode workspace (an
 * overlay whose lower directory is the project as it is on the host). What
 * the agent changed is read from the layer alone, and the layer is the
 * agent's data: read through fds, never following a link, every name and
 * size bounded. */
#ifndef UMW_LAYER_H
#define UMW_LAYER_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
