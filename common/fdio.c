#include "common/fdio.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int umw_open_beneath(int dir_fd, const char *name, int flags)
{
        struct open_how how = {
            .flags = (unsigned)flags | O_NOFOLLOW | O_CLOEXEC,
            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        int fd = (int)syscall(SYS_openat2, dir_fd, name, &how, sizeof(how));
        return fd < 0 ? -errno : fd;
}

int umw_write_all(int fd, const void *buf, size_t len)
{
        const char *p = buf;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

ssize_t umw_read_all(int fd, void *buf, size_t len)
{
        char *p = buf;
        size_t got = 0;
        while (got < len) {
                ssize_t n = read(fd, p + got, len - got);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                got += (size_t)n;
        }
        return (ssize_t)got;
}

int umw_read_fd(int fd, const char *name, size_t max, char **out, size_t *len,
                struct umw_error **err)
{
        size_t cap = 8192, used = 0;
        _cleanup_free_ char *buf = malloc(cap);
        if (!buf)
                return umw_fail_sys(err, ENOMEM, "read %s", name);
        for (;;) {
                if (used + 1 >= cap) {
                        if (cap > max)
                                return umw_fail(err, UMW_EXIT_CONFIG, EFBIG,
                                                "%s: larger than %zu bytes", name, max);
                        char *bigger = realloc(buf, cap * 2);
                        if (!bigger)
                                return umw_fail_sys(err, ENOMEM, "read %s", name);
                        buf = bigger;
                        cap *= 2;
                }
                ssize_t n = read(fd, buf + used, cap - used - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return umw_fail_errno(err, "read %s", name);
                if (n == 0)
                        break;
                used += (size_t)n;
        }
        if (used > max)
                return umw_fail(err, UMW_EXIT_CONFIG, EFBIG, "%s: larger than %zu bytes", name,
                                max);
        buf[used] = '\0';
        if (len)
                *len = used;
        *out = TAKE_PTR(buf);
        return 0;
}

int umw_read_file_at(int dirfd, const char *path, size_t max, char **out, size_t *len,
                     struct umw_error **err)
{
        _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return umw_fail_errno(err, "open %s", path);
        return umw_read_fd(fd, path, max, out, len, err);
}

/* The steps of umw_write_file_atomic: 0 or -errno. */
static int write_and_rename(int dirfd, int fd, const char *tmp, const char *name, const void *buf,
                            size_t len, mode_t mode)
{
        int r = umw_write_all(fd, buf, len);
        if (r < 0)
                return r;
        if (fchmod(fd, mode) < 0 || renameat(dirfd, tmp, dirfd, name) < 0)
                return -errno;
        return 0;
}

int umw_write_file_atomic(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
                          struct umw_error **err)
{
        char tmp[512];
        if (snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= (int)sizeof(tmp))
                return umw_fail(err, UMW_EXIT_FAILURE, ENAMETOOLONG, "%s: name too long", name);
        _cleanup_close_ int fd =
            openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return umw_fail_errno(err, "create %s", tmp);
        int r = write_and_rename(dirfd, fd, tmp, name, buf, len, mode);
        if (r < 0) {
                unlinkat(dirfd, tmp, 0);
                return umw_fail_sys(err, -r, "write %s", name);
        }
        return 0;
}

int umw_write_pid_file(const char *path, pid_t pid, struct umw_error **err)
{
        if (!path)
                return 0;
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return umw_fail_sys(err, ENOMEM, "pid file");
        char *slash = strrchr(copy, '/');
        const char *name = slash ? slash + 1 : copy;
        const char *dir = slash ? (slash == copy ? "/" : copy) : ".";
        if (slash)
                *slash = '\0';
        _cleanup_close_ int dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return umw_fail_errno(err, "open directory of pid file %s", path);
        char buf[32];
        int len = snprintf(buf, sizeof(buf), "%d", pid);
        int r = umw_write_file_atomic(dirfd, name, buf, (size_t)len, 0644, err);
        return r < 0 ? umw_error_prefix(err, "pid file %s", path) : 0;
}

void umw_close_fdp(int *fd)
{
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
}

static int cmp_int(const void *a, const void *b)
{
        return *(const int *)a - *(const int *)b;
}

int umw_close_fds_from(int lowfd, const int *keep, size_t nkeep)
{
        int sorted[64];
        if (nkeep > ARRAY_SIZE(sorted))
                return -E2BIG;
        if (nkeep) { /* keep may be NULL then, which memcpy must not see */
                memcpy(sorted, keep, nkeep * sizeof(int));
                qsort(sorted, nkeep, sizeof(int), cmp_int);
        }
        unsigned int from = (unsigned int)lowfd;
        for (size_t i = 0; i < nkeep; i++) {
                if (sorted[i] < lowfd)
                        continue;
                if ((unsigned int)sorted[i] > from &&
                    syscall(SYS_close_range, from, (unsigned int)sorted[i] - 1, 0) < 0)
                        return -errno;
                from = (unsigned int)sorted[i] + 1;
        }
        if (syscall(SYS_close_range, from, ~0U, 0) < 0)
                return -errno;
        return 0;
}
