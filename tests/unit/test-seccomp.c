#include "runtime/seccomp.h"
#include "runtime/spec.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *getcwd_name[] = {"getcwd", NULL};
static const char *uname_name[] = {"uname", NULL};
static const char *personality_name[] = {"personality", NULL};

static struct spec_seccomp allow_all(struct spec_seccomp_rule *rules, size_t n)
{
        return (struct spec_seccomp){
            .default_action = SPEC_SCMP_ALLOW, .rules = rules, .n_rules = n};
}

/* Builds s and expects a configuration error whose message holds want. */
static void expect_refused(const struct spec_seccomp *s, const char *want)
{
        struct seccomp_filter *f = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        int r = seccomp_filter_build(s, &f, &err);
        cr_assert_lt(r, 0, "the filter was accepted");
        cr_assert_null(f);
        cr_assert_not_null(err);
        cr_expect_eq(err->kind, UMW_EXIT_CONFIG, "kind %d: %s", err->kind, err->msg);
        cr_expect(strstr(err->msg, want), "\"%s\" lacks \"%s\"", err->msg, want);
}

static void expect_built(const struct spec_seccomp *s)
{
        struct seccomp_filter *f = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        int r = seccomp_filter_build(s, &f, &err);
        cr_assert_eq(r, 0, "build failed: %s", err ? err->msg : "?");
        cr_assert_not_null(f);
        seccomp_filter_free(f);
}

