/* Direct mode's report (direct_report.h). What changed is told by ctime:
 * the kernel sets it on every write, chmod, link, rename and on the
 * directory an entry was added to or removed from, and no caller can set
 * it (utimensat sets atime and mtime only, and touches ctime doing so), so
 * an agent that backdates a planted file's mtime still shows. A directory
 * whose own ctime is new (an entry renamed in or out, the directory itself
 * renamed into place) passes that on to the held names below it, so a tree
 * prepared under an innocent name and renamed to .cargo or .vscode shows
 * too. The walk is by fd: every directory opened O_NOFOLLOW|O_DIRECTORY
 * from its parent, every entry looked at with AT_SYMLINK_NOFOLLOW, nothing
 * on another filesystem (a mount point) entered; depth, entries and
 * findings are bounded, and a walk a bound stopped says so. */
#include "face/direct_int.h"
#include "face/direct_report.h"
#include "face/sandbox_int.h"
#include "policy/delivery_rules.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/utf8.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A report is a state file umwelt wrote: bounded all the same. */
#define REPORT_MAX (16u << 20)

static const char git_reason[] =
    "a .git (in a spelling some filesystem folds to it): host git reads its config and runs its "
    "hooks";
static const char unread_reason[] =
    "a directory that changed and cannot be read: what it holds was not looked at";
static const char exec_reason[] = "a new or changed executable: what the host may run";

void direct_now(struct timespec *t)
{
        if (clock_gettime(CLOCK_REALTIME_COARSE, t) < 0)
                clock_gettime(CLOCK_REALTIME, t);
}

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

int direct_state_open(const struct sandbox *s, int *fd, struct umw_error **err)
{
        _cleanup_free_ char *dir = NULL;
        int r = umw_state_dir(s->project.id, &dir, err);
        if (r < 0)
                return r;
        *fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return *fd < 0 ? umw_fail_errno(err, "open the state directory %s", dir) : 0;
}

/* ------------------------------------------------------------ the walk */

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

/* The workspace walked for what changed since f->since. */
static int walk_workspace(const struct sandbox *s, struct direct_found *f, struct umw_error **err)
{
        int fd = open(s->project.workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
                int r =
                    umw_fail_errno(err, "direct mode: open the workspace %s", s->project.workspace);
                if (fd >= 0)
                        close(fd);
                return r;
        }
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return umw_fail_errno(err, "direct mode: read the workspace %s",
                                      s->project.workspace);
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

/* ------------------------------------------------------------ the report file */

static void hex(const char *p, size_t n, char *out)
{
        static const char digits[] = "0123456789abcdef";
        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[(unsigned char)p[i] >> 4];
                out[2 * i + 1] = digits[(unsigned char)p[i] & 15];
        }
        out[2 * n] = '\0';
}

static void gen_u64(yajl_gen g, const char *key, uint64_t v)
{
        char text[24];
        snprintf(text, sizeof(text), "%" PRIu64, v);
        umw_jgen_key_str(g, key, text);
}

/* path: the printable form for people; path_hex: its exact bytes, which
 * quarantine moves; dev and ino as decimal text (a JSON number may not
 * hold 64 bits). */
static int gen_item(yajl_gen g, const struct direct_item *it)
{
        _cleanup_free_ char *name = umw_printable_dup(it->path, it->len);
        _cleanup_free_ char *raw = malloc(2 * it->len + 1);
        if (!name || !raw)
                return -ENOMEM;
        hex(it->path, it->len, raw);
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "path", name);
        umw_jgen_key_str(g, "path_hex", raw);
        umw_jgen_key_str(g, "reason", it->reason);
        gen_u64(g, "dev", (uint64_t)it->dev);
        gen_u64(g, "ino", (uint64_t)it->ino);
        umw_jgen_key_int(g, "ctime_sec", (long long)it->ctime.tv_sec);
        umw_jgen_key_int(g, "ctime_nsec", (long long)it->ctime.tv_nsec);
        yajl_gen_map_close(g);
        return 0;
}

