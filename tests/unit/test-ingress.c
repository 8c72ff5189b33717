/* Loopback ingress without a namespace: the port syntax of --publish and of
 * [ingress] ports, ingress_start()'s refusals that come before any
 * listener, and the relay itself between loopback sockets of this process's
 * own namespace (its listener and the service it dials on different
 * ports). */
#include "netns/ingress.h"
#include "netns/ingress_relay.h"
#include "policy/config.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ port syntax */

Test(ingress_port, accepts_decimal_1_to_65535)
{
        _cleanup_error_ struct umw_error *err = NULL;
        uint16_t p = 0;
        cr_assert_eq(ingress_port_parse("--publish", "5173", &p, &err), 0);
        cr_assert_eq(p, 5173);
        cr_assert_eq(ingress_port_parse("--publish", "1", &p, &err), 0);
        cr_assert_eq(p, 1);
        cr_assert_eq(ingress_port_parse("--publish", "65535", &p, &err), 0);
        cr_assert_eq(p, 65535);
}

Test(ingress_port, refuses_everything_else)
{
        const char *bad[] = {"",    "0",   "65536", "-1",      "+80",  "080",
                             "80a", "8 0", " 80",   "1234567", "0x50", "99999999999999999999"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                _cleanup_error_ struct umw_error *err = NULL;
                uint16_t p = 7;
                cr_assert_lt(ingress_port_parse("--publish", bad[i], &p, &err), 0, "'%s'", bad[i]);
                cr_assert_eq(err->kind, UMW_EXIT_USAGE);
                cr_assert_not_null(strstr(err->msg, "--publish: expected a port number"), "%s",
                                   err->msg);
                cr_assert_eq(p, 7);
        }
}

/* ------------------------------------------------------------ [ingress] */

static char dir[] = "/tmp/test-ingress-XXXXXX";
static char project[sizeof(dir) + 16], floor_file[sizeof(dir) + 16];
static struct policy_paths paths;

static void make_dir(void)
{
        cr_assert_not_null(mkdtemp(dir));
        snprintf(project, sizeof(project), "%s/project.toml", dir);
        snprintf(floor_file, sizeof(floor_file), "%s/etc/floor.toml", dir);
        paths = (struct policy_paths){.floor = floor_file,
                                      .user = "/nonexistent/user.toml",
                                      .project = project,
                                      .state_home = dir,
                                      .runtime_dir = dir};
}

static void remove_dir(void)
{
        unlink(project);
        unlink(floor_file);
        char etc[sizeof(dir) + 8];
        snprintf(etc, sizeof(etc), "%s/etc", dir);
        rmdir(etc);
        rmdir(dir);
}

TestSuite(ingress_config, .init = make_dir, .fini = remove_dir);

static void write_text(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");
        cr_assert_not_null(f);
        fputs(text, f);
        cr_assert_eq(fclose(f), 0);
}

static void load_fails(const char *text, const char *want)
{
        write_text(project, text);
        _cleanup_error_ struct umw_error *err = NULL;
        struct policy_config c = {0};
        cr_assert_lt(policy_load(&paths, dir, &c, &err), 0, "accepted: %s", text);
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
        char expect[256];
        snprintf(expect, sizeof(expect), "%s:%s", project, want);
        cr_assert_not_null(strstr(err->msg, expect), "'%s' lacks '%s'", err->msg, expect);
}

Test(ingress_config, ports_in_file_order)
{
        write_text(project, "[ingress]\nports = [5173, 80, 65535]\n");
        _cleanup_error_ struct umw_error *err = NULL;
        struct policy_config c = {0};
        cr_assert_eq(policy_load(&paths, dir, &c, &err), 0, "%s", err ? err->msg : "");
        cr_assert(c.ingress_allowed, "the built-in floor allows loopback ingress");
        cr_assert_eq(c.n_ingress_ports, 3);
        cr_assert_eq(c.ingress_ports[0], 5173);
        cr_assert_eq(c.ingress_ports[1], 80);
        cr_assert_eq(c.ingress_ports[2], 65535);
        policy_config_free(&c);
}

Test(ingress_config, no_table_and_empty_list_publish_nothing)
{
        const char *texts[] = {"preset = \"dev\"\n", "[ingress]\n", "[ingress]\nports = []\n"};
        for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
                write_text(project, texts[i]);
                _cleanup_error_ struct umw_error *err = NULL;
                struct policy_config c = {0};
                cr_assert_eq(policy_load(&paths, dir, &c, &err), 0, "%s", err ? err->msg : "");
                cr_assert_eq(c.n_ingress_ports, 0);
                policy_config_free(&c);
        }
}

