#include "runtime/hooks.h"
#include "runtime/spec.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char state[] = "{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\","
                            "\"pid\":42,\"bundle\":\"/tmp/b\"}";

static char dir[] = "/tmp/umw-test-hooks.XXXXXX";

static void make_dir(void)
{
        cr_assert_not_null(mkdtemp(dir));
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path);
}

static void remove_dir(void)
{
        nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

TestSuite(hooks, .init = make_dir, .fini = remove_dir);

static char *path_in_dir(const char *name)
{
        char *p;
        cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
        return p;
}

static char *slurp(const char *path)
{
        FILE *f = fopen(path, "re");
        cr_assert_not_null(f, "%s missing", path);
        char *buf = NULL;
        size_t cap = 0;
        FILE *out = open_memstream(&buf, &cap);
        char chunk[4096];
        size_t n;
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
                fwrite(chunk, 1, n, out);
        fclose(out);
        fclose(f);
        return buf;
}

/* A hook running `sh -c SCRIPT`, valid in the enclosing block. */
#define sh_hook(script)                                                                            \
        ((struct spec_hook){.path = "/bin/sh",                                                     \
                            .args = (const char *[]){"/bin/sh", "-c", (script), NULL}})

static struct umw_error *run(struct spec_hook *list, size_t count, const char *json, size_t len)
{
        struct spec_hooks hooks = {.list = list, .count = count};
        struct umw_error *err = NULL;
        int r = hooks_run(&hooks, SPEC_HOOK_CREATE_RUNTIME, json, len, &err);
        cr_assert_eq(r < 0, err != NULL, "return %d does not match the error", r);
        return err;
}

static struct umw_error *run_one(struct spec_hook h)
{
        return run(&h, 1, state, strlen(state));
}

static void assert_fails_with(struct umw_error *err, const char *msg)
{
        cr_assert_not_null(err, "expected failure \"%s\"", msg);
        cr_assert_eq(err->kind, UMW_EXIT_FAILURE);
        cr_assert_str_eq(err->msg, msg);
        umw_error_free(err);
}

Test(hooks, no_hooks_is_success)
{
        cr_assert_null(run(NULL, 0, state, strlen(state)));
        struct umw_error *err = NULL;
        cr_assert_eq(hooks_run(NULL, SPEC_HOOK_POSTSTOP, state, strlen(state), &err), 0);
}

Test(hooks, true_succeeds)
{
        cr_assert_null(run_one((struct spec_hook){.path = "/bin/true"}));
}

Test(hooks, false_fails_with_status)
{
        assert_fails_with(run_one((struct spec_hook){.path = "/bin/false"}),
                          "createRuntime hook /bin/false exited with status 1");
}

Test(hooks, exit_status_is_reported)
{
        assert_fails_with(run_one(sh_hook("exit 7")),
                          "createRuntime hook /bin/sh exited with status 7");
}

Test(hooks, killed_by_signal_names_it)
{
        assert_fails_with(run_one(sh_hook("kill -TERM $$")),
                          "createRuntime hook /bin/sh killed by signal TERM");
}

/* Dispositions the runtime set must not reach the hook: with SIGTERM
 * inherited as ignored, the shell could not kill itself. */
Test(hooks, hook_starts_with_default_signal_dispositions)
{
        cr_assert_neq(signal(SIGTERM, SIG_IGN), SIG_ERR);
        assert_fails_with(run_one(sh_hook("kill -TERM $$")),
                          "createRuntime hook /bin/sh killed by signal TERM");
}

Test(hooks, timeout_kills_the_hook)
{
        const char *argv[] = {"/bin/sleep", "5", NULL};
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_fails_with(
            run_one((struct spec_hook){.path = "/bin/sleep", .args = argv, .timeout = 1}),
            "createRuntime hook /bin/sleep timed out after 1 s");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double took = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
        cr_assert_geq(took, 0.9, "returned after %.2f s, before the timeout", took);
        cr_assert_lt(took, 3.0, "took %.2f s: the hook was not killed at its timeout", took);
}

Test(hooks, hook_within_timeout_succeeds)
{
        const char *argv[] = {"/bin/sleep", "0.1", NULL};
        cr_assert_null(
            run_one((struct spec_hook){.path = "/bin/sleep", .args = argv, .timeout = 5}));
}

Test(hooks, missing_program_is_an_exec_error)
{
        struct umw_error *err = run_one((struct spec_hook){.path = "/nonexistent/hook"});
        cr_assert_not_null(err);
        cr_assert_eq(err->kind, UMW_EXIT_FAILURE);
        cr_assert_str_eq(err->msg,
                         "createRuntime hook /nonexistent/hook: execve: No such file or directory");
        umw_error_free(err);
}

Test(hooks, state_arrives_on_stdin_intact)
{
        char *out = path_in_dir("state");
        char *script;
        cr_assert_geq(asprintf(&script, "cat > %s", out), 0);
        cr_assert_null(run_one(sh_hook(script)));
        char *got = slurp(out);
        cr_assert_str_eq(got, state);
        free(got);
        free(script);
        free(out);
}

/* Larger than a pipe's buffer, so the runtime has to feed it while the hook
 * reads. */
Test(hooks, large_state_arrives_intact)
{
        size_t len = 1 << 20;
        char *big = malloc(len + 1);
        for (size_t i = 0; i < len; i++)
                big[i] = (char)('a' + i % 26);
        big[len] = '\0';
        char *out = path_in_dir("big");
        char *script;
        cr_assert_geq(asprintf(&script, "cat > %s", out), 0);
        struct spec_hook h = sh_hook(script);
        cr_assert_null(run(&h, 1, big, len));
        char *got = slurp(out);
        cr_assert_eq(strlen(got), len);
        cr_assert(memcmp(got, big, len) == 0);
        free(got);
        free(script);
        free(out);
        free(big);
}

/* A hook that never reads: neither blocked on nor killed by SIGPIPE, and
 * the caller's signal mask is left as it was. */
Test(hooks, hook_ignoring_stdin_does_not_block_or_raise_sigpipe)
{
        size_t len = 1 << 20;
        char *big = malloc(len);
        memset(big, ' ', len);
        /* Criterion's workers may ignore SIGPIPE; the runtime does not. */
        cr_assert_neq(signal(SIGPIPE, SIG_DFL), SIG_ERR);
        sigset_t before, after, pending;
        cr_assert_eq(sigprocmask(SIG_SETMASK, NULL, &before), 0);
        struct spec_hook h = {.path = "/bin/true"};
        cr_assert_null(run(&h, 1, big, len));
        /* Closes its stdin and lives on: the write fails with EPIPE for sure. */
        h = sh_hook("exec 0<&-; sleep 0.3");
        cr_assert_null(run(&h, 1, big, len));
        const char *argv[] = {"/bin/sleep", "5", NULL};
        h = (struct spec_hook){.path = "/bin/sleep", .args = argv, .timeout = 1};
        time_t t0 = time(NULL);
        assert_fails_with(run(&h, 1, big, len),
                          "createRuntime hook /bin/sleep timed out after 1 s");
        cr_assert_leq(time(NULL) - t0, 3, "a full pipe held the runtime past the timeout");
        cr_assert_eq(sigprocmask(SIG_SETMASK, NULL, &after), 0);
        cr_assert_eq(sigismember(&before, SIGPIPE), sigismember(&after, SIGPIPE));
        cr_assert_eq(sigpending(&pending), 0);
        cr_assert_not(sigismember(&pending, SIGPIPE));
        free(big);
}

Test(hooks, env_is_passed_and_defaults_to_the_runtimes)
{
        char *out = path_in_dir("env");
        char *script;
        cr_assert_geq(asprintf(&script, "printf '%%s|%%s' \"$FOO\" \"$HOME\" > %s", out), 0);
        struct spec_hook h = sh_hook(script);
        const char *env[] = {"FOO=bar baz", NULL};
        h.env = env;
        cr_assert_null(run_one(h));
        char *got = slurp(out);
        cr_assert_str_eq(got, "bar baz|");
        free(got);

        /* Without env, a host-side hook gets the runtime's own, as runc and
         * crun give it (podman's hooks.d hooks find their tools by PATH). */
        setenv("UMW_TEST_INHERIT", "1", 1);
        free(script);
        cr_assert_geq(
            asprintf(&script, "printf '%%s|%%s' \"$UMW_TEST_INHERIT\" \"${PATH:+set}\" > %s", out),
            0);
        cr_assert_null(run_one(sh_hook(script)));
        got = slurp(out);
        cr_assert_str_eq(got, "1|set");
        free(got);
        free(script);
        free(out);
}

Test(hooks, args_are_passed_verbatim)
{
        char *out = path_in_dir("args");
        char *script;
        cr_assert_geq(asprintf(&script, "printf '%%s|' \"$0\" \"$@\" > %s", out), 0);
        const char *argv[] = {"/bin/sh", "-c", script, "zero", "a b", "$HOME", ";", NULL};
        cr_assert_null(run_one((struct spec_hook){.path = "/bin/sh", .args = argv}));
        char *got = slurp(out);
        cr_assert_str_eq(got, "zero|a b|$HOME|;|");
        free(got);
        free(script);
        free(out);
}

Test(hooks, fds_other_than_stdio_are_closed)
{
        int leak = open("/dev/null", O_RDONLY); /* deliberately without O_CLOEXEC */
        cr_assert_geq(leak, 0);
        char *script;
        cr_assert_geq(asprintf(&script, "test ! -e /proc/$$/fd/%d", leak), 0);
        cr_assert_null(run_one(sh_hook(script)));
        /* The check itself must be able to fail. */
        free(script);
        cr_assert_geq(asprintf(&script, "test ! -e /proc/$$/fd/%d", STDERR_FILENO), 0);
        assert_fails_with(run_one(sh_hook(script)),
                          "createRuntime hook /bin/sh exited with status 1");
        free(script);
        close(leak);
}

Test(hooks, run_in_order_and_stop_at_first_failure)
{
        char *out = path_in_dir("order");
        char *s1, *s2, *s3;
        cr_assert_geq(asprintf(&s1, "echo one >> %s", out), 0);
        cr_assert_geq(asprintf(&s2, "echo two >> %s", out), 0);
        cr_assert_geq(asprintf(&s3, "echo three >> %s", out), 0);
        struct spec_hook list[] = {sh_hook(s1), sh_hook(s2), sh_hook(s3)};
        cr_assert_null(run(list, 3, state, strlen(state)));
        char *got = slurp(out);
        cr_assert_str_eq(got, "one\ntwo\nthree\n");
        free(got);

        cr_assert_eq(unlink(out), 0);
        list[1] = (struct spec_hook){.path = "/bin/false"};
        assert_fails_with(run(list, 3, state, strlen(state)),
                          "createRuntime hook /bin/false exited with status 1");
        got = slurp(out);
        cr_assert_str_eq(got, "one\n");
        free(got);
        free(s1);
        free(s2);
        free(s3);
        free(out);
}

Test(hooks, empty_state_gives_eof)
{
        char *out = path_in_dir("empty");
        char *script;
        cr_assert_geq(asprintf(&script, "wc -c > %s", out), 0);
        struct spec_hook h = sh_hook(script);
        cr_assert_null(run(&h, 1, "", 0));
        char *got = slurp(out);
        cr_assert_eq(atoi(got), 0);
        free(got);
        free(script);
        free(out);
}
