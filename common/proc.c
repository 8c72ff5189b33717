#include "common/proc.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

int umw_make_undumpable(struct umw_error **err)
{
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return umw_fail_errno(err, "make the process undumpable");
        return 0;
}

unsigned long long umw_proc_start_time(pid_t pid, bool *zombie)
{
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : umw_read_all(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        /* The command name may hold spaces and parentheses: skip to the last ')'. */
        char *p = strrchr(buf, ')');
        char state = 0;
        unsigned long long t = 0;
        if (!p || sscanf(p + 1,
                         " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                         "%*s %*s %*s %llu",
                         &state, &t) != 2)
                return 0;
        if (zombie)
                *zombie = state == 'Z' || state == 'X';
        return t;
}
