/* cgroup_bpf: v1 rule text parsed, the device program's shape, its verdicts
 * (run here by a small interpreter of the instructions it uses), and, as
 * root, the kernel's verifier accepting it. */
#include "runtime/cgroup_bpf.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#define R BPF_DEVCG_ACC_READ
#define W BPF_DEVCG_ACC_WRITE
#define M BPF_DEVCG_ACC_MKNOD

/* ---------------------------------------------------------------- parsing */

Test(cgroup_bpf, parses_v1_rules)
{
        struct cgroup_device_match m;
        struct cgroup_device_rule all = {false, "a"};
        cr_assert_eq(cgroup_device_rule_parse(&all, &m), 0);
        cr_assert(m.type == 'a' && m.major == -1 && m.minor == -1 && m.access == (R | W | M) &&
                  !m.allow);

        struct cgroup_device_rule pts = {true, "c 136:* rwm"};
        cr_assert_eq(cgroup_device_rule_parse(&pts, &m), 0);
        cr_assert(m.type == 'c' && m.major == 136 && m.minor == -1 && m.allow);

        struct cgroup_device_rule disk = {true, "b 8:16 rw"};
        cr_assert_eq(cgroup_device_rule_parse(&disk, &m), 0);
        cr_assert(m.type == 'b' && m.major == 8 && m.minor == 16 && m.access == (R | W));

        struct cgroup_device_rule any = {false, "c *:* m"};
        cr_assert_eq(cgroup_device_rule_parse(&any, &m), 0);
        cr_assert(m.major == -1 && m.minor == -1 && m.access == M);
}

Test(cgroup_bpf, refuses_what_is_not_a_rule)
{
        static const char *const bad[] = {
            "",           "x 1:3 rwm",   "c 1:3 rwx",  "c 1:3 rr",      "c 1 rwm",   "c 1:3",
            "c -1:3 rwm", "c 1:3 rwm x", "c 1:3x rwm", "c 1048576:0 r", "a 1:3 rwm", "cc 1:3 r"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                struct cgroup_device_rule rule = {true, ""};
                snprintf(rule.rule, sizeof(rule.rule), "%s", bad[i]);
                struct cgroup_device_match m;
                cr_assert_eq(cgroup_device_rule_parse(&rule, &m), -EINVAL, "'%s' parsed", bad[i]);
        }
}

/* ---------------------------------------------------------------- an interpreter */

/* Runs prog on one request with the semantics of the instructions the
 * builder emits; fails the test on any other instruction or a jump out of
 * the program. Returns r0. */
static uint64_t run(const struct bpf_insn *prog, size_t n, uint32_t type, uint32_t access,
                    uint32_t major, uint32_t minor)
{
        struct bpf_cgroup_dev_ctx ctx = {.access_type = access << 16 | type, major, minor};
        uint64_t reg[11] = {0};
        for (size_t pc = 0, steps = 0; steps < 10000; steps++) {
                cr_assert_lt(pc, n, "jump out of the program");
                const struct bpf_insn *i = &prog[pc++];
                uint64_t *d = &reg[i->dst_reg], s = reg[i->src_reg], k = (uint64_t)(int64_t)i->imm;
                switch (i->code) {
                case BPF_LDX | BPF_MEM | BPF_W:
                        cr_assert_eq(i->src_reg, 1);
                        cr_assert(i->off >= 0 && i->off + 4 <= (int)sizeof(ctx) && i->off % 4 == 0);
                        *d = ((uint32_t *)&ctx)[i->off / 4];
                        break;
                case BPF_ALU | BPF_AND | BPF_K:
                        *d = (uint32_t)(*d & k);
                        break;
                case BPF_ALU | BPF_RSH | BPF_K:
                        *d = (uint32_t)*d >> i->imm;
                        break;
                case BPF_ALU64 | BPF_AND | BPF_K:
                        *d &= k;
                        break;
                case BPF_ALU64 | BPF_MOV | BPF_X:
                        *d = s;
                        break;
                case BPF_ALU64 | BPF_MOV | BPF_K:
                        *d = k;
                        break;
                case BPF_JMP | BPF_JNE | BPF_K:
                        pc += *d != k ? i->off : 0;
                        break;
                case BPF_JMP | BPF_JEQ | BPF_K:
                        pc += *d == k ? i->off : 0;
                        break;
                case BPF_JMP | BPF_JNE | BPF_X:
                        pc += *d != s ? i->off : 0;
                        break;
                case BPF_JMP | BPF_EXIT:
                        return reg[0];
                default:
                        cr_assert_fail("instruction 0x%02x not expected", i->code);
                }
        }
        cr_assert_fail("the program does not end");
        return 0;
}

