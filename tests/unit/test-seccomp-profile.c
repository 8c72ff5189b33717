#include "policy/seccomp_profile.h"
#include "runtime/seccomp.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile-spec.h"

Test(seccomp_profile, parses_and_builds_as_an_allowlist)
{
        struct spec *spec = load_profile();
        const struct spec_seccomp *s = spec->seccomp;
        cr_expect_eq(s->default_action, SPEC_SCMP_ERRNO);
        cr_expect(s->has_default_errno_ret && s->default_errno_ret == ENOSYS);
        cr_assert_eq(s->n_architectures, 1, "only the native architecture");
        cr_expect_str_eq(s->architectures[0], "SCMP_ARCH_X86_64");
        cr_expect_gt(s->n_rules, 100);

        struct seccomp_filter *f = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(seccomp_filter_build(s, &f, &err), 0, "build: %s", err ? err->msg : "?");
        seccomp_filter_free(f);
        spec_free(spec);
}

Test(seccomp_profile, every_row_has_names_and_a_one_line_reason)
{
        size_t n;
        const struct seccomp_profile_rule *rules = seccomp_profile_rules(&n);
        cr_assert_gt(n, 0);
        for (size_t i = 0; i < n; i++) {
                cr_expect(rules[i].names && rules[i].names[0], "row %zu names nothing", i);
                cr_assert_not_null(rules[i].reason, "row %zu (%s) has no reason", i,
                                   rules[i].names[0]);
                cr_expect_gt(strlen(rules[i].reason), 10, "row %zu (%s): reason too short", i,
                             rules[i].names[0]);
                cr_expect_null(strchr(rules[i].reason, '\n'), "row %zu: reason is not one line", i);
        }
}

/* A typo would silently become ENOSYS: every name must be a syscall of this
 * architecture as libseccomp knows it. */
Test(seccomp_profile, every_name_is_a_native_syscall)
{
        size_t n;
        const struct seccomp_profile_rule *rules = seccomp_profile_rules(&n);
        for (size_t i = 0; i < n; i++)
                for (const char *const *p = rules[i].names; *p; p++)
                        cr_expect_geq(seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, *p), 0,
                                      "row %zu: \"%s\" is not a syscall here", i, *p);
}

static bool names(const struct spec_seccomp_rule *r, const char *name)
{
        for (size_t i = 0; i < r->n_names; i++)
                if (strcmp(r->names[i], name) == 0)
                        return true;
        return false;
}

static uint32_t result_of(const struct spec_seccomp_rule *r)
{
        return r->action == SPEC_SCMP_ALLOW ? 0 : (uint32_t)r->errno_ret + 1;
}

/* Two rules can match the same call unless some argument both test has a
 * bit both masks cover and their values disagree on. */
static bool can_overlap(const struct spec_seccomp_rule *a, const struct spec_seccomp_rule *b)
{
        for (size_t i = 0; i < a->n_args; i++)
                for (size_t j = 0; j < b->n_args; j++) {
                        const struct spec_seccomp_arg *x = &a->args[i], *y = &b->args[j];
                        if (x->index == y->index &&
                            ((x->value_two ^ y->value_two) & x->value & y->value) != 0)
                                return false;
                }
        return true;
}

Test(seccomp_profile, no_call_is_both_allowed_and_denied)
{
        struct spec *spec = load_profile();
        const struct spec_seccomp *s = spec->seccomp;
        for (size_t i = 0; i < s->n_rules; i++) {
                const struct spec_seccomp_rule *a = &s->rules[i];
                cr_expect(a->action == SPEC_SCMP_ALLOW ||
                              (a->action == SPEC_SCMP_ERRNO && a->has_errno_ret &&
                               (a->errno_ret == EPERM || a->errno_ret == ENOSYS)),
                          "rule %zu (%s): neither allowed, EPERM nor ENOSYS", i, a->names[0]);
                for (size_t k = 0; k < a->n_args; k++)
                        cr_expect_eq(a->args[k].op, SPEC_SCMP_CMP_MASKED_EQ, "rule %zu (%s)", i,
                                     a->names[0]);
                for (size_t j = i + 1; j < s->n_rules; j++) {
                        const struct spec_seccomp_rule *b = &s->rules[j];
                        for (size_t n = 0; n < a->n_names; n++)
                                cr_expect(!names(b, a->names[n]) || result_of(a) == result_of(b) ||
                                              !can_overlap(a, b),
                                          "%s: rules %zu and %zu overlap with different actions",
                                          a->names[n], i, j);
                }
        }
        spec_free(spec);
}

