/* Reading an agent's layer (layer.h). overlayfs marks what the merged view
 * lost: a whiteout (a character device 0:0) for a removed name, an opaque
 * directory (the xattr overlay.opaque = "y", in the trusted. namespace for
 * a mount in the host's user namespace, user. for one made in a user
 * namespace with userxattr) for one that replaced what lower had. A
 * redirect (a directory renamed in place) is not followed: it is refused
 * by name. Every file is opened once, without following a link and
 * without blocking, and checked to be the inode the directory listed. */
#include "face/layer.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/linediff.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

/* git's rule: a NUL in the first 8000 bytes makes a file binary. */
#define BINARY_PROBE 8000

struct walk {
        struct layer_changes *out;
        char path[LAYER_PATH_MAX];
        struct umw_error **err;
};

const char *layer_change_kind_name(enum layer_change_kind k)
{
        return k == LAYER_ADDED ? "added" : k == LAYER_MODIFIED ? "modified" : "deleted";
}

void layer_changes_free(struct layer_changes *c)
{
        for (size_t i = 0; i < c->n; i++)
                free(c->v[i].path);
        free(c->v);
        *c = (struct layer_changes){0};
}

static struct layer_change *add_change(struct walk *w, size_t len, enum layer_change_kind kind,
                                       struct umw_error **err)
{
        struct layer_changes *c = w->out;
        if (c->n == LAYER_CHANGES_MAX) {
                umw_fail(err, UMW_EXIT_FAILURE, E2BIG, "layer: more than %u changes",
                         LAYER_CHANGES_MAX);
                return NULL;
        }
        if (c->n == c->cap) {
                size_t cap = c->cap ? c->cap * 2 : 64;
                struct layer_change *v = realloc(c->v, cap * sizeof(*v));
                if (!v) {
                        umw_fail_sys(err, ENOMEM, "layer");
                        return NULL;
                }
                c->v = v;
                c->cap = cap;
        }
        char *path = malloc(len + 1);
        if (!path) {
                umw_fail_sys(err, ENOMEM, "layer");
                return NULL;
        }
        memcpy(path, w->path, len);
        path[len] = '\0';
        struct layer_change *ch = &c->v[c->n++];
        *ch = (struct layer_change){.path = path, .kind = kind};
        ch->entry.path = path;
        ch->entry.len = len;
        return ch;
}

/* w->path becomes prefix (len bytes) + name; the new length, or -1. */
static ssize_t join(struct walk *w, size_t len, const char *name, struct umw_error **err)
{
        size_t n = strlen(name);
        if (len + (len ? 1 : 0) + n >= sizeof(w->path))
                return umw_fail(err, UMW_EXIT_FAILURE, ENAMETOOLONG,
                                "layer: a path longer than %d bytes below %.*s", LAYER_PATH_MAX,
                                (int)len, w->path);
        if (len)
                w->path[len++] = '/';
        memcpy(w->path + len, name, n);
        return (ssize_t)(len + n);
}

static bool has_xattr(int fd, const char *name)
{
        char v[8];
        return fgetxattr(fd, name, v, sizeof(v)) >= 0;
}

static bool opaque(int dirfd)
{
        char v[8];
        ssize_t n = fgetxattr(dirfd, "trusted.overlay.opaque", v, sizeof(v));
        if (n < 0)
                n = fgetxattr(dirfd, "user.overlay.opaque", v, sizeof(v));
        return n == 1 && v[0] == 'y';
}

static bool redirected(int dirfd)
{
        return has_xattr(dirfd, "trusted.overlay.redirect") ||
               has_xattr(dirfd, "user.overlay.redirect");
}

/* name in dirfd, a regular file of the inode st describes, read whole up
 * to max bytes (*text NULL when larger: only its first bytes are probed). */