Test(seccomp, unknown_architecture_is_refused)
{
        const char *arches[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_VAX"};
        struct spec_seccomp s = allow_all(NULL, 0);
        s.architectures = arches;
        s.n_architectures = 2;
        expect_refused(&s, "architectures[1]: unknown architecture \"SCMP_ARCH_VAX\"");

        const char *unprefixed[] = {"x86_64"};
        s.architectures = unprefixed;
        s.n_architectures = 1;
        expect_refused(&s, "unknown architecture \"x86_64\"");
}

Test(seccomp, known_architectures_and_flags_build)
{
        const char *arches[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32",
                                "SCMP_ARCH_AARCH64"};
        const char *flags[] = {"SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
                               "SECCOMP_FILTER_FLAG_TSYNC"};
        struct spec_seccomp_rule rule = {
            .names = getcwd_name, .n_names = 1, .action = SPEC_SCMP_ERRNO};
        struct spec_seccomp s = allow_all(&rule, 1);
        s.architectures = arches;
        s.n_architectures = 4;
        s.flags = flags;
        s.n_flags = 3;
        expect_built(&s);
}

Test(seccomp, unknown_flag_is_refused)
{
        const char *flags[] = {"SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_BOGUS"};
        struct spec_seccomp s = allow_all(NULL, 0);
        s.flags = flags;
        s.n_flags = 2;
        expect_refused(&s, "flags[1]: unknown flag \"SECCOMP_FILTER_FLAG_BOGUS\"");
}

Test(seccomp, notify_is_refused)
{
        struct spec_seccomp s = {.default_action = SPEC_SCMP_NOTIFY};
        expect_refused(&s, "defaultAction: SCMP_ACT_NOTIFY is not supported");

        struct spec_seccomp_rule rule = {
            .names = getcwd_name, .n_names = 1, .action = SPEC_SCMP_NOTIFY};
        s = allow_all(&rule, 1);
        expect_refused(&s, "syscalls[0].action: SCMP_ACT_NOTIFY is not supported");
}

Test(seccomp, unknown_syscalls_and_default_action_rules_are_skipped)
{
        const char *names[] = {"no_such_syscall_at_all", "getcwd", NULL};
        struct spec_seccomp_rule rules[] = {
            {.names = names, .n_names = 2, .action = SPEC_SCMP_ERRNO},
            {.names = uname_name, .n_names = 1, .action = SPEC_SCMP_ALLOW},
        };
        struct spec_seccomp s = allow_all(rules, 2);
        expect_built(&s);
}

Test(seccomp, bad_argument_index_is_refused)
{
        struct spec_seccomp_arg arg = {.index = 6, .op = SPEC_SCMP_CMP_EQ};
        struct spec_seccomp_rule rule = {.names = personality_name,
                                         .n_names = 1,
                                         .action = SPEC_SCMP_ERRNO,
                                         .args = &arg,
                                         .n_args = 1};
        struct spec_seccomp s = allow_all(&rule, 1);
        expect_refused(&s, "syscalls[0].args[0].index");
}

/* Runs check() in a child that has loaded the filter for s (with
 * no_new_privs, so no privilege is needed) and returns its wait status. */
static int run_filtered(const struct spec_seccomp *s, int (*check)(void))
{
        pid_t pid = fork();
        cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
        if (pid == 0) {
                struct seccomp_filter *f = NULL;
                struct umw_error *err = NULL;
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(100);
                if (seccomp_filter_build(s, &f, &err) < 0)
                        _exit(101);
                if (seccomp_filter_load(f, &err) < 0)
                        _exit(102);
                /* not _exit(): a sanitizer's exit hooks need syscalls the
                 * filter may deny */
                syscall(SYS_exit_group, check());
                _exit(127);
        }
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        return status;
}

static void expect_exit_zero(int status)
{
        cr_assert(WIFEXITED(status), "child died, status 0x%x", status);
        cr_assert_eq(WEXITSTATUS(status), 0, "child check %d failed", WEXITSTATUS(status));
}

static int check_errnos(void)
{
        char buf[256];
        if (syscall(SYS_getcwd, buf, sizeof(buf)) != -1 || errno != ENOTBLK)
                return 1;
        if (syscall(SYS_uname, buf) != -1 || errno != EPERM)
                return 2;
        if (syscall(SYS_getpid) != getpid())
                return 3;
        return 0;
}

Test(seccomp, errno_actions_apply)
{
        struct spec_seccomp_rule rules[] = {
            {.names = getcwd_name,
             .n_names = 1,
             .action = SPEC_SCMP_ERRNO,
             .errno_ret = ENOTBLK,
             .has_errno_ret = true},
            /* no errnoRet: EPERM */
            {.names = uname_name, .n_names = 1, .action = SPEC_SCMP_ERRNO},
        };
        struct spec_seccomp s = allow_all(rules, 2);
        expect_exit_zero(run_filtered(&s, check_errnos));
}

static int check_default_errno(void)
{
        char buf[256];
        if (syscall(SYS_getcwd, buf, sizeof(buf)) != -1 || errno != EXDEV)
                return 20;
        return 0;
}

Test(seccomp, default_errno_applies)
{
        const char *exits[] = {"exit_group", "exit", NULL};
        struct spec_seccomp_rule rule = {.names = exits, .n_names = 2, .action = SPEC_SCMP_ALLOW};
        struct spec_seccomp s = {.default_action = SPEC_SCMP_ERRNO,
                                 .default_errno_ret = EXDEV,
                                 .has_default_errno_ret = true,
                                 .rules = &rule,
                                 .n_rules = 1};
        expect_exit_zero(run_filtered(&s, check_default_errno));
}

static int check_kill(void)
{
        syscall(SYS_getppid);
        return 1;
}

Test(seccomp, kill_process_kills)
{
        const char *getppid_name[] = {"getppid", NULL};
        struct spec_seccomp_rule rule = {
            .names = getppid_name, .n_names = 1, .action = SPEC_SCMP_KILL_PROCESS};
        struct spec_seccomp s = allow_all(&rule, 1);
        int status = run_filtered(&s, check_kill);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status 0x%x", status);
}

static int check_personality_query_only(void)
{
        if (syscall(SYS_personality, 0xffffffffUL) < 0)
                return 1;
        if (syscall(SYS_personality, (unsigned long)PER_LINUX) != -1 || errno != EDOM)
                return 2;
        if (syscall(SYS_personality, (unsigned long)ADDR_NO_RANDOMIZE) != -1 || errno != EDOM)
                return 3;
        return 0;
}

Test(seccomp, argument_comparison)
{
        struct spec_seccomp_arg arg = {.index = 0, .value = 0xffffffff, .op = SPEC_SCMP_CMP_NE};
        struct spec_seccomp_rule rule = {.names = personality_name,
                                         .n_names = 1,
                                         .action = SPEC_SCMP_ERRNO,
                                         .errno_ret = EDOM,
                                         .has_errno_ret = true,
                                         .args = &arg,
                                         .n_args = 1};
        struct spec_seccomp s = allow_all(&rule, 1);
        expect_exit_zero(run_filtered(&s, check_personality_query_only));
}

static int check_personality_either(void)
{
        if (syscall(SYS_personality, 0xffffffffUL) < 0)
                return 1;
        if (syscall(SYS_personality, (unsigned long)PER_BSD) != -1 || errno != ERANGE)
                return 2;
        if (syscall(SYS_personality, (unsigned long)ADDR_NO_RANDOMIZE) != -1 || errno != ERANGE)
                return 3;
        /* neither value: allowed (and harmless, it is the default persona) */
        if (syscall(SYS_personality, (unsigned long)PER_LINUX) < 0)
                return 4;
        return 0;
}

/* Two comparisons of argument 0: the rule matches when either holds, as in
 * runc, not when both do (which no value could satisfy). */
Test(seccomp, repeated_argument_index_matches_either)
{
        struct spec_seccomp_arg args[] = {
            {.index = 0, .value = PER_BSD, .op = SPEC_SCMP_CMP_EQ},
            {.index = 0, .value = ADDR_NO_RANDOMIZE, .op = SPEC_SCMP_CMP_EQ},
        };
        struct spec_seccomp_rule rule = {.names = personality_name,
                                         .n_names = 1,
                                         .action = SPEC_SCMP_ERRNO,
                                         .errno_ret = ERANGE,
                                         .has_errno_ret = true,
                                         .args = args,
                                         .n_args = 2};
        struct spec_seccomp s = allow_all(&rule, 1);
        expect_exit_zero(run_filtered(&s, check_personality_either));
}

static int check_masked(void)
{
        /* (arg & 0xff) == PER_BSD */
        if (syscall(SYS_personality, (unsigned long)(PER_BSD | ADDR_NO_RANDOMIZE)) != -1 ||
            errno != EDOM)
                return 1;
        if (syscall(SYS_personality, (unsigned long)PER_LINUX) < 0)
                return 2;
        return 0;
}

Test(seccomp, masked_equal_uses_value_as_mask)
{
        struct spec_seccomp_arg arg = {
            .index = 0, .value = 0xff, .value_two = PER_BSD, .op = SPEC_SCMP_CMP_MASKED_EQ};
        struct spec_seccomp_rule rule = {.names = personality_name,
                                         .n_names = 1,
                                         .action = SPEC_SCMP_ERRNO,
                                         .errno_ret = EDOM,
                                         .has_errno_ret = true,
                                         .args = &arg,
                                         .n_args = 1};
        struct spec_seccomp s = allow_all(&rule, 1);
        expect_exit_zero(run_filtered(&s, check_masked));
}