Test(ingress_config, bad_ports_named_at_their_place)
{
        load_fails("[ingress]\nports = [0]\n", "2:10: 'ports': expected a port number from 1 to "
                                               "65535, found 0");
        load_fails("[ingress]\nports = [80, 65536]\n", "2:14: 'ports': expected a port number");
        load_fails("[ingress]\nports = [-1]\n", "2:10: 'ports': expected a port number");
        load_fails("[ingress]\nports = [\"80\"]\n",
                   "2:10: 'ports': expected an array of port numbers, found a string");
        load_fails("[ingress]\nports = [80, 443, 80]\n", "2:19: 'ports': port 80 is listed twice");
        load_fails("[ingress]\nports = 80\n", "2:9: 'ports': expected an array");
        load_fails("[ingress]\nport = [80]\n", "2:1: unknown key 'port'");
        load_fails("ingress = [80]\n", "1:11: 'ingress': expected a table");
        load_fails("[ingress]\nports = [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]\n",
                   "2:9: 'ports': expected at most 16 ports, found 17");
}

Test(ingress_config, a_floor_may_forbid_it)
{
        if (geteuid() != 0)
                cr_skip_test("a floor file must be owned by root");
        char etc[sizeof(dir) + 8];
        snprintf(etc, sizeof(etc), "%s/etc", dir);
        cr_assert_eq(mkdir(etc, 0755), 0);
        write_text(floor_file, "ingress = false\n");
        cr_assert_eq(chmod(floor_file, 0644), 0);
        load_fails("[ingress]\nports = [5173]\n", "2:9: 'ports': ingress is not allowed by ");
        write_text(project, "[ingress]\nports = []\n");
        _cleanup_error_ struct umw_error *err = NULL;
        struct policy_config c = {0};
        cr_assert_eq(policy_load(&paths, dir, &c, &err), 0, "%s", err ? err->msg : "");
        cr_assert_not(c.ingress_allowed);
        policy_config_free(&c);
}

/* ------------------------------------------------------------ ingress_start */

/* fork() for a helper process that dies with the test, whatever fails. */
static pid_t fork_helper(void)
{
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                _exit(127);
        return pid;
}

static pid_t spawn_sleeper(void)
{
        pid_t pid = fork_helper();
        if (pid == 0) {
                pause();
                _exit(0);
        }
        return pid;
}

static void start_fails(pid_t pid, const char *want)
{
        uint16_t port = 1;
        struct ingress_request req = {
            .sandbox_pid = pid, .ports = &port, .n_ports = 1, .audit_fd = -1};
        _cleanup_error_ struct umw_error *err = NULL;
        pid_t fwd = 0;
        cr_assert_lt(ingress_start(&req, &fwd, &err), 0);
        cr_assert_not_null(strstr(err->msg, want), "'%s' lacks '%s'", err->msg, want);
        cr_assert_eq(fwd, 0);
}

Test(ingress_start, refuses_a_sandbox_in_this_network_namespace)
{
        pid_t pid = spawn_sleeper();
        start_fails(pid, "has no network namespace of its own");
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

Test(ingress_start, refuses_a_sandbox_that_has_exited)
{
        pid_t pid = spawn_sleeper();
        kill(pid, SIGKILL);
        siginfo_t si;
        cr_assert_eq(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0); /* a zombie: pid still taken */
        start_fails(pid, "has exited");
        waitpid(pid, NULL, 0);
}

Test(ingress_start, refuses_bad_requests)
{
        uint16_t ports[] = {80, 80};
        struct ingress_request req = {
            .sandbox_pid = getpid(), .ports = ports, .n_ports = 2, .audit_fd = -1};
        _cleanup_error_ struct umw_error *err = NULL;
        pid_t fwd;
        cr_assert_lt(ingress_start(&req, &fwd, &err), 0);
        cr_assert_str_eq(err->msg, "ingress: port 80 is published twice");
        umw_error_freep(&err);
        req.n_ports = 0;
        cr_assert_lt(ingress_start(&req, &fwd, &err), 0);
        cr_assert_not_null(strstr(err->msg, "expected 1 to 16 ports"));
}

/* ------------------------------------------------------------ the relay */

static int listen_on(int family, uint16_t *port)
{
        int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert_geq(fd, 0);
        struct sockaddr_storage ss = {0};
        socklen_t len;
        if (family == AF_INET) {
                struct sockaddr_in *a = (struct sockaddr_in *)&ss;
                a->sin_family = AF_INET;
                a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                len = sizeof(*a);
        } else {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
                a->sin6_family = AF_INET6;
                a->sin6_addr = in6addr_loopback;
                int one = 1;
                setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
                len = sizeof(*a);
        }
        cr_assert_eq(bind(fd, (struct sockaddr *)&ss, len), 0, "bind: %m");
        cr_assert_eq(listen(fd, 16), 0);
        cr_assert_eq(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
        *port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                        : ((struct sockaddr_in6 *)&ss)->sin6_port);
        return fd;
}

static int dial(uint16_t port)
{
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0, "connect: %m");
        struct timeval tv = {.tv_sec = 5};
        cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
        return fd;
}

/* The scene: a "sandbox" process whose end stops the relay, and the relay
 * in a child, listening on an ephemeral port and dialling to_port. */
struct scene {
        pid_t sandbox, relay;
        uint16_t port;
};