static int read_regular(int dirfd, const char *name, const struct stat *st, size_t max, char **text,
                        size_t *len, bool *binary)
{
        *text = NULL;
        *len = 0;
        _cleanup_close_ int fd =
            openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat now;
        if (fd < 0 || fstat(fd, &now) < 0)
                return -errno;
        if (now.st_ino != st->st_ino || now.st_dev != st->st_dev || !S_ISREG(now.st_mode))
                return -ESTALE; /* swapped since it was listed */
        size_t want = (uint64_t)now.st_size <= max ? (size_t)now.st_size : BINARY_PROBE;
        char *buf = malloc(want + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t got = 0;
        while ((size_t)got < want) {
                ssize_t k = read(fd, buf + got, want - (size_t)got);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                got += k;
        }
        *binary = memchr(buf, '\0', (size_t)got < BINARY_PROBE ? (size_t)got : BINARY_PROBE);
        if ((uint64_t)now.st_size <= max) {
                *text = buf;
                *len = (size_t)got;
                return 0;
        }
        free(buf);
        return 0;
}

/* A file or link the layer holds at w->path (len): added or modified, with
 * what the rules need; an unchanged copy-up is dropped. */
static int file_change(struct walk *w, size_t len, int upper, int lower, const char *name,
                       const struct stat *st, const struct stat *base, struct umw_error **err)
{
        struct layer_change *ch = add_change(w, len, base ? LAYER_MODIFIED : LAYER_ADDED, err);
        if (!ch)
                return -1;
        ch->entry.mode = st->st_mode;
        ch->entry.base_mode = base ? base->st_mode : 0;
        ch->entry.size = (uint64_t)st->st_size;
        if (!S_ISREG(st->st_mode))
                return 0;
        _cleanup_free_ char *text = NULL, *old = NULL;
        size_t tlen, olen;
        bool bin = false, obin = false;
        if (read_regular(upper, name, st, DELIVERY_SIZE_LIMIT, &text, &tlen, &bin) < 0) {
                ch->entry.unreadable = true;
                return 0;
        }
        ch->entry.binary = bin;
        if (!base && text && !bin)
                return linediff_count(NULL, 0, text, tlen, &ch->added, &ch->removed) < 0
                           ? umw_fail_sys(err, ENOMEM, "layer: diff %s", ch->path)
                           : 0;
        if (!base || !S_ISREG(base->st_mode) ||
            read_regular(lower, name, base, DELIVERY_SIZE_LIMIT, &old, &olen, &obin) < 0 || !text ||
            !old)
                return 0;
        if (tlen == olen && memcmp(text, old, tlen) == 0 && st->st_mode == base->st_mode) {
                free(ch->path);
                w->out->n--; /* copied up, not changed */
                return 0;
        }
        if (!bin && !obin && linediff_count(old, olen, text, tlen, &ch->added, &ch->removed) < 0)
                return umw_fail_sys(err, ENOMEM, "layer: diff %s", ch->path);
        return 0;
}

static int walk_dir(struct walk *w, size_t len, int upper, int lower, bool replaced, int depth);

/* A deletion of what lower has as name at w->path (len), with its lines. */
static int deleted(struct walk *w, size_t len, int lower, const char *name, const struct stat *st)
{
        struct layer_change *ch = add_change(w, len, LAYER_DELETED, w->err);
        if (!ch)
                return -1;
        ch->entry.base_mode = st->st_mode;
        _cleanup_free_ char *old = NULL;
        size_t olen;
        bool bin = false;
        if (!S_ISREG(st->st_mode) ||
            read_regular(lower, name, st, DELIVERY_SIZE_LIMIT, &old, &olen, &bin) < 0 || !old ||
            bin)
                return 0;
        return linediff_count(old, olen, NULL, 0, &ch->added, &ch->removed) < 0
                   ? umw_fail_sys(w->err, ENOMEM, "layer: diff %s", ch->path)
                   : 0;
}

/* A listing of the directory fd (kept open: the caller's) at w->path
 * (len), depth levels down. */
static int open_listing(struct walk *w, size_t len, int fd, int depth, DIR **d)
{
        if (depth > LAYER_DEPTH_MAX)
                return umw_fail(w->err, UMW_EXIT_FAILURE, ELOOP, "layer: deeper than %d below %.*s",
                                LAYER_DEPTH_MAX, (int)len, w->path);
        int dfd = dup(fd);
        *d = dfd < 0 ? NULL : fdopendir(dfd);
        if (*d)
                return 0;
        if (dfd >= 0)
                close(dfd);
        return umw_fail_errno(w->err, "layer: read %.*s", (int)len, len ? w->path : ".");
}

/* Everything lower has below w->path (len) that upper does not: deleted
 * (upper -1: all of it). */
static int lower_deleted(struct walk *w, size_t len, int lower, int upper, int depth)
{
        _cleanup_closedir_ DIR *d = NULL;
        if (open_listing(w, len, lower, depth, &d) < 0)
                return -1;
        struct dirent *e;
        while ((e = readdir(d))) {
                struct stat st, up;
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
                    fstatat(lower, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    (upper >= 0 && fstatat(upper, e->d_name, &up, AT_SYMLINK_NOFOLLOW) == 0))
                        continue;
                ssize_t n = join(w, len, e->d_name, w->err);
                if (n < 0)
                        return -1;
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_close_ int sub = openat(
                            lower, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub >= 0 && lower_deleted(w, (size_t)n, sub, -1, depth + 1) < 0)
                                return -1;
                        continue;
                }
                if (deleted(w, (size_t)n, lower, e->d_name, &st) < 0)
                        return -1;
        }
        return 0;
}

