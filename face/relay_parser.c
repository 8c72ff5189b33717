/* The relay's parser child (relay_parser.h). */
#include "face/relay_parser.h"
#include "face/relay_msg.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/sanitized.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define NOBODY 65534

/* Memory and leaving: what the allocator and exit need, nothing more. */
static const int plain_calls[] = {
    SCMP_SYS(brk),
    SCMP_SYS(munmap),
    SCMP_SYS(mremap),
    SCMP_SYS(madvise),
    SCMP_SYS(rt_sigreturn),
    SCMP_SYS(exit),
    SCMP_SYS(exit_group),
    SCMP_SYS(futex),
#ifdef UMW_SANITIZED
    /* AddressSanitizer's allocator and its reports (a test build's
     * concession; the child leaves with _exit, so LeakSanitizer's exit
     * check never runs in it). */
    SCMP_SYS(mmap),
    SCMP_SYS(mprotect),
    SCMP_SYS(sigaltstack),
    SCMP_SYS(getpid),
    SCMP_SYS(gettid),
    SCMP_SYS(rt_sigprocmask),
#endif
};

static int confine(int conn, int records)
{
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
        if (!ctx)
                return -ENOMEM;
        int r = 0;
        for (size_t i = 0; r >= 0 && i < sizeof(plain_calls) / sizeof(plain_calls[0]); i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain_calls[i], 0);
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(read), 1,
                                     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)conn));
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
                                     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)records));
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
                                     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)STDERR_FILENO));
#ifndef UMW_SANITIZED
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
                                     SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
#endif
        if (r >= 0)
                r = seccomp_load(ctx);
        seccomp_release(ctx);
        return r;
}

/* Everything but its two fds and stderr given up, before a byte is read.
 * The parent-death signal is set after the ids change, which clear it: a
 * parser left behind would hold its connection open. */
static int give_up(int conn, int records, pid_t monitor)
{
        const int keep[] = {conn, records};
        if (umw_close_fds_from(STDERR_FILENO + 1, keep, 2) < 0)
                return -errno;
        if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                               setresuid(NOBODY, NOBODY, NOBODY) < 0))
                return -errno;
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != monitor)
                return -ESRCH;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        return confine(conn, records);
}

static void send_record(int records, const struct relay_request *q)
{
        if (write(records, q, sizeof(*q)) != (ssize_t)sizeof(*q))
                _exit(1);
}

static void send_line(int records, const char *line, size_t len)
{
        static struct relay_request q;
        struct umw_error *err = NULL;
        if (relay_request_parse(line, len, &q, &err) < 0) {
                memset(&q, 0, sizeof(q));
                q.kind = RELAY_BAD;
                snprintf(q.text, sizeof(q.text), "%s", err ? err->msg : "bad request");
                umw_error_free(err);
        }
        send_record(records, &q);
}

/* Lines until the connection ends; a line too long ends it. */
__attribute__((noreturn)) static void serve(int conn, int records)
{
        static char buf[RELAY_LINE_MAX];
        size_t have = 0;
        for (;;) {
                ssize_t n = read(conn, buf + have, sizeof(buf) - have);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        if (have > 0)
                                send_line(records, buf, have);
                        _exit(0);
                }
                have += (size_t)n;
                char *nl;
                while ((nl = memchr(buf, '\n', have))) {
                        size_t len = (size_t)(nl - buf);
                        send_line(records, buf, len);
                        memmove(buf, nl + 1, have - len - 1);
                        have -= len + 1;
                }
                if (have == sizeof(buf)) {
                        send_line(records, buf, have); /* refused as too long */
                        _exit(0);
                }
        }
}

int relay_parser_spawn(int conn, int *records, pid_t *pid, struct umw_error **err)
{
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return umw_fail_errno(err, "socketpair for a request's parser");
        pid_t self = getpid(), child = fork();
        if (child == 0) {
                close(pair[0]);
                if (give_up(conn, pair[1], self) < 0)
                        _exit(127);
                serve(conn, pair[1]);
        }
        close(pair[1]);
        if (child < 0) {
                close(pair[0]);
                return umw_fail_errno(err, "fork a request's parser");
        }
        int fl = fcntl(pair[0], F_GETFL);
        if (fl < 0 || fcntl(pair[0], F_SETFL, fl | O_NONBLOCK) < 0) {
                close(pair[0]);
                return umw_fail_errno(err, "a request's parser");
        }
        *records = pair[0];
        *pid = child;
        return 0;
}
