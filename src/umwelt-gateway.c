/* umwelt-gateway: the only way out of a sandbox with egress. Makes its
 * listeners inside the sandbox's network namespace, or takes them from its
 * parent (socket activation: umwelt-run made them before the sandbox
 * started, so connections made while the gateway starts wait in their
 * backlog), then serves them with the gateway engine until told to stop. */
#include "netns/gateway.h"
#include "netns/gateway_listen.h"
#include "common/audit.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_POLICY_FILES 16

static const char usage_text[] =
    "usage: umwelt-gateway (--netns PATH | --netns-pid PID | --listen-fd N... [--owner-pidfd N])\n"
    "                      --policy FILE... --log FILE [--hosts FILE] [--sandbox ID]\n"
    "                      [--port N] [--max-connections N] [--header-timeout SECONDS]\n"
    "                      [--idle-timeout SECONDS] [--connect-timeout SECONDS]\n"
    "                      [--upstream-ca FILE] [--trust-dir DIR] [--ready-fd N] [--debug]\n"
    "See umwelt-gateway(1).\n";

struct args {
        const char *netns;
        pid_t netns_pid;
        char netns_buf[64];
        int listen_fds[GATEWAY_LISTEN_MAX];
        size_t n_listen;
        int owner_fd; /* --owner-pidfd, -1: none */
        unsigned port;
        const char *policy[MAX_POLICY_FILES];
        size_t n_policy;
        const char *log;
        bool debug;
        struct gateway_options o;
};

#define usage(err, ...) umw_fail(err, UMW_EXIT_USAGE, EINVAL, __VA_ARGS__)

static int parse_number(const char *s, unsigned long min, unsigned long max, const char *opt,
                        unsigned long *out, struct umw_error **err)
{
        char *end = NULL;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (!*s || *end || errno || v < min || v > max || s[0] == '-')
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "%s: expected a number from %lu to %lu, got '%s'", opt, min, max,
                                s);
        *out = v;
        return 0;
}

