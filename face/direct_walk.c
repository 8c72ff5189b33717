/* Direct mode's walk (direct_int.h): what changed in the workspace since
 * the start that the host executes. What changed is told by ctime: the
 * kernel sets it on every write, chmod, link, rename and on the directory
 * an entry was added to or removed from, and no caller can set it
 * (utimensat sets atime and mtime only, and touches ctime doing so), so an
 * agent that backdates a planted file's mtime still shows. A directory
 * whose own ctime is new (an entry renamed in or out, the directory itself
 * renamed into place) passes that on to the held names below it, so a tree
 * prepared under an innocent name and renamed to .cargo or .vscode shows
 * too. The walk is by fd: every directory opened O_NOFOLLOW|O_DIRECTORY
 * from its parent, every entry looked at with AT_SYMLINK_NOFOLLOW, nothing
 * on another filesystem (a mount point) entered; depth, entries and
 * findings are bounded, and a walk a bound stopped says so. */
#include "face/direct_int.h"
#include "face/direct_report.h"
#include "policy/delivery_rules.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char git_reason[] =
    "a .git (in a spelling some filesystem folds to it): host git reads its config and runs its "
    "hooks";
static const char unread_reason[] =
    "a directory that changed and cannot be read: what it holds was not looked at";
static const char exec_reason[] = "a new or changed executable: what the host may run";

void direct_found_free(struct direct_found *f)
{
        for (size_t i = 0; i < f->n; i++)
                free(f->v[i].path);
        free(f->v);
        if (f->tree)
                yajl_tree_free(f->tree);
        *f = (struct direct_found){0};
}

bool direct_found_add(struct direct_found *f, const char *path, size_t len, const char *reason,
                      const struct stat *st)
{
        if (f->n == DIRECT_ITEMS_MAX) {
                f->cut = "more than 10000 findings";
                return false;
        }
        if (f->n == f->cap) {
                size_t cap = f->cap ? f->cap * 2 : 16;
                struct direct_item *v = realloc(f->v, cap * sizeof(*v));
                if (!v) {
                        f->cut = "out of memory";
                        return false;
                }
                f->v = v;
                f->cap = cap;
        }
        char *copy = malloc(len + 1);
        if (!copy) {
                f->cut = "out of memory";
                return false;
        }
        memcpy(copy, path, len);
        copy[len] = '\0';
        f->v[f->n++] = (struct direct_item){.path = copy,
                                            .len = len,
                                            .reason = reason,
                                            .dev = st->st_dev,
                                            .ino = st->st_ino,
                                            .ctime = st->st_ctim};
        return true;
}

struct dwalk {
        struct direct_found *out;
        dev_t dev; /* the workspace's filesystem */
        char path[DIRECT_PATH_MAX];
};

static bool is_new(const struct direct_found *f, const struct stat *st)
{
        return st->st_ctim.tv_sec > f->since.tv_sec ||
               (st->st_ctim.tv_sec == f->since.tv_sec && st->st_ctim.tv_nsec >= f->since.tv_nsec);
}

/* w->path becomes its first len bytes + '/' + name; the new length, 0 when
 * it would not fit (the walk is cut). */
static size_t join(struct dwalk *w, size_t len, const char *name)
{
        size_t n = strlen(name);
        if (len + 1 + n >= sizeof(w->path)) {
                w->out->cut = "a path longer than 4096 bytes";
                return 0;
        }
        if (len)
                w->path[len++] = '/';
        memcpy(w->path + len, name, n);
        return len + n;
}

/* The directory name in dfd, opened without following a link, still the
 * inode st describes; NULL when it cannot be (counted as not looked at). */
static DIR *open_dir(int dfd, const char *name, const struct stat *st)
{
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat now;
        if (fd >= 0 && fstat(fd, &now) == 0 && now.st_ino == st->st_ino &&
            now.st_dev == st->st_dev) {
                DIR *d = fdopendir(fd);
                if (d)
                        return d;
        }
        if (fd >= 0)
                close(fd);
        return NULL;
}

/* The next entry of d other than . and .., counted against the bound. */
static struct dirent *next_entry(struct dwalk *w, DIR *d)
{
        struct dirent *e;
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                        break;
        if (e && ++w->out->seen > DIRECT_ENTRIES_MAX) {
                w->out->cut = "more than 4194304 entries";
                return NULL;
        }
        return e;
}

