#include "runtime/process.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_PATH  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define DEFAULT_UMASK 0022

static const char *rlimit_name(int resource)
{
        static const char *const names[] = {
            [RLIMIT_CPU] = "RLIMIT_CPU",           [RLIMIT_FSIZE] = "RLIMIT_FSIZE",
            [RLIMIT_DATA] = "RLIMIT_DATA",         [RLIMIT_STACK] = "RLIMIT_STACK",
            [RLIMIT_CORE] = "RLIMIT_CORE",         [RLIMIT_RSS] = "RLIMIT_RSS",
            [RLIMIT_NPROC] = "RLIMIT_NPROC",       [RLIMIT_NOFILE] = "RLIMIT_NOFILE",
            [RLIMIT_MEMLOCK] = "RLIMIT_MEMLOCK",   [RLIMIT_AS] = "RLIMIT_AS",
            [RLIMIT_LOCKS] = "RLIMIT_LOCKS",       [RLIMIT_SIGPENDING] = "RLIMIT_SIGPENDING",
            [RLIMIT_MSGQUEUE] = "RLIMIT_MSGQUEUE", [RLIMIT_NICE] = "RLIMIT_NICE",
            [RLIMIT_RTPRIO] = "RLIMIT_RTPRIO",     [RLIMIT_RTTIME] = "RLIMIT_RTTIME",
        };
        if (resource >= 0 && (size_t)resource < ARRAY_SIZE(names) && names[resource])
                return names[resource];
        return "unknown rlimit";
}

static int process_set_rlimit(const struct spec_rlimit *rl, struct umw_error **err)
{
        const char *name = rlimit_name(rl->resource);
        if (rl->soft > rl->hard)
                return umw_fail(
                    err, UMW_EXIT_CONFIG, EINVAL,
                    ".process.rlimits: %s: soft limit %llu is above the hard limit %llu", name,
                    (unsigned long long)rl->soft, (unsigned long long)rl->hard);
        struct rlimit cur;
        if (getrlimit(rl->resource, &cur) < 0)
                return umw_fail_errno(err, "getrlimit %s", name);
        struct rlimit want = {.rlim_cur = rl->soft, .rlim_max = rl->hard};
        if (setrlimit(rl->resource, &want) == 0)
                return 0;
        if (errno == EPERM && want.rlim_max > cur.rlim_max)
                return umw_fail_sys(err, EPERM,
                                    "setrlimit %s: raising the hard limit from %llu to %llu "
                                    "needs CAP_SYS_RESOURCE",
                                    name, (unsigned long long)cur.rlim_max,
                                    (unsigned long long)want.rlim_max);
        return umw_fail_errno(err, "setrlimit %s", name);
}

