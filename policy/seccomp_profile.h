/* The sandbox's default seccomp profile, kept as data: a table of rows, each
 * naming syscalls, what happens to them and why. It is an allowlist for the
 * native architecture only: an allowed call runs, a denied one fails with
 * EPERM, and a call the table does not name fails with ENOSYS, so a syscall
 * newer than this table fails the way it would on an older kernel. */
#ifndef UMW_POLICY_SECCOMP_PROFILE_H
#define UMW_POLICY_SECCOMP_PROFILE_H

#include <stddef.h>
#include <stdint.h>

enum seccomp_profile_verdict {
        SECCOMP_PROFILE_ALLOW,
        SECCOMP_PROFILE_DENY,   /* EPERM */
        SECCOMP_PROFILE_ENOSYS, /* as if the kernel did not have it */
};

/* Matches when (argument index & mask) == value. */
struct seccomp_profile_arg {
        unsigned index;
        uint64_t mask, value;
};

#define SECCOMP_PROFILE_MAX_ARGS 2

/* A row matches a call to one of its names whose arguments match all of
 * args. A row without args for a syscall that other rows decide by argument
 * is that syscall's fallback: it covers exactly the values those rows leave
 * (they must then compare one and the same argument). */
struct seccomp_profile_rule {
        const char *const *names; /* NULL-terminated */
        enum seccomp_profile_verdict verdict;
        struct seccomp_profile_arg args[SECCOMP_PROFILE_MAX_ARGS];
        size_t n_args;
        const char *reason; /* one line, for people */
};

/* The table, in order. */
const struct seccomp_profile_rule *seccomp_profile_rules(size_t *n);

/* The reason for name: its fallback or unconditional row's, else the first
 * row naming it; NULL when the table does not name it (so it gets ENOSYS). */
const char *seccomp_profile_reason(const char *name);

/* The table as an OCI linux.seccomp object (malloc'd compact JSON text),
 * with every argument rule as SCMP_CMP_MASKED_EQ and no two rules of
 * different actions matching the same call. NULL on ENOMEM or when a
 * fallback cannot be expressed or a name would need escaping (a table
 * error). */
char *seccomp_profile_json(void);

#endif
