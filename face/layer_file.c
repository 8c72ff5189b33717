/* One path of a layer or of the host's workspace, by fd (layer.h): what a
 * delivery reads (the agent's bytes, the host's file it would replace) and
 * where it writes (sync) or removes (discard). Every lookup is openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS from a directory fd opened once:
 * a link the agent planted on the way, or swapped in, is an error, never
 * followed. */
#include "face/layer.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int beneath(int dirfd, const char *path, int flags, mode_t mode)
{
        struct open_how how = {
            .flags = (uint64_t)(flags | O_CLOEXEC),
            .mode = flags & O_CREAT ? mode : 0,
            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* A link's text, read from an O_PATH fd of the link itself. */
static int read_link(int fd, const char *path, char **out, size_t *len, struct umw_error **err)
{
        char *buf = malloc(LAYER_PATH_MAX + 1);
        if (!buf)
                return umw_fail_sys(err, ENOMEM, "%s", path);
        ssize_t n = readlinkat(fd, "", buf, LAYER_PATH_MAX + 1);
        if (n < 0 || n > LAYER_PATH_MAX) {
                free(buf);
                return n < 0
                           ? umw_fail_errno(err, "readlink %s", path)
                           : umw_fail(err, UMW_EXIT_FAILURE, ENAMETOOLONG,
                                      "%s: a link text longer than %d bytes", path, LAYER_PATH_MAX);
        }
        buf[n] = '\0';
        *out = buf;
        *len = (size_t)n;
        return 0;
}

int layer_read_path(int root_fd, const char *path, size_t max, char **out, size_t *len,
                    mode_t *mode, struct umw_error **err)
{
        *out = NULL;
        *len = 0;
        *mode = 0;
        /* O_PATH | O_NOFOLLOW: a link at the end is opened as itself, a
         * FIFO is never opened for reading (it would block). */
        _cleanup_close_ int fd = beneath(root_fd, path, O_PATH | O_NOFOLLOW, 0);
        struct stat st;
        if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
                return 0; /* nothing there, or a file where a directory would be */
        if (fd < 0 || fstat(fd, &st) < 0)
                return umw_fail_errno(err, "%s", path);
        if (S_ISLNK(st.st_mode)) {
                *mode = st.st_mode;
                return read_link(fd, path, out, len, err);
        }
        if (!S_ISREG(st.st_mode))
                return umw_fail(err, UMW_EXIT_FAILURE, S_ISDIR(st.st_mode) ? EISDIR : ENODEV,
                                "%s: not a file or a link", path);
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        /* Reopened through the O_PATH fd: the same inode, no new lookup. */
        _cleanup_close_ int rd = open(proc, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        struct stat now;
        if (rd < 0 || fstat(rd, &now) < 0)
                return umw_fail_errno(err, "open %s", path);
        if (now.st_ino != st.st_ino || now.st_dev != st.st_dev)
                return umw_fail(err, UMW_EXIT_FAILURE, ESTALE, "%s: changed while read", path);
        *mode = st.st_mode;
        return umw_read_fd(rd, path, max, out, len, err);
}

int layer_open_parent(int root_fd, const char *path, bool create, int *dirfd, size_t *base,
                      struct umw_error **err)
{
        const char *slash = strrchr(path, '/');
        *base = slash ? (size_t)(slash - path) + 1 : 0;
        *dirfd = -1;
        _cleanup_close_ int cur = dup(root_fd);
        if (cur < 0)
                return umw_fail_errno(err, "%s", path);
        for (size_t start = 0; start < *base;) {
                const char *end = memchr(path + start, '/', *base - start);
                char part[NAME_MAX + 1];
                size_t n = (size_t)(end - (path + start));
                if (n == 0 || n > NAME_MAX)
                        return umw_fail(err, UMW_EXIT_FAILURE, EINVAL, "%s: a bad part", path);
                memcpy(part, path + start, n);
                part[n] = '\0';
                if (create && mkdirat(cur, part, 0755) < 0 && errno != EEXIST)
                        return umw_fail_errno(err, "mkdir %.*s", (int)(start + n), path);
                int next = beneath(cur, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
                if (next < 0)
                        return umw_fail_errno(err, "open %.*s", (int)(start + n), path);
                close(cur);
                cur = next;
                start += n + 1;
        }
        *dirfd = TAKE_FD(cur);
        return 0;
}

static int remove_below(int fd, const char *path, bool dirs_only, int depth,
                        struct umw_error **err);

/* name in dirfd: a directory emptied and removed, anything else unlinked
 * (dirs_only: refused). */
static int remove_entry(int dirfd, const char *name, const char *path, bool dirs_only, int depth,
                        struct umw_error **err)
{
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : umw_fail_errno(err, "stat %s/%s", path, name);
        if (!S_ISDIR(st.st_mode) && dirs_only)
                return umw_fail(err, UMW_EXIT_FAILURE, ENOTEMPTY,
                                "%s: %s is in the way: not a change of the layer", path, name);
        if (!S_ISDIR(st.st_mode))
                return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT
                           ? umw_fail_errno(err, "unlink %s/%s", path, name)
                           : 0;
        if (depth > LAYER_DEPTH_MAX)
                return umw_fail(err, UMW_EXIT_FAILURE, ELOOP, "%s: deeper than %d", path,
                                LAYER_DEPTH_MAX);
        /* overlay's work/work is 000: its owner may chmod it, not list it. */
        if ((st.st_mode & 0700) != 0700 && fchmodat(dirfd, name, 0700, AT_SYMLINK_NOFOLLOW) < 0)
                return umw_fail_errno(err, "chmod %s/%s", path, name);
        _cleanup_close_ int sub =
            openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int r;
        if (sub < 0)
                return umw_fail_errno(err, "open %s/%s", path, name);
        if ((r = remove_below(sub, path, dirs_only, depth + 1, err)) < 0)
                return r;
        return unlinkat(dirfd, name, AT_REMOVEDIR) < 0
                   ? umw_fail_errno(err, "rmdir %s/%s", path, name)
                   : 0;
}

static int remove_below(int fd, const char *path, bool dirs_only, int depth, struct umw_error **err)
{
        int dfd = dup(fd);
        _cleanup_closedir_ DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
        if (!d) {
                if (dfd >= 0)
                        close(dfd);
                return umw_fail_errno(err, "read %s", path);
        }
        struct dirent *e;
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
                        int r = remove_entry(fd, e->d_name, path, dirs_only, depth, err);
                        if (r < 0)
                                return r;
                }
        return 0;
}

int layer_remove_tree(int dirfd, const char *name, struct umw_error **err)
{
        return remove_entry(dirfd, name, name, false, 0, err);
}

int layer_remove_dirs(int dirfd, const char *name, struct umw_error **err)
{
        return remove_entry(dirfd, name, name, true, 0, err);
}
