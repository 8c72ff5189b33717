/* umwelt-relay's monitor (relay.h): its directory, its loop, the sandboxes
 * it follows and their doors. */
#include "face/relay_int.h"
#include "face/relay_parser.h"
#include "runtime/state.h"
#include "policy/grants.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"
#include "common/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------ the loop's fds */

static void unwatch(struct relay *R, int fd)
{
        (void)epoll_ctl(R->epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* The loop's own events: each a static tag the epoll data points at. */
static enum relay_ev ev_signal = EV_SIGNAL, ev_inotify = EV_INOTIFY, ev_timer = EV_TIMER,
                     ev_control = EV_CONTROL_LISTEN;

static int open_signals(struct relay *R, struct umw_error **err)
{
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGCHLD);
        sigaddset(&set, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
            (R->signals = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
                return umw_fail_errno(err, "signalfd");
        signal(SIGPIPE, SIG_IGN);
        return relay_watch(R, R->signals, &ev_signal, err);
}

/* A start probing whether a relay runs holds the lock shared for a
 * moment (face/sandbox_relay.c): a few tries, 10 ms apart, get past it. */
#define LOCK_TRIES 20
static int lock_exclusive(int fd)
{
        for (int i = 0; i < LOCK_TRIES; i++) {
                if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                        return 0;
                if (errno != EWOULDBLOCK)
                        return -errno;
                nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
        }
        return -EWOULDBLOCK;
}

/* One relay per uid: the lock is held as long as it runs. */
static int take_lock(struct relay *R, struct umw_error **err)
{
        R->lock = openat(AT_FDCWD, R->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int fd = R->lock < 0
                     ? -1
                     : openat(R->lock, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        umw_close_fdp(&R->lock);
        if (fd < 0)
                return umw_fail_errno(err, "%s/lock", R->dir);
        R->lock = fd;
        int r = lock_exclusive(fd);
        if (r == -EWOULDBLOCK)
                return umw_fail(err, UMW_EXIT_EXISTS, EEXIST,
                                "a relay is running already for uid %u (%s/lock)",
                                (unsigned)geteuid(), R->dir);
        if (r < 0)
                return umw_fail_sys(err, -r, "lock %s/lock", R->dir);
        return 0;
}

/* A listening unix socket named name in dir (through /proc/self/fd: a
 * sandbox's directory may be too deep for sun_path), mode 0666 (root's
 * sandboxes run as other ids; what reaches the directory may connect).
 * Bound at .NAME.new and renamed once it listens: whoever sees the name
 * (a starting sandbox waits for it) can connect. */
static int listen_at(int dir, const char *name, mode_t mode, struct umw_error **err)
{
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        char tmp[NAME_MAX + 1];
        snprintf(tmp, sizeof(tmp), ".%s.new", name);
        snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%s", dir, tmp);
        (void)unlinkat(dir, tmp, 0);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
            fchmodat(dir, tmp, mode, 0) < 0 || listen(fd, 16) < 0 ||
            renameat(dir, tmp, dir, name) < 0) {
                int e = errno;
                (void)unlinkat(dir, tmp, 0);
                return umw_fail_sys(err, e, "listen on %s", name);
        }
        return TAKE_FD(fd);
}

/* The control socket systemd made (umwelt-relay.socket): fd 3 when
 * LISTEN_PID is this process and LISTEN_FDS 1, and only if it is a
 * listening unix stream socket bound at RELAYDIR/control.sock. *fd -1:
 * none was passed. */
static int activated_control(const struct relay *R, int *fd, struct umw_error **err)
{
        const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
        *fd = -1;
        if (!pid || !fds || strtol(pid, NULL, 10) != getpid())
                return 0;
        unsetenv("LISTEN_PID");
        unsetenv("LISTEN_FDS");
        unsetenv("LISTEN_FDNAMES");
        if (strcmp(fds, "1") != 0)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "socket activation: expected 1 socket (control.sock), got %s", fds);
        struct sockaddr_un a;
        socklen_t len = sizeof(a);
        int listening = 0;
        socklen_t ll = sizeof(listening);
        char want[sizeof(a.sun_path)];
        snprintf(want, sizeof(want), "%s/control.sock", R->dir);
        if (getsockname(3, (struct sockaddr *)&a, &len) < 0 || a.sun_family != AF_UNIX ||
            getsockopt(3, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ll) < 0 || !listening ||
            strncmp(a.sun_path, want, sizeof(a.sun_path)) != 0)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "socket activation: fd 3 is not a unix socket listening on %s",
                                want);
        if (fcntl(3, F_SETFD, FD_CLOEXEC) < 0 || fcntl(3, F_SETFL, O_NONBLOCK) < 0)
                return umw_fail_errno(err, "socket activation: fd 3");
        *fd = 3;
        return 0;
}

static int open_control(struct relay *R, struct umw_error **err)
{
        int r = activated_control(R, &R->control, err);
        if (r < 0 || R->control >= 0)
                return r < 0 ? r : relay_watch(R, R->control, &ev_control, err);
        _cleanup_close_ int dir = open(R->dir, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (dir < 0)
                return umw_fail_errno(err, "%s", R->dir);
        R->control = listen_at(dir, "control.sock", 0600, err);
        R->control_made = R->control >= 0;
        return R->control < 0 ? R->control : relay_watch(R, R->control, &ev_control, err);
}

/* A request waiting for a human when its connection or the relay ends:
 * denied, and the audit log says so. */
static void drop_waiting(struct relay *R, struct relay_pending *p)
{
        const char *why = R->ending ? "the relay ended" : "the request's connection closed";
        char id[RELAY_ID_MAX + 1];
        snprintf(id, sizeof(id), "%llu", (unsigned long long)p->id);
        relay_audit_denied(p->conn->sb, id, p->hash, why);
        relay_pending_drop(R, p, RELAY_DENIED, why);
}

/* Closes a connection: its parser killed and reaped, its waiting request
 * dropped. */
static void conn_close(struct relay *R, struct relay_conn *c)
{
        if (c->waiting)
                drop_waiting(R, c->waiting);
        if (c->running) /* it runs to its end, audited; nobody is answered */
                c->running->conn = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(R->conns); i++)
                if (R->conns[i] == c)
                        R->conns[i] = NULL;
        unwatch(R, c->records);
        kill(c->parser, SIGKILL);
        while (waitpid(c->parser, NULL, 0) < 0 && errno == EINTR)
                ;
        close(c->records);
        close(c->fd);
        c->sb->conns--;
        free(c);
}

/* ------------------------------------------------------------ sandboxes */

static struct relay_sandbox **slot_of(struct relay *R, const char *id)
{
        for (size_t i = 0; i < ARRAY_SIZE(R->sb); i++)
                if (R->sb[i] && strcmp(R->sb[i]->id, id) == 0)
                        return &R->sb[i];
        return NULL;
}

static struct relay_sandbox **free_slot(struct relay *R)
{
        for (size_t i = 0; i < ARRAY_SIZE(R->sb); i++)
                if (!R->sb[i])
                        return &R->sb[i];
        return NULL;
}

static void sandbox_free(struct relay_sandbox *sb)
{
        umw_close_fdp(&sb->door);
        umw_close_fdp(&sb->dir);
        free(sb->state_root);
        free(sb->workspace);
        free(sb->live);
        grants_strv_free(sb->egress);
        free(sb->bundle);
        if (sb->audit_fd >= 0)
                close(sb->audit_fd);
        free(sb);
}

/* sandboxes/ID: its state root read, its door's socket bound. */
static int sandbox_open(struct relay *R, const char *id, struct relay_sandbox *sb,
                        struct umw_error **err)
{
        _cleanup_close_ int dir = umw_open_beneath(R->sandboxes_fd, id, O_PATH | O_DIRECTORY);
        if (dir < 0)
                return umw_fail_sys(err, -dir, "sandboxes/%s", id);
        size_t len = 0;
        int r = umw_read_file_at(dir, "state-root", 4096, &sb->state_root, &len, err);
        if (r < 0)
                return r;
        sb->state_root[strcspn(sb->state_root, "\n")] = '\0';
        _cleanup_close_ int door = umw_open_beneath(dir, "door", O_PATH | O_DIRECTORY);
        if (door < 0)
                return umw_fail_sys(err, -door, "sandboxes/%s/door", id);
        sb->door = listen_at(door, "relay.sock", 0666, err);
        if (sb->door < 0)
                return sb->door;
        sb->dir = TAKE_FD(dir);
        relay_live_load(sb);
        relay_ports_load(sb);
        relay_egress_load(sb);
        return 0;
}

/* A request a killed relay left waiting: its requester got no answer
 * (the connection closed), and the log says it was denied. */
static void deny_left(struct relay_sandbox *sb, const char *id, const char *hash)
{
        struct relay_target t = {.pidfd = -1};
        _cleanup_error_ struct umw_error *err = NULL;
        if (sb->audit_fd < 0 && relay_sandbox_target(sb, &t, &err) < 0)
                return; /* not running: its directory goes with it */
        umw_close_fdp(&t.pidfd);
        relay_audit_denied(sb, id, hash, "the relay that held it ended");
}

/* Follows sandboxes/ID: a new one gets its door; one that went is closed. */
static void adopt(struct relay *R, const char *id)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (slot_of(R, id) || state_check_id(id, &err) < 0)
                return;
        struct relay_sandbox **slot = free_slot(R);
        struct relay_sandbox *sb = calloc(1, sizeof(*sb));
        if (!slot || !sb) {
                free(sb);
                umw_log(UMW_LOG_WARNING, "sandbox %s: no room (%d sandboxes at most)", id,
                        RELAY_SANDBOXES_MAX);
                return;
        }
        sb->ev = EV_DOOR;
        sb->door = sb->dir = sb->audit_fd = -1;
        snprintf(sb->id, sizeof(sb->id), "%s", id);
        if (sandbox_open(R, id, sb, &err) < 0 || relay_watch(R, sb->door, sb, &err) < 0) {
                /* A run that ended before its door was opened: nothing to say. */
                if (err->errnum == ENOENT)
                        umw_debug("sandbox %s: %s", id, err->msg);
                else
                        umw_log(UMW_LOG_WARNING, "sandbox %s: %s", id, err->msg);
                sandbox_free(sb);
                return;
        }
        *slot = sb;
        R->idle_since = (struct timespec){0};
        relay_pending_left(sb, deny_left);
}

static bool any_sandbox(const struct relay *R)
{
        for (size_t i = 0; i < ARRAY_SIZE(R->sb); i++)
                if (R->sb[i])
                        return true;
        return false;
}

static void forget(struct relay *R, const char *id)
{
        struct relay_sandbox **slot = slot_of(R, id);
        if (!slot)
                return;
        struct relay_sandbox *sb = *slot;
        for (size_t i = 0; i < ARRAY_SIZE(R->conns); i++)
                if (R->conns[i] && R->conns[i]->sb == sb)
                        conn_close(R, R->conns[i]);
        unwatch(R, sb->door);
        sandbox_free(sb);
        *slot = NULL;
        if (!any_sandbox(R))
                clock_gettime(CLOCK_MONOTONIC, &R->idle_since);
}

static int scan_sandboxes(struct relay *R, struct umw_error **err)
{
        int fd = openat(R->sandboxes_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return umw_fail_errno(err, "%s/sandboxes", R->dir);
        }
        struct dirent *e;
        while ((e = readdir(d)))
                if (e->d_name[0] != '.')
                        adopt(R, e->d_name);
        closedir(d);
        return 0;
}

static int open_sandboxes(struct relay *R, struct umw_error **err)
{
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/sandboxes", R->dir) < 0)
                return umw_fail_sys(err, ENOMEM, "relay directory");
        int r = umw_mkdir_p(path, 0700, 0700, err);
        if (r < 0)
                return r;
        R->sandboxes_fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        R->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (R->sandboxes_fd < 0 || R->inotify < 0 ||
            inotify_add_watch(R->inotify, path,
                              IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR) < 0)
                return umw_fail_errno(err, "watch %s", path);
        if ((r = relay_watch(R, R->inotify, &ev_inotify, err)) < 0)
                return r;
        return scan_sandboxes(R, err);
}

static void on_inotify(struct relay *R)
{
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t n;
        while ((n = read(R->inotify, buf, sizeof(buf))) > 0) {
                for (char *p = buf; p < buf + n;) {
                        struct inotify_event *e = (struct inotify_event *)p;
                        if (e->len && (e->mask & (IN_CREATE | IN_MOVED_TO)))
                                adopt(R, e->name);
                        else if (e->len && (e->mask & (IN_DELETE | IN_MOVED_FROM)))
                                forget(R, e->name);
                        else if (e->mask & IN_Q_OVERFLOW) {
                                _cleanup_error_ struct umw_error *err = NULL;
                                (void)scan_sandboxes(R, &err);
                        }
                        p += sizeof(*e) + e->len;
                }
        }
}

/* ------------------------------------------------------------ connections */

static struct relay_conn **free_conn(struct relay *R)
{
        for (size_t i = 0; i < ARRAY_SIZE(R->conns); i++)
                if (!R->conns[i])
                        return &R->conns[i];
        return NULL;
}

/* Refused at the door: too many connections of this sandbox at once. */
static void refuse_conn(int fd)
{
        static const char line[] = "{\"v\":1,\"status\":\"refused\",\"reason\":\"too many "
                                   "connections from this sandbox at once\"}\n";
        (void)send(fd, line, sizeof(line) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        close(fd);
}

static void on_door(struct relay *R, struct relay_sandbox *sb)
{
        int fd;
        while ((fd = accept4(sb->door, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
                struct relay_conn **slot = free_conn(R);
                if (sb->conns >= RELAY_CONNS_PER_SB || !slot) {
                        refuse_conn(fd);
                        continue;
                }
                _cleanup_error_ struct umw_error *err = NULL;
                struct relay_conn *c = calloc(1, sizeof(*c));
                if (!c || relay_parser_spawn(fd, &c->records, &c->parser, &err) < 0) {
                        umw_log(UMW_LOG_WARNING, "sandbox %s: %s", sb->id,
                                err ? err->msg : "out of memory");
                        free(c);
                        close(fd);
                        continue;
                }
                *c = (struct relay_conn){
                    .ev = EV_CONN, .fd = fd, .records = c->records, .parser = c->parser, .sb = sb};
                sb->conns++;
                *slot = c;
                if (relay_watch(R, c->records, c, &err) < 0)
                        conn_close(R, c);
        }
}

/* Records from a parser; none is read while its request waits. */
static void on_conn(struct relay *R, struct relay_conn *c, uint32_t events)
{
        static struct relay_request q;
        if (c->waiting) {
                if (events & (EPOLLHUP | EPOLLERR))
                        conn_close(R, c);
                return;
        }
        ssize_t n = recv(c->records, &q, sizeof(q), MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n != (ssize_t)sizeof(q)) {
                conn_close(R, c); /* the parser ended, or sent what it may not */
                return;
        }
        _cleanup_error_ struct umw_error *err = NULL;
        if (relay_request_check(&q, &err) < 0) {
                umw_log(UMW_LOG_WARNING, "sandbox %s: parser sent a bad record: %s", c->sb->id,
                        err->msg);
                conn_close(R, c);
                return;
        }
        relay_decide(R, c, &q);
}

/* ------------------------------------------------------------ time */

static bool before(const struct timespec *a, const struct timespec *b)
{
        return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* The timer set to the nearest deadline: a pending request's, or the end
 * of idleness. */
static void arm_timer(struct relay *R)
{
        struct timespec next = {0};
        relay_expire(R, &next);
        if (R->o->idle_s > 0 && R->idle_since.tv_sec) {
                struct timespec idle = R->idle_since;
                idle.tv_sec += R->o->idle_s;
                if (!next.tv_sec || before(&idle, &next))
                        next = idle;
        }
        struct itimerspec t = {.it_value = next};
        (void)timerfd_settime(R->timer, TFD_TIMER_ABSTIME, &t, NULL);
}

static bool idle_over(const struct relay *R)
{
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        return R->o->idle_s > 0 && R->idle_since.tv_sec && !any_sandbox(R) &&
               now.tv_sec - R->idle_since.tv_sec >= R->o->idle_s;
}

/* ------------------------------------------------------------ serving */

static void reap(void)
{
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
}

/* False once the relay is to end. */
static bool on_signal(struct relay *R)
{
        struct signalfd_siginfo si;
        bool go_on = true;
        while (read(R->signals, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                if (si.ssi_signo == SIGCHLD)
                        reap();
                else if (si.ssi_signo != SIGHUP)
                        go_on = false;
        }
        return go_on;
}

static bool dispatch(struct relay *R, const struct epoll_event *e)
{
        enum relay_ev *ev = e->data.ptr;
        switch (*ev) {
        case EV_SIGNAL:
                return on_signal(R);
        case EV_INOTIFY:
                on_inotify(R);
                break;
        case EV_TIMER: {
                uint64_t ticks;
                (void)!read(R->timer, &ticks, sizeof(ticks));
                break;
        }
        case EV_CONTROL_LISTEN:
                relay_control_accept(R);
                break;
        case EV_CONTROL:
                relay_control_read(R, (struct relay_control_conn *)ev);
                break;
        case EV_DOOR:
                on_door(R, (struct relay_sandbox *)ev);
                break;
        case EV_CONN:
                on_conn(R, (struct relay_conn *)ev, e->events);
                break;
        case EV_ACTION:
                relay_action_read(R, (struct relay_run *)ev);
                break;
        }
        return true;
}

static int loop(struct relay *R, struct umw_error **err)
{
        for (;;) {
                arm_timer(R);
                if (idle_over(R))
                        return 0;
                struct epoll_event ev[16];
                int n = epoll_wait(R->epfd, ev, ARRAY_SIZE(ev), -1);
                if (n < 0 && errno != EINTR)
                        return umw_fail_errno(err, "epoll_wait");
                /* One event at a time: a handler may close what a later
                 * event of this batch points at, so the batch is read again. */
                if (n > 0 && !dispatch(R, &ev[0]))
                        return 0;
        }
}

static void relay_release(struct relay *R)
{
        R->ending = true;
        relay_actions_end(R);
        for (size_t i = 0; i < ARRAY_SIZE(R->conns); i++)
                if (R->conns[i])
                        conn_close(R, R->conns[i]);
        for (size_t i = 0; i < ARRAY_SIZE(R->controls); i++)
                if (R->controls[i]) {
                        close(R->controls[i]->fd);
                        free(R->controls[i]);
                }
        for (size_t i = 0; i < ARRAY_SIZE(R->sb); i++)
                if (R->sb[i])
                        sandbox_free(R->sb[i]);
        int fds[] = {R->epfd,    R->signals,      R->inotify, R->timer,
                     R->control, R->sandboxes_fd, R->notes_fd};
        for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
                umw_close_fdp(&fds[i]);
        /* Its name goes while the lock is held: no relay after this one has
         * bound it yet, and a start finds no socket rather than one that
         * refuses. */
        _cleanup_close_ int dir =
            R->control_made ? open(R->dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
        if (dir >= 0)
                (void)unlinkat(dir, "control.sock", 0);
        umw_close_fdp(&R->lock); /* last: a new relay may take over from here */
        free(R->dir);
}

static int serve(struct relay *R, struct umw_error **err)
{
        int r;
        if ((r = relay_dir(true, &R->dir, err)) < 0 || (r = take_lock(R, err)) < 0)
                return r;
        R->epfd = epoll_create1(EPOLL_CLOEXEC);
        R->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (R->epfd < 0 || R->timer < 0)
                return umw_fail_errno(err, "epoll");
        if ((r = relay_watch(R, R->timer, &ev_timer, err)) < 0 || (r = open_signals(R, err)) < 0 ||
            (r = open_control(R, err)) < 0 || (r = open_sandboxes(R, err)) < 0)
                return r;
        if (!any_sandbox(R))
                clock_gettime(CLOCK_MONOTONIC, &R->idle_since);
        return loop(R, err);
}

int relay_serve(const struct relay_opts *o, struct umw_error **err)
{
        static struct relay R;
        R = (struct relay){.o = o,
                           .epfd = -1,
                           .signals = -1,
                           .inotify = -1,
                           .timer = -1,
                           .control = -1,
                           .lock = -1,
                           .sandboxes_fd = -1,
                           .notes_fd = -1,
                           .next_id = 1};
        int r = serve(&R, err);
        relay_release(&R);
        return r;
}
