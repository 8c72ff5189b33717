/* A host action's supervisor on real processes (no root needed): the
 * result's status and output, the output cut at the limit but counted and
 * hashed whole, the environment given and nothing else, and the timeout
 * ending a child that left its session. */
#include "common/subreaper.h"
#include "policy/host_actions.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/sha256.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct outcome {
        struct subreaper_result res;
        char out[2 * HOST_ACTION_OUTPUT_MAX + 1], err[HOST_ACTION_OUTPUT_MAX + 1];
};

/* Runs argv under a supervisor and reads its result to the end. */
static void run(char *const *argv, unsigned timeout_ms, size_t limit, struct outcome *o)
{
        static const char *const env[] = {"PATH=/usr/bin:/bin", "ONLY=this", NULL};
        struct subreaper_spec spec = {.who = "test",
                                      .argv = argv,
                                      .env = env,
                                      .cwd = "/",
                                      .timeout_ms = timeout_ms,
                                      .output_limit = limit};
        int fd = -1;
        pid_t pid = 0;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(subreaper_run(&spec, &fd, &pid, &err), 0, "%s", err ? err->msg : "");
        char buf[sizeof(o->res) + 2 * HOST_ACTION_OUTPUT_MAX];
        size_t have = 0;
        for (;;) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                cr_assert_geq(poll(&p, 1, 20000), 1, "the supervisor answers");
                ssize_t n = read(fd, buf + have, sizeof(buf) - have);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        continue;
                cr_assert_geq(n, 0);
                if (n == 0)
                        break;
                have += (size_t)n;
        }
        close(fd);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the supervisor ends well");
        cr_assert_geq(have, sizeof(o->res));
        memcpy(&o->res, buf, sizeof(o->res));
        cr_assert_eq(have, sizeof(o->res) + o->res.out_kept + o->res.err_kept);
        memcpy(o->out, buf + sizeof(o->res), o->res.out_kept);
        o->out[o->res.out_kept] = '\0';
        memcpy(o->err, buf + sizeof(o->res) + o->res.out_kept, o->res.err_kept);
        o->err[o->res.err_kept] = '\0';
}

Test(supervise, status_and_output_come_back)
{
        static struct outcome o;
        char *argv[] = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3", NULL};
        run(argv, 5000, 100, &o);
        cr_expect_eq(o.res.exited, 1);
        cr_expect_eq(o.res.status, 3);
        cr_expect_eq(o.res.timed_out, 0);
        cr_expect_str_eq(o.out, "out\n");
        cr_expect_str_eq(o.err, "err\n");
        struct umw_sha256 c;
        char hex[65];
        umw_sha256_init(&c);
        umw_sha256_update(&c, "out\n", 4);
        umw_sha256_hex(&c, hex);
        cr_expect_str_eq(o.res.out_sha256, hex);
}

Test(supervise, output_is_cut_but_counted_whole)
{
        static struct outcome o;
        char *argv[] = {"/usr/bin/seq", "1", "20000", NULL};
        run(argv, 5000, 10, &o);
        cr_expect_eq(o.res.status, 0);
        cr_expect_eq(o.res.out_kept, 10);
        cr_expect_str_eq(o.out, "1\n2\n3\n4\n5\n");
        FILE *seq = popen("seq 1 20000 | wc -c", "r");
        unsigned long total = 0;
        cr_assert(seq && fscanf(seq, "%lu", &total) == 1);
        pclose(seq);
        cr_expect_eq(o.res.out_total, total);
}

Test(supervise, the_environment_is_the_one_given)
{
        static struct outcome o;
        char *argv[] = {"/usr/bin/env", NULL};
        setenv("SSH_AUTH_SOCK", "/tmp/agent", 1);
        run(argv, 5000, 1000, &o);
        cr_expect_str_eq(o.out, "PATH=/usr/bin:/bin\nONLY=this\n");
}

Test(supervise, a_missing_program_is_127_and_says_so)
{
        static struct outcome o;
        char *argv[] = {"/nonexistent/program", NULL};
        run(argv, 5000, 1000, &o);
        cr_expect_eq(o.res.status, 127);
        cr_expect(strstr(o.err, "exec /nonexistent/program"), "%s", o.err);
}

/* The daemon writes its pid, leaves the session, and sleeps on: the
 * timeout must end it too (the supervisor is its subreaper). */
Test(supervise, the_timeout_ends_a_daemonised_child)
{
        static struct outcome o;
        char *argv[] = {"/bin/sh", "-c",
                        "setsid sh -c 'echo $$; exec sleep 1000' & wait; sleep 1000", NULL};
        run(argv, 300, 1000, &o);
        cr_expect_eq(o.res.timed_out, 1);
        cr_expect_eq(o.res.exited, 0);
        cr_expect_eq(o.res.status, SIGKILL);
        long daemon = strtol(o.out, NULL, 10);
        cr_assert_gt(daemon, 1, "the daemon said its pid: '%s'", o.out);
        cr_expect(kill((pid_t)daemon, 0) < 0 && errno == ESRCH, "daemon %ld is gone", daemon);
}

/* An action that exits leaves nothing behind: a child it started in the
 * background is ended with it. */
Test(supervise, nothing_outlives_the_action)
{
        static struct outcome o;
        char *argv[] = {"/bin/sh", "-c", "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!",
                        NULL};
        run(argv, 5000, 1000, &o);
        cr_expect_eq(o.res.timed_out, 0);
        cr_expect_eq(o.res.status, 0);
        long child = strtol(o.out, NULL, 10);
        cr_assert_gt(child, 1);
        cr_expect(kill((pid_t)child, 0) < 0 && errno == ESRCH, "child %ld is gone", child);
}