static bool arg_matches(const struct spec_seccomp_rule *r, const uint64_t *args)
{
        for (size_t k = 0; k < r->n_args; k++)
                if ((args[r->args[k].index] & r->args[k].value) != r->args[k].value_two)
                        return false;
        return true;
}

/* The table's answer for name with argument index set to v: the verdict of a
 * row testing that argument, else of the fallback row. */
static uint32_t table_result(const char *name, unsigned index, uint64_t v)
{
        size_t n;
        const struct seccomp_profile_rule *rules = seccomp_profile_rules(&n);
        enum seccomp_profile_verdict fallback = SECCOMP_PROFILE_ENOSYS;
        for (size_t i = 0; i < n; i++) {
                bool named = false;
                for (const char *const *p = rules[i].names; *p; p++)
                        named |= strcmp(*p, name) == 0;
                if (!named)
                        continue;
                if (rules[i].n_args == 0) {
                        fallback = rules[i].verdict;
                        continue;
                }
                cr_assert_eq(rules[i].args[0].index, index);
                if ((v & rules[i].args[0].mask) == rules[i].args[0].value)
                        return rules[i].verdict == SECCOMP_PROFILE_ALLOW ? 0 : EPERM + 1;
        }
        return fallback == SECCOMP_PROFILE_ALLOW ? 0 : EPERM + 1;
}

static void expect_covered(const struct spec_seccomp *s, const char *name, unsigned index,
                           uint64_t v)
{
        uint64_t args[6] = {0};
        args[index] = v;
        size_t matched = 0;
        uint32_t want = table_result(name, index, v);
        for (size_t i = 0; i < s->n_rules; i++) {
                const struct spec_seccomp_rule *r = &s->rules[i];
                if (!names(r, name) || !arg_matches(r, args))
                        continue;
                matched++;
                cr_expect_eq(result_of(r), want, "%s(arg%u = 0x%llx): rule %zu says %u, not %u",
                             name, index, (unsigned long long)v, i, result_of(r), want);
        }
        cr_expect_gt(matched, 0, "%s(arg%u = 0x%llx) falls through to ENOSYS", name, index,
                     (unsigned long long)v);
}

/* A fallback row covers exactly what its syscall's argument rows leave:
 * every value, near the tested ones (one or two bits away: the fallback's
 * patterns overlap, widened as far as no argument row is met) and at
 * random, gets the table's answer and never the default. */
Test(seccomp_profile, fallbacks_cover_every_other_value)
{
        static const struct {
                const char *name;
                unsigned index;
                uint64_t near[4];
        } fallbacks[] = {
            {"ioctl", 1, {TIOCSTI, TIOCLINUX, TIOCGWINSZ, FIONREAD}},
            {"personality", 0, {PER_LINUX, 0xffffffff, ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC}},
            {"clone", 0, {SIGCHLD, CLONE_NEWUSER, CLONE_VM | CLONE_THREAD, CLONE_NEWNET}},
        };
        struct spec *spec = load_profile();
        uint64_t x = 0x9e3779b97f4a7c15;
        for (size_t f = 0; f < ARRAY_SIZE(fallbacks); f++) {
                for (size_t k = 0; k < 4; k++) {
                        uint64_t v = fallbacks[f].near[k];
                        expect_covered(spec->seccomp, fallbacks[f].name, fallbacks[f].index, v);
                        for (unsigned b = 0; b < 64; b++)
                                for (unsigned c = b; c < 65; c++) /* 64: b alone */
                                        expect_covered(
                                            spec->seccomp, fallbacks[f].name, fallbacks[f].index,
                                            v ^ (UINT64_C(1) << b) ^
                                                (c < 64 && c != b ? UINT64_C(1) << c : 0));
                }
                for (int k = 0; k < 3000; k++) {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        uint64_t v = k % 3 == 0 ? x : k % 3 == 1 ? x & 0xffffffff : x & 0xffff;
                        expect_covered(spec->seccomp, fallbacks[f].name, fallbacks[f].index, v);
                }
        }
        spec_free(spec);
}

