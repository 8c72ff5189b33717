#include "selfexe.h"
#include "src/common/cleanup.h"
#include "src/common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/memfd.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

bool selfexe_is_sealed(void)
{
        _cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        int seals = fcntl(fd, F_GET_SEALS);
        return seals >= 0 && (seals & SEALS) == SEALS;
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

static int copy_sealed(int *out, struct umw_error **err)
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
        int r = copy_sealed(&mfd, err);
        if (r < 0)
                return r;
        syscall(SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
        return umw_fail_errno(err, "re-exec the runtime from its sealed copy");
}
