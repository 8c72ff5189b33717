#include "seccomp.h"
#include "spec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

struct seccomp_filter {
        scmp_filter_ctx ctx;
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

static int seccomp_set_flag(scmp_filter_ctx ctx, const char *flag, size_t i, struct umw_error **err)
{
        static const struct {
                const char *name;
                enum scmp_filter_attr attr;
        } flags[] = {
            {"SECCOMP_FILTER_FLAG_TSYNC", SCMP_FLTATR_CTL_TSYNC},
            {"SECCOMP_FILTER_FLAG_LOG", SCMP_FLTATR_CTL_LOG},
            {"SECCOMP_FILTER_FLAG_SPEC_ALLOW", SCMP_FLTATR_CTL_SSB},
        };
        for (size_t k = 0; k < ARRAY_SIZE(flags); k++) {
                if (strcmp(flags[k].name, flag) != 0)
                        continue;
                int r = seccomp_attr_set(ctx, flags[k].attr, 1);
                if (r < 0)
                        return umw_fail_sys(err, -r, "seccomp: set flag %s", flag);
                return 0;
        }
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                        ".linux.seccomp.flags[%zu]: unknown flag \"%s\", expected "
                        "SECCOMP_FILTER_FLAG_TSYNC, SECCOMP_FILTER_FLAG_LOG or "
                        "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
                        i, flag);
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

int seccomp_filter_build(const struct spec_seccomp *s, struct seccomp_filter **out,
                         struct umw_error **err)
{
        uint32_t default_action;
        int r = seccomp_action(s->default_action, s->has_default_errno_ret, s->default_errno_ret,
                               &default_action, err);
        if (r < 0)
                return umw_error_prefix(err, ".linux.seccomp.defaultAction");
        struct seccomp_filter *f = calloc(1, sizeof(*f));
        if (!f)
                return umw_fail_sys(err, ENOMEM, "seccomp filter");
        f->ctx = seccomp_init(default_action);
        if (!f->ctx) {
                free(f);
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL, "seccomp_init failed");
        }
        r = seccomp_build_ctx(s, f->ctx, default_action, err);
        if (r < 0) {
                seccomp_filter_free(f);
                return r;
        }
        *out = f;
        return 0;
}

int seccomp_filter_load(struct seccomp_filter *f, struct umw_error **err)
{
        int r = seccomp_load(f->ctx);
        if (r < 0)
                return umw_fail_sys(err, -r, "load the seccomp filter");
        return 0;
}

void seccomp_filter_free(struct seccomp_filter *f)
{
        if (!f)
                return;
        seccomp_release(f->ctx);
        free(f);
}
