#include "runtime/process.h"
#include "runtime/spec.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/umw-test-process-XXXXXX";

static void make_file(const char *name, mode_t mode)
{
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        cr_assert_geq(fd, 0, "create %s: %s", path, strerror(errno));
        close(fd);
        cr_assert_eq(chmod(path, mode), 0);
}

/* dir holds: tool (0755), data (0644), sub/ */
static void setup(void)
{
        cr_assert_not_null(mkdtemp(dir));
        make_file("tool", 0755);
        make_file("data", 0644);
        char sub[PATH_MAX];
        snprintf(sub, sizeof(sub), "%s/sub", dir);
        cr_assert_eq(mkdir(sub, 0755), 0);
}

static void teardown(void)
{
        char path[PATH_MAX];
        const char *names[] = {"tool", "data"};
        for (size_t i = 0; i < 2; i++) {
                snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
                unlink(path);
        }
        snprintf(path, sizeof(path), "%s/sub", dir);
        rmdir(path);
        rmdir(dir);
}

TestSuite(process, .init = setup, .fini = teardown);

static int find(const char *arg0, const char *path_var, char **out, struct umw_error **err)
{
        char env0[PATH_MAX + 8];
        snprintf(env0, sizeof(env0), "PATH=%s", path_var ? path_var : "");
        const char *args[] = {arg0, NULL};
        const char *env[] = {"HOME=/", path_var ? env0 : NULL, NULL};
        struct spec_process p = {.args = args, .env = env};
        return process_find_executable(&p, out, err);
}

static void expect_found(const char *arg0, const char *path_var, const char *want)
{
        char *out = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(find(arg0, path_var, &out, &err), 0, "%s: %s", arg0, err ? err->msg : "?");
        cr_expect_str_eq(out, want);
        free(out);
}

static void expect_error(const char *arg0, const char *path_var, int errnum, const char *want)
{
        char *out = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(find(arg0, path_var, &out, &err), 0, "%s was found", arg0);
        cr_assert_null(out);
        cr_expect_eq(err->errnum, errnum, "%s: errno %d: %s", arg0, err->errnum, err->msg);
        cr_expect(strstr(err->msg, want), "\"%s\" lacks \"%s\"", err->msg, want);
}

Test(process, find_in_path)
{
        char path_var[PATH_MAX], want[PATH_MAX];
        snprintf(path_var, sizeof(path_var), "/nonexistent::%s:/bin", dir);
        snprintf(want, sizeof(want), "%s/tool", dir);
        expect_found("tool", path_var, want);
        expect_error("missing", path_var, ENOENT, "executable file `missing` not found in $PATH");
        expect_error("data", path_var, EACCES, "`data`");
        expect_error("sub", path_var, EACCES, "`sub`");
}

Test(process, default_path)
{
        char *out = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(find("sh", NULL, &out, &err), 0, "%s", err ? err->msg : "?");
        cr_expect_eq(out[0], '/');
        cr_expect_str_eq(strrchr(out, '/'), "/sh");
        free(out);
}

Test(process, find_with_slash)
{
        char tool[PATH_MAX], data[PATH_MAX], missing[PATH_MAX];
        snprintf(tool, sizeof(tool), "%s/tool", dir);
        snprintf(data, sizeof(data), "%s/data", dir);
        snprintf(missing, sizeof(missing), "%s/missing", dir);
        expect_found(tool, "/nonexistent", tool);
        expect_error(missing, "/bin", ENOENT, "not found");
        expect_error(data, "/bin", EACCES, "cannot be run");
        expect_error(dir, "/bin", EACCES, "cannot be run");
}

Test(process, chdir)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct spec_process p = {.cwd = dir};
        cr_assert_eq(process_chdir(&p, &err), 0, "%s", err ? err->msg : "?");
        char buf[PATH_MAX];
        cr_assert_not_null(getcwd(buf, sizeof(buf)));
        cr_expect_str_eq(buf, dir);

        char data[PATH_MAX];
        snprintf(data, sizeof(data), "%s/data", dir);
        p.cwd = data;
        cr_assert_lt(process_chdir(&p, &err), 0);
        cr_expect_eq(err->errnum, ENOTDIR);
        cr_expect(strstr(err->msg, data), "%s", err->msg);
}

Test(process, rlimits_lower)
{
        struct rlimit cur;
        cr_assert_eq(getrlimit(RLIMIT_NOFILE, &cur), 0);
        cr_assert_gt(cur.rlim_cur, 64);
        struct spec_rlimit rl = {.resource = RLIMIT_NOFILE, .soft = 64, .hard = cur.rlim_max};
        struct spec_process p = {.rlimits = &rl, .n_rlimits = 1};
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(process_set_rlimits(&p, &err), 0, "%s", err ? err->msg : "?");
        struct rlimit now;
        cr_assert_eq(getrlimit(RLIMIT_NOFILE, &now), 0);
        cr_expect_eq(now.rlim_cur, 64);
        cr_expect_eq(now.rlim_max, cur.rlim_max);
}

