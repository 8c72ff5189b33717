#include "runtime/seccomp.h"
#include "runtime/seccomp_cache.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct seccomp_filter {
        unsigned int flags; /* SECCOMP_FILTER_FLAG_*, as libseccomp's load passes them */
        struct sock_fprog prog;
};

#define SECCOMP_ARG_MAX 6

static int seccomp_action(enum spec_seccomp_action a, bool has_errno, uint32_t errno_ret,
                          uint32_t *out, struct umw_error **err)
{
        uint32_t ret = has_errno ? errno_ret : EPERM;
        switch (a) {
        case SPEC_SCMP_KILL:
                *out = SCMP_ACT_KILL_THREAD;
                return 0;
        case SPEC_SCMP_KILL_PROCESS:
                *out = SCMP_ACT_KILL_PROCESS;
                return 0;
        case SPEC_SCMP_TRAP:
                *out = SCMP_ACT_TRAP;
                return 0;
        case SPEC_SCMP_ERRNO:
                *out = SCMP_ACT_ERRNO(ret);
                return 0;
        case SPEC_SCMP_TRACE:
                *out = SCMP_ACT_TRACE(ret);
                return 0;
        case SPEC_SCMP_ALLOW:
                *out = SCMP_ACT_ALLOW;
                return 0;
        case SPEC_SCMP_LOG:
                *out = SCMP_ACT_LOG;
                return 0;
        case SPEC_SCMP_NOTIFY:
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "SCMP_ACT_NOTIFY is not supported (umwelt-run has no seccomp "
                                "listener; linux.seccomp.listenerPath is not implemented)");
        }
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "unknown seccomp action %d", (int)a);
}

static enum scmp_compare seccomp_op(enum spec_seccomp_op op)
{
        switch (op) {
        case SPEC_SCMP_CMP_NE:
                return SCMP_CMP_NE;
        case SPEC_SCMP_CMP_LT:
                return SCMP_CMP_LT;
        case SPEC_SCMP_CMP_LE:
                return SCMP_CMP_LE;
        case SPEC_SCMP_CMP_EQ:
                return SCMP_CMP_EQ;
        case SPEC_SCMP_CMP_GE:
                return SCMP_CMP_GE;
        case SPEC_SCMP_CMP_GT:
                return SCMP_CMP_GT;
        case SPEC_SCMP_CMP_MASKED_EQ:
                return SCMP_CMP_MASKED_EQ;
        }
        return _SCMP_CMP_MIN;
}

/* "SCMP_ARCH_X86_64" -> libseccomp's "x86_64". */
static int seccomp_add_arch(scmp_filter_ctx ctx, const char *name, size_t i, struct umw_error **err)
{
        static const char prefix[] = "SCMP_ARCH_";
        char lower[32];
        size_t n = strlen(name);
        if (strncmp(name, prefix, sizeof(prefix) - 1) != 0 ||
            n - (sizeof(prefix) - 1) >= sizeof(lower))
                goto unknown;
        const char *bare = name + sizeof(prefix) - 1;
        size_t j = 0;
        for (; bare[j]; j++)
                lower[j] = (char)(bare[j] >= 'A' && bare[j] <= 'Z' ? bare[j] + 32 : bare[j]);
        lower[j] = '\0';
        uint32_t token = seccomp_arch_resolve_name(lower);
        if (token == 0)
                goto unknown;
        int r = seccomp_arch_add(ctx, token);
        /* The native architecture is in every new filter already. */
        if (r < 0 && r != -EEXIST)
                return umw_fail_sys(err, -r, "seccomp: add architecture %s", name);
        return 0;
unknown:
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                        ".linux.seccomp.architectures[%zu]: unknown architecture \"%s\", expected "
                        "SCMP_ARCH_* as libseccomp knows it",
                        i, name);
}

