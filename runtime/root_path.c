/* Paths inside a root: every lookup is openat2(RESOLVE_IN_ROOT), so no
 * symlink in a rootfs can lead out of it. Shared by mounts, devices and
 * rootfs set-up. */
#include "runtime/mounts.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Same bound as the kernel's own symlink resolution. */
#define MAX_SYMLINK_HOPS 40

int root_openat(int root_fd, const char *path, int flags, unsigned long long resolve)
{
        struct open_how how = {
            .flags = (unsigned long long)(flags | O_CLOEXEC),
            .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | resolve,
        };
        while (*path == '/')
                path++;
        if (*path == '\0')
                path = ".";
        /* EAGAIN: a concurrent rename made ".." ambiguous; the kernel asks to retry. */
        for (int tries = 0; tries < 16; tries++) {
                int fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
                if (fd >= 0)
                        return fd;
                if (errno != EAGAIN)
                        return -errno;
        }
        return -EAGAIN;
}

/* Replaces the dangling symlink at cur[start,...) by its target, followed by
 * rest: an absolute target restarts from the root, a relative one from the
 * link's directory. */
static int splice_symlink(char **cur, size_t start, const char *rest, int parent_fd)
{
        char target[PATH_MAX];
        ssize_t n = readlinkat(parent_fd, *cur + start, target, sizeof(target) - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';
        char *next = NULL;
        int r;
        const char *sep = *rest ? "/" : "";
        if (target[0] == '/')
                r = asprintf(&next, "%s%s%s", target, sep, rest);
        else
                r = asprintf(&next, "%.*s%s%s%s", (int)start, *cur, target, sep, rest);
        if (r < 0)
                return -ENOMEM;
        free(*cur);
        *cur = next;
        return 0;
}

/* The component at cur[start] (NUL-terminated for now; rest is what followed
 * it) does not resolve. Creates it in its parent without following anything,
 * or, when it is a dangling symlink, splices the link in and returns 1 so the
 * walk restarts. */
static int create_component(int root_fd, char **cur, size_t start, const char *rest, bool last,
                            enum root_create create, struct umw_error **err)
{
        char *name = *cur + start;
        _cleanup_free_ char *parent = strndup(*cur, start);
        if (!parent)
                return umw_fail_sys(err, ENOMEM, "path");
        _cleanup_close_ int parent_fd = root_openat(root_fd, parent, O_PATH | O_DIRECTORY, 0);
        if (parent_fd < 0)
                return umw_fail_sys(err, -parent_fd, "open %s in rootfs", *cur);
        struct stat st;
        if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (!S_ISLNK(st.st_mode))
                        return 0; /* appeared meanwhile */
                int r = splice_symlink(cur, start, rest, parent_fd);
                return r < 0 ? umw_fail_sys(err, -r, "follow symlink %s in rootfs", name) : 1;
        }
        if (errno != ENOENT)
                return umw_fail_errno(err, "stat %s in rootfs", *cur);
        if (last && create == ROOT_CREATE_FILE) {
                int fd = openat(parent_fd, name,
                                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd < 0 && errno != EEXIST)
                        return umw_fail_errno(err, "create %s in rootfs", *cur);
                if (fd >= 0)
                        close(fd);
                return 0;
        }
        if (mkdirat(parent_fd, name, 0755) < 0 && errno != EEXIST)
                return umw_fail_errno(err, "mkdir %s in rootfs", *cur);
        return 0;
}

int root_open_create(int root_fd, const char *path, enum root_create create, struct umw_error **err)
{
        /* Most mount points exist: one lookup then, as the walk would end. */
        int found = root_openat(root_fd, path, O_PATH, 0);
        if (found >= 0)
                return found;
        _cleanup_free_ char *cur = strdup(path);
        if (!cur)
                return umw_fail_sys(err, ENOMEM, "path");
        int hops = 0;
        size_t end = 0;
        while (cur[end] != '\0') {
                size_t start = end + strspn(cur + end, "/");
                end = start + strcspn(cur + start, "/");
                if (start == end)
                        break;
                bool last = cur[end + strspn(cur + end, "/")] == '\0';
                char saved = cur[end];
                cur[end] = '\0';
                int fd = root_openat(root_fd, cur, O_PATH, 0);
                if (fd == -ENOENT) {
                        const char *rest = saved ? cur + end + 1 : "";
                        int r = create_component(root_fd, &cur, start, rest, last, create, err);
                        if (r < 0)
                                return umw_error_prefix(err, "mount point %s", path);
                        if (r > 0) {
                                if (++hops > MAX_SYMLINK_HOPS)
                                        return umw_fail_sys(err, ELOOP, "mount point %s", path);
                                end = 0;
                                continue;
                        }
                        fd = root_openat(root_fd, cur, O_PATH, 0);
                }
                if (fd < 0)
                        return umw_fail_sys(err, -fd, "open %s in rootfs", cur);
                close(fd);
                cur[end] = saved;
        }
        int fd = root_openat(root_fd, cur, O_PATH, 0);
        if (fd < 0)
                return umw_fail_sys(err, -fd, "open %s in rootfs", path);
        return fd;
}
