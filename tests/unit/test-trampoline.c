#include "runtime/spec.h"
#include "runtime/sync.h"
#include "runtime/trampoline.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BASE                                                                                       \
        "\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},\"process\":{\"args\":[\"a\"],"        \
        "\"cwd\":\"/\"}"
#define PIDNS            "\"namespaces\":[{\"type\":\"pid\"}]"
#define WITH(top, linux) "{" BASE top ",\"linux\":{" PIDNS linux "}}"
#define SECCOMP(def, rules)                                                                        \
        WITH("", ",\"seccomp\":{\"defaultAction\":\"" def "\",\"syscalls\":[" rules "]}")

static bool suffices(const char *json)
{
        struct spec *spec = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(spec_load(json, "config.json", &spec, &err), 0, "%s: %s", json,
                     err ? err->msg : "?");
        bool r = trampoline_suffices(spec);
        spec_free(spec);
        return r;
}

Test(trampoline, suffices_with_a_pid_namespace_of_its_own)
{
        cr_assert(suffices(WITH("", "")));
        cr_assert(suffices(SECCOMP("SCMP_ACT_ALLOW", "")));
        cr_assert(suffices(
            SECCOMP("SCMP_ACT_ERRNO",
                    "{\"names\":[\"execve\",\"execveat\"],\"action\":\"SCMP_ACT_ALLOW\"}")));
}

Test(trampoline, not_where_something_else_could_reach_the_init)
{
        cr_assert_not(suffices("{" BASE ",\"linux\":{}}"));
        cr_assert_not(suffices("{" BASE ",\"linux\":{\"namespaces\":[{\"type\":\"pid\","
                               "\"path\":\"/proc/1/ns/pid\"}]}}"));
        cr_assert_not(suffices(WITH(",\"hooks\":{\"startContainer\":[{\"path\":\"/h\"}]}", "")));
        cr_assert_not(suffices(WITH(",\"hooks\":{\"createContainer\":[{\"path\":\"/h\"}]}", "")));
        cr_assert_not(suffices(WITH(",\"annotations\":{\"run.umwelt.init\":\"pause\"}", "")));
        cr_assert(suffices(WITH(",\"hooks\":{\"prestart\":[{\"path\":\"/h\"}]}", "")));
}

Test(trampoline, not_where_the_filter_might_stop_execveat)
{
        cr_assert_not(suffices(SECCOMP("SCMP_ACT_ERRNO", "")));
        cr_assert_not(suffices(
            SECCOMP("SCMP_ACT_ALLOW", "{\"names\":[\"execveat\"],\"action\":\"SCMP_ACT_ERRNO\"}")));
        cr_assert_not(suffices(SECCOMP(
            "SCMP_ACT_ERRNO", "{\"names\":[\"execveat\"],\"action\":\"SCMP_ACT_ALLOW\","
                              "\"args\":[{\"index\":4,\"value\":0,\"op\":\"SCMP_CMP_EQ\"}]}")));
        cr_assert_not(suffices(SECCOMP("SCMP_ACT_ERRNO",
                                       "{\"names\":[\"execveat\"],\"action\":\"SCMP_ACT_ALLOW\"},"
                                       "{\"names\":[\"execveat\"],\"action\":\"SCMP_ACT_KILL\"}")));
}

Test(trampoline, argv_carries_the_report_fd_the_message_and_the_workload)
{
        char *argv[] = {"sh", "-c", "true", NULL};
        _cleanup_free_ char **t = trampoline_argv(42, "/bin/sh", argv);
        cr_assert_not_null(t);
        cr_assert_str_eq(t[0], "42");
        cr_assert_str_eq(t[1], "exec /bin/sh");
        cr_assert_str_eq(t[2], "/bin/sh");
        cr_assert_str_eq(t[3], "sh");
        cr_assert_str_eq(t[5], "true");
        cr_assert_null(t[6]);
}

Test(trampoline, image_is_sealed)
{
        int fd = -1;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(trampoline_open(&fd, &err), 0, "%s", err ? err->msg : "?");
        int seals = fcntl(fd, F_GET_SEALS);
        cr_assert(seals & F_SEAL_WRITE);
        cr_assert(seals & F_SEAL_SEAL);
        cr_assert_eq(write(fd, "x", 1), -1);
        cr_assert_eq(errno, EPERM);
        cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        close(fd);
}

/* Runs the trampoline with exe and argv; returns its wait status and what it
 * sent on its report fd in *p (*n bytes). */
static int run(const char *exe, char *argv[], struct sync_packet *p, ssize_t *n)
{
        int fd = -1, pair[2];
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(trampoline_open(&fd, &err), 0);
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair), 0);
        _cleanup_free_ char **t = trampoline_argv(pair[1], exe, argv);
        pid_t pid = fork();
        if (pid == 0) {
                int devnull = open("/dev/null", O_WRONLY);
                dup2(devnull, 1);
                syscall(SYS_execveat, fd, "", t, (char *[]){NULL}, AT_EMPTY_PATH);
                _exit(99);
        }
        close(pair[1]);
        *n = recv(pair[0], p, sizeof(*p), 0);
        int status = 0;
        waitpid(pid, &status, 0);
        close(pair[0]);
        close(fd);
        return status;
}

Test(trampoline, execs_the_workload_and_closes_the_report_fd)
{
        struct sync_packet p;
        ssize_t n;
        int status = run("/bin/sh", (char *[]){"sh", "-c", "exit 7", NULL}, &p, &n);
        cr_assert_eq(n, 0, "the report fd closes on the workload's exec");
        cr_assert(WIFEXITED(status));
        cr_assert_eq(WEXITSTATUS(status), 7);
}

Test(trampoline, reports_a_failed_exec)
{
        struct sync_packet p;
        ssize_t n;
        int status = run("/nonexistent", (char *[]){"x", NULL}, &p, &n);
        cr_assert_gt(n, (ssize_t)offsetof(struct sync_packet, msg));
        cr_assert_eq(p.type, SYNC_EXEC_ERROR);
        cr_assert_eq(p.errnum, ENOENT);
        cr_assert_str_eq(p.msg, "exec /nonexistent");
        cr_assert(WIFEXITED(status));
        cr_assert_eq(WEXITSTATUS(status), 127);
}

Test(trampoline, runs_nothing_as_an_interpreter)
{
        /* What a `#!/proc/self/exe` script hands it: no fd in argv[0]. */
        char *argv[] = {"/proc/self/exe", "--log=x", "/tmp/script", NULL};
        int fd = -1;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(trampoline_open(&fd, &err), 0);
        pid_t pid = fork();
        if (pid == 0) {
                syscall(SYS_execveat, fd, "", argv, (char *[]){NULL}, AT_EMPTY_PATH);
                _exit(99);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        close(fd);
        cr_assert(WIFEXITED(status));
        cr_assert_eq(WEXITSTATUS(status), 127);
}