/* Whether anything below the directory name in dfd changed since the
 * start: a .git is reported whole, so what changed inside one is its. */
static bool subtree_new(struct dwalk *w, int dfd, const char *name, const struct stat *st,
                        int depth)
{
        if (depth > DIRECT_DEPTH_MAX)
                return true; /* cannot tell: the safer answer */
        _cleanup_closedir_ DIR *d = open_dir(dfd, name, st);
        if (!d)
                return true;
        struct dirent *e;
        while (!w->out->cut && (e = next_entry(w, d))) {
                struct stat sub;
                if (fstatat(dirfd(d), e->d_name, &sub, AT_SYMLINK_NOFOLLOW) < 0 ||
                    sub.st_dev != w->dev)
                        continue;
                if (is_new(w->out, &sub) ||
                    (S_ISDIR(sub.st_mode) && subtree_new(w, dirfd(d), e->d_name, &sub, depth + 1)))
                        return true;
        }
        return false;
}

static void walk_dir(struct dwalk *w, DIR *d, size_t len, int depth, bool inherited);

/* One entry of the directory dfd at w->path (len bytes); inherited: a
 * directory above it (below the workspace's root) changed. */
static void walk_entry(struct dwalk *w, int dfd, size_t len, const char *name, int depth,
                       bool inherited)
{
        struct stat st;
        /* Gone since listed, or on another filesystem: nothing of this
         * workspace's to report. */
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != w->dev)
                return;
        /* The workspace's own .git was bound read-only for the whole run
         * (or covered, when absent): the agent cannot have changed it. */
        if (depth == 0 && strcmp(name, ".git") == 0)
                return;
        size_t n = join(w, len, name);
        if (!n)
                return;
        bool own = is_new(w->out, &st), changed = own || inherited;
        if (delivery_part_is_dotgit(name, strlen(name))) {
                if (changed || (S_ISDIR(st.st_mode) && subtree_new(w, dfd, name, &st, depth + 1)))
                        direct_found_add(w->out, w->path, n, git_reason, &st);
                return;
        }
        if (S_ISDIR(st.st_mode)) {
                /* One the walker cannot list or search: the agent (the same
                 * user, no capability) could write there only where it was
                 * so already, and an entry made or a chmod moves its ctime. */
                bool whole =
                    faccessat(dfd, name, R_OK | X_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0;
                _cleanup_closedir_ DIR *d = whole ? open_dir(dfd, name, &st) : NULL;
                if (d)
                        walk_dir(w, d, n, depth + 1, changed);
                else if (changed)
                        direct_found_add(w->out, w->path, n, unread_reason, &st);
                return;
        }
        struct delivery_entry e = {.path = w->path, .len = n, .mode = st.st_mode};
        const char *why = changed ? delivery_held_by_name(NULL, &e) : NULL;
        if (!why && own && S_ISREG(st.st_mode) && (st.st_mode & 0111))
                why = exec_reason;
        if (why)
                direct_found_add(w->out, w->path, n, why, &st);
}

static void walk_dir(struct dwalk *w, DIR *d, size_t len, int depth, bool inherited)
{
        if (depth > DIRECT_DEPTH_MAX) {
                w->out->cut = "deeper than 256 directories";
                return;
        }
        struct dirent *e;
        while (!w->out->cut && (e = next_entry(w, d)))
                walk_entry(w, dirfd(d), len, e->d_name, depth, inherited);
}

static int by_path(const void *a, const void *b)
{
        return strcmp(((const struct direct_item *)a)->path, ((const struct direct_item *)b)->path);
}

int direct_walk(const char *workspace, struct direct_found *f, struct umw_error **err)
{
        int fd = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
                int r = umw_fail_errno(err, "direct mode: open the workspace %s", workspace);
                if (fd >= 0)
                        close(fd);
                return r;
        }
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return umw_fail_errno(err, "direct mode: read the workspace %s", workspace);
        }
        _cleanup_free_ struct dwalk *w = calloc(1, sizeof(*w));
        if (!w)
                return umw_fail_sys(err, ENOMEM, "direct mode: the walk");
        *w = (struct dwalk){.out = f, .dev = st.st_dev};
        walk_dir(w, d, 0, 0, false);
        if (f->n)
                qsort(f->v, f->n, sizeof(*f->v), by_path);
        return 0;
}