/* A listening stream socket handed over by the parent. */
static int take_listen_fd(struct args *a, const char *s, struct umw_error **err)
{
        unsigned long fd;
        int r = parse_number(s, 3, INT_MAX, "--listen-fd", &fd, err);
        if (r < 0)
                return r;
        if (a->n_listen == GATEWAY_LISTEN_MAX)
                return usage(err, "--listen-fd: at most 2, got another: %s", s);
        int listening = 0;
        socklen_t len = sizeof(listening);
        if (getsockopt((int)fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 || !listening)
                return usage(err, "--listen-fd %s: not a listening socket", s);
        int fl = fcntl((int)fd, F_GETFL);
        if (fl < 0 || fcntl((int)fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
            fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0)
                return umw_fail_errno(err, "--listen-fd %s", s);
        a->listen_fds[a->n_listen++] = (int)fd;
        return 0;
}

/* A pidfd handed over by the parent: the sandbox's process, whose end
 * stops the gateway. Signal 0 tells a pidfd (even of an ended process)
 * from any other fd. */
static int take_owner_fd(struct args *a, const char *s, struct umw_error **err)
{
        unsigned long fd;
        int r = parse_number(s, 3, INT_MAX, "--owner-pidfd", &fd, err);
        if (r < 0)
                return r;
        if (a->owner_fd >= 0)
                return usage(err, "--owner-pidfd: one only, got another: %s", s);
        if (pidfd_send_signal((int)fd, 0, NULL, 0) < 0 && errno != ESRCH)
                return usage(err, "--owner-pidfd %s: not a pidfd", s);
        if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0)
                return umw_fail_errno(err, "--owner-pidfd %s", s);
        a->owner_fd = (int)fd;
        return 0;
}

static int timeout_ms(const char *s, const char *opt, unsigned *out, struct umw_error **err)
{
        unsigned long v;
        int r = parse_number(s, 1, 86400, opt, &v, err);
        if (r < 0)
                return r;
        *out = (unsigned)v * 1000;
        return 0;
}

enum {
        OPT_NETNS = 256,
        OPT_NETNS_PID,
        OPT_LISTEN_FD,
        OPT_OWNER_PIDFD,
        OPT_PORT,
        OPT_POLICY,
        OPT_LOG,
        OPT_HOSTS,
        OPT_SANDBOX,
        OPT_MAX_CONNS,
        OPT_HEADER_TIMEOUT,
        OPT_IDLE_TIMEOUT,
        OPT_CONNECT_TIMEOUT,
        OPT_UPSTREAM_CA,
        OPT_TRUST_DIR,
        OPT_READY_FD,
        OPT_DEBUG,
        OPT_HELP,
};

static const struct option options[] = {
    {"netns", required_argument, NULL, OPT_NETNS},
    {"netns-pid", required_argument, NULL, OPT_NETNS_PID},
    {"listen-fd", required_argument, NULL, OPT_LISTEN_FD},
    {"owner-pidfd", required_argument, NULL, OPT_OWNER_PIDFD},
    {"port", required_argument, NULL, OPT_PORT},
    {"policy", required_argument, NULL, OPT_POLICY},
    {"log", required_argument, NULL, OPT_LOG},
    {"hosts", required_argument, NULL, OPT_HOSTS},
    {"sandbox", required_argument, NULL, OPT_SANDBOX},
    {"max-connections", required_argument, NULL, OPT_MAX_CONNS},
    {"header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT},
    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
    {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
    {"upstream-ca", required_argument, NULL, OPT_UPSTREAM_CA},
    {"trust-dir", required_argument, NULL, OPT_TRUST_DIR},
    {"ready-fd", required_argument, NULL, OPT_READY_FD},
    {"debug", no_argument, NULL, OPT_DEBUG},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static int set_netns(struct args *a, const char *path, struct umw_error **err)
{
        if (a->netns)
                return usage(err, "%s: one network namespace only", path);
        a->netns = path;
        return 0;
}

static int one_option(struct args *a, int opt, const char *arg, struct umw_error **err)
{
        unsigned long v;
        int r = 0;
        switch (opt) {
        case OPT_NETNS:
                return set_netns(a, arg, err);
        case OPT_NETNS_PID:
                if ((r = parse_number(arg, 1, INT_MAX, "--netns-pid", &v, err)) < 0)
                        return r;
                snprintf(a->netns_buf, sizeof(a->netns_buf), "/proc/%lu/ns/net", v);
                a->netns_pid = (pid_t)v;
                return set_netns(a, a->netns_buf, err);
        case OPT_LISTEN_FD:
                return take_listen_fd(a, arg, err);
        case OPT_OWNER_PIDFD:
                return take_owner_fd(a, arg, err);
        case OPT_PORT:
                r = parse_number(arg, 1, 65535, "--port", &v, err);
                a->port = (unsigned)v;
                return r;
        case OPT_POLICY:
                if (a->n_policy == MAX_POLICY_FILES)
                        return usage(err, "--policy: at most 16 files, got another: %s", arg);
                a->policy[a->n_policy++] = arg;
                return 0;
        case OPT_LOG:
                a->log = arg;
                return 0;
        case OPT_HOSTS:
                a->o.hosts_file = arg;
                return 0;
        case OPT_SANDBOX:
                a->o.sandbox = arg;
                return 0;
        case OPT_MAX_CONNS:
                r = parse_number(arg, 1, 65536, "--max-connections", &v, err);
                a->o.max_conns = (unsigned)v;
                return r;
        case OPT_HEADER_TIMEOUT:
                return timeout_ms(arg, "--header-timeout", &a->o.header_timeout_ms, err);
        case OPT_IDLE_TIMEOUT:
                return timeout_ms(arg, "--idle-timeout", &a->o.idle_timeout_ms, err);
        case OPT_CONNECT_TIMEOUT:
                return timeout_ms(arg, "--connect-timeout", &a->o.connect_timeout_ms, err);
        case OPT_UPSTREAM_CA:
                a->o.upstream_ca = arg;
                return 0;
        case OPT_TRUST_DIR:
                a->o.trust_dir = arg;
                return 0;
        case OPT_READY_FD:
                r = parse_number(arg, 3, INT_MAX, "--ready-fd", &v, err);
                a->o.ready_fd = (int)v;
                return r < 0 || fcntl(a->o.ready_fd, F_SETFD, FD_CLOEXEC) == 0
                           ? r
                           : usage(err, "--ready-fd %s: not an open fd", arg);
        case OPT_DEBUG:
                a->debug = true;
                return 0;
        default:
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL, "see umwelt-gateway --help");
        }
}

static int parse_args(int argc, char **argv, struct args *a, struct umw_error **err)
{
        int opt, r;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
                if (opt == OPT_HELP) {
                        fputs(usage_text, stdout);
                        exit(0);
                }
                if (opt == '?')
                        return usage(err, "unknown option or missing value: %s", argv[optind - 1]);
                if ((r = one_option(a, opt, optarg, err)) < 0)
                        return r;
        }
        if (optind < argc)
                return usage(err, "unexpected argument: %s", argv[optind]);
        if (!a->netns == !a->n_listen)
                return usage(err, "expected one of --netns, --netns-pid or --listen-fd");
        if (a->owner_fd >= 0 && a->netns)
                return usage(err, "--owner-pidfd goes with --listen-fd (--netns-pid names the "
                                  "owner itself)");
        if (a->n_policy == 0)
                return usage(err, "expected --policy FILE");
        if (!a->log)
                return usage(err, "expected --log FILE");
        return 0;
}

static int run(struct args *a, struct umw_error **err)
{
        _cleanup_close_ int log_fd = -1;
        int r = audit_open(a->log, &log_fd, err);
        if (r < 0)
                return r;
        /* Taken before the namespace is opened through /proc/PID, so both
         * are the same process's. */
        _cleanup_close_ int owner =
            a->netns_pid ? pidfd_open(a->netns_pid, 0) : TAKE_FD(a->owner_fd);
        if (a->netns_pid && owner < 0)
                return umw_fail_errno(err, "--netns-pid %d", (int)a->netns_pid);
        if (a->netns &&
            (r = gateway_listen_in_netns(a->netns, a->port, a->listen_fds, &a->n_listen, err)) < 0)
                return r;
        a->o.listen_fds = a->listen_fds;
        a->o.n_listen = a->n_listen;
        a->o.policy_files = a->policy;
        a->o.n_policy = a->n_policy;
        a->o.log_fd = log_fd;
        a->o.owner_pidfd = TAKE_FD(owner);
        return gateway_run(&a->o, err);
}

int main(int argc, char **argv)
{
        struct umw_error *err = NULL;
        struct args a = {
            .port = 3128,
            .o = {.max_conns = GATEWAY_DEFAULT_MAX_CONNS,
                  .header_timeout_ms = GATEWAY_DEFAULT_HEADER_TIMEOUT,
                  .idle_timeout_ms = GATEWAY_DEFAULT_IDLE_TIMEOUT,
                  .connect_timeout_ms = GATEWAY_DEFAULT_CONNECT_TIMEOUT,
                  .ready_fd = -1,
                  .owner_pidfd = -1},
            .owner_fd = -1,
        };
        umw_log_set_program("umwelt-gateway");
        int r;
        if ((r = parse_args(argc, argv, &a, &err)) < 0 ||
            (r = umw_log_open(NULL, false, a.debug, &err)) < 0 || (r = run(&a, &err)) < 0) {
                umw_log_error(err);
                int code = err->kind == UMW_EXIT_OK ? UMW_EXIT_FAILURE : (int)err->kind;
                umw_error_free(err);
                return code;
        }
        return r; /* the monitor: the engine's status (it said why) */
}