static struct scene scene_start(uint16_t to_port)
{
        struct scene s = {.sandbox = spawn_sleeper()};
        int lfd = listen_on(AF_INET, &s.port);
        int pidfd = (int)syscall(SYS_pidfd_open, s.sandbox, 0);
        cr_assert_geq(pidfd, 0);
        s.relay = fork_helper();
        if (s.relay == 0) {
                struct relay_port p = {.fd = lfd, .to_port = to_port};
                if (fcntl(lfd, F_SETFL, O_NONBLOCK) < 0)
                        _exit(2);
                _exit(ingress_relay_run(&p, 1, pidfd) == 0 ? 0 : 1);
        }
        close(lfd);
        close(pidfd);
        return s;
}

/* Waits up to ms for pid to exit; its status, or -1 on timeout. */
static int wait_exit(pid_t pid, int ms)
{
        for (int t = 0; t < ms; t += 10) {
                int status;
                pid_t r = waitpid(pid, &status, WNOHANG);
                if (r == pid)
                        return status;
                usleep(10000);
        }
        return -1;
}

static void scene_end(struct scene *s)
{
        kill(s->sandbox, SIGKILL);
        waitpid(s->sandbox, NULL, 0);
        int status = wait_exit(s->relay, 2000);
        cr_assert_eq(status, 0, "the relay did not end with the sandbox (status %d)", status);
}

/* The service: reads to EOF, checks the pattern, answers with the count
 * and closes. Runs in a child. */
static void serve_count(int lfd)
{
        int c = accept(lfd, NULL, NULL);
        if (c < 0)
                _exit(2);
        size_t total = 0;
        char buf[8192];
        ssize_t n;
        while ((n = read(c, buf, sizeof(buf))) > 0)
                for (ssize_t i = 0; i < n; i++, total++)
                        if (buf[i] != (char)(total % 251))
                                _exit(3);
        char reply[64];
        int len = snprintf(reply, sizeof(reply), "got %zu", total);
        if (write(c, reply, (size_t)len) != len)
                _exit(4);
        close(c);
        _exit(0);
}

/* The counting service in a child, listening on family's loopback. */
static pid_t start_counter(int family, uint16_t *port)
{
        int svc = listen_on(family, port);
        pid_t server = fork_helper();
        if (server == 0)
                serve_count(svc);
        close(svc);
        return server;
}

/* Reads the service's answer up to its close into reply. */
static void read_reply(int fd, char reply[static 64])
{
        size_t got = 0;
        ssize_t n;
        memset(reply, 0, 64);
        while ((n = read(fd, reply + got, 63 - got)) > 0)
                got += (size_t)n;
        cr_assert_eq(n, 0, "the answer did not end with the service's close: %m");
}

Test(ingress_relay, carries_bytes_both_ways_and_passes_half_close)
{
        uint16_t svc_port;
        pid_t server = start_counter(AF_INET, &svc_port);
        struct scene s = scene_start(svc_port);

        int fd = dial(s.port);
        size_t total = 4 << 20;
        char *data = malloc(total);
        for (size_t i = 0; i < total; i++)
                data[i] = (char)(i % 251);
        for (size_t off = 0; off < total;) {
                ssize_t n = write(fd, data + off, total - off);
                cr_assert_gt(n, 0, "write: %m");
                off += (size_t)n;
        }
        free(data);
        /* The service answers only after it saw our end: a half-close that
         * was not passed on would hang here. */
        cr_assert_eq(shutdown(fd, SHUT_WR), 0);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        cr_assert_eq(poll(&p, 1, 5000), 1, "no answer after the half-close");
        char reply[64];
        read_reply(fd, reply);
        cr_assert_str_eq(reply, "got 4194304");
        close(fd);
        int status;
        waitpid(server, &status, 0);
        cr_assert_eq(status, 0, "service status %d", status);
        scene_end(&s);
}

Test(ingress_relay, a_refusal_inside_resets_the_client_at_once)
{
        /* A bound socket that does not listen: connecting to it is refused
         * on 127.0.0.1, and its port is nobody else's meanwhile. */
        int hold = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        cr_assert_eq(bind(hold, (struct sockaddr *)&a, len), 0);
        cr_assert_eq(getsockname(hold, (struct sockaddr *)&a, &len), 0);
        struct scene s = scene_start(ntohs(a.sin_port));

        int fd = dial(s.port);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        cr_assert_eq(poll(&p, 1, 2000), 1, "the client was left hanging");
        char c;
        ssize_t n = read(fd, &c, 1);
        cr_assert(n == 0 || (n < 0 && errno == ECONNRESET), "read %zd: %m", n);
        close(fd);
        close(hold);
        scene_end(&s);
}

Test(ingress_relay, falls_back_to_ipv6_loopback_inside)
{
        int probe = socket(AF_INET6, SOCK_STREAM, 0);
        if (probe < 0)
                cr_skip_test("no IPv6");
        close(probe);
        uint16_t svc_port;
        pid_t server = start_counter(AF_INET6, &svc_port);
        struct scene s = scene_start(svc_port);

        int fd = dial(s.port);
        cr_assert_eq(write(fd, "\0\1\2", 3), 3);
        cr_assert_eq(shutdown(fd, SHUT_WR), 0);
        char reply[64];
        read_reply(fd, reply);
        cr_assert_str_eq(reply, "got 3");
        close(fd);
        waitpid(server, NULL, 0);
        scene_end(&s);
}
