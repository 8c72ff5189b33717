/* Internal to the cgroup engine (runtime/cgroup*.c): the cgroup hierarchies
 * this mount namespace has, read from mountinfo, and the small file
 * helpers every part uses. */
#ifndef UMW_CGROUP_HOST_H
#define UMW_CGROUP_HOST_H

#include <stdbool.h>
#include <stddef.h>

struct umw_error;

#define MAX_HIERARCHIES 32

struct hierarchy {
        char mountpoint[256];
        char controllers[512]; /* v1: the mount's options; v2: cgroup.controllers of its root */
        bool v2;
};

struct host {
        struct hierarchy h[MAX_HIERARCHIES];
        size_t n;
};

/* Every cgroup (v1) and cgroup2 mount of this mount namespace whose root is
 * "/" (a bind of a sub-cgroup is not a hierarchy to make containers in),
 * read once per process and mount namespace. */
int cgroup_host_find(struct host *host, struct umw_error **err);
/* The cgroup2 hierarchy, or NULL. */
struct hierarchy *cgroup_unified(struct host *host);
/* Whether name is one of list's words, separated by any of sep. */
bool cgroup_list_has(const char *list, const char *sep, const char *name);
/* Whether the hierarchy carries controller name (v1: among its mount
 * options; v2: in its root's cgroup.controllers). */
bool cgroup_has_controller(const struct hierarchy *h, const char *name);
/* file in dirfd, at most size - 1 bytes, NUL-terminated; "" when it cannot
 * be read. */
void cgroup_read_small(int dirfd, const char *file, char *buf, size_t size);
/* Writes value to file in dirfd: 0 or -errno. */
int cgroup_write_at(int dirfd, const char *file, const char *value);
/* The directory path below the hierarchy's root, opened with flags. */
int cgroup_open_in(const struct hierarchy *h, const char *path, int flags);

#endif