/* A directory the layer holds at w->path (len). */
static int dir_change(struct walk *w, size_t len, int upper, int lower, const char *name,
                      const struct stat *base, int depth)
{
        _cleanup_close_ int sub =
            openat(upper, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0 || redirected(sub)) {
                struct layer_change *ch = add_change(w, len, LAYER_ADDED, w->err);
                if (!ch)
                        return -1;
                ch->entry.mode = S_IFDIR | 0755;
                ch->entry.unreadable = true; /* a redirect is not followed */
                return 0;
        }
        struct stat git;
        bool nested = fstatat(sub, ".git", &git, AT_SYMLINK_NOFOLLOW) == 0;
        if (nested) { /* one change at its path, whatever lower had there */
                struct layer_change *ch =
                    add_change(w, len, base ? LAYER_MODIFIED : LAYER_ADDED, w->err);
                if (!ch)
                        return -1;
                ch->entry.mode = S_IFDIR | 0755;
                ch->entry.base_mode = base ? base->st_mode : 0;
                ch->entry.nested_repo = true;
        }
        bool dir_below = base && S_ISDIR(base->st_mode);
        if (base && !dir_below && !nested) { /* a file or link became a directory */
                struct layer_change *ch = add_change(w, len, LAYER_DELETED, w->err);
                if (!ch)
                        return -1;
                ch->entry.base_mode = base->st_mode;
        }
        _cleanup_close_ int lsub =
            dir_below ? openat(lower, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        return walk_dir(w, len, sub, lsub, dir_below && opaque(sub), depth + 1);
}

/* One name of an upper directory. */
static int walk_entry(struct walk *w, size_t len, int upper, int lower, const char *name, int depth)
{
        struct stat st, base;
        if (fstatat(upper, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return umw_fail_errno(w->err, "layer: stat %.*s/%s", (int)len, w->path, name);
        ssize_t n = join(w, len, name, w->err);
        if (n < 0)
                return -1;
        bool in_lower = lower >= 0 && fstatat(lower, name, &base, AT_SYMLINK_NOFOLLOW) == 0;
        if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) { /* a whiteout */
                if (!in_lower)
                        return 0;
                if (!S_ISDIR(base.st_mode))
                        return deleted(w, (size_t)n, lower, name, &base);
                _cleanup_close_ int sub =
                    openat(lower, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                return sub < 0 ? 0 : lower_deleted(w, (size_t)n, sub, -1, depth + 1);
        }
        if (S_ISDIR(st.st_mode))
                return dir_change(w, (size_t)n, upper, lower, name, in_lower ? &base : NULL, depth);
        if (in_lower && S_ISDIR(base.st_mode)) { /* a directory became a file */
                _cleanup_close_ int sub =
                    openat(lower, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0 && lower_deleted(w, (size_t)n, sub, -1, depth + 1) < 0)
                        return -1;
                in_lower = false;
        }
        return file_change(w, (size_t)n, upper, lower, name, &st, in_lower ? &base : NULL, w->err);
}

/* upper's directory at w->path (len) against lower's (-1: none); replaced:
 * it is opaque, so what lower has there and upper does not is deleted. */
static int walk_dir(struct walk *w, size_t len, int upper, int lower, bool replaced, int depth)
{
        _cleanup_closedir_ DIR *d = NULL;
        if (open_listing(w, len, upper, depth, &d) < 0)
                return -1;
        struct dirent *e;
        errno = 0;
        while ((e = readdir(d))) {
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
                    walk_entry(w, len, upper, lower, e->d_name, depth) < 0)
                        return -1;
        }
        if (replaced && lower >= 0 && lower_deleted(w, len, lower, upper, depth) < 0)
                return -1;
        return 0;
}

static int by_path(const void *a, const void *b)
{
        return strcmp(((const struct layer_change *)a)->path,
                      ((const struct layer_change *)b)->path);
}

int layer_read_changes(int upper_fd, int lower_fd, struct layer_changes *out,
                       struct umw_error **err)
{
        *out = (struct layer_changes){0};
        struct walk *w = calloc(1, sizeof(*w));
        if (!w)
                return umw_fail_sys(err, ENOMEM, "layer");
        w->out = out;
        w->err = err;
        int r = walk_dir(w, 0, upper_fd, lower_fd, opaque(upper_fd), 0);
        free(w);
        if (r < 0) {
                layer_changes_free(out);
                return -1;
        }
        if (out->n > 1)
                qsort(out->v, out->n, sizeof(*out->v), by_path);
        for (size_t i = 0; i < out->n; i++)
                out->v[i].entry.path = out->v[i].path;
        return 0;
}
