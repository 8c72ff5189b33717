#include "runtime/cgroup_bpf.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ACCESS_ALL        (BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE)
#define VERIFIER_LOG_SIZE 65536

/* The registers the program keeps the request in once it has read the
 * context (r1 points at struct bpf_cgroup_dev_ctx on entry and is free
 * afterwards, so it serves as scratch). */
enum { R0, R1, R_TYPE, R_ACCESS, R_MAJOR, R_MINOR };

static int parse_number(const char *s, int64_t *out)
{
        if (strcmp(s, "*") == 0) {
                *out = -1;
                return 0;
        }
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        /* Device numbers are 12 (major) and 20 (minor) bits: the program
         * compares them as 32-bit immediates. */
        if (errno || end == s || *end || v < 0 || v > 0xfffff)
                return -EINVAL;
        *out = v;
        return 0;
}

int cgroup_device_rule_parse(const struct cgroup_device_rule *rule, struct cgroup_device_match *out)
{
        *out = (struct cgroup_device_match){
            .allow = rule->allow, .type = 'a', .major = -1, .minor = -1, .access = ACCESS_ALL};
        if (strcmp(rule->rule, "a") == 0)
                return 0;
        char type, major[16], minor[16], access[8], rest;
        if (sscanf(rule->rule, "%c %15[0-9*]:%15[0-9*] %7s %c", &type, major, minor, access,
                   &rest) != 4)
                return -EINVAL;
        if ((type != 'b' && type != 'c') || parse_number(major, &out->major) < 0 ||
            parse_number(minor, &out->minor) < 0)
                return -EINVAL;
        out->type = type;
        out->access = 0;
        for (const char *a = access; *a; a++) {
                uint32_t bit = *a == 'r'   ? BPF_DEVCG_ACC_READ
                               : *a == 'w' ? BPF_DEVCG_ACC_WRITE
                               : *a == 'm' ? BPF_DEVCG_ACC_MKNOD
                                           : 0;
                if (!bit || (out->access & bit))
                        return -EINVAL;
                out->access |= bit;
        }
        return 0;
}

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
        return (struct bpf_insn){
            .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
}

static bool covers_all(const struct cgroup_device_match *m)
{
        return m->type == 'a' && m->major < 0 && m->minor < 0 && m->access == ACCESS_ALL;
}

/* Instructions a rule's block takes: one test per constrained field (three
 * for access), then the verdict and exit. */
static size_t block_len(const struct cgroup_device_match *m)
{
        return (m->type != 'a') + 3 * (m->access != ACCESS_ALL) + (m->major >= 0) +
               (m->minor >= 0) + 2;
}

/* A rule as a block that returns its verdict when the request matches and
 * otherwise jumps past its own end, to the next block. */
static struct bpf_insn *emit_block(struct bpf_insn *p, const struct cgroup_device_match *m)
{
        struct bpf_insn *start = p;
        size_t len = block_len(m);
#define TO_NEXT ((int16_t)(len - (size_t)(p - start) - 1))
        if (m->type != 'a') {
                int32_t type = m->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
                *p = insn(BPF_JMP | BPF_JNE | BPF_K, R_TYPE, 0, TO_NEXT, type);
                p++;
        }
        if (m->access != ACCESS_ALL) {
                *p++ = insn(BPF_ALU64 | BPF_MOV | BPF_X, R1, R_ACCESS, 0, 0);
                *p++ = insn(BPF_ALU64 | BPF_AND | BPF_K, R1, 0, 0, (int32_t)m->access);
                /* allow: every access asked for is granted (r1 == request);
                 * deny: some access asked for is refused (r1 != 0). */
                *p = m->allow ? insn(BPF_JMP | BPF_JNE | BPF_X, R1, R_ACCESS, TO_NEXT, 0)
                              : insn(BPF_JMP | BPF_JEQ | BPF_K, R1, 0, TO_NEXT, 0);
                p++;
        }
        if (m->major >= 0) {
                *p = insn(BPF_JMP | BPF_JNE | BPF_K, R_MAJOR, 0, TO_NEXT, (int32_t)m->major);
                p++;
        }
        if (m->minor >= 0) {
                *p = insn(BPF_JMP | BPF_JNE | BPF_K, R_MINOR, 0, TO_NEXT, (int32_t)m->minor);
                p++;
        }
#undef TO_NEXT
        *p++ = insn(BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, m->allow);
        *p++ = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
        return p;
}

