#include "netns/gateway_confine.h"
#include "common/error.h"
#include "common/sanitized.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* What every confined process of the gateway needs: memory, the clock,
 * randomness (OpenSSL's DRBG), signals returning, exit. */
static const int base_calls[] = {
    SCMP_SYS(brk),
    SCMP_SYS(munmap),
    SCMP_SYS(mremap),
    SCMP_SYS(madvise),
    SCMP_SYS(getrandom),
    SCMP_SYS(clock_gettime),
    SCMP_SYS(gettimeofday),
    SCMP_SYS(time),
    SCMP_SYS(futex),
    SCMP_SYS(getpid),
    SCMP_SYS(gettid),
    SCMP_SYS(rt_sigreturn),
    SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(exit),
    SCMP_SYS(exit_group),
    SCMP_SYS(fstat),
    SCMP_SYS(newfstatat),
};

/* The engine's sockets, loop, threads and resolver on top. */
static const int engine_calls[] = {
    SCMP_SYS(read),
    SCMP_SYS(write),
    SCMP_SYS(close),
    SCMP_SYS(recvmsg),
    SCMP_SYS(sendmsg),
    SCMP_SYS(recvfrom),
    SCMP_SYS(sendto),
    SCMP_SYS(accept4),
    SCMP_SYS(connect),
    SCMP_SYS(shutdown),
    SCMP_SYS(setsockopt),
    SCMP_SYS(getsockopt),
    SCMP_SYS(getsockname),
    SCMP_SYS(getpeername),
    SCMP_SYS(bind),
    SCMP_SYS(sendmmsg),
    SCMP_SYS(recvmmsg),
    SCMP_SYS(readv),
    SCMP_SYS(writev),
    SCMP_SYS(epoll_wait),
    SCMP_SYS(epoll_pwait),
    SCMP_SYS(epoll_ctl),
    SCMP_SYS(poll),
    SCMP_SYS(ppoll),
    SCMP_SYS(fcntl),
    SCMP_SYS(timerfd_settime),
    SCMP_SYS(signalfd4),
    SCMP_SYS(pipe2),
    SCMP_SYS(set_robust_list),
    SCMP_SYS(rseq),
    SCMP_SYS(sched_yield),
    SCMP_SYS(nanosleep),
    SCMP_SYS(clock_nanosleep),
    SCMP_SYS(statx),
    SCMP_SYS(lseek),
    SCMP_SYS(uname),
    SCMP_SYS(tgkill),
    SCMP_SYS(rt_sigaction),
    SCMP_SYS(getuid),
    SCMP_SYS(geteuid),
    SCMP_SYS(sysinfo),
    SCMP_SYS(ioctl),
    SCMP_SYS(flock),
    SCMP_SYS(ftruncate),
    SCMP_SYS(fsync),
    SCMP_SYS(fdatasync),
    SCMP_SYS(splice),
    SCMP_SYS(pread64),
    SCMP_SYS(pwrite64),
};

/* Never a library's probe in the engine: a process that tries them is
 * taken over, and dies. */
static const int engine_fatal[] = {
    SCMP_SYS(execve),
    SCMP_SYS(execveat),
    SCMP_SYS(ptrace),
    SCMP_SYS(process_vm_readv),
    SCMP_SYS(process_vm_writev),
    SCMP_SYS(mount),
    SCMP_SYS(umount2),
    SCMP_SYS(pivot_root),
    SCMP_SYS(chroot),
    SCMP_SYS(unshare),
    SCMP_SYS(setns),
    SCMP_SYS(bpf),
    SCMP_SYS(init_module),
    SCMP_SYS(finit_module),
    SCMP_SYS(kexec_load),
    SCMP_SYS(open_by_handle_at),
    SCMP_SYS(fsopen),
    SCMP_SYS(fsmount),
    SCMP_SYS(move_mount),
    SCMP_SYS(open_tree),
    SCMP_SYS(keyctl),
    SCMP_SYS(add_key),
    SCMP_SYS(perf_event_open),
    SCMP_SYS(userfaultfd),
};

#ifdef UMW_SANITIZED
/* LeakSanitizer's exit-time check (and ASan's reports). */
static const int sanitizer_calls[] = {
    SCMP_SYS(clone),       SCMP_SYS(ptrace),       SCMP_SYS(prctl),
    SCMP_SYS(wait4),       SCMP_SYS(getdents64),   SCMP_SYS(getdents),
    SCMP_SYS(sigaltstack), SCMP_SYS(rt_sigaction), SCMP_SYS(sched_yield),
    SCMP_SYS(tgkill),      SCMP_SYS(kill),         SCMP_SYS(lseek),
    SCMP_SYS(readlink),    SCMP_SYS(getppid),      SCMP_SYS(mprotect),
    SCMP_SYS(mmap),        SCMP_SYS(pread64),      SCMP_SYS(sched_getaffinity),
};
#endif

static int add_all(scmp_filter_ctx ctx, uint32_t action, const int *calls, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                int r = seccomp_rule_add(ctx, action, calls[i], 0);
                if (r < 0 && r != -EEXIST)
                        return r;
        }
        return 0;
}

/* Memory, but never executable: no code arrives after the start. */
static int add_memory(scmp_filter_ctx ctx)
{
#ifdef UMW_SANITIZED
        return 0; /* sanitizer_calls allows them whole */
#endif
        int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                                 SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
        if (r < 0)
                return r;
        return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
                                SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
}