static char *render(const struct sandbox *s, const struct direct_found *f)
{
        yajl_gen g = umw_jgen_new(true);
        if (!g)
                return NULL;
        int r = 0;
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "workspace", s->project.workspace);
        umw_jgen_key_int(g, "since_sec", (long long)f->since.tv_sec);
        umw_jgen_key_int(g, "since_nsec", (long long)f->since.tv_nsec);
        umw_jgen_key(g, "cut");
        if (f->cut)
                umw_jgen_str(g, f->cut);
        else
                yajl_gen_null(g);
        umw_jgen_key(g, "entries");
        yajl_gen_array_open(g);
        for (size_t i = 0; r == 0 && i < f->n; i++)
                r = gen_item(g, &f->v[i]);
        yajl_gen_array_close(g);
        yajl_gen_map_close(g);
        char *text = umw_jgen_finish(g, NULL);
        if (r < 0) {
                free(text);
                return NULL;
        }
        return text;
}

int direct_report_write(const struct sandbox *s, int state_fd, const struct direct_found *f,
                        struct umw_error **err)
{
        if (f->n == 0 && !f->cut) {
                if (unlinkat(state_fd, DIRECT_REPORT_FILE, 0) < 0 && errno != ENOENT)
                        return umw_fail_errno(err, "remove %s", DIRECT_REPORT_FILE);
                return 0;
        }
        _cleanup_free_ char *text = render(s, f);
        if (!text)
                return umw_fail_sys(err, ENOMEM, "direct mode: the report");
        return umw_write_file_atomic(state_fd, DIRECT_REPORT_FILE, text, strlen(text), 0600, err);
}

/* in's hex digits as bytes into *out (malloc'd, the caller's to free
 * whatever the answer): false when in is no path's hex. */
static bool unhex(const char *in, char **out, size_t *len)
{
        size_t n = strlen(in);
        *out = NULL;
        if (n == 0 || n % 2 || n / 2 >= DIRECT_PATH_MAX || !(*out = malloc(n / 2 + 1)))
                return false;
        for (size_t i = 0; i < n / 2; i++) {
                unsigned v;
                if (sscanf(in + 2 * i, "%2x", &v) != 1 || v == 0)
                        return false;
                (*out)[i] = (char)v;
        }
        (*out)[n / 2] = '\0';
        *len = n / 2;
        return true;
}

static bool get_u64(yajl_val o, const char *key, uint64_t *v)
{
        const char *text = umw_json_member_str(o, key, NULL);
        char *end;
        errno = 0;
        *v = text ? strtoull(text, &end, 10) : 0;
        return text && *text && !*end && errno == 0;
}

static bool get_int(yajl_val o, const char *key, long long *v)
{
        yajl_val x = umw_json_member(o, key);
        *v = YAJL_IS_INTEGER(x) ? x->u.number.i : 0;
        return YAJL_IS_INTEGER(x);
}

static int read_item(struct direct_found *f, yajl_val o)
{
        uint64_t dev, ino;
        long long sec, nsec;
        const char *raw = umw_json_member_str(o, "path_hex", NULL);
        const char *reason = umw_json_member_str(o, "reason", NULL);
        _cleanup_free_ char *path = NULL;
        size_t len;
        if (!raw || !reason || !unhex(raw, &path, &len) || !get_u64(o, "dev", &dev) ||
            !get_u64(o, "ino", &ino) || !get_int(o, "ctime_sec", &sec) ||
            !get_int(o, "ctime_nsec", &nsec))
                return -EINVAL;
        struct stat st = {.st_dev = (dev_t)dev, .st_ino = (ino_t)ino};
        st.st_ctim = (struct timespec){.tv_sec = (time_t)sec, .tv_nsec = (long)nsec};
        return direct_found_add(f, path, len, reason, &st) ? 0 : -ENOMEM;
}

int direct_report_read(int state_fd, struct direct_found *f, bool *none, struct umw_error **err)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        *none = false;
        int r = umw_read_file_at(state_fd, DIRECT_REPORT_FILE, REPORT_MAX, &text, &len, err);
        if (r < 0 && (*err)->errnum == ENOENT) {
                umw_error_freep(err);
                *none = true;
                return 0;
        }
        if (r < 0 || (r = umw_json_parse(text, DIRECT_REPORT_FILE, &f->tree, err)) < 0)
                return r;
        long long sec, nsec;
        yajl_val entries = umw_json_member(f->tree, "entries");
        if (!get_int(f->tree, "since_sec", &sec) || !get_int(f->tree, "since_nsec", &nsec) ||
            !YAJL_IS_ARRAY(entries))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: expected since_sec, since_nsec and entries",
                                DIRECT_REPORT_FILE);
        f->since = (struct timespec){.tv_sec = (time_t)sec, .tv_nsec = (long)nsec};
        for (size_t i = 0; i < entries->u.array.len; i++)
                if (read_item(f, entries->u.array.values[i]) < 0)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "%s: entries[%zu]: expected path_hex, reason, dev, ino, "
                                        "ctime_sec and ctime_nsec",
                                        DIRECT_REPORT_FILE, i);
        return 0;
}