static const struct seccomp_flag {
        const char *name;
        enum scmp_filter_attr attr; /* what libseccomp checks the kernel for */
        unsigned int kernel;        /* what its load passes to seccomp() then */
} seccomp_flags[] = {
    {"SECCOMP_FILTER_FLAG_TSYNC", SCMP_FLTATR_CTL_TSYNC, SECCOMP_FILTER_FLAG_TSYNC},
    {"SECCOMP_FILTER_FLAG_LOG", SCMP_FLTATR_CTL_LOG, SECCOMP_FILTER_FLAG_LOG},
    {"SECCOMP_FILTER_FLAG_SPEC_ALLOW", SCMP_FLTATR_CTL_SSB, SECCOMP_FILTER_FLAG_SPEC_ALLOW},
};

static int seccomp_find_flag(const char *flag, size_t i, const struct seccomp_flag **out,
                             struct umw_error **err)
{
        for (size_t k = 0; k < ARRAY_SIZE(seccomp_flags); k++) {
                if (strcmp(seccomp_flags[k].name, flag) == 0) {
                        *out = &seccomp_flags[k];
                        return 0;
                }
        }
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                        ".linux.seccomp.flags[%zu]: unknown flag \"%s\", expected "
                        "SECCOMP_FILTER_FLAG_TSYNC, SECCOMP_FILTER_FLAG_LOG or "
                        "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
                        i, flag);
}

static int seccomp_set_flag(scmp_filter_ctx ctx, const char *flag, size_t i, struct umw_error **err)
{
        const struct seccomp_flag *f = NULL;
        int r = seccomp_find_flag(flag, i, &f, err);
        if (r < 0)
                return r;
        if ((r = seccomp_attr_set(ctx, f->attr, 1)) < 0)
                return umw_fail_sys(err, -r, "seccomp: set flag %s", flag);
        return 0;
}

static int seccomp_load_flags(const struct spec_seccomp *s, unsigned int *out,
                              struct umw_error **err)
{
        *out = 0;
        for (size_t i = 0; i < s->n_flags; i++) {
                const struct seccomp_flag *f = NULL;
                int r = seccomp_find_flag(s->flags[i], i, &f, err);
                if (r < 0)
                        return r;
                *out |= f->kernel;
        }
        return 0;
}

static int seccomp_rule_fail(int r, const char *syscall, size_t i, struct umw_error **err)
{
        if (r == -ENOMEM)
                return umw_fail_sys(err, ENOMEM, "seccomp: add a rule for %s", syscall);
        return umw_fail(err, UMW_EXIT_CONFIG, -r,
                        ".linux.seccomp.syscalls[%zu]: libseccomp refuses the rule for %s: %s", i,
                        syscall, strerror(-r));
}

/* libseccomp refuses two comparisons of the same argument in one rule. Like
 * runc and crun, a rule that compares some argument more than once becomes
 * one rule per comparison, which matches when any of them holds. */
static bool seccomp_args_repeat(const struct spec_seccomp_rule *rule)
{
        unsigned int seen = 0;
        for (size_t k = 0; k < rule->n_args; k++) {
                unsigned int bit = 1u << rule->args[k].index;
                if (seen & bit)
                        return true;
                seen |= bit;
        }
        return false;
}

static int seccomp_add_syscall(scmp_filter_ctx ctx, const struct spec_seccomp_rule *rule,
                               uint32_t action, int nr, const char *name, size_t i,
                               const struct scmp_arg_cmp *cmps, struct umw_error **err)
{
        int r;
        if (rule->n_args == 0 || !seccomp_args_repeat(rule)) {
                r = seccomp_rule_add_array(ctx, action, nr, (unsigned int)rule->n_args, cmps);
                return r < 0 ? seccomp_rule_fail(r, name, i, err) : 0;
        }
        for (size_t k = 0; k < rule->n_args; k++) {
                r = seccomp_rule_add_array(ctx, action, nr, 1, &cmps[k]);
                if (r < 0)
                        return seccomp_rule_fail(r, name, i, err);
        }
        return 0;
}