Test(seccomp_profile, reasons_are_looked_up_by_name)
{
        cr_expect(strstr(seccomp_profile_reason("mount"), "walls"));
        cr_expect(strstr(seccomp_profile_reason("fsopen"), "mount family"));
        cr_expect(strstr(seccomp_profile_reason("clone3"), "glibc"));
        /* the fallback row, not one of the exceptions */
        cr_expect(strstr(seccomp_profile_reason("ioctl"), "every other ioctl"));
        cr_expect(strstr(seccomp_profile_reason("socket"), "packet"));
        cr_expect(strstr(seccomp_profile_reason("ptrace"), "gdb"));
        cr_expect_null(seccomp_profile_reason("mseal"));
        cr_expect_null(seccomp_profile_reason("no_such_call"));
}

/* The kernel's own verdict: a child loads the built filter (with
 * no_new_privs, so no privilege is needed) and makes each call. */
static struct seccomp_filter *build_profile(void)
{
        struct spec *spec = load_profile();
        struct seccomp_filter *f = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(seccomp_filter_build(spec->seccomp, &f, &err), 0, "%s", err ? err->msg : "?");
        spec_free(spec);
        return f;
}

static int run_filtered(int (*check)(void))
{
        struct seccomp_filter *f = build_profile();
        pid_t pid = fork();
        cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
        if (pid == 0) {
                struct umw_error *err = NULL;
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_filter_load(f, &err) < 0)
                        _exit(250);
                /* not _exit(): a sanitizer's exit hooks need calls the
                 * profile may not allow */
                syscall(SYS_exit_group, check());
                _exit(251);
        }
        seccomp_filter_free(f);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        return status;
}

#define HIGH          (UINT64_C(1) << 32)
#define AF_ALG_FAMILY 38

