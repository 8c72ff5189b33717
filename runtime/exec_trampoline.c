/* The exec trampoline: the image a container's init becomes just before its
 * workload, so that what the workload's execve resolves through
 * /proc/self/exe (a script's `#!/proc/self/exe`) is this sealed copy, not
 * the host's umwelt-run (trampoline.h says when it replaces the re-exec).
 * A static program without libc, a few hundred bytes, run from a sealed
 * memfd with
 *
 *   argv = {"<fd>", "<what>", path, workload's argv...}
 *
 * It marks fd close-on-exec and execs path with the workload's argv and the
 * environment it was given. When that fails it sends SYNC_EXEC_ERROR with
 * errno and "<what>" on fd (start's connection, which reports it as the
 * init's failure) and exits 127. It holds nothing, so whatever runs it gains
 * nothing; it only ever calls fcntl, execve, sendto and exit. Built apart
 * from the runtime (Makefile.am): no sanitizer, no stack protector, no
 * libc, no relocations. */
#include "runtime/sync.h"

#include <asm/unistd.h>
#include <fcntl.h>
#include <sys/socket.h>

#if !defined(__x86_64__)
#error "the exec trampoline is written for x86_64 only"
#endif

static long sys4(long n, long a, long b, long c, long d)
{
        register long r10 __asm__("r10") = d;
        long ret;
        __asm__ volatile("syscall"
                         : "=a"(ret)
                         : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                         : "rcx", "r11", "memory");
        return ret;
}

static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
        register long r10 __asm__("r10") = d;
        register long r8 __asm__("r8") = e;
        register long r9 __asm__("r9") = f;
        long ret;
        __asm__ volatile("syscall"
                         : "=a"(ret)
                         : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                         : "rcx", "r11", "memory");
        return ret;
}

static int parse_fd(const char *s)
{
        int fd = 0;
        if (!*s)
                return -1;
        for (; *s; s++) {
                if (*s < '0' || *s > '9' || fd > 100000)
                        return -1;
                fd = fd * 10 + (*s - '0');
        }
        return fd;
}

static void report(int fd, long errnum, const char *what)
{
        struct sync_packet p;
        p.type = SYNC_EXEC_ERROR;
        p.value = 0;
        p.errnum = (int32_t)errnum;
        unsigned long n = 0;
        for (; what[n] && n < sizeof(p.msg) - 1; n++)
                p.msg[n] = what[n];
        p.msg[n] = '\0';
        sys6(__NR_sendto, fd, (long)&p, (long)(offsetof(struct sync_packet, msg) + n + 1),
             MSG_NOSIGNAL, 0, 0);
}

__attribute__((noreturn, used)) void trampoline_main(long *sp);
__attribute__((noreturn, used)) void trampoline_main(long *sp)
{
        long argc = sp[0];
        char **argv = (char **)(sp + 1);
        char **envp = argv + argc + 1;
        int fd = argc >= 3 ? parse_fd(argv[0]) : -1;
        if (fd >= 0 && sys4(__NR_fcntl, fd, F_SETFD, FD_CLOEXEC, 0) == 0) {
                long r = sys4(__NR_execve, (long)argv[2], (long)(argv + 3), (long)envp, 0);
                report(fd, -r, argv[1]);
        }
        for (;;)
                sys4(__NR_exit, 127, 0, 0, 0);
}

/* The kernel enters with the stack holding argc, argv, NULL, envp, NULL. */
__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "        xor %ebp, %ebp\n"
        "        mov %rsp, %rdi\n"
        "        and $-16, %rsp\n"
        "        call trampoline_main\n"
        "        hlt\n");
