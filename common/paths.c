#include "common/paths.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *absolute_env(const char *name)
{
        const char *v = getenv(name);
        return v && v[0] == '/' ? v : NULL;
}

int umw_state_dir(const char *name, char **out, struct umw_error **err)
{
        const char *state = absolute_env("XDG_STATE_HOME");
        const char *home = absolute_env("HOME");
        int n;
        const char *sep = name ? "/" : "";
        name = name ? name : "";
        if (state)
                n = asprintf(out, "%s/umwelt%s%s", state, sep, name);
        else if (home)
                n = asprintf(out, "%s/.local/state/umwelt%s%s", home, sep, name);
        else
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                                "cannot place umwelt/%s: neither XDG_STATE_HOME nor HOME is an "
                                "absolute path",
                                name);
        if (n < 0) {
                *out = NULL;
                return umw_fail_sys(err, ENOMEM, "umwelt %s directory", name);
        }
        return 0;
}

int umw_mkdir_p(const char *path, mode_t parent_mode, mode_t mode, struct umw_error **err)
{
        if (!path[0])
                return umw_fail_sys(err, EINVAL, "create directory: empty path");
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return umw_fail_sys(err, ENOMEM, "create directory %s", path);
        for (char *p = dir + 1;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char c = *p;
                *p = '\0';
                if (mkdir(dir, c ? parent_mode : mode) < 0 && errno != EEXIST)
                        return umw_fail_errno(err, "create directory %s", dir);
                if (c == '\0')
                        return 0;
                *p = c;
        }
}
