#include "runtime/selfexe.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/memfd.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

extern char **environ;

static bool exe_is_sealed(const char *exe)
{
        _cleanup_close_ int fd = open(exe, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        int seals = fcntl(fd, F_GET_SEALS);
        return seals >= 0 && (seals & SELFEXE_SEALS) == SELFEXE_SEALS;
}

/* Our detached clone is a mount of the file alone in no namespace's tree:
 * it reads back as "/" (a directory's name, no binary's) and is read-only.
 * Only this exact clone counts, not any read-only host mount: one of those
 * can be made writable again while a sandbox lives, ours only by a holder of
 * CAP_SYS_ADMIN over the host, whom no wall stops. */
static bool exe_is_detached_ro(const char *exe)
{
        char link[2];
        struct statfs fs;
        return readlink(exe, link, sizeof(link)) == 1 && link[0] == '/' && statfs(exe, &fs) == 0 &&
               (fs.f_flags & ST_RDONLY);
}

static bool exe_is_protected(const char *exe)
{
        return exe_is_detached_ro(exe) || exe_is_sealed(exe);
}

bool selfexe_is_protected(void)
{
        return exe_is_protected("/proc/self/exe");
}

static bool has_acl(const char *path)
{
        return getxattr(path, "system.posix_acl_access", NULL, 0) >= 0 ||
               (errno != ENODATA && errno != ENOTSUP);
}

/* Through /proc/PID/exe a container process reaches the inode on a writable
 * host mount. Changing its mode, owner, times or xattrs takes being its
 * owner, or CAP_FOWNER or CAP_CHOWN in a user namespace that maps both its
 * owner and group (privileged_wrt_inode_uidgid); writing or truncating it
 * takes a write bit for one's fsuid, groups or others, an ACL entry, or
 * CAP_DAC_OVERRIDE under the same mapping rule. So a user namespace of the
 * container's own that does not map the owner leaves only a group or other
 * write bit, or an ACL, and those are refused whatever the map: a process in
 * a user namespace keeps its creator's supplementary groups, mapped or not.
 * Without a user namespace of its own, the container's ids and capabilities
 * are ours (root's sandbox today maps 0 to 0: its owner too). */
bool selfexe_exposed(bool own, const struct spec_idmap *uids, size_t n_uids)
{
        if (selfexe_is_protected())
                return false;
        struct stat st;
        if (!own || !uids || n_uids == 0 || stat("/proc/self/exe", &st) < 0 ||
            (st.st_mode & (S_IWGRP | S_IWOTH)) || has_acl("/proc/self/exe"))
                return true;
        for (size_t i = 0; i < n_uids; i++)
                if (st.st_uid >= uids[i].host_id && st.st_uid - uids[i].host_id < uids[i].size)
                        return true;
        return false;
}

bool selfexe_needed(const struct spec *spec)
{
        const struct spec_namespace *user = &spec->namespaces[SPEC_NS_USER];
        if (user->path) /* its map is not ours to read: in doubt */
                return selfexe_exposed(true, NULL, 0);
        return selfexe_exposed(user->enabled, spec->uid_mappings, spec->n_uid_mappings);
}

/* The kernel takes at most 340 lines in a uid_map. */
#define UID_MAP_MAX 340

bool selfexe_pid_exposes(pid_t pid)
{
        if (!selfexe_userns_below_ours(pid))
                return selfexe_exposed(false, NULL, 0);
        /* Read from our namespace, its second column is in our ids. */
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        struct spec_idmap map[UID_MAP_MAX];
        size_t n = 0;
        while (f && n < UID_MAP_MAX &&
               fscanf(f, "%u %u %u", &map[n].container_id, &map[n].host_id, &map[n].size) == 3)
                n++;
        return selfexe_exposed(true, f ? map : NULL, n);
}

/* By its name, or under another (a copy, an engine's `runc` link to it) by
 * being the inode this process runs from: a read-only clone shares it. */
static bool is_runtime_image(pid_t pid)
{
        char path[64], comm[32] = "";
        snprintf(path, sizeof(path), "/proc/%d/comm", pid);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (f && fgets(comm, sizeof(comm), f) && strcmp(comm, "umwelt-run\n") == 0)
                return true;
        struct stat ours, theirs;
        snprintf(path, sizeof(path), "/proc/%d/exe", pid);
        return stat("/proc/self/exe", &ours) == 0 && stat(path, &theirs) == 0 &&
               ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

bool selfexe_pid_is_unsealed_runtime(pid_t pid)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/exe", pid);
        return is_runtime_image(pid) && !exe_is_protected(path);
}

bool selfexe_pidns_has_unsealed_runtime(const char *path)
{
        struct stat ns;
        _cleanup_closedir_ DIR *proc = opendir("/proc");
        if (stat(path, &ns) < 0 || !proc)
                return false;
        struct dirent *e;
        while ((e = readdir(proc))) {
                char nspath[64];
                struct stat st;
                pid_t pid = (pid_t)atoi(e->d_name);
                if (pid <= 0)
                        continue;
                snprintf(nspath, sizeof(nspath), "/proc/%d/ns/pid", pid);
                if (stat(nspath, &st) == 0 && st.st_ino == ns.st_ino && st.st_dev == ns.st_dev &&
                    selfexe_pid_is_unsealed_runtime(pid))
                        return true;
        }
        return false;
}

static bool same_file(int fd, const struct stat *b)
{
        struct stat a;
        return fstat(fd, &a) == 0 && a.st_ino == b->st_ino && a.st_dev == b->st_dev;
}

bool selfexe_userns_below_ours(pid_t pid)
{
        char path[64];
        struct stat ours;
        snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
        _cleanup_close_ int ns = open(path, O_RDONLY | O_CLOEXEC);
        if (ns < 0 || stat("/proc/self/ns/user", &ours) < 0 || same_file(ns, &ours))
                return false;
        /* Up the chain of parents until ours; EPERM when the next parent is
         * beyond our namespace, so not below us. Nesting is at most 32 deep. */
        for (;;) {
                int parent = ioctl(ns, NS_GET_PARENT);
                if (parent < 0)
                        return false;
                close(ns);
                ns = parent;
                if (same_file(ns, &ours))
                        return true;
        }
}

int selfexe_memfd(const char *name)
{
#ifdef MFD_EXEC
        /* Kernels with vm.memfd_noexec want executability asked for. */
        int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
        if (fd >= 0 || errno != EINVAL)
                return fd;
#endif
        return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

int selfexe_sealed_copy(int *out, struct umw_error **err)
{
        _cleanup_close_ int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (src < 0 || fstat(src, &st) < 0)
                return umw_fail_errno(err, "open the runtime's own binary");
        _cleanup_close_ int mfd = selfexe_memfd("umwelt-run");
        if (mfd < 0)
                return umw_fail_errno(err, "memfd for a sealed copy of the runtime");
        for (off_t left = st.st_size; left > 0;) {
                ssize_t n = sendfile(mfd, src, NULL, (size_t)left);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return umw_fail_errno(err, "copy the runtime into a memfd");
                left -= n;
        }
        if (fcntl(mfd, F_ADD_SEALS, SELFEXE_SEALS) < 0)
                return umw_fail_errno(err, "seal the runtime's copy");
        *out = TAKE_FD(mfd);
        return 0;
}

/* Returns only on failure, with errno set. */
static void reexec_detached(char *const argv[])
{
        _cleanup_close_ int fd =
            open_tree(AT_FDCWD, "/proc/self/exe", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        struct mount_attr attr = {.attr_set =
                                      MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
        if (fd >= 0 && mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) == 0)
                syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
}

int selfexe_protect(char *const argv[], struct umw_error **err)
{
        if (selfexe_is_protected())
                return 0;
        /* A clone costs a mount and no copy (about 0.05 ms against 1.3 ms
         * for the copy of this binary); only a runtime without CAP_SYS_ADMIN
         * over its mount namespace copies. */
        reexec_detached(argv);
        _cleanup_close_ int mfd = -1;
        int r = selfexe_sealed_copy(&mfd, err);
        if (r < 0)
                return r;
        syscall(SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
        return umw_fail_errno(err, "re-exec the runtime from its sealed copy");
}
