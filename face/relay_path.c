/* The relay's directory (relay.h): shared by the relay, the face that
 * makes a sandbox's door there, and umwelt-run's relay verbs. */
#include "face/relay.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int dir_path(char **out, struct umw_error **err)
{
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        int n = geteuid() == 0         ? asprintf(out, "/run/umwelt/relay")
                : xdg && xdg[0] == '/' ? asprintf(out, "%s/umwelt/relay", xdg)
                                       : asprintf(out, "/tmp/umwelt-relay-%u", (unsigned)geteuid());
        if (n < 0) {
                *out = NULL;
                return umw_fail_sys(err, ENOMEM, "relay directory");
        }
        return 0;
}

/* Ours, a directory (not a link), no access for anyone else: in /tmp
 * another user could have made it first. */
static int check_dir(const char *path, struct umw_error **err)
{
        struct stat st;
        if (lstat(path, &st) < 0)
                return umw_fail_errno(err, "%s", path);
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
                return umw_fail(err, UMW_EXIT_FAILURE, EPERM,
                                "%s: expected a directory of uid %u with mode 0700", path,
                                (unsigned)geteuid());
        return 0;
}

int relay_dir(bool create, char **out, struct umw_error **err)
{
        _cleanup_free_ char *path = NULL;
        int r = dir_path(&path, err);
        if (r < 0 || (create && (r = umw_mkdir_p(path, 0755, 0700, err)) < 0) ||
            (r = check_dir(path, err)) < 0)
                return r;
        *out = TAKE_PTR(path);
        return 0;
}