/* Reads the request out of the context into the registers the blocks test. */
static struct bpf_insn *emit_prologue(struct bpf_insn *p)
{
        *p++ = insn(BPF_LDX | BPF_MEM | BPF_W, R_TYPE, R1,
                    offsetof(struct bpf_cgroup_dev_ctx, access_type), 0);
        *p++ = insn(BPF_ALU | BPF_AND | BPF_K, R_TYPE, 0, 0, 0xffff);
        *p++ = insn(BPF_LDX | BPF_MEM | BPF_W, R_ACCESS, R1,
                    offsetof(struct bpf_cgroup_dev_ctx, access_type), 0);
        *p++ = insn(BPF_ALU | BPF_RSH | BPF_K, R_ACCESS, 0, 0, 16);
        *p++ = insn(BPF_LDX | BPF_MEM | BPF_W, R_MAJOR, R1,
                    offsetof(struct bpf_cgroup_dev_ctx, major), 0);
        *p++ = insn(BPF_LDX | BPF_MEM | BPF_W, R_MINOR, R1,
                    offsetof(struct bpf_cgroup_dev_ctx, minor), 0);
        return p;
}
#define PROLOGUE_LEN 6

int cgroup_bpf_device_program(const struct cgroup_device_rule *rules, size_t n,
                              struct bpf_insn **insns, size_t *n_insns)
{
        _cleanup_free_ struct cgroup_device_match *m = calloc(n + 1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        size_t first = 0;
        bool default_allow = false;
        for (size_t i = 0; i < n; i++) {
                if (cgroup_device_rule_parse(&rules[i], &m[i]) < 0)
                        return -EINVAL;
                if (covers_all(&m[i])) {
                        first = i + 1;
                        default_allow = m[i].allow;
                }
        }
        size_t len = PROLOGUE_LEN + 2;
        for (size_t i = first; i < n; i++)
                len += block_len(&m[i]);
        struct bpf_insn *prog = calloc(len, sizeof(*prog));
        if (!prog)
                return -ENOMEM;
        struct bpf_insn *p = emit_prologue(prog);
        /* The last rule is tested first: the first block that matches returns. */
        for (size_t i = n; i > first; i--)
                p = emit_block(p, &m[i - 1]);
        *p++ = insn(BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, default_allow);
        *p++ = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
        *insns = prog;
        *n_insns = len;
        return 0;
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
        return (int)syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int prog_load(const struct bpf_insn *insns, size_t n, char *log, size_t log_size)
{
        union bpf_attr attr;
        memset(&attr, 0, sizeof(attr));
        attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
        attr.insns = (uintptr_t)insns;
        attr.insn_cnt = (uint32_t)n;
        /* The program calls no helper, so no GPL-only one: the kernel does
         * not look at the license. */
        attr.license = (uintptr_t) "none";
        attr.log_buf = (uintptr_t)log;
        attr.log_size = (uint32_t)log_size;
        attr.log_level = log ? 1 : 0;
        return sys_bpf(BPF_PROG_LOAD, &attr);
}

/* The verifier's reason: its last line but the statistics it ends with
 * ("processed N insns ..."). */
static const char *verifier_reason(char *log)
{
        char *reason = log;
        for (char *save = NULL, *line = strtok_r(log, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save))
                if (strncmp(line, "processed ", 10) != 0 &&
                    strncmp(line, "verification time", 17) != 0)
                        reason = line;
        return reason;
}

int cgroup_bpf_device_load(const struct bpf_insn *insns, size_t n, int *fd, struct umw_error **err)
{
        int r = prog_load(insns, n, NULL, 0);
        if (r >= 0) {
                *fd = r;
                return 0;
        }
        int errnum = errno;
        if (errnum != EINVAL && errnum != EACCES)
                return umw_fail_sys(err, errnum, "load the cgroup BPF device program");
        /* Again, to hear why. */
        _cleanup_free_ char *log = calloc(1, VERIFIER_LOG_SIZE);
        if (log && (r = prog_load(insns, n, log, VERIFIER_LOG_SIZE)) >= 0) {
                *fd = r;
                return 0;
        }
        return umw_fail_sys(err, errnum, "load the cgroup BPF device program (verifier: %s)",
                            log && log[0] ? verifier_reason(log) : "no log");
}

int cgroup_bpf_devices_attach(int cgroup_fd, const struct cgroup_device_rule *rules, size_t n,
                              struct umw_error **err)
{
        _cleanup_free_ struct bpf_insn *insns = NULL;
        size_t n_insns = 0;
        int r = cgroup_bpf_device_program(rules, n, &insns, &n_insns);
        if (r < 0)
                return umw_fail_sys(err, -r, "device rules: build the cgroup BPF device program");
        _cleanup_close_ int prog = -1;
        if ((r = cgroup_bpf_device_load(insns, n_insns, &prog, err)) < 0)
                return umw_error_prefix(err, "device rules (linux.resources.devices) on cgroup v2");
        union bpf_attr attr;
        memset(&attr, 0, sizeof(attr));
        attr.target_fd = (uint32_t)cgroup_fd;
        attr.attach_bpf_fd = (uint32_t)prog;
        attr.attach_type = BPF_CGROUP_DEVICE;
        attr.attach_flags = BPF_F_ALLOW_MULTI;
        if (sys_bpf(BPF_PROG_ATTACH, &attr) < 0)
                return umw_fail_errno(err, "device rules (linux.resources.devices) on cgroup v2: "
                                           "attach the BPF device program to the container's "
                                           "cgroup");
        return 0;
}
