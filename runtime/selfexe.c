#include "selfexe.h"
#include "spec.h"
#include "src/common/cleanup.h"
#include "src/common/error.h"

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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

static bool exe_is_sealed(const char *exe)
{
        _cleanup_close_ int fd = open(exe, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        int seals = fcntl(fd, F_GET_SEALS);
        return seals >= 0 && (seals & SEALS) == SEALS;
}

bool selfexe_is_sealed(void)
{
        return exe_is_sealed("/proc/self/exe");
}

bool selfexe_needed(const struct spec *spec)
{
        if (spec->namespaces[SPEC_NS_USER].enabled)
                return false;
        bool ptrace = spec->process.caps.bounding & (1ULL << CAP_SYS_PTRACE);
        return ptrace || spec->namespaces[SPEC_NS_PID].path;
}

bool selfexe_pid_is_unsealed_runtime(pid_t pid)
{
        char path[64], comm[32] = "";
        snprintf(path, sizeof(path), "/proc/%d/comm", pid);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f || !fgets(comm, sizeof(comm), f) || strcmp(comm, "umwelt-run\n") != 0)
                return false;
        snprintf(path, sizeof(path), "/proc/%d/exe", pid);
        return !exe_is_sealed(path);
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

static int make_memfd(void)
{
#ifdef MFD_EXEC
        /* Kernels with vm.memfd_noexec want executability asked for. */
        int fd = memfd_create("umwelt-run", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
        if (fd >= 0 || errno != EINVAL)
                return fd;
#endif
        return memfd_create("umwelt-run", MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

int selfexe_sealed_copy(int *out, struct umw_error **err)
{
        _cleanup_close_ int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (src < 0 || fstat(src, &st) < 0)
                return umw_fail_errno(err, "open the runtime's own binary");
        _cleanup_close_ int mfd = make_memfd();
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
        if (fcntl(mfd, F_ADD_SEALS, SEALS) < 0)
                return umw_fail_errno(err, "seal the runtime's copy");
        *out = TAKE_FD(mfd);
        return 0;
}

int selfexe_reexec_sealed(char *const argv[], struct umw_error **err)
{
        if (selfexe_is_sealed())
                return 0;
        _cleanup_close_ int mfd = -1;
        int r = selfexe_sealed_copy(&mfd, err);
        if (r < 0)
                return r;
        syscall(SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
        return umw_fail_errno(err, "re-exec the runtime from its sealed copy");
}
