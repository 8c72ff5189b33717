/* The sandbox's seccomp profile as a table, and its rendering as OCI JSON.
 * Every argument test is a masked comparison of the bits the kernel reads:
 * an int argument is compared in its low 32 bits only, because the kernel
 * ignores the high ones and a caller can put anything there. */
#include "policy/seccomp_profile.h"

#include "common/cleanup.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>

#if defined(__x86_64__)
#define NATIVE_ARCH "SCMP_ARCH_X86_64"
#elif defined(__aarch64__)
#define NATIVE_ARCH "SCMP_ARCH_AARCH64"
#else
#error "seccomp_profile: name this machine's SCMP_ARCH_* and check the table against it"
#endif

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define LOW32      UINT64_C(0xffffffff)
/* The kernel's SOCK_TYPE_MASK: the bits of socket()'s type that are not
 * SOCK_NONBLOCK or SOCK_CLOEXEC. */
#define SOCK_TYPE_BITS 0xf
#define CLONE_NEW_ANY                                                                              \
        (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |             \
         CLONE_NEWPID | CLONE_NEWNET)

#define ARG(i, m, v)                                                                               \
        {                                                                                          \
                .index = (i), .mask = (m), .value = (v)                                            \
        }
#define DENY_ARG(name, i, m, v, why)                                                               \
        {                                                                                          \
                NAMES(name), SECCOMP_PROFILE_DENY, {ARG(i, m, v)}, 1, why                          \
        }
#define ALLOW_ARG(name, i, m, v, why)                                                              \
        {                                                                                          \
                NAMES(name), SECCOMP_PROFILE_ALLOW, {ARG(i, m, v)}, 1, why                         \
        }
#define SOCKET(verdict, domain, type, why)                                                         \
        {                                                                                          \
                NAMES("socket"), SECCOMP_PROFILE_##verdict,                                        \
                    {ARG(0, LOW32, domain), ARG(1, SOCK_TYPE_BITS, type)}, 2, why                  \
        }