struct program {
        struct bpf_insn *insns;
        size_t n;
};

static struct program build(const struct cgroup_device_rule *rules, size_t n)
{
        struct program p = {0};
        cr_assert_eq(cgroup_bpf_device_program(rules, n, &p.insns, &p.n), 0);
        return p;
}

#define C BPF_DEVCG_DEV_CHAR
#define B BPF_DEVCG_DEV_BLOCK

/* ---------------------------------------------------------------- shape */

Test(cgroup_bpf, deny_all_then_one_device)
{
        struct cgroup_device_rule rules[] = {{false, "a"}, {true, "c 1:3 rwm"}};
        struct program p = build(rules, 2);
        /* 6 to read the context, 5 for the rule (type, major, minor,
         * verdict, exit), 2 for the default. */
        cr_assert_eq(p.n, 13);
        cr_assert_eq(p.insns[0].code, BPF_LDX | BPF_MEM | BPF_W);
        cr_assert_eq(p.insns[6].code, BPF_JMP | BPF_JNE | BPF_K);
        cr_assert_eq(p.insns[6].imm, C);
        cr_assert_eq(p.insns[6].off, 4, "a failed test skips to the default");
        cr_assert_eq(p.insns[9].imm, 1, "the rule allows");
        cr_assert_eq(p.insns[11].code, BPF_ALU64 | BPF_MOV | BPF_K);
        cr_assert_eq(p.insns[11].imm, 0, "the default denies");
        cr_assert_eq(p.insns[12].code, BPF_JMP | BPF_EXIT);
        free(p.insns);
}

Test(cgroup_bpf, rules_before_the_last_catch_all_are_dropped)
{
        struct cgroup_device_rule rules[] = {
            {true, "c 1:3 rwm"}, {false, "c 1:5 r"}, {true, "a"}, {false, "c 1:9 w"}};
        struct program p = build(rules, 4);
        /* 6 + (type, 3 for access, major, minor, 2) + 2. */
        cr_assert_eq(p.n, 6 + 8 + 2);
        cr_assert_eq(p.insns[p.n - 2].imm, 1, "the default is the catch-all's allow");
        cr_assert_eq(run(p.insns, p.n, C, R, 1, 5), 1, "the deny before the catch-all is moot");
        cr_assert_eq(run(p.insns, p.n, C, R | W, 1, 9), 0);
        free(p.insns);
}

Test(cgroup_bpf, no_rules_deny_everything)
{
        struct program p = build(NULL, 0);
        cr_assert_eq(p.n, 8);
        cr_assert_eq(run(p.insns, p.n, C, R, 1, 3), 0);
        free(p.insns);
}

Test(cgroup_bpf, a_bad_rule_builds_nothing)
{
        struct cgroup_device_rule rules[] = {{false, "a"}, {true, "c 1:3 rwz"}};
        struct bpf_insn *insns = NULL;
        size_t n = 0;
        cr_assert_eq(cgroup_bpf_device_program(rules, 2, &insns, &n), -EINVAL);
        cr_assert_null(insns);
}

/* ---------------------------------------------------------------- verdicts */

/* What the cgroup code asks for: deny all, the spec's rules, then the
 * default device set. */
static const struct cgroup_device_rule container[] = {
    {false, "a"},          {true, "c 10:229 r"}, {true, "b 8:* rw"},  {false, "b 8:3 w"},
    {false, "c 10:229 m"}, {true, "c 1:3 rwm"},  {true, "c 1:5 rwm"}, {true, "c 5:2 rwm"},
    {true, "c 136:* rwm"}, {false, "c 136:7 r"}, {true, "c 136:7 r"}};