static int add_fatal(scmp_filter_ctx ctx)
{
        for (size_t i = 0; i < ARRAY_LEN(engine_fatal); i++) {
#ifdef UMW_SANITIZED
                if (engine_fatal[i] == SCMP_SYS(ptrace))
                        continue; /* LeakSanitizer's tracer: sanitizer_calls */
#endif
                int r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, engine_fatal[i], 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int add_sanitizer(scmp_filter_ctx ctx)
{
#ifdef UMW_SANITIZED
        int r = add_all(ctx, SCMP_ACT_ALLOW, sanitizer_calls, ARRAY_LEN(sanitizer_calls));
        if (r < 0)
                return r;
        /* sanitizer_common's ReadFileToBuffer and ThreadLister: O_RDONLY
         * alone, or with O_DIRECTORY (and O_CLOEXEC in newer ones), through
         * open (GCC's, on x86_64) or openat (LLVM's). */
        static const scmp_datum_t flags[] = {O_RDONLY, O_RDONLY | O_DIRECTORY,
                                             O_RDONLY | O_DIRECTORY | O_CLOEXEC};
        for (size_t i = 0; i < ARRAY_LEN(flags); i++) {
                if ((r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
                                          SCMP_A1(SCMP_CMP_EQ, flags[i]))) < 0 ||
                    (r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
                                          SCMP_A2(SCMP_CMP_EQ, flags[i]))) < 0)
                        return r;
        }
        return 0;
#else
        (void)ctx;
        return 0;
#endif
}

/* Threads only: a clone without CLONE_THREAD would be a new process.
 * clone3 hides its flags in memory, so it answers ENOSYS and glibc falls
 * back to clone. */
static int add_threads(scmp_filter_ctx ctx)
{
#ifndef UMW_SANITIZED /* sanitizer_calls allows clone whole */
        int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                 SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
        if (r < 0)
                return r;
#endif
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
}

/* INET and INET6 only: no unix socket (a host daemon's), no netlink. */
static int add_sockets(scmp_filter_ctx ctx)
{
        int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
                                 SCMP_A0(SCMP_CMP_EQ, AF_INET));
        if (r < 0)
                return r;
        return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
                                SCMP_A0(SCMP_CMP_EQ, AF_INET6));
}

static int load(scmp_filter_ctx ctx, const char *who, struct umw_error **err)
{
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return umw_fail_errno(err, "%s: no_new_privs", who);
        int r = seccomp_load(ctx);
        return r < 0 ? umw_fail_sys(err, -r, "%s: load the seccomp filter", who) : 0;
}

/* Its socket, and stderr for a message on the way out. */
static int add_signer_io(scmp_filter_ctx ctx, int sock)
{
        static const int io[] = {SCMP_SYS(read),  SCMP_SYS(recvmsg), SCMP_SYS(recvfrom),
                                 SCMP_SYS(write), SCMP_SYS(sendmsg), SCMP_SYS(sendto)};
#ifdef UMW_SANITIZED
        /* LeakSanitizer reads the files it opens at exit. */
        int rs = add_all(ctx, SCMP_ACT_ALLOW, io, ARRAY_LEN(io));
        return rs < 0 ? rs : seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(close), 0);
#endif
        for (size_t i = 0; i < ARRAY_LEN(io); i++) {
                int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, io[i], 1,
                                         SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)sock));
                if (r < 0)
                        return r;
        }
        int r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, SCMP_A0(SCMP_CMP_EQ, 2));
        if (r < 0)
                return r;
        return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(close), 1,
                                SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)sock));
}

static void ctx_release(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}
#define _cleanup_seccomp_ __attribute__((cleanup(ctx_release)))

static int signer_rules(scmp_filter_ctx ctx, int sock)
{
        int r;
        if ((r = add_all(ctx, SCMP_ACT_ALLOW, base_calls, ARRAY_LEN(base_calls))) < 0 ||
            (r = add_signer_io(ctx, sock)) < 0 || (r = add_memory(ctx)) < 0)
                return r;
        return add_sanitizer(ctx);
}

int gateway_confine_signer(int sock, struct umw_error **err)
{
        _cleanup_seccomp_ scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
        if (!ctx)
                return umw_fail_sys(err, ENOMEM, "signer: seccomp");
        int r = signer_rules(ctx, sock);
        if (r < 0)
                return umw_fail_sys(err, -r, "signer: seccomp rules");
        return load(ctx, "signer", err);
}

/* Opening by name (open, openat, openat2, creat), like every call not
 * listed, fails with the default EPERM (libseccomp refuses a rule that
 * repeats the default). */
static int engine_rules(scmp_filter_ctx ctx)
{
        int r;
        if ((r = add_all(ctx, SCMP_ACT_ALLOW, base_calls, ARRAY_LEN(base_calls))) < 0 ||
            (r = add_all(ctx, SCMP_ACT_ALLOW, engine_calls, ARRAY_LEN(engine_calls))) < 0 ||
            (r = add_memory(ctx)) < 0 || (r = add_threads(ctx)) < 0 || (r = add_sockets(ctx)) < 0 ||
            (r = add_sanitizer(ctx)) < 0)
                return r;
        return add_fatal(ctx);
}

int gateway_confine_engine(struct umw_error **err)
{
        _cleanup_seccomp_ scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
        if (!ctx)
                return umw_fail_sys(err, ENOMEM, "gateway: seccomp");
        int r = engine_rules(ctx);
        if (r < 0)
                return umw_fail_sys(err, -r, "gateway: seccomp rules");
        return load(ctx, "gateway", err);
}
