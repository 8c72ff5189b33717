/* A harness's configuration file in the project: read through the
 * project's directory fd, never through a link (a symlinked file or
 * directory is refused: its target is some other file, which the user did
 * not name), and written as a new file beside it that is renamed over it,
 * with the old one's mode and owner, once the old one is seen unchanged. */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory of f (the project itself, or .claude / .codex in it),
 * opened without following a link: -ENOENT when it is missing. */
static int open_dir(struct cfile *f, int *out, struct umw_error **err)
{
        *out = -1;
        if (!f->dir)
                return (*out = fcntl(f->projfd, F_DUPFD_CLOEXEC, 3)) < 0
                           ? umw_fail_errno(err, "%s", f->project)
                           : 0;
        *out = openat(f->projfd, f->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (*out >= 0 || errno == ENOENT)
                return *out >= 0 ? 0 : -ENOENT;
        if (errno == ELOOP || errno == ENOTDIR)
                return umw_fail(err, UMW_EXIT_CONFIG, errno,
                                "%s/%s: a symbolic link or not a directory; umwelt-mcp install "
                                "edits only files in a real directory",
                                f->project, f->dir);
        return umw_fail_errno(err, "open %s/%s", f->project, f->dir);
}

static int read_text(struct cfile *f, int fd, struct umw_error **err)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return umw_fail_errno(err, "stat %s", f->path);
        if (!S_ISREG(st.st_mode))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: not a regular file", f->path);
        f->mode = st.st_mode & 07777;
        f->uid = st.st_uid;
        f->gid = st.st_gid;
        char *s;
        size_t len;
        int r = umw_read_fd(fd, f->path, INSTALL_MAX_FILE, &s, &len, err);
        if (r < 0)
                return r;
        free(f->orig.s);
        f->orig = (struct text){.s = s, .len = len};
        return 0;
}

/* The file as it is now, into f->orig (nothing where it is missing). */
static int read_now(struct cfile *f, int dfd, struct umw_error **err)
{
        _cleanup_close_ int fd =
            openat(dfd, f->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) {
                f->exists = false;
                return 0;
        }
        if (fd < 0 && errno == ELOOP)
                return umw_fail(err, UMW_EXIT_CONFIG, ELOOP,
                                "%s: a symbolic link; umwelt-mcp install edits only a regular "
                                "file (edit the file it points to by hand, or put a copy in "
                                "its place)",
                                f->path);
        if (fd < 0)
                return umw_fail_errno(err, "open %s", f->path);
        f->exists = true;
        return read_text(f, fd, err);
}

int cfile_read(struct cfile *f, struct umw_error **err)
{
        _cleanup_close_ int dfd = -1;
        int r = open_dir(f, &dfd, err);
        f->dir_exists = r != -ENOENT;
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return read_now(f, dfd, err);
}

/* A name beside name that no one else uses. */
static int temp_name(const char *name, char *out, size_t size)
{
        unsigned char rnd[6];
        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
                return -errno;
        int n = snprintf(out, size, ".%s.umwelt-mcp-%02x%02x%02x%02x%02x%02x", name, rnd[0], rnd[1],
                         rnd[2], rnd[3], rnd[4], rnd[5]);
        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int fill(struct cfile *f, int fd, const char *tmp, struct umw_error **err)
{
        int r = umw_write_all(fd, f->text.s, f->text.len);
        if (r < 0)
                return umw_fail_sys(err, -r, "write %s", tmp);
        if (f->exists && fchmod(fd, f->mode) < 0)
                return umw_fail_errno(err, "chmod %s", tmp);
        /* Root editing a user's file leaves it theirs. */
        if (f->exists && geteuid() == 0 && fchown(fd, f->uid, f->gid) < 0)
                return umw_fail_errno(err, "chown %s", tmp);
        if (fsync(fd) < 0)
                return umw_fail_errno(err, "fsync %s", tmp);
        return 0;
}

/* The file still holds what was read: an editor's save in between is not
 * overwritten. */
static int unchanged(struct cfile *f, int dfd, struct umw_error **err)
{
        struct cfile now = *f;
        now.orig = (struct text){0};
        int r = read_now(&now, dfd, err);
        bool same = r == 0 && now.exists == f->exists &&
                    (!f->exists ||
                     (now.orig.len == f->orig.len && !memcmp(now.orig.s, f->orig.s, f->orig.len)));
        free(now.orig.s);
        if (r == 0 && !same)
                return umw_fail(err, UMW_EXIT_FAILURE, EAGAIN,
                                "%s changed while umwelt-mcp edited it; nothing written: run it "
                                "again",
                                f->path);
        return r;
}

static int put(struct cfile *f, int dfd, struct umw_error **err)
{
        char tmp[512];
        int r = temp_name(f->name, tmp, sizeof(tmp));
        if (r < 0)
                return umw_fail_sys(err, -r, "%s", f->path);
        _cleanup_close_ int fd =
            openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   f->exists ? 0600 : 0666);
        if (fd < 0)
                return umw_fail_errno(err, "create %s", tmp);
        if ((r = fill(f, fd, tmp, err)) < 0 || (r = unchanged(f, dfd, err)) < 0) {
                unlinkat(dfd, tmp, 0);
                return r;
        }
        /* A file made meanwhile is not replaced: RENAME_NOREPLACE. */
        r = f->exists ? renameat(dfd, tmp, dfd, f->name)
                      : renameat2(dfd, tmp, dfd, f->name, RENAME_NOREPLACE);
        if (r < 0) {
                r = umw_fail_errno(err, "rename %s to %s", tmp, f->path);
                unlinkat(dfd, tmp, 0);
        }
        return r;
}

int cfile_write(struct cfile *f, struct umw_error **err)
{
        if (f->dir && !f->dir_exists && mkdirat(f->projfd, f->dir, 0777) < 0 && errno != EEXIST)
                return umw_fail_errno(err, "mkdir %s/%s", f->project, f->dir);
        _cleanup_close_ int dfd = -1;
        int r = open_dir(f, &dfd, err);
        if (r == -ENOENT)
                return umw_fail_sys(err, ENOENT, "%s/%s", f->project, f->dir);
        return r < 0 ? r : put(f, dfd, err);
}

int cfile_remove(struct cfile *f, struct umw_error **err)
{
        _cleanup_close_ int dfd = -1;
        int r = open_dir(f, &dfd, err);
        if (r == -ENOENT)
                return 0;
        if (r < 0 || (r = unchanged(f, dfd, err)) < 0)
                return r;
        if (unlinkat(dfd, f->name, 0) < 0 && errno != ENOENT)
                return umw_fail_errno(err, "remove %s", f->path);
        return 0;
}

/* Removes dir from the project where it is empty; 1 when removed. */
int cfile_rmdir(int projfd, const char *dir)
{
        if (unlinkat(projfd, dir, AT_REMOVEDIR) == 0)
                return 1;
        return errno == ENOTEMPTY || errno == EEXIST || errno == ENOENT ? 0 : -errno;
}

void cfile_free(struct cfile *f)
{
        free(f->orig.s);
        free(f->text.s);
        free(f->path);
        f->orig = f->text = (struct text){0};
        f->path = NULL;
}
