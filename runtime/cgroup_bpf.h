/* Device rules on cgroup v2: v2 has no devices controller, so the rules the
 * cgroup code keeps for v1's devices.allow/deny are compiled into a
 * BPF_PROG_TYPE_CGROUP_DEVICE program, built here from raw instructions (no
 * libbpf, no compiler), loaded and attached to the container's cgroup. One
 * rule list feeds both walls, so v1 and v2 allow the same devices. */
#ifndef UMW_CGROUP_BPF_H
#define UMW_CGROUP_BPF_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct umw_error;

/* One rule as v1 takes it: "a", or "TYPE MAJOR:MINOR ACCESS" with TYPE b or
 * c, MAJOR and MINOR a number or "*", ACCESS some of r, w, m. */
struct cgroup_device_rule {
        bool allow;
        char rule[64];
};

/* The same rule, parsed. */
struct cgroup_device_match {
        bool allow;
        char type;            /* 'a' (any), 'b' or 'c' */
        int64_t major, minor; /* -1: any */
        uint32_t access;      /* BPF_DEVCG_ACC_MKNOD | _READ | _WRITE */
};

/* 0, or -EINVAL when text is not a rule. */
int cgroup_device_rule_parse(const struct cgroup_device_rule *rule,
                             struct cgroup_device_match *out);

/* The program for rules in order, the last matching rule deciding (as v1 and
 * the OCI spec have it): everything before the last rule that covers every
 * device ("a") is moot, and that rule's verdict is the default; with no such
 * rule the default is deny. An allow rule matches a request when it grants
 * every access asked for; a deny rule when it refuses any of them. *insns is
 * malloc'd. 0, -EINVAL for a rule that does not parse, or -ENOMEM. */
int cgroup_bpf_device_program(const struct cgroup_device_rule *rules, size_t n,
                              struct bpf_insn **insns, size_t *n_insns);

/* Loads a cgroup device program; *fd is O_CLOEXEC. The verifier's last word
 * is in the error when it refuses the program. */
int cgroup_bpf_device_load(const struct bpf_insn *insns, size_t n, int *fd, struct umw_error **err);

/* Builds, loads and attaches the program for rules to the cgroup2 directory
 * cgroup_fd (opened O_RDONLY, not O_PATH), alongside any program an ancestor
 * has (BPF_F_ALLOW_MULTI: every program must allow). The program stays until
 * the cgroup is removed. */
int cgroup_bpf_devices_attach(int cgroup_fd, const struct cgroup_device_rule *rules, size_t n,
                              struct umw_error **err);

#endif