static const struct seccomp_profile_rule rules[] = {
    /* What the agent must not do. */
    {NAMES("mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig",
           "fsmount", "fspick", "mount_setattr"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no mount family: the agent must not change its own walls"},
    {NAMES("chroot"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no chroot: another way to rearrange the view of the walls"},
    {NAMES("unshare", "setns"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no namespace creation or joining: a new user namespace hands out capabilities over "
     "private copies of the walls"},
    DENY_ARG("clone", 0, CLONE_NEWNS, CLONE_NEWNS, "no clone into a new mount namespace"),
    DENY_ARG("clone", 0, CLONE_NEWCGROUP, CLONE_NEWCGROUP, "no clone into a new cgroup namespace"),
    DENY_ARG("clone", 0, CLONE_NEWUTS, CLONE_NEWUTS, "no clone into a new UTS namespace"),
    DENY_ARG("clone", 0, CLONE_NEWIPC, CLONE_NEWIPC, "no clone into a new IPC namespace"),
    DENY_ARG("clone", 0, CLONE_NEWUSER, CLONE_NEWUSER, "no clone into a new user namespace"),
    DENY_ARG("clone", 0, CLONE_NEWPID, CLONE_NEWPID, "no clone into a new pid namespace"),
    DENY_ARG("clone", 0, CLONE_NEWNET, CLONE_NEWNET, "no clone into a new network namespace"),
    {NAMES("clone"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "clone without CLONE_NEW* flags: fork and threads (CLONE_NEWTIME is unreachable: clone's "
     "low byte is the exit signal)"},
    {NAMES("clone3"),
     SECCOMP_PROFILE_ENOSYS,
     {},
     0,
     "clone3 passes its flags in memory seccomp cannot read: ENOSYS makes glibc fall back to "
     "clone, whose flags are checked"},
    {NAMES("bpf"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no bpf: a large kernel attack surface, and probes that could watch the host"},
    {NAMES("perf_event_open"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no perf: kernel attack surface and a side channel on other processes"},
    {NAMES("add_key", "request_key", "keyctl"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no keyring: the user's keyrings are shared with their host sessions and hold credentials"},
    {NAMES("userfaultfd"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no userfaultfd: it stalls kernel code at will, the classic tool for winning kernel races"},
    {NAMES("io_uring_setup", "io_uring_enter", "io_uring_register"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no io_uring: its operations never pass this filter, and it has a long record of kernel "
     "bugs (programs fall back to plain calls)"},
    {NAMES("kexec_load", "kexec_file_load"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no kexec: that replaces the host's kernel"},
    {NAMES("init_module", "finit_module", "delete_module"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no kernel modules: code in the host's kernel"},
    DENY_ARG("ioctl", 1, LOW32, TIOCSTI,
             "no TIOCSTI: it types into a terminal, even the user's "
             "shell outside the sandbox"),
    DENY_ARG("ioctl", 1, LOW32, TIOCLINUX,
             "no TIOCLINUX: it reads and pastes the console's "
             "screen"),
    DENY_ARG("mknod", 1, S_IFMT, S_IFCHR,
             "no character device nodes: a node is a way to the host's devices that "
             "only the missing CAP_MKNOD would otherwise stop"),
    DENY_ARG("mknod", 1, S_IFMT, S_IFBLK, "no block device nodes: a way to the host's disks"),
    {NAMES("mknod"), SECCOMP_PROFILE_ALLOW, {}, 0, "mknod of a FIFO, a socket or a regular file"},
    DENY_ARG("mknodat", 2, S_IFMT, S_IFCHR,
             "no character device nodes: a node is a way to the host's devices that "
             "only the missing CAP_MKNOD would otherwise stop"),
    DENY_ARG("mknodat", 2, S_IFMT, S_IFBLK, "no block device nodes: a way to the host's disks"),
    {NAMES("mknodat"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "mknodat of a FIFO, a socket or a regular file"},
    {NAMES("ioctl"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "every other ioctl: terminals, files and devices the sandbox was given"},
    DENY_ARG("socket", 0, LOW32, AF_PACKET,
             "no packet sockets: raw frames bypass the network's "
             "rules"),
    SOCKET(DENY, AF_INET, SOCK_RAW,
           "no raw IPv4 sockets: hand-made packets bypass the network's "
           "rules"),
    SOCKET(DENY, AF_INET6, SOCK_RAW,
           "no raw IPv6 sockets: hand-made packets bypass the network's "
           "rules"),
    SOCKET(DENY, AF_INET, SOCK_PACKET,
           "no (AF_INET, SOCK_PACKET): the kernel makes it a packet "
           "socket"),
    SOCKET(ALLOW, AF_INET, SOCK_STREAM, "TCP, within the network the sandbox was given"),
    SOCKET(ALLOW, AF_INET, SOCK_DGRAM,
           "UDP and ping sockets, within the network the sandbox was "
           "given"),
    SOCKET(ALLOW, AF_INET6, SOCK_STREAM, "TCP over IPv6, within the network the sandbox was given"),
    SOCKET(ALLOW, AF_INET6, SOCK_DGRAM,
           "UDP and ping over IPv6, within the network the sandbox "
           "was given"),
    ALLOW_ARG("socket", 0, LOW32, AF_UNIX,
              "local sockets, reaching only what the sandbox can "
              "see"),
    ALLOW_ARG("socket", 0, LOW32, AF_NETLINK,
              "netlink (SOCK_RAW included): getifaddrs and ip "
              "read the sandbox's own interfaces"),
    ALLOW_ARG("personality", 0, LOW32, PER_LINUX, "the default persona"),
    ALLOW_ARG("personality", 0, LOW32, PER_LINUX32, "linux32: a 32-bit uname for builds"),
    ALLOW_ARG("personality", 0, LOW32, UNAME26, "uname26: old version checks"),
    ALLOW_ARG("personality", 0, LOW32, PER_LINUX32 | UNAME26, "linux32 and uname26 together"),
    ALLOW_ARG("personality", 0, LOW32, ADDR_NO_RANDOMIZE,
              "gdb turns off address randomisation for the program it debugs"),
    ALLOW_ARG("personality", 0, LOW32, 0xffffffff, "the query of the current persona"),
    {NAMES("personality"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no other persona: READ_IMPLIES_EXEC or MMAP_PAGE_ZERO weaken memory protections"},
    {NAMES("acct"), SECCOMP_PROFILE_DENY, {}, 0, "no process accounting: it is host-wide"},
    {NAMES("swapon", "swapoff"), SECCOMP_PROFILE_DENY, {}, 0, "no swap changes: host-wide"},
    {NAMES("reboot"), SECCOMP_PROFILE_DENY, {}, 0, "no reboot: the sandbox ends by its command"},
    {NAMES("settimeofday", "clock_settime"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no setting the clock: CLOCK_REALTIME is the host's, no namespace covers it"},
    {NAMES("sethostname", "setdomainname"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no renaming: the sandbox's hostname names its project"},
    {NAMES("open_by_handle_at", "name_to_handle_at"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no file handles: opening by handle skips the path walk and the walls it checks "
     "(the 'shocker' escape)"},
    {NAMES("lookup_dcookie"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no lookup_dcookie: a profiler's path lookup across the whole host"},
    {NAMES("quotactl", "quotactl_fd"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no quota control: quotas are the host's"},
    {NAMES("vhangup"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no vhangup: it hangs up a terminal other processes share"},
    {NAMES("iopl", "ioperm"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no I/O port access: that is direct hardware access"},
    {NAMES("nfsservctl"), SECCOMP_PROFILE_DENY, {}, 0, "no NFS server control: host-wide"},
    {NAMES("syslog"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no kernel log: it is the host's and leaks kernel addresses"},
    {NAMES("fanotify_init"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no fanotify: it watches whole filesystems, beyond the sandbox's view"},
    {NAMES("modify_ldt"),
     SECCOMP_PROFILE_DENY,
     {},
     0,
     "no LDT: 16-bit segments serve only emulators, and the LDT code has a history of kernel "
     "bugs"},

    /* What a toolchain needs. */
    {NAMES("read", "write", "open", "openat", "openat2", "close", "close_range", "creat", "lseek",
           "pread64", "pwrite64", "readv", "writev", "preadv", "preadv2", "pwritev", "pwritev2",
           "stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs", "access",
           "faccessat", "faccessat2", "getdents", "getdents64", "getcwd", "chdir", "fchdir",
           "mkdir", "mkdirat", "rmdir", "rename", "renameat", "renameat2", "link", "linkat",
           "unlink", "unlinkat", "symlink", "symlinkat", "readlink", "readlinkat", "chmod",
           "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "fchownat", "lchown", "umask",
           "truncate", "ftruncate", "fallocate", "fadvise64", "readahead", "fsync", "fdatasync",
           "sync", "syncfs", "sync_file_range", "utime", "utimes", "utimensat", "futimesat",
           "flock", "fcntl", "dup", "dup2", "dup3", "copy_file_range", "sendfile", "splice", "tee",
           "cachestat", "getxattr", "lgetxattr", "fgetxattr", "setxattr", "lsetxattr", "fsetxattr",
           "listxattr", "llistxattr", "flistxattr", "removexattr", "lremovexattr", "fremovexattr",
           "inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "files: the workspace and the toolchain are made of them; the mounts decide what is "
     "writable"},
    {NAMES("brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "msync", "mlock",
           "mlock2", "mlockall", "munlock", "munlockall", "memfd_create", "memfd_secret",
           "pkey_alloc", "pkey_free", "pkey_mprotect", "membarrier", "remap_file_pages", "mbind",
           "get_mempolicy", "set_mempolicy", "map_shadow_stack"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "memory: a process managing its own address space"},
    {NAMES("execve", "execveat", "fork", "vfork", "exit", "exit_group", "wait4", "waitid", "kill",
           "tkill", "tgkill", "getpid", "getppid", "gettid", "getpgid", "setpgid", "getpgrp",
           "getsid", "setsid", "set_tid_address", "set_robust_list", "get_robust_list", "futex",
           "futex_waitv", "rseq", "arch_prctl", "get_thread_area", "set_thread_area", "prctl",
           "prlimit64", "getrlimit", "setrlimit", "getrusage", "getpriority", "setpriority",
           "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getattr",
           "sched_setattr", "sched_getparam", "sched_setparam", "sched_getscheduler",
           "sched_setscheduler", "sched_get_priority_max", "sched_get_priority_min",
           "sched_rr_get_interval", "ioprio_get", "ioprio_set", "getcpu", "capget", "capset",
           "pidfd_open", "pidfd_send_signal", "process_mrelease", "restart_syscall", "times",
           "sysinfo", "uname", "getrandom"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "processes and threads: running programs, within the sandbox's pid namespace and limits"},
    {NAMES("getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
           "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid",
           "setfsgid", "setgroups"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "identity: without capabilities a process can only shuffle the ids it already has"},
    {NAMES("seccomp", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "self-restriction: a process may narrow its own walls further, never widen them"},
    {NAMES("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "debugging (gdb, strace): without capabilities it reaches only the sandbox's own processes "
     "of the same user, and since Linux 4.8 a tracer cannot skip this filter"},
    {NAMES("rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigsuspend",
           "rt_sigtimedwait", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "sigaltstack", "signalfd",
           "signalfd4", "pause", "alarm", "getitimer", "setitimer"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "signals and interval timers of the sandbox's own processes"},
    {NAMES("clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
           "timer_create", "timer_delete", "timer_getoverrun", "timer_gettime", "timer_settime",
           "timerfd_create", "timerfd_gettime", "timerfd_settime"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "reading clocks, sleeping and timers"},
    {NAMES("adjtimex", "clock_adjtime"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "reading the clock's discipline (ntptime); changing it needs CAP_SYS_TIME in the host's "
     "user namespace, which a sandbox never holds, and the request sits in memory seccomp cannot "
     "read"},
    {NAMES("poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl",
           "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2", "pipe", "pipe2"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "pipes and event loops"},
    {NAMES("socketpair", "bind", "listen", "accept", "accept4", "connect", "getsockname",
           "getpeername", "getsockopt", "setsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg",
           "sendmmsg", "recvmmsg", "shutdown"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "using the sockets socket() allowed; the network namespace decides where they reach"},
    {NAMES("msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl",
           "shmget", "shmat", "shmdt", "shmctl", "mq_open", "mq_unlink", "mq_timedsend",
           "mq_timedreceive", "mq_notify", "mq_getsetattr"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "System V and POSIX IPC, private to the sandbox's IPC namespace"},
    {NAMES("io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents"),
     SECCOMP_PROFILE_ALLOW,
     {},
     0,
     "Linux AIO: databases and build tools use it; each request passes the usual permission "
     "checks"},
};

const struct seccomp_profile_rule *seccomp_profile_rules(size_t *n)
{
        *n = ARRAY_SIZE(rules);
        return rules;
}

static bool rule_names(const struct seccomp_profile_rule *r, const char *name)
{
        for (const char *const *p = r->names; *p; p++)
                if (strcmp(*p, name) == 0)
                        return true;
        return false;
}

const char *seccomp_profile_reason(const char *name)
{
        const char *first = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
                if (!rule_names(&rules[i], name))
                        continue;
                if (rules[i].n_args == 0)
                        return rules[i].reason;
                if (!first)
                        first = rules[i].reason;
        }
        return first;
}

/* The argument conditions of the rows that decide name by argument; all must
 * test the same argument once, with the value inside the mask. */
struct conditions {
        unsigned index;
        size_t n;
        struct seccomp_profile_arg arg[16];
};

static int conditions_of(const char *name, struct conditions *c)
{
        c->n = 0;
        for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
                const struct seccomp_profile_rule *r = &rules[i];
                if (r->n_args == 0 || !rule_names(r, name))
                        continue;
                const struct seccomp_profile_arg *a = &r->args[0];
                if (r->n_args != 1 || (c->n > 0 && a->index != c->index) ||
                    (a->value & ~a->mask) != 0 || c->n == ARRAY_SIZE(c->arg))
                        return -EINVAL;
                c->index = a->index;
                c->arg[c->n++] = *a;
        }
        return 0;
}

/* The names some row decides by argument, gathered once per rendering: a
 * scan of every row for each of the ~500 names was most of its time. */
struct conditioned {
        size_t n;
        const char *names[32];
};

static int conditioned_collect(struct conditioned *set)
{
        set->n = 0;
        for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
                if (rules[i].n_args == 0)
                        continue;
                for (const char *const *p = rules[i].names; *p; p++) {
                        size_t k = 0;
                        while (k < set->n && strcmp(set->names[k], *p) != 0)
                                k++;
                        if (k < set->n)
                                continue;
                        if (set->n == ARRAY_SIZE(set->names))
                                return -EINVAL;
                        set->names[set->n++] = *p;
                }
        }
        return 0;
}

static bool has_conditions(const struct conditioned *set, const char *name)
{
        for (size_t k = 0; k < set->n; k++)
                if (strcmp(set->names[k], name) == 0)
                        return true;
        return false;
}

/* The profile is written as text directly: yajl's writer, a call per
 * token, took ~0.17 ms for these ~29 kB at every sandbox start. */
struct text {
        char *buf;
        size_t len, cap, n_rules;
        bool failed;
};

static void put(struct text *t, const char *s, size_t n)
{
        if (t->failed)
                return;
        if (t->len + n + 1 > t->cap) {
                size_t cap = t->cap ? t->cap : 32768;
                while (t->len + n + 1 > cap)
                        cap *= 2;
                char *bigger = realloc(t->buf, cap);
                if (!bigger) {
                        t->failed = true;
                        return;
                }
                t->buf = bigger;
                t->cap = cap;
        }
        memcpy(t->buf + t->len, s, n);
        t->len += n;
        t->buf[t->len] = '\0';
}

static void put_str(struct text *t, const char *s)
{
        put(t, s, strlen(s));
}

/* As yajl writes an integer ("%lld"), without printf's cost per number. */
static void put_int(struct text *t, long long v)
{
        char num[24];
        char *end = num + sizeof(num), *p = end;
        unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
        do
                *--p = (char)('0' + u % 10);
        while ((u /= 10) != 0);
        if (v < 0)
                *--p = '-';
        put(t, p, (size_t)(end - p));
}

/* A syscall name as a JSON string: the table's names need no escaping,
 * and one that would is a table error. */
static void put_name(struct text *t, const char *name, bool first)
{
        size_t n = 0;
        for (char c = name[0]; c; c = name[++n])
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
                        t->failed = true;
        put(t, first ? "\"" : ",\"", first ? 1 : 2);
        put(t, name, n);
        put(t, "\"", 1);
}

static void gen_action(struct text *t, enum seccomp_profile_verdict v)
{
        switch (v) {
        case SECCOMP_PROFILE_ALLOW:
                put_str(t, ",\"action\":\"SCMP_ACT_ALLOW\"");
                return;
        case SECCOMP_PROFILE_DENY:
                put_str(t, ",\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":");
                put_int(t, EPERM);
                return;
        case SECCOMP_PROFILE_ENOSYS:
                put_str(t, ",\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":");
                put_int(t, ENOSYS);
                return;
        }
}

static void gen_args(struct text *t, const struct seccomp_profile_arg *args, size_t n)
{
        if (n == 0)
                return;
        put_str(t, ",\"args\":[");
        for (size_t i = 0; i < n; i++) {
                put_str(t, i ? ",{\"index\":" : "{\"index\":");
                put_int(t, args[i].index);
                put_str(t, ",\"value\":");
                put_int(t, (long long)args[i].mask);
                put_str(t, ",\"valueTwo\":");
                put_int(t, (long long)args[i].value);
                put_str(t, ",\"op\":\"SCMP_CMP_MASKED_EQ\"}");
        }
        put_str(t, "]");
}

/* One OCI rule for the names of r that are not in skip (all when skip is
 * NULL). */
static void gen_rule(struct text *t, const struct seccomp_profile_rule *r,
                     const struct conditioned *skip)
{
        put_str(t, t->n_rules++ ? ",{\"names\":[" : "{\"names\":[");
        bool first = true;
        for (const char *const *p = r->names; *p; p++) {
                if (skip && has_conditions(skip, *p))
                        continue;
                put_name(t, *p, first);
                first = false;
        }
        put_str(t, "]");
        gen_action(t, r->verdict);
        gen_args(t, r->args, r->n_args);
        put_str(t, "}");
}

/* Masked patterns of one argument: x matches when x & mask == value. */
struct pattern {
        uint64_t mask, value;
};

/* The walk's leaves: one more than the nodes it splits, each on some
 * condition's path of at most 64 bits. */
#define PATTERNS_MAX (64 * ARRAY_SIZE(((struct conditions *)0)->arg) + 1)

struct patterns {
        size_t n;
        struct pattern p[PATTERNS_MAX];
};

/* The values of the argument that no condition matches, as disjoint masked
 * patterns: a walk down the bits the conditions test, from the highest,
 * stopping where a condition is fully matched (its row decides) or where no
 * condition can match any more (the fallback decides everything below). */
static void complement(const struct conditions *c, uint64_t tested, uint64_t decided,
                       uint64_t prefix, struct patterns *out)
{
        bool open = false;
        for (size_t i = 0; i < c->n; i++) {
                const struct seccomp_profile_arg *a = &c->arg[i];
                if (((a->value ^ prefix) & a->mask & decided) != 0)
                        continue;
                if ((a->mask & ~decided) == 0)
                        return;
                open = true;
        }
        if (!open) {
                out->p[out->n++] = (struct pattern){decided, prefix};
                return;
        }
        uint64_t rest = tested & ~decided;
        uint64_t bit = UINT64_C(1) << (63 - __builtin_clzll(rest));
        complement(c, tested, decided | bit, prefix, out);
        complement(c, tested, decided | bit, prefix | bit, out);
}

/* Whether some value matches both the pattern and a condition. */
static bool meets_condition(const struct conditions *c, struct pattern p)
{
        for (size_t i = 0; i < c->n; i++)
                if (((c->arg[i].value ^ p.value) & c->arg[i].mask & p.mask) == 0)
                        return true;
        return false;
}

/* Each bit a pattern tests is dropped while the pattern still meets no
 * condition: it then matches more values, all still the fallback's. The
 * disjoint walk splits the fallback's values along the conditions' values;
 * the widened patterns overlap (with the same verdict) and are fewer (the
 * persona's fallback: 61 rows instead of 99), each a rule the config
 * carries, the runtime parses and the kernel's filter compares. */
static void widen(const struct conditions *c, struct pattern *p)
{
        for (uint64_t bits = p->mask; bits; bits &= bits - 1) {
                uint64_t bit = bits & -bits;
                struct pattern wider = {p->mask & ~bit, p->value & ~bit};
                if (!meets_condition(c, wider))
                        *p = wider;
        }
}

static bool pattern_within(struct pattern a, struct pattern b)
{
        return (b.mask & ~a.mask) == 0 && ((a.value ^ b.value) & b.mask) == 0;
}

/* The widened patterns that no other one (or an equal earlier one) holds. */
static void gen_patterns(struct text *t, const char *name, enum seccomp_profile_verdict v,
                         unsigned index, const struct patterns *ps)
{
        const char *const names[] = {name, NULL};
        for (size_t i = 0; i < ps->n; i++) {
                bool held = false;
                for (size_t j = 0; j < ps->n && !held; j++)
                        held = j != i && pattern_within(ps->p[i], ps->p[j]) &&
                               (j < i || !pattern_within(ps->p[j], ps->p[i]));
                if (held)
                        continue;
                struct seccomp_profile_rule r = {
                    names, v, {ARG(index, ps->p[i].mask, ps->p[i].value)}, 1, NULL};
                gen_rule(t, &r, NULL);
        }
}

static int gen_fallback(struct text *t, const char *name, enum seccomp_profile_verdict v)
{
        struct conditions c;
        if (conditions_of(name, &c) < 0)
                return -EINVAL;
        uint64_t tested = 0;
        for (size_t i = 0; i < c.n; i++)
                tested |= c.arg[i].mask;
        _cleanup_free_ struct patterns *ps = calloc(1, sizeof(*ps));
        if (!ps)
                return -ENOMEM;
        complement(&c, tested, 0, 0, ps);
        for (size_t i = 0; i < ps->n; i++)
                widen(&c, &ps->p[i]);
        gen_patterns(t, name, v, c.index, ps);
        return 0;
}

static int gen_row(struct text *t, const struct seccomp_profile_rule *r,
                   const struct conditioned *set)
{
        if (r->n_args > 0) {
                gen_rule(t, r, NULL);
                return 0;
        }
        bool plain = false;
        for (const char *const *p = r->names; *p; p++)
                plain |= !has_conditions(set, *p);
        if (plain)
                gen_rule(t, r, set);
        for (const char *const *p = r->names; *p; p++)
                if (has_conditions(set, *p) && gen_fallback(t, *p, r->verdict) < 0)
                        return -EINVAL;
        return 0;
}

char *seccomp_profile_json(void)
{
        struct conditioned set;
        struct text t = {0};
        if (conditioned_collect(&set) < 0)
                return NULL;
        put_str(&t, "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":");
        put_int(&t, ENOSYS);
        put_str(&t, ",\"architectures\":[\"" NATIVE_ARCH "\"],\"syscalls\":[");
        for (size_t i = 0; i < ARRAY_SIZE(rules) && !t.failed; i++)
                if (gen_row(&t, &rules[i], &set) < 0)
                        t.failed = true;
        put_str(&t, "]}");
        if (t.failed) {
                free(t.buf);
                return NULL;
        }
        return t.buf;
}
