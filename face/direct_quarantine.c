/* deliver quarantine (direct_report.h): the reported entries moved out of
 * the workspace into STATE/PROJECT-ID/quarantine/N/, each at its relative
 * path. Each is reached by fd (its parent opened with openat2
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_XDEV under the
 * workspace's fd) and moved only while it is still the inode reported,
 * with the same ctime: what changed after the report, or was swapped for
 * another file, is left in place and said so. A rename only, never a copy:
 * where the state directory is on another filesystem (EXDEV) the entry is
 * refused with one line, since copying a tree of the agent's (links,
 * special files, a .git) faithfully is more than a move should do. */
#include "face/direct_int.h"
#include "face/direct_report.h"
#include "face/sandbox_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define QUARANTINE_DIR "quarantine"

/* dir (len bytes, relative) opened beneath root, no link, no other mount. */
static int open_parent(int root, const char *dir, size_t len)
{
        char name[DIRECT_PATH_MAX];
        if (len == 0) {
                int fd = fcntl(root, F_DUPFD_CLOEXEC, 0);
                return fd < 0 ? -errno : fd;
        }
        if (len >= sizeof(name))
                return -ENAMETOOLONG;
        memcpy(name, dir, len);
        name[len] = '\0';
        struct open_how how = {
            .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
            .resolve =
                RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        int fd = (int)syscall(SYS_openat2, root, name, &how, sizeof(how));
        return fd < 0 ? -errno : fd;
}

/* The directories of dir (len bytes) made below base, 0700, the last one
 * opened; -errno. */
static int make_parents(int base, const char *dir, size_t len)
{
        int fd = fcntl(base, F_DUPFD_CLOEXEC, 0);
        for (size_t start = 0; fd >= 0 && start < len;) {
                const char *slash = memchr(dir + start, '/', len - start);
                size_t end = slash ? (size_t)(slash - dir) : len;
                char part[256];
                if (end - start >= sizeof(part)) {
                        close(fd);
                        return -ENAMETOOLONG;
                }
                memcpy(part, dir + start, end - start);
                part[end - start] = '\0';
                if (mkdirat(fd, part, 0700) < 0 && errno != EEXIST) {
                        int e = -errno;
                        close(fd);
                        return e;
                }
                int sub = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                int e = -errno;
                close(fd);
                if (sub < 0)
                        return e;
                fd = sub;
                start = end + 1;
        }
        return fd < 0 ? -errno : fd;
}

/* A new quarantine/N below the state directory (N from 1), opened. */
static int new_batch(int state_fd, unsigned *n, int *fd, struct umw_error **err)
{
        if (mkdirat(state_fd, QUARANTINE_DIR, 0700) < 0 && errno != EEXIST)
                return umw_fail_errno(err, "create %s", QUARANTINE_DIR);
        _cleanup_close_ int q =
            openat(state_fd, QUARANTINE_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (q < 0)
                return umw_fail_errno(err, "open %s", QUARANTINE_DIR);
        for (*n = 1; *n < 100000; (*n)++) {
                char name[16];
                snprintf(name, sizeof(name), "%u", *n);
                if (mkdirat(q, name, 0700) == 0) {
                        *fd = openat(q, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        return *fd < 0 ? umw_fail_errno(err, "open %s/%s", QUARANTINE_DIR, name)
                                       : 0;
                }
                if (errno != EEXIST)
                        return umw_fail_errno(err, "create %s/%s", QUARANTINE_DIR, name);
        }
        return umw_fail(err, UMW_EXIT_FAILURE, ENOSPC, "%s: no free batch number", QUARANTINE_DIR);
}

/* base in the directory from (-errno: it could not be opened) looked at,
 * no link followed: 0 or -errno. */
static int look(int from, const char *base, struct stat *st)
{
        if (from < 0)
                return from;
        return fstatat(from, base, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* Why it was left in place, or NULL when it moved (or was gone already:
 * *gone). */
static const char *move_one(int ws, int batch, const struct direct_item *it, bool *gone)
{
        const char *slash = memrchr(it->path, '/', it->len);
        size_t dlen = slash ? (size_t)(slash - it->path) : 0;
        const char *base = slash ? slash + 1 : it->path;
        *gone = false;
        _cleanup_close_ int from = open_parent(ws, it->path, dlen);
        struct stat st;
        int found = look(from, base, &st);
        if (found == -ENOENT) {
                *gone = true;
                return NULL;
        }
        if (from < 0)
                return "its directory cannot be reached without a link or another filesystem";
        if (found < 0)
                return "it cannot be looked at";
        /* A directory (a planted .git) by its inode alone: its ctime moves
         * with every entry made in it, host git's own index.lock too. */
        bool same_ctime =
            st.st_ctim.tv_sec == it->ctime.tv_sec && st.st_ctim.tv_nsec == it->ctime.tv_nsec;
        if (st.st_dev != it->dev || st.st_ino != it->ino || (!S_ISDIR(st.st_mode) && !same_ctime))
                return "it changed since the report (run a sandbox again for a new one)";
        _cleanup_close_ int to = make_parents(batch, it->path, dlen);
        if (to < 0)
                return "its place in the quarantine cannot be made";
        if (renameat2(from, base, to, base, RENAME_NOREPLACE) == 0)
                return NULL;
        return errno == EXDEV ? "the state directory is on another filesystem than the workspace: "
                                "move it by hand"
                              : "the rename failed";
}

static void print_path(FILE *out, const char *what, const struct direct_item *it, const char *tail)
{
        fputs(what, out);
        umw_put_printable(out, it->path, it->len, false);
        fputs(tail, out);
}

struct batch {
        struct sandbox *s;
        int ws, fd;
        unsigned n;
        struct direct_found left; /* keeps its report's since */
        size_t moved, gone;
};

static void quarantine_item(struct batch *b, const struct direct_item *it)
{
        bool gone;
        const char *why = move_one(b->ws, b->fd, it, &gone);
        if (gone) {
                b->gone++;
                return;
        }
        if (why) {
                print_path(stderr, "umwelt-run: deliver quarantine: left ", it, ": ");
                fprintf(stderr, "%s\n", why);
                struct stat st = {.st_dev = it->dev, .st_ino = it->ino, .st_ctim = it->ctime};
                direct_found_add(&b->left, it->path, it->len, it->reason, &st);
                return;
        }
        char to[32];
        snprintf(to, sizeof(to), "%s/%u", QUARANTINE_DIR, b->n);
        print_path(stdout, "moved ", it, "");
        printf(" -> %s/\n", to);
        _cleanup_free_ char *name = umw_printable_dup(it->path, it->len);
        const char *kv[] = {"path", name ? name : "?", "to", to, "reason", it->reason, NULL};
        sandbox_audit(b->s, "quarantine", kv);
        b->moved++;
}

static void batch_release(struct batch *b)
{
        umw_close_fdp(&b->ws);
        umw_close_fdp(&b->fd);
        direct_found_free(&b->left);
}
#define _cleanup_batch_ __attribute__((cleanup(batch_release)))

/* The report after the moves: what is left stays reported (with the
 * report's start), else the report goes with the batch as its record. */
static int settle_report(struct batch *b, int state_fd, struct umw_error **err)
{
        if (b->left.n)
                return direct_report_write(b->s, state_fd, &b->left, err);
        if (renameat(state_fd, DIRECT_REPORT_FILE, b->fd, DIRECT_REPORT_FILE) < 0)
                return umw_fail_errno(err, "move %s into %s/%u", DIRECT_REPORT_FILE, QUARANTINE_DIR,
                                      b->n);
        return 0;
}

static int quarantine(struct sandbox *s, int state_fd, struct direct_found *f,
                      struct umw_error **err)
{
        _cleanup_batch_ struct batch b = {.s = s, .ws = -1, .fd = -1, .left = {.since = f->since}};
        b.ws = open(s->project.workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (b.ws < 0)
                return umw_fail_errno(err, "open the workspace %s", s->project.workspace);
        int r = new_batch(state_fd, &b.n, &b.fd, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < f->n; i++)
                quarantine_item(&b, &f->v[i]);
        if ((r = settle_report(&b, state_fd, err)) < 0)
                return r;
        printf("%zu moved to %s/%u in umwelt's state directory, %zu gone already, %zu left\n",
               b.moved, QUARANTINE_DIR, b.n, b.gone, b.left.n);
        if (b.left.n)
                return umw_fail(err, UMW_EXIT_STATE, EBUSY,
                                "deliver quarantine: %zu entr%s left in place (above), still "
                                "reported",
                                b.left.n, b.left.n == 1 ? "y" : "ies");
        return 0;
}

int sandbox_deliver_quarantine(const char *project, struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        _cleanup_close_ int state_fd = -1;
        _cleanup_found_ struct direct_found f = {0};
        bool none;
        int r;
        if ((r = sandbox_locate(&s, project, err)) < 0 || (r = sandbox_open_audit(&s, err)) < 0 ||
            (r = direct_state_open(&s, &state_fd, err)) < 0 ||
            (r = direct_report_read(state_fd, &f, &none, err)) < 0)
                return r;
        if (none)
                return umw_fail(err, UMW_EXIT_NOTFOUND, ENOENT,
                                "no direct-mode report for %s: nothing to quarantine",
                                s.project.workspace);
        return quarantine(&s, state_fd, &f, err);
}
