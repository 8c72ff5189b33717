/* A sandbox's door to the relay (face/relay.h): RELAYDIR/sandboxes/ID made
 * before the sandbox is, its door/ bound read-only at /run/umwelt inside,
 * the relay started when none runs, all of it removed when the sandbox
 * ends. The relay follows the directory; it never learns of a sandbox
 * from anything the sandbox says. */
#include "face/relay.h"
#include "face/sandbox_int.h"
#include "netns/tls_paths.h"
#include "policy/egress_rules.h"
#include "face/relay_msg.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"
#include "common/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RELAY_BIN "umwelt-relay"
/* How long a start waits for the relay to open its door: a relay just
 * started (under ASan, on a loaded machine) takes a few hundred ms. */
#define RELAY_BIND_WAIT_S 3
_Static_assert(sizeof(RELAY_DOOR_INSIDE "/" RELAY_TRUST_POINT) == sizeof(TLS_TRUST_INSIDE),
               "the door's trust point is TLS_TRUST_INSIDE");

/* Someone listens on control.sock while no relay holds the lock: systemd
 * (umwelt-relay.socket), which starts the relay at this connection. */
static bool relay_activated(int dir)
{
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/control.sock", dir);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        return fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
}

/* A relay runs when its lock is held, or is about to. */
static bool relay_running(int dir)
{
        _cleanup_close_ int fd = openat(dir, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK)
                return true;
        return relay_activated(dir);
}

/* The grandchild: the relay, in a session of its own, its output in
 * RELAYDIR/relay.log, holding no fd of this process (a caller reading our
 * output until it closes must not wait for the relay). */