static const struct call {
        const char *what;
        long nr;
        uint64_t a[4];
        int want; /* 0: succeeds, else the errno */
} calls[] = {
    {"mount", SYS_mount, {0, 0, 0, 0}, EPERM},
    {"umount2", SYS_umount2, {0, 0}, EPERM},
    {"pivot_root", SYS_pivot_root, {0, 0}, EPERM},
    {"fsopen", SYS_fsopen, {0, 0}, EPERM},
    {"open_tree", SYS_open_tree, {(uint64_t)-1, 0, 0}, EPERM},
    {"unshare(CLONE_NEWUSER)", SYS_unshare, {CLONE_NEWUSER}, EPERM},
    {"unshare(CLONE_FS)", SYS_unshare, {CLONE_FS}, EPERM},
    {"setns", SYS_setns, {(uint64_t)-1, 0}, EPERM},
    {"clone(CLONE_NEWUSER)", SYS_clone, {CLONE_NEWUSER | SIGCHLD, 0, 0, 0}, EPERM},
    {"clone(CLONE_NEWNET|CLONE_NEWNS)", SYS_clone, {CLONE_NEWNET | CLONE_NEWNS | SIGCHLD}, EPERM},
    {"clone3", SYS_clone3, {0, 0}, ENOSYS},
    {"bpf", SYS_bpf, {0, 0, 0}, EPERM},
    {"perf_event_open", SYS_perf_event_open, {0, 0, (uint64_t)-1, (uint64_t)-1}, EPERM},
    {"keyctl", SYS_keyctl, {KEYCTL_GET_KEYRING_ID, (uint64_t)KEY_SPEC_SESSION_KEYRING}, EPERM},
    {"add_key", SYS_add_key, {0, 0, 0, 0}, EPERM},
    {"userfaultfd", SYS_userfaultfd, {0}, EPERM},
    {"io_uring_setup", SYS_io_uring_setup, {1, 0}, EPERM},
    {"kexec_load", SYS_kexec_load, {0, 0, 0, 0}, EPERM},
    {"finit_module", SYS_finit_module, {(uint64_t)-1, 0, 0}, EPERM},
    {"ioctl(TIOCSTI)", SYS_ioctl, {(uint64_t)-1, TIOCSTI, 0}, EPERM},
    {"ioctl(TIOCSTI) with high bits set", SYS_ioctl, {(uint64_t)-1, HIGH | TIOCSTI, 0}, EPERM},
    {"ioctl(TIOCLINUX)", SYS_ioctl, {(uint64_t)-1, TIOCLINUX, 0}, EPERM},
    {"ioctl(FIONREAD) on a bad fd", SYS_ioctl, {(uint64_t)-1, FIONREAD, 0}, EBADF},
    {"socket(AF_PACKET)", SYS_socket, {AF_PACKET, SOCK_DGRAM, 0}, EPERM},
    {"socket(AF_PACKET) with high bits", SYS_socket, {HIGH | AF_PACKET, SOCK_RAW, 0}, EPERM},
    {"socket(AF_INET, SOCK_RAW)", SYS_socket, {AF_INET, SOCK_RAW | SOCK_CLOEXEC, 1}, EPERM},
    {"socket(AF_INET6, SOCK_RAW)", SYS_socket, {AF_INET6, SOCK_RAW, 58}, EPERM},
    {"socket(AF_INET, SOCK_PACKET)", SYS_socket, {AF_INET, SOCK_PACKET, 0}, EPERM},
    {"socket(AF_INET, SOCK_STREAM)", SYS_socket, {AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0}, 0},
    {"socket(AF_UNIX, SOCK_DGRAM)", SYS_socket, {AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0}, 0},
    {"socket(AF_NETLINK, SOCK_RAW)", SYS_socket, {AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0}, 0},
    {"socket(AF_ALG), a family the table does not know", SYS_socket, {AF_ALG_FAMILY, 5, 0}, ENOSYS},
    {"personality query", SYS_personality, {0xffffffff}, 0},
    {"personality(READ_IMPLIES_EXEC)", SYS_personality, {READ_IMPLIES_EXEC}, EPERM},
    {"personality(MMAP_PAGE_ZERO) with high bits", SYS_personality, {HIGH | MMAP_PAGE_ZERO}, EPERM},
    {"acct", SYS_acct, {0}, EPERM},
    {"swapoff", SYS_swapoff, {0}, EPERM},
    {"reboot", SYS_reboot, {0, 0, 0, 0}, EPERM},
    {"settimeofday", SYS_settimeofday, {0, 0}, EPERM},
    {"clock_settime", SYS_clock_settime, {0, 0}, EPERM},
    {"open_by_handle_at", SYS_open_by_handle_at, {(uint64_t)-1, 0, 0}, EPERM},
    {"name_to_handle_at", SYS_name_to_handle_at, {(uint64_t)-1, 0, 0, 0}, EPERM},
    {"syslog", SYS_syslog, {3, 0, 0}, EPERM},
    {"iopl", SYS_iopl, {3}, EPERM},
    {"vhangup", SYS_vhangup, {0}, EPERM},
    {"chroot", SYS_chroot, {0}, EPERM},
    {"sethostname", SYS_sethostname, {0, 0}, EPERM},
    {"ptrace of nobody", SYS_ptrace, {PTRACE_PEEKDATA, 0, 0, 0}, ESRCH},
    {"getpid", SYS_getpid, {0}, 0},
    {"a number past the kernel's table", 1000, {0}, ENOSYS},
    {"mseal, newer than the table", 462, {0, 0, 0}, ENOSYS},
};