int process_set_rlimits(const struct spec_process *p, struct umw_error **err)
{
        for (size_t i = 0; i < p->n_rlimits; i++) {
                int r = process_set_rlimit(&p->rlimits[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int process_set_oom_score_adj(const struct spec_process *p, struct umw_error **err)
{
        if (!p->has_oom_score_adj)
                return 0;
        _cleanup_close_ int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return umw_fail_errno(err, "open /proc/self/oom_score_adj");
        char buf[16];
        int n = snprintf(buf, sizeof(buf), "%d", p->oom_score_adj);
        int r = umw_write_all(fd, buf, (size_t)n);
        if (r == -EACCES || r == -EPERM)
                return umw_fail_sys(err, -r,
                                    "set oom_score_adj to %d (lowering it needs CAP_SYS_RESOURCE)",
                                    p->oom_score_adj);
        if (r < 0)
                return umw_fail_sys(err, -r, "set oom_score_adj to %d", p->oom_score_adj);
        return 0;
}

/* In a user namespace whose gid map was written without CAP_SETGID in the
 * parent, /proc/self/setgroups is "deny" and setgroups() always fails. */
static int setgroups_denied(bool *denied, struct umw_error **err)
{
        _cleanup_close_ int fd = open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);
        *denied = false;
        if (fd < 0 && errno == ENOENT)
                return 0;
        if (fd < 0)
                return umw_fail_errno(err, "open /proc/self/setgroups");
        char buf[16];
        ssize_t n = umw_read_all(fd, buf, sizeof(buf) - 1);
        if (n < 0)
                return umw_fail_sys(err, (int)-n, "read /proc/self/setgroups");
        buf[n] = '\0';
        *denied = strncmp(buf, "deny", 4) == 0;
        return 0;
}

static int process_set_groups(const struct spec_process *p, struct umw_error **err)
{
        bool denied;
        int r = setgroups_denied(&denied, err);
        if (r < 0)
                return r;
        if (denied && p->n_additional_gids == 0)
                return 0;
        if (denied)
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                ".process.user.additionalGids: cannot be set in a user namespace "
                                "where setgroups is denied");
        /* An empty list matters too: it drops the runtime's own groups. */
        if (setgroups(p->n_additional_gids, (const gid_t *)p->additional_gids) < 0)
                return umw_fail_errno(err, "setgroups");
        return 0;
}

/* A process that is not root must still reopen its stdio by name
 * (/dev/stdout, /proc/self/fd/1): a pipe or socket from conmon or a shim
 * belongs to the engine's user, and the kernel checks the inode's owner on
 * that open. Chowned to the process user as runc and crun do; only pipes
 * and sockets, whose inodes hold nothing but the stream, never a file or
 * device the caller passed. EPERM and EINVAL: the owner or the new id is
 * not mapped in our user namespace, and the fd stays as it is. */
static int chown_stdio(const struct spec_process *p, struct umw_error **err)
{
        for (int fd = 0; fd < 3; fd++) {
                struct stat st;
                if (fstat(fd, &st) < 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) ||
                    (st.st_uid == p->uid && st.st_gid == p->gid))
                        continue;
                if (fchown(fd, p->uid, p->gid) < 0 && errno != EPERM && errno != EINVAL)
                        return umw_fail_errno(err, "give fd %d to uid %u", fd, p->uid);
        }
        return 0;
}

int process_set_user(const struct spec_process *p, struct umw_error **err)
{
        /* Keep the permitted set across the uid change: caps_apply() then
         * sets exactly what the spec asks. */
        if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
                return umw_fail_errno(err, "prctl(PR_SET_KEEPCAPS)");
        int r = process_set_groups(p, err);
        if (r < 0 || (r = chown_stdio(p, err)) < 0)
                return r;
        if (setresgid(p->gid, p->gid, p->gid) < 0)
                return umw_fail_errno(err, "setresgid %u", p->gid);
        if (setresuid(p->uid, p->uid, p->uid) < 0)
                return umw_fail_errno(err, "setresuid %u", p->uid);
        if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
                return umw_fail_errno(err, "prctl(PR_SET_KEEPCAPS, 0)");
        umask(p->has_umask ? (mode_t)p->umask : DEFAULT_UMASK);
        return 0;
}

/* 0 when path is a regular file this process may execute, else a positive
 * errno: ENOENT when nothing is there, EACCES otherwise (what execve says). */
static int check_executable(const char *path)
{
        struct stat st;
        if (stat(path, &st) < 0)
                return errno == ENOTDIR ? ENOENT : errno;
        if (!S_ISREG(st.st_mode))
                return EACCES;
        if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) < 0)
                return errno;
        return 0;
}

static const char *process_path_env(const struct spec_process *p)
{
        for (const char **e = p->env; e && *e; e++)
                if (strncmp(*e, "PATH=", 5) == 0)
                        return *e + 5;
        return DEFAULT_PATH;
}

/* As execvp: an empty PATH entry is the current directory, and a file that
 * exists but cannot be run beats "not found" in the error. */