Test(process, rlimits_soft_above_hard)
{
        struct spec_rlimit rl = {.resource = RLIMIT_CORE, .soft = 10, .hard = 5};
        struct spec_process p = {.rlimits = &rl, .n_rlimits = 1};
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(process_set_rlimits(&p, &err), 0);
        cr_expect_eq(err->kind, UMW_EXIT_CONFIG);
        cr_expect(strstr(err->msg, "RLIMIT_CORE"), "%s", err->msg);
}

/* Without CAP_SYS_RESOURCE in the effective set, as for a container. */
static int raise_hard_limit(void)
{
        cap_t c = cap_get_proc();
        cap_value_t res = CAP_SYS_RESOURCE;
        if (!c || cap_set_flag(c, CAP_EFFECTIVE, 1, &res, CAP_CLEAR) < 0 || cap_set_proc(c) < 0)
                return 10;
        cap_free(c);
        struct rlimit cur;
        if (getrlimit(RLIMIT_NOFILE, &cur) < 0 || cur.rlim_max == RLIM_INFINITY)
                return 11;
        struct spec_rlimit rl = {
            .resource = RLIMIT_NOFILE, .soft = cur.rlim_cur, .hard = cur.rlim_max + 1};
        struct spec_process p = {.rlimits = &rl, .n_rlimits = 1};
        struct umw_error *err = NULL;
        if (process_set_rlimits(&p, &err) == 0)
                return 12;
        if (err->errnum != EPERM)
                return 13;
        if (!strstr(err->msg, "RLIMIT_NOFILE") || !strstr(err->msg, "CAP_SYS_RESOURCE"))
                return 14;
        return 0;
}

static int wait_child(pid_t pid)
{
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status), "child died, status 0x%x", status);
        return WEXITSTATUS(status);
}

Test(process, rlimits_raise_hard_names_capability)
{
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(raise_hard_limit());
        cr_assert_eq(wait_child(pid), 0);
}

static int read_oom_score_adj(void)
{
        FILE *f = fopen("/proc/self/oom_score_adj", "re");
        int v = -10000;
        if (f) {
                if (fscanf(f, "%d", &v) != 1)
                        v = -10000;
                fclose(f);
        }
        return v;
}

Test(process, oom_score_adj)
{
        /* Raising the score needs no privilege. */
        int want = read_oom_score_adj() + 10;
        cr_assert_leq(want, 1000);
        struct spec_process p = {.oom_score_adj = want, .has_oom_score_adj = true};
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(process_set_oom_score_adj(&p, &err), 0, "%s", err ? err->msg : "?");
        cr_expect_eq(read_oom_score_adj(), want);
}

static int switch_user(void)
{
        uint32_t gids[] = {100, 65533};
        struct spec_process p = {.uid = 65534,
                                 .gid = 65534,
                                 .additional_gids = gids,
                                 .n_additional_gids = 2,
                                 .umask = 027,
                                 .has_umask = true};
        struct umw_error *err = NULL;
        if (process_set_user(&p, &err) < 0)
                return 10;
        uid_t r, e, s;
        if (getresuid(&r, &e, &s) < 0 || r != 65534 || e != 65534 || s != 65534)
                return 11;
        gid_t gr, ge, gs;
        if (getresgid(&gr, &ge, &gs) < 0 || gr != 65534 || ge != 65534 || gs != 65534)
                return 12;
        gid_t groups[8];
        int n = getgroups(8, groups);
        if (n != 2 || groups[0] != 100 || groups[1] != 65533)
                return 13;
        if (umask(0) != 027)
                return 14;
        return 0;
}

Test(process_identity, set_user)
{
        if (geteuid() != 0)
                cr_skip_test("needs root (CI runs as root)");
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(switch_user());
        cr_assert_eq(wait_child(pid), 0);
}

static int default_umask(void)
{
        struct spec_process p = {.uid = 0, .gid = 0};
        struct umw_error *err = NULL;
        umask(0077);
        if (process_set_user(&p, &err) < 0)
                return 10;
        return umask(0) == 0022 ? 0 : 11;
}

Test(process_identity, default_umask)
{
        if (geteuid() != 0)
                cr_skip_test("needs root (CI runs as root)");
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(default_umask());
        cr_assert_eq(wait_child(pid), 0);
}
