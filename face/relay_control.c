/* The relay's human side (relay_int.h): the control socket, reached only
 * by a process of the relay's own uid outside every sandbox. */
#include "face/relay_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* Whether namespace name of pid is the relay's own. */
static bool same_ns(pid_t pid, const char *name)
{
        char path[64];
        struct stat a, b;
        snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, name);
        if (stat(path, &a) < 0)
                return false;
        snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
        return stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The peer: the relay's uid, and its user and pid namespaces the relay's
 * (a process inside a sandbox has the same uid). The peer's pidfd pins
 * the process the pid named when it connected. */
static int check_peer(int fd, struct umw_error **err)
{
        struct ucred cr;
        socklen_t len = sizeof(cr);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
                return umw_fail_errno(err, "SO_PEERCRED");
        if (cr.uid != geteuid() || cr.pid <= 0)
                return umw_fail(err, UMW_EXIT_FAILURE, EPERM, "peer uid %u is not the relay's",
                                (unsigned)cr.uid);
        int pidfd = -1;
        len = sizeof(pidfd);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
                pidfd = pidfd_open(cr.pid, 0); /* before 6.5 */
        _cleanup_close_ int pin = pidfd;
        bool ok = pin >= 0 && same_ns(cr.pid, "user") && same_ns(cr.pid, "pid") &&
                  pidfd_send_signal(pin, 0, NULL, 0) == 0;
        return ok ? 0
                  : umw_fail(err, UMW_EXIT_FAILURE, EPERM, "peer %d is not outside every sandbox",
                             (int)cr.pid);
}

void relay_control_accept(struct relay *R)
{
        int fd;
        while ((fd = accept4(R->control, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
                _cleanup_error_ struct umw_error *err = NULL;
                struct relay_control_conn **slot = NULL;
                for (size_t i = 0; !slot && i < ARRAY_SIZE(R->controls); i++)
                        if (!R->controls[i])
                                slot = &R->controls[i];
                struct relay_control_conn *cc = NULL;
                if (check_peer(fd, &err) < 0 || !slot || !(cc = calloc(1, sizeof(*cc)))) {
                        umw_log(UMW_LOG_WARNING, "control: %s",
                                err ? err->msg : "too many control connections");
                        close(fd);
                        continue;
                }
                cc->ev = EV_CONTROL;
                cc->fd = fd;
                if (relay_watch(R, fd, cc, &err) < 0) {
                        close(fd);
                        free(cc);
                        continue;
                }
                *slot = cc;
        }
}

static void control_close(struct relay *R, struct relay_control_conn *cc)
{
        for (size_t i = 0; i < ARRAY_SIZE(R->controls); i++)
                if (R->controls[i] == cc)
                        R->controls[i] = NULL;
        (void)epoll_ctl(R->epfd, EPOLL_CTL_DEL, cc->fd, NULL);
        close(cc->fd);
        free(cc);
}

static void list_pending(struct relay *R, struct relay_control_conn *cc)
{
        for (size_t i = 0; i < ARRAY_SIZE(R->pending); i++) {
                if (!R->pending[i])
                        continue;
                size_t len;
                _cleanup_free_ char *line = relay_pending_line(R->pending[i], &len);
                relay_send(cc->fd, line, len);
        }
}

static void act(struct relay *R, struct relay_control_conn *cc, const struct relay_control *m)
{
        _cleanup_error_ struct umw_error *err = NULL;
        uint64_t id = strtoull(m->id, NULL, 10);
        int r = 0;
        switch (m->op) {
        case RELAY_OP_PENDING:
                list_pending(R, cc);
                break;
        case RELAY_OP_WATCH:
                cc->watching = true;
                list_pending(R, cc);
                return; /* a stream of requests from here on */
        case RELAY_OP_ADOPT:
                break; /* sandboxes are followed by inotify: a ping */
        case RELAY_OP_APPROVE:
                r = relay_approve(R, id, m->hash, m->remember, &err);
                break;
        case RELAY_OP_DENY:
                r = relay_deny(R, id, m->why, &err);
                break;
        case RELAY_OP_ACTIONS:
                relay_actions_list(cc->fd, NULL);
                return; /* the list is the answer */
        }
        relay_reply(cc->fd, m->id[0] ? m->id : NULL, r < 0 ? RELAY_ERROR : RELAY_OK,
                    r < 0 ? err->msg : NULL);
}

void relay_control_read(struct relay *R, struct relay_control_conn *cc)
{
        ssize_t n = read(cc->fd, cc->buf + cc->have, sizeof(cc->buf) - cc->have);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) {
                control_close(R, cc);
                return;
        }
        cc->have += (size_t)n;
        char *nl;
        while ((nl = memchr(cc->buf, '\n', cc->have))) {
                size_t len = (size_t)(nl - cc->buf);
                struct relay_control m;
                _cleanup_error_ struct umw_error *err = NULL;
                if (relay_control_parse(cc->buf, len, &m, &err) < 0)
                        relay_reply(cc->fd, NULL, RELAY_ERROR, err->msg);
                else
                        act(R, cc, &m);
                memmove(cc->buf, nl + 1, cc->have - len - 1);
                cc->have -= len + 1;
        }
        if (cc->have == sizeof(cc->buf)) {
                relay_reply(cc->fd, NULL, RELAY_ERROR, "control line too long");
                control_close(R, cc);
        }
}