static int check_calls(void)
{
        for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
                const struct call *c = &calls[i];
                long r = syscall(c->nr, c->a[0], c->a[1], c->a[2], c->a[3]);
                int got = r < 0 ? errno : 0;
                if (got != c->want)
                        return (int)i + 1;
        }
        return 0;
}

/* The table's persona rows, read without asserting (in the filtered
 * child): whether personality(v) is allowed. */
static bool persona_allowed(uint64_t v)
{
        size_t n;
        const struct seccomp_profile_rule *rules = seccomp_profile_rules(&n);
        for (size_t i = 0; i < n; i++)
                if (rules[i].n_args == 1 && strcmp(rules[i].names[0], "personality") == 0 &&
                    (v & rules[i].args[0].mask) == rules[i].args[0].value)
                        return rules[i].verdict == SECCOMP_PROFILE_ALLOW;
        return false;
}

/* personality(v) as the kernel answers it under the filter, against the
 * table, for each allowed persona and every value one or two bits from
 * one (high bits included): the fallback's widened patterns deny exactly
 * what the table denies. Exits with 1 + the number of the first value
 * that differs (capped). */
static int check_personas(void)
{
        static const uint64_t base[] = {
            PER_LINUX, PER_LINUX32, UNAME26, PER_LINUX32 | UNAME26, ADDR_NO_RANDOMIZE, 0xffffffff};
        int k = 0;
        for (size_t i = 0; i < ARRAY_SIZE(base); i++)
                for (unsigned b = 0; b < 65; b++)
                        for (unsigned c = b; c < 65; c++, k++) {
                                uint64_t v = base[i] ^ (b < 64 ? UINT64_C(1) << b : 0) ^
                                             (c < 64 && c != b ? UINT64_C(1) << c : 0);
                                long r = syscall(SYS_personality, v);
                                bool denied = r < 0 && errno == EPERM;
                                if (r < 0 && !denied)
                                        return 1 + (k < 240 ? k : 240);
                                if (denied == persona_allowed(v))
                                        return 1 + (k < 240 ? k : 240);
                                syscall(SYS_personality, PER_LINUX);
                        }
        return 0;
}

Test(seccomp_profile, kernel_denies_exactly_the_table_s_personas)
{
        int status = run_filtered(check_personas);
        cr_assert(WIFEXITED(status), "child died, status 0x%x", status);
        cr_assert_eq(WEXITSTATUS(status), 0, "value %d (capped at 240) differs",
                     WEXITSTATUS(status) - 1);
}

Test(seccomp_profile, kernel_applies_the_profile)
{
        int status = run_filtered(check_calls);
        cr_assert(WIFEXITED(status), "child died, status 0x%x", status);
        int failed = WEXITSTATUS(status);
        cr_assert(failed < 250, "the filter did not load (exit %d)", failed);
        cr_assert_eq(failed, 0, "%s: not the expected %s", calls[failed - 1].what,
                     calls[failed - 1].want ? strerror(calls[failed - 1].want) : "success");
}

static int check_fork(void)
{
        long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
        if (pid == 0)
                syscall(SYS_exit_group, 7);
        int status;
        if (pid < 0 || syscall(SYS_wait4, pid, &status, 0, NULL) != pid)
                return 1;
        return WIFEXITED(status) && WEXITSTATUS(status) == 7 ? 0 : 2;
}

Test(seccomp_profile, fork_still_works)
{
        int status = run_filtered(check_fork);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x", status);
}

static int check_x32(void)
{
        syscall(0x40000000 | SYS_getpid);
        return 1;
}

static int check_i386(void)
{
        long r = 20; /* getpid in the i386 table */
        __asm__ volatile("int $0x80" : "+a"(r) : : "memory");
        return 1;
}

Test(seccomp_profile, x32_entry_kills)
{
        int status = run_filtered(check_x32);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status 0x%x", status);
}

Test(seccomp_profile, i386_entry_kills)
{
        int status = run_filtered(check_i386);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status 0x%x", status);
}
