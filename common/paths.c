#include "common/paths.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

#ifndef UMW_BINDIR
#error "UMW_BINDIR must be defined (Makefile.am)"
#endif

static char *program_in(const char *dir, const char *name)
{
        char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return NULL;
        if (access(path, X_OK) == 0)
                return path;
        free(path);
        return NULL;
}

int umw_find_program(const char *name, char **out, struct umw_error **err)
{
        char self[PATH_MAX], exe[NAME_MAX + 1] = "umwelt-run";
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        char *slash = n > 0 ? memrchr(self, '/', (size_t)n) : NULL;
        if (slash && self[0] == '/') {
                self[n] = '\0';
                snprintf(exe, sizeof(exe), "%s", slash + 1);
                *slash = '\0';
                if ((*out = program_in(self, name)))
                        return 0;
        } else {
                snprintf(self, sizeof(self), "%s", "(unknown)");
        }
        if ((*out = program_in(UMW_BINDIR, name)))
                return 0;
        return umw_fail(err, UMW_EXIT_FAILURE, ENOENT, "%s is not next to %s (%s) nor in %s", name,
                        exe, self, UMW_BINDIR);
}