__attribute__((noreturn)) static void exec_relay(const char *bin, int dir)
{
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        int log =
            openat(dir, "relay.log", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        sigset_t none;
        sigemptyset(&none);
        if (null < 0 || log < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(log, 2) < 0 ||
            umw_close_fds_from(3, NULL, 0) < 0 || chdir("/") < 0 ||
            sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                _exit(127);
        execl(bin, RELAY_BIN, (char *)NULL);
        _exit(127);
}

/* Started detached (double fork: no zombie of ours, no controlling
 * terminal); a relay that finds another running ends by itself. False:
 * none is installed. */
static bool spawn_relay(int dir)
{
        _cleanup_free_ char *bin = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        /* No relay installed: the sandbox runs without one, and a request
         * from inside says no relay answers. Not a warning at every start. */
        if (umw_find_program(RELAY_BIN, &bin, &err) < 0) {
                umw_debug("no relay: %s", err->msg);
                return false;
        }
        pid_t pid = fork();
        if (pid == 0) {
                if (setsid() < 0 || fork() != 0)
                        _exit(0);
                exec_relay(bin, dir);
        }
        while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        return pid > 0;
}

/* sandboxes/.ID.new filled, then renamed into place: the relay sees the
 * directory whole or not at all. A stale one (a run that was killed) goes. */
static int make_door(int sandboxes, const char *id, const char *state_root, bool trust,
                     struct umw_error **err)
{
        char tmp[NAME_MAX + 1];
        snprintf(tmp, sizeof(tmp), ".%s.new", id);
        sandbox_relay_remove_at(sandboxes, tmp);
        sandbox_relay_remove_at(sandboxes, id);
        if (mkdirat(sandboxes, tmp, 0711) < 0)
                return umw_fail_errno(err, "relay door for %s", id);
        _cleanup_close_ int dir = umw_open_beneath(sandboxes, tmp, O_PATH | O_DIRECTORY);
        if (dir < 0)
                return umw_fail_sys(err, -dir, "relay door for %s", id);
        /* A plain write: the directory appears whole by its rename. */
        _cleanup_close_ int fd =
            openat(dir, "state-root", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || umw_write_all(fd, state_root, strlen(state_root)) < 0)
                return umw_fail_errno(err, "relay door for %s: state-root", id);
        /* door/tls: the mount point of the sandbox's trust directory
         * (/run/umwelt/tls), bound over the door; none without one. */
        _cleanup_close_ int door = -1;
        if (mkdirat(dir, "door", 0711) < 0 || fchmodat(sandboxes, tmp, 0711, 0) < 0 ||
            fchmodat(dir, "door", 0711, 0) < 0 ||
            (door = umw_open_beneath(dir, "door", O_PATH | O_DIRECTORY)) < 0 ||
            (trust && mkdirat(door, RELAY_TRUST_POINT, 0755) < 0) ||
            renameat(sandboxes, tmp, sandboxes, id) < 0)
                return umw_fail_errno(err, "relay door for %s", id);
        return 0;
}

/* The state root as the relay, started elsewhere, finds it (it may not
 * exist yet: create makes it). */
static char *absolute(const char *path)
{
        char cwd[PATH_MAX];
        char *out = NULL;
        if (path[0] == '/')
                return strdup(path);
        if (!getcwd(cwd, sizeof(cwd)) || asprintf(&out, "%s/%s", cwd, path) < 0)
                return NULL;
        return out;
}

int sandbox_relay_prepare(struct sandbox *s, const char *state_root, struct umw_error **err)
{
        _cleanup_free_ char *dir = NULL, *root = absolute(state_root);
        int r = relay_dir(true, &dir, err);
        if (r < 0)
                return umw_error_prefix(err, "relay");
        if (!root)
                return umw_fail_errno(err, "relay: state root %s", state_root);
        _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0 || (mkdirat(dfd, "sandboxes", 0700) < 0 && errno != EEXIST))
                return umw_fail_errno(err, "relay: %s/sandboxes", dir);
        _cleanup_close_ int sandboxes = umw_open_beneath(dfd, "sandboxes", O_PATH | O_DIRECTORY);
        if (sandboxes < 0)
                return umw_fail_sys(err, -sandboxes, "relay: %s/sandboxes", dir);
        bool trust = s->net.trust_dir != NULL;
        if ((r = make_door(sandboxes, s->project.container_id, root, trust, err)) < 0)
                return r;
        if (asprintf(&s->relay_door, "%s/sandboxes/%s/door", dir, s->project.container_id) < 0) {
                s->relay_door = NULL;
                sandbox_relay_remove(s->project.container_id);
                return umw_fail_sys(err, ENOMEM, "relay door");
        }
        s->relay_awaited = relay_running(dfd) || spawn_relay(dfd);
        return 0;
}

static bool door_bound(int door)
{
        struct stat st;
        return fstatat(door, "relay.sock", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode);
}

static long ms_until(const struct timespec *deadline)
{
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        return (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

/* The relay names the socket once it listens (a rename), so its
 * appearance in the door is the moment a request can connect. */
void sandbox_relay_await(const struct sandbox *s)
{
        if (!s->relay_door || !s->relay_awaited)
                return;
        _cleanup_close_ int door =
            open(s->relay_door, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", door);
        if (door < 0 || in < 0 || inotify_add_watch(in, path, IN_MOVED_TO | IN_ONLYDIR) < 0) {
                umw_log(UMW_LOG_WARNING, "relay: cannot watch %s: %s", s->relay_door,
                        strerror(errno));
                return;
        }
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += RELAY_BIND_WAIT_S;
        long left;
        while (!door_bound(door)) {
                if ((left = ms_until(&deadline)) <= 0) {
                        umw_log(UMW_LOG_WARNING,
                                "relay: no socket in %s after %d s; requests from inside fail "
                                "until the relay opens it",
                                s->relay_door, RELAY_BIND_WAIT_S);
                        return;
                }
                struct pollfd p = {.fd = in, .events = POLLIN};
                char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
                if (poll(&p, 1, (int)left) > 0)
                        while (read(in, buf, sizeof(buf)) > 0)
                                ;
        }
}

void sandbox_relay_remove_at(int sandboxes, const char *name)
{
        _cleanup_close_ int dir = umw_open_beneath(sandboxes, name, O_PATH | O_DIRECTORY);
        if (dir < 0)
                return;
        _cleanup_close_ int door = umw_open_beneath(dir, "door", O_PATH | O_DIRECTORY);
        if (door >= 0) {
                unlinkat(door, "relay.sock", 0);
                unlinkat(door, ".relay.sock.new", 0);
                unlinkat(door, RELAY_TRUST_POINT, AT_REMOVEDIR);
        }
        unlinkat(dir, "door", AT_REMOVEDIR);
        unlinkat(dir, "state-root", 0);
        unlinkat(dir, "grants", 0);
        unlinkat(dir, ".grants.tmp", 0);
        unlinkat(dir, "pending", 0);
        unlinkat(dir, ".pending.tmp", 0);
        unlinkat(dir, "ports", 0);
        unlinkat(dir, ".ports.tmp", 0);
        /* The live egress rules, and the files of the gateway the relay
         * started (it ended with the sandbox's init). */
        unlinkat(dir, RELAY_EGRESS_FILE, 0);
        unlinkat(dir, "." RELAY_EGRESS_FILE ".tmp", 0);
        unlinkat(dir, EGRESS_POLICY_FILE, 0);
        unlinkat(dir, "." EGRESS_POLICY_FILE ".tmp", 0);
        unlinkat(dir, GATEWAY_PID_FILE, 0);
        unlinkat(dir, "." GATEWAY_PID_FILE ".tmp", 0);
        unlinkat(dir, GATEWAY_ERR_FILE, 0);
        unlinkat(sandboxes, name, AT_REMOVEDIR);
}

void sandbox_relay_remove(const char *id)
{
        _cleanup_free_ char *dir = NULL, *path = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        if (relay_dir(false, &dir, &err) < 0)
                return;
        if (asprintf(&path, "%s/sandboxes", dir) < 0) {
                path = NULL;
                return;
        }
        _cleanup_close_ int sandboxes = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sandboxes >= 0)
                sandbox_relay_remove_at(sandboxes, id);
}

/* ------------------------------------------------------------ live egress */

int sandbox_relay_sandbox_dir(const char *id, char **out, struct umw_error **err)
{
        _cleanup_free_ char *dir = NULL;
        int r = relay_dir(false, &dir, err);
        if (r < 0)
                return r;
        if (asprintf(out, "%s/sandboxes/%s", dir, id) < 0) {
                *out = NULL;
                return umw_fail_sys(err, ENOMEM, "relay directory");
        }
        return 0;
}

static int add_rule(char **rules, size_t n, const char *line, struct umw_error **err)
{
        struct egress_rule rule;
        if (n == SANDBOX_LIVE_EGRESS_MAX)
                return umw_fail(err, UMW_EXIT_CONFIG, E2BIG,
                                "the relay's egress rules: expected at most %d",
                                SANDBOX_LIVE_EGRESS_MAX);
        if (strlen(line) > RELAY_RULE_MAX)
                return umw_fail(err, UMW_EXIT_CONFIG, E2BIG,
                                "the relay's egress rules: line %zu is not a rule (too long)",
                                n + 1);
        if (egress_rule_parse(line, &rule, err) < 0)
                return umw_error_prefix(err, "the relay's egress rules: line %zu is not a rule",
                                        n + 1);
        egress_rule_free(&rule);
        rules[n] = strdup(line);
        return rules[n] ? 0 : umw_fail_sys(err, ENOMEM, "the relay's egress rules");
}

int sandbox_relay_egress_at(int dir, char ***rules, struct umw_error **err)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        *rules = NULL;
        int r = umw_read_file_at(dir, RELAY_EGRESS_FILE,
                                 SANDBOX_LIVE_EGRESS_MAX * (RELAY_RULE_MAX + 1), &text, &len, err);
        if (r < 0 && (*err)->errnum == ENOENT) {
                umw_error_freep(err);
                return 0;
        }
        if (r < 0)
                return r;
        char **out = calloc(SANDBOX_LIVE_EGRESS_MAX + 1, sizeof(*out));
        if (!out)
                return umw_fail_sys(err, ENOMEM, "the relay's egress rules");
        size_t n = 0;
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if ((r = add_rule(out, n, line, err)) < 0) {
                        grants_strv_free(out);
                        return r;
                }
                n++;
        }
        *rules = n ? out : NULL;
        if (!n)
                free(out);
        return 0;
}

int sandbox_relay_egress(const char *id, char ***rules, struct umw_error **err)
{
        _cleanup_free_ char *path = NULL;
        *rules = NULL;
        int r = sandbox_relay_sandbox_dir(id, &path, err);
        if (r < 0 && (*err)->errnum == ENOENT) { /* no relay directory: no relay */
                umw_error_freep(err);
                return 0;
        }
        if (r < 0)
                return r;
        _cleanup_close_ int dir = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir < 0)
                return errno == ENOENT ? 0 : umw_fail_errno(err, "%s", path);
        return sandbox_relay_egress_at(dir, rules, err);
}
