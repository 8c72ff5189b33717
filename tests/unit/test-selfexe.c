#include "runtime/selfexe.h"

#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

struct held {
        pid_t pid;
        int release; /* write end: closing it ends the child */
};

static bool write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");
        bool ok = f && fputs(text, f) >= 0;
        return f ? fclose(f) == 0 && ok : false;
}

/* A user namespace below the current one, our ids mapped into it as 0 (so
 * it can make one more below itself). */
static bool enter_new_userns(void)
{
        char uid[32], gid[32];
        snprintf(uid, sizeof(uid), "0 %u 1\n", (unsigned)geteuid());
        snprintf(gid, sizeof(gid), "0 %u 1\n", (unsigned)getegid());
        return unshare(CLONE_NEWUSER) == 0 && write_file("/proc/self/setgroups", "deny") &&
               write_file("/proc/self/uid_map", uid) && write_file("/proc/self/gid_map", gid);
}

/* A child in `depth` user namespaces below ours, waiting until released;
 * skips the test where this host lets nobody make one. */
static struct held hold_child_in_userns(int depth)
{
        int ready[2], release[2];
        cr_assert_eq(pipe(ready), 0);
        cr_assert_eq(pipe(release), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                close(ready[0]);
                close(release[1]);
                char ok = 'y';
                for (int i = 0; i < depth && ok == 'y'; i++)
                        if (!enter_new_userns())
                                ok = 'n';
                if (write(ready[1], &ok, 1) != 1)
                        _exit(1);
                char c;
                while (read(release[0], &c, 1) > 0)
                        ;
                _exit(0);
        }
        close(ready[1]);
        close(release[0]);
        char ok = 'n';
        cr_assert_eq(read(ready[0], &ok, 1), 1);
        close(ready[0]);
        if (ok != 'y') {
                close(release[1]);
                waitpid(pid, NULL, 0);
                cr_skip_test("no user namespace can be made here");
        }
        return (struct held){pid, release[1]};
}

static void release_child(struct held h)
{
        close(h.release);
        int status;
        cr_assert_eq(waitpid(h.pid, &status, 0), h.pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

Test(selfexe, our_own_namespace_is_not_below_ours)
{
        cr_assert_not(selfexe_userns_below_ours(getpid()));
}

Test(selfexe, a_process_that_is_gone_is_in_doubt)
{
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(0);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        cr_assert_not(selfexe_userns_below_ours(pid));
}

Test(selfexe, a_child_namespace_is_below_ours)
{
        struct held h = hold_child_in_userns(1);
        cr_assert(selfexe_userns_below_ours(h.pid));
        release_child(h);
}

Test(selfexe, a_nested_namespace_is_below_ours)
{
        struct held h = hold_child_in_userns(3);
        cr_assert(selfexe_userns_below_ours(h.pid));
        release_child(h);
}

/* Seen from a namespace below, ours is above it, never below. */
Test(selfexe, our_namespace_is_not_below_a_child_one)
{
        pid_t parent = getpid();
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                if (unshare(CLONE_NEWUSER) < 0)
                        _exit(2);
                _exit(selfexe_userns_below_ours(parent) ? 1 : 0);
        }
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status));
        if (WEXITSTATUS(status) == 2)
                cr_skip_test("no user namespace can be made here");
        cr_assert_eq(WEXITSTATUS(status), 0);
}