/* ------------------------------------------------------------ the report */

static void print_found(const struct sandbox *s, const struct direct_found *f)
{
        for (size_t i = 0; i < f->n; i++) {
                fputs("umwelt-run: direct mode: ", stderr);
                umw_put_printable(stderr, f->v[i].path, f->v[i].len, false);
                fprintf(stderr, ": %s\n", f->v[i].reason);
        }
        if (f->cut)
                fprintf(stderr,
                        "umwelt-run: direct mode: the walk of %s stopped early (%s): what lies "
                        "past it was not looked at\n",
                        s->project.workspace, f->cut);
        if (f->n)
                fprintf(stderr,
                        "umwelt-run: direct mode: %zu file%s the host may execute changed in %s "
                        "since the sandbox started; umwelt-run deliver quarantine -p %s moves "
                        "them aside\n",
                        f->n, f->n == 1 ? "" : "s", s->project.workspace, s->project.workspace);
}

/* The walk since since, or since an earlier report that was not
 * quarantined (its entries are found again, with any new ones). */
static int report(struct sandbox *s, const struct timespec *since, struct umw_error **err)
{
        _cleanup_close_ int state_fd = -1;
        _cleanup_found_ struct direct_found old = {0}, f = {.since = *since};
        bool none;
        int r;
        if ((r = direct_state_open(s, &state_fd, err)) < 0 ||
            (r = direct_report_read(state_fd, &old, &none, err)) < 0)
                return r;
        if (!none && (old.since.tv_sec < f.since.tv_sec ||
                      (old.since.tv_sec == f.since.tv_sec && old.since.tv_nsec < f.since.tv_nsec)))
                f.since = old.since;
        if ((r = walk_workspace(s, &f, err)) < 0 ||
            (r = direct_report_write(s, state_fd, &f, err)) < 0)
                return r;
        print_found(s, &f);
        char found[24];
        snprintf(found, sizeof(found), "%zu", f.n);
        const char *kv[] = {"id",  s->project.container_id, "found",  found,
                            "cut", f.cut ? f.cut : "no",    "report", f.n ? DIRECT_REPORT_FILE : "",
                            NULL};
        sandbox_audit(s, "direct-report", kv);
        return 0;
}

void direct_report_end(struct sandbox *s, const struct timespec *since)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (report(s, since, &err) < 0)
                umw_warn("direct mode: no report of what the agent changed: %s", err->msg);
}

int direct_up_begins(struct sandbox *s, struct umw_error **err)
{
        if (s->view.review)
                return 0;
        _cleanup_close_ int state_fd = -1;
        int r = direct_state_open(s, &state_fd, err);
        if (r < 0)
                return r;
        /* A start no down reported (the sandbox was gc'd, or umwelt-run
         * killed) is kept: the next down's report reaches back to it. */
        struct stat st;
        if (fstatat(state_fd, DIRECT_START_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return 0;
        struct timespec now;
        direct_now(&now);
        char text[48];
        int n = snprintf(text, sizeof(text), "%lld %ld\n", (long long)now.tv_sec, now.tv_nsec);
        return umw_write_file_atomic(state_fd, DIRECT_START_FILE, text, (size_t)n, 0600, err);
}

void direct_report_down(struct sandbox *s)
{
        _cleanup_error_ struct umw_error *err = NULL;
        _cleanup_close_ int state_fd = -1;
        _cleanup_free_ char *text = NULL;
        size_t len;
        long long sec;
        long nsec;
        if (direct_state_open(s, &state_fd, &err) < 0 ||
            umw_read_file_at(state_fd, DIRECT_START_FILE, 64, &text, &len, &err) < 0) {
                if (err->errnum != ENOENT)
                        umw_warn("direct mode: no report of what the agent changed: %s", err->msg);
                return;
        }
        if (sscanf(text, "%lld %ld", &sec, &nsec) != 2) {
                umw_warn("direct mode: %s: expected the start time: no report", DIRECT_START_FILE);
                return;
        }
        struct timespec since = {.tv_sec = (time_t)sec, .tv_nsec = nsec};
        direct_report_end(s, &since);
        if (unlinkat(state_fd, DIRECT_START_FILE, 0) < 0)
                umw_warn("remove %s: %s", DIRECT_START_FILE, strerror(errno));
}