Test(cgroup_bpf, last_match_wins)
{
        struct program p = build(container, ARRAY_SIZE(container));
        struct {
                uint32_t type, access, major, minor, allowed;
        } cases[] = {
            {C, R | W, 1, 3, 1},    /* /dev/null */
            {C, M, 1, 5, 1},        /* mknod /dev/zero */
            {B, R, 1, 3, 0},        /* a block device 1:3 is not /dev/null */
            {C, R, 1, 4, 0},        /* not listed: the deny-all */
            {C, R, 10, 229, 1},     /* r granted */
            {C, R | W, 10, 229, 0}, /* w is not */
            {C, W, 10, 229, 0},     /* w is not */
            {C, M, 10, 229, 0},     /* m denied later */
            {B, R | W, 8, 0, 1},    /* any minor of 8 */
            {B, R, 8, 3, 1},        /* the deny of w leaves r */
            {B, R | W, 8, 3, 0},    /* ... and refuses rw */
            {C, R, 8, 0, 0},        /* a char 8:0 is not the block 8:0 */
            {C, R | W, 136, 0, 1},  /* a pty */
            {C, R, 136, 7, 1},      /* denied, then allowed again: the last wins */
            {C, W, 136, 7, 1},      /* the deny of r leaves w */
            {C, R, 137, 0, 0},
        };
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
                cr_assert_eq(run(p.insns, p.n, cases[i].type, cases[i].access, cases[i].major,
                                 cases[i].minor),
                             cases[i].allowed, "case %zu: %c %u:%u access %u", i,
                             cases[i].type == C ? 'c' : 'b', cases[i].major, cases[i].minor,
                             cases[i].access);
        free(p.insns);
}

Test(cgroup_bpf, allow_all_then_denies)
{
        struct cgroup_device_rule rules[] = {{true, "a"}, {false, "c 1:5 rwm"}, {false, "b *:* m"}};
        struct program p = build(rules, ARRAY_SIZE(rules));
        cr_assert_eq(run(p.insns, p.n, C, R, 1, 5), 0);
        cr_assert_eq(run(p.insns, p.n, C, R, 1, 3), 1);
        cr_assert_eq(run(p.insns, p.n, B, M, 7, 0), 0);
        cr_assert_eq(run(p.insns, p.n, B, R | W, 7, 0), 1);
        free(p.insns);
}

/* ---------------------------------------------------------------- the kernel */

Test(cgroup_bpf, the_verifier_accepts_it)
{
        if (geteuid() != 0)
                cr_skip_test("loading a cgroup device program needs root");
        struct program p = build(container, ARRAY_SIZE(container));
        _cleanup_error_ struct umw_error *err = NULL;
        _cleanup_close_ int fd = -1;
        int r = cgroup_bpf_device_load(p.insns, p.n, &fd, &err);
        free(p.insns);
        if (r == -ENOSYS || r == -EPERM)
                cr_skip_test("no cgroup BPF here: %s", err->msg);
        cr_assert_eq(r, 0, "%s", err ? err->msg : "");
        cr_assert_geq(fd, 0);
}

Test(cgroup_bpf, the_verifier_refusal_is_reported)
{
        if (geteuid() != 0)
                cr_skip_test("loading a cgroup device program needs root");
        /* Returns without setting r0. */
        struct bpf_insn bad[] = {{.code = BPF_JMP | BPF_EXIT}};
        _cleanup_error_ struct umw_error *err = NULL;
        int fd = -1;
        int r = cgroup_bpf_device_load(bad, 1, &fd, &err);
        if (r == -ENOSYS || r == -EPERM)
                cr_skip_test("no cgroup BPF here: %s", err->msg);
        cr_assert_lt(r, 0);
        cr_assert_not_null(strstr(err->msg, "verifier: "), "%s", err->msg);
        cr_assert_not_null(strstr(err->msg, "R0"), "%s", err->msg);
}