static int search_path(const char *name, const char *path, char **out, struct umw_error **err)
{
        int seen = ENOENT;
        for (const char *dir = path;; dir++) {
                const char *end = strchrnul(dir, ':');
                int len = (int)(end - dir);
                _cleanup_free_ char *cand = NULL;
                if (asprintf(&cand, "%.*s%s%s", len, dir, len ? "/" : "", name) < 0)
                        return umw_fail_sys(err, ENOMEM, "resolve `%s`", name);
                int e = check_executable(cand);
                if (e == 0) {
                        *out = TAKE_PTR(cand);
                        return 0;
                }
                if (e != ENOENT)
                        seen = e;
                if (*end == '\0')
                        break;
                dir = end;
        }
        if (seen != ENOENT)
                return umw_fail_sys(err, seen, "executable file `%s` in $PATH cannot be run", name);
        return umw_fail_sys(err, ENOENT, "executable file `%s` not found in $PATH", name);
}

int process_find_executable(const struct spec_process *p, char **out, struct umw_error **err)
{
        const char *name = p->args ? p->args[0] : NULL;
        if (!name || !*name)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                ".process.args[0]: expected the program to run");
        if (!strchr(name, '/'))
                return search_path(name, process_path_env(p), out, err);
        int e = check_executable(name);
        if (e == ENOENT)
                return umw_fail_sys(err, ENOENT, "executable file `%s` not found", name);
        if (e != 0)
                return umw_fail_sys(err, e, "executable file `%s` cannot be run", name);
        *out = strdup(name);
        if (!*out)
                return umw_fail_sys(err, ENOMEM, "resolve `%s`", name);
        return 0;
}

int process_make_cwd(const struct spec_process *p, struct umw_error **err)
{
        struct stat st;
        if (!p->cwd || stat(p->cwd, &st) == 0 || errno != ENOENT)
                return 0;
        /* A cwd the image lacks is made, as crun and runc make it. */
        int r = umw_mkdir_p(p->cwd, 0755, 0755, err);
        return r < 0 ? umw_error_prefix(err, ".process.cwd") : 0;
}

int process_chdir(const struct spec_process *p, struct umw_error **err)
{
        const char *cwd = p->cwd ? p->cwd : "/";
        if (chdir(cwd) < 0)
                return umw_fail_errno(err, "chdir to cwd `%s` (.process.cwd)", cwd);
        return 0;
}

/* The home of uid in the container's /etc/passwd, "/" when it has none (as
 * runc and crun): opened non-blocking and read only when a regular file, so
 * that an image's fifo or device there cannot stall or feed the init. */
static char *passwd_home(uid_t uid)
{
        _cleanup_close_ int fd = open("/etc/passwd", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return strdup("/");
        FILE *f = fdopen(fd, "re");
        if (!f)
                return strdup("/");
        TAKE_FD(fd);
        char *home = NULL;
        struct passwd *pw;
        while (!home && (pw = fgetpwent(f)))
                if (pw->pw_uid == uid && pw->pw_dir && pw->pw_dir[0])
                        home = strdup(pw->pw_dir);
        fclose(f);
        return home ? home : strdup("/");
}

int process_env_with_home(const struct spec_process *p, const char ***out, struct umw_error **err)
{
        *out = NULL;
        size_t n = 0;
        for (; p->env && p->env[n]; n++)
                if (strncmp(p->env[n], "HOME=", 5) == 0)
                        return 0;
        _cleanup_free_ char *home = passwd_home(p->uid);
        const char **env = calloc(n + 2, sizeof(*env));
        char *var = NULL;
        if (!home || !env || asprintf(&var, "HOME=%s", home) < 0) {
                free(env);
                return umw_fail_sys(err, ENOMEM, "HOME for uid %u", p->uid);
        }
        if (n)
                memcpy(env, p->env, n * sizeof(*env));
        env[n] = var;
        *out = env;
        return 0;
}

const char **process_env_merge(const char **env, const char **extra, size_t n_extra)
{
        size_t n = 0;
        while (env && env[n])
                n++;
        const char **out = calloc(n + n_extra + 1, sizeof(*out));
        if (!out)
                return NULL;
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
                size_t klen = strcspn(env[i], "=");
                bool replaced = false;
                for (size_t j = 0; j < n_extra && !replaced; j++)
                        replaced = strncmp(extra[j], env[i], klen) == 0 && extra[j][klen] == '=';
                if (!replaced)
                        out[m++] = env[i];
        }
        for (size_t j = 0; j < n_extra; j++)
                out[m++] = extra[j];
        return out;
}
