/* inject-open PID PATH: makes the process PID itself call
 * openat(AT_FDCWD, PATH, O_RDONLY | O_CLOEXEC), from inside, as a
 * compromised parser would, and prints what the call returned: "fd N" or
 * "errno NAME". A real attempt through the process's own seccomp filter,
 * not a stand-in: PTRACE_SEIZE and PTRACE_INTERRUPT stop it (where it
 * waits in a system call, as an idle event loop does), its registers are
 * set to the openat and the syscall instruction it was stopped after, one
 * single step runs it, and the saved registers are put back so that the
 * interrupted call restarts as after any signal. An fd it got is closed
 * the same way. Root only (CAP_SYS_PTRACE); x86_64. For gateway-privsep.sh. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
        fprintf(stderr, "inject-open: %s: %s\n", what, strerror(errno));
        exit(2);
}

static void wait_stop(pid_t pid)
{
        int st;
        if (waitpid(pid, &st, __WALL) < 0)
                die("waitpid");
        if (!WIFSTOPPED(st)) {
                fprintf(stderr, "inject-open: the process ended (status 0x%x)\n", st);
                exit(2);
        }
}

/* One system call in pid with the registers of saved, ip at a syscall
 * instruction; returns its rax. */
static long one_call(pid_t pid, const struct user_regs_struct *saved, long nr, long a0, long a1,
                     long a2)
{
        struct user_regs_struct r = *saved;
        r.rip = saved->rip - 2; /* the syscall instruction it stopped after */
        r.rax = nr;
        r.orig_rax = -1;
        r.rdi = a0;
        r.rsi = a1;
        r.rdx = a2;
        r.r10 = 0;
        if (ptrace(PTRACE_SETREGS, pid, NULL, &r) < 0)
                die("PTRACE_SETREGS");
        if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) < 0)
                die("PTRACE_SINGLESTEP");
        wait_stop(pid);
        if (ptrace(PTRACE_GETREGS, pid, NULL, &r) < 0)
                die("PTRACE_GETREGS");
        return (long)r.rax;
}

int main(int argc, char **argv)
{
        if (argc != 3) {
                fprintf(stderr, "usage: inject-open PID PATH\n");
                return 2;
        }
        pid_t pid = (pid_t)atoi(argv[1]);
        if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) < 0)
                die("PTRACE_SEIZE");
        if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) < 0)
                die("PTRACE_INTERRUPT");
        wait_stop(pid);
        struct user_regs_struct saved;
        if (ptrace(PTRACE_GETREGS, pid, NULL, &saved) < 0)
                die("PTRACE_GETREGS");
        errno = 0;
        long insn = ptrace(PTRACE_PEEKTEXT, pid, (void *)(saved.rip - 2), NULL);
        if (errno || (insn & 0xffff) != 0x050f) {
                fprintf(stderr, "inject-open: not stopped after a syscall instruction\n");
                return 2;
        }
        /* The path below the stack pointer, past the red zone. */
        unsigned long where = (saved.rsp - 4096) & ~15UL;
        size_t len = strlen(argv[2]) + 1;
        struct iovec local = {argv[2], len}, remote = {(void *)where, len};
        if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
                die("process_vm_writev");
        long rc = one_call(pid, &saved, SYS_openat, AT_FDCWD, (long)where, O_RDONLY | O_CLOEXEC);
        if (rc >= 0)
                one_call(pid, &saved, SYS_close, rc, 0, 0);
        if (ptrace(PTRACE_SETREGS, pid, NULL, &saved) < 0)
                die("PTRACE_SETREGS");
        if (ptrace(PTRACE_DETACH, pid, NULL, NULL) < 0)
                die("PTRACE_DETACH");
        if (rc >= 0)
                printf("fd %ld\n", rc);
        else
                printf("errno %s\n", strerrorname_np((int)-rc) ? strerrorname_np((int)-rc) : "?");
        return 0;
}