static int seccomp_add_rule(scmp_filter_ctx ctx, const struct spec_seccomp_rule *rule,
                            uint32_t default_action, size_t i, struct umw_error **err)
{
        uint32_t action;
        int r = seccomp_action(rule->action, rule->has_errno_ret, rule->errno_ret, &action, err);
        if (r < 0)
                return umw_error_prefix(err, ".linux.seccomp.syscalls[%zu].action", i);
        /* libseccomp refuses a rule that repeats the default; it changes
         * nothing anyway. */
        if (action == default_action)
                return 0;
        if (rule->n_args > SECCOMP_ARG_MAX)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                ".linux.seccomp.syscalls[%zu].args: at most %d comparisons", i,
                                SECCOMP_ARG_MAX);
        struct scmp_arg_cmp cmps[SECCOMP_ARG_MAX];
        for (size_t k = 0; k < rule->n_args; k++) {
                const struct spec_seccomp_arg *a = &rule->args[k];
                if (a->index >= SECCOMP_ARG_MAX)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        ".linux.seccomp.syscalls[%zu].args[%zu].index: expected "
                                        "0 to %d",
                                        i, k, SECCOMP_ARG_MAX - 1);
                cmps[k] = (struct scmp_arg_cmp){
                    .arg = a->index,
                    .op = seccomp_op(a->op),
                    .datum_a = a->value,
                    .datum_b = a->value_two,
                };
        }
        for (size_t n = 0; n < rule->n_names; n++) {
                int nr = seccomp_syscall_resolve_name(rule->names[n]);
                /* Profiles list the syscalls of every architecture and kernel
                 * they support; one this libseccomp does not know cannot be
                 * called here either. */
                if (nr == __NR_SCMP_ERROR) {
                        umw_debug("seccomp: skipping unknown syscall %s", rule->names[n]);
                        continue;
                }
                r = seccomp_add_syscall(ctx, rule, action, nr, rule->names[n], i, cmps, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int seccomp_build_ctx(const struct spec_seccomp *s, scmp_filter_ctx ctx,
                             uint32_t default_action, struct umw_error **err)
{
        /* The init sets no_new_privs itself, and only when the spec asks;
         * it still holds CAP_SYS_ADMIN in its namespace when it loads. */
        int r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        if (r < 0)
                return umw_fail_sys(err, -r, "seccomp: clear the no_new_privs attribute");
        /* A binary tree by syscall number: the same decisions, found in
         * log(n) compares instead of a walk through every rule, which the
         * kernel also pays once per syscall and architecture when it loads
         * the filter (the sandbox's profile: 0.78 -> 0.58 ms a load). */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
        if (r < 0)
                return umw_fail_sys(err, -r, "seccomp: ask for a binary tree");
        for (size_t i = 0; i < s->n_architectures; i++) {
                r = seccomp_add_arch(ctx, s->architectures[i], i, err);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < s->n_flags; i++) {
                r = seccomp_set_flag(ctx, s->flags[i], i, err);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < s->n_rules; i++) {
                r = seccomp_add_rule(ctx, &s->rules[i], default_action, i, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The BPF program libseccomp generates for ctx: seccomp_export_bpf runs the
 * very generator seccomp_load does, so this is what it would have loaded. */
static int seccomp_export(scmp_filter_ctx ctx, struct sock_filter **prog, size_t *n,
                          struct umw_error **err)
{
        _cleanup_close_ int fd = memfd_create("umwelt-seccomp", MFD_CLOEXEC);
        if (fd < 0)
                return umw_fail_errno(err, "seccomp: memfd for the compiled filter");
        int r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return umw_fail_sys(err, -r, "seccomp: compile the filter");
        off_t size = lseek(fd, 0, SEEK_CUR);
        if (size < 0)
                return umw_fail_errno(err, "seccomp: size of the compiled filter");
        size_t count = (size_t)size / sizeof(struct sock_filter);
        if (count == 0 || count > BPF_MAXINSNS)
                return umw_fail(err, UMW_EXIT_CONFIG, E2BIG,
                                ".linux.seccomp: the compiled filter has %zu instructions, the "
                                "kernel takes 1 to %d",
                                count, BPF_MAXINSNS);
        _cleanup_free_ struct sock_filter *buf = malloc((size_t)size);
        if (!buf)
                return umw_fail_sys(err, ENOMEM, "seccomp filter");
        if (pread(fd, buf, (size_t)size, 0) != size)
                return umw_fail_errno(err, "seccomp: read the compiled filter");
        *prog = TAKE_PTR(buf);
        *n = count;
        return 0;
}

/* The rules into ctx, then ctx as a BPF program; ctx is the caller's. */
static int seccomp_build_and_export(const struct spec_seccomp *s, scmp_filter_ctx ctx,
                                    uint32_t default_action, struct sock_filter **prog, size_t *n,
                                    struct umw_error **err)
{
        int r = seccomp_build_ctx(s, ctx, default_action, err);
        if (r < 0)
                return r;
        return seccomp_export(ctx, prog, n, err);
}

static int seccomp_compile(const struct spec_seccomp *s, struct sock_filter **prog, size_t *n,
                           struct umw_error **err)
{
        uint32_t default_action;
        int r = seccomp_action(s->default_action, s->has_default_errno_ret, s->default_errno_ret,
                               &default_action, err);
        if (r < 0)
                return umw_error_prefix(err, ".linux.seccomp.defaultAction");
        scmp_filter_ctx ctx = seccomp_init(default_action);
        if (!ctx)
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL, "seccomp_init failed");
        r = seccomp_build_and_export(s, ctx, default_action, prog, n, err);
        seccomp_release(ctx);
        return r;
}

/* Takes prog. */
static int seccomp_filter_new(const struct spec_seccomp *s, struct sock_filter *prog, size_t n,
                              struct seccomp_filter **out, struct umw_error **err)
{
        _cleanup_free_ struct sock_filter *owned = prog;
        unsigned int flags;
        int r = seccomp_load_flags(s, &flags, err);
        if (r < 0)
                return r;
        struct seccomp_filter *f = calloc(1, sizeof(*f));
        if (!f)
                return umw_fail_sys(err, ENOMEM, "seccomp filter");
        f->flags = flags;
        f->prog = (struct sock_fprog){.len = (unsigned short)n, .filter = TAKE_PTR(owned)};
        *out = f;
        return 0;
}

int seccomp_filter_build(const struct spec_seccomp *s, struct seccomp_filter **out,
                         struct umw_error **err)
{
        struct sock_filter *prog = NULL;
        size_t n = 0;
        int r = seccomp_compile(s, &prog, &n, err);
        return r < 0 ? r : seccomp_filter_new(s, prog, n, out, err);
}

int seccomp_filter_build_cached(const struct spec_seccomp *s, const char *cache_root,
                                struct seccomp_filter **out, struct umw_error **err)
{
        _cleanup_close_ int dirfd = seccomp_cache_open(cache_root);
        size_t len = 0, n = 0;
        _cleanup_free_ char *key = dirfd >= 0 ? seccomp_cache_key(s, &len) : NULL;
        struct sock_filter *prog = key ? seccomp_cache_get(dirfd, key, len, &n) : NULL;
        if (!prog) {
                int r = seccomp_compile(s, &prog, &n, err);
                if (r < 0)
                        return r;
                if (key)
                        seccomp_cache_put(dirfd, key, len, prog, n);
        }
        return seccomp_filter_new(s, prog, n, out, err);
}

int seccomp_filter_load(const struct seccomp_filter *f, struct umw_error **err)
{
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, f->flags, &f->prog) != 0)
                return umw_fail_errno(err, "load the seccomp filter");
        return 0;
}

const struct sock_filter *seccomp_filter_program(const struct seccomp_filter *f, size_t *n)
{
        *n = f->prog.len;
        return f->prog.filter;
}

void seccomp_filter_free(struct seccomp_filter *f)
{
        if (!f)
                return;
        free(f->prog.filter);
        free(f);
}
