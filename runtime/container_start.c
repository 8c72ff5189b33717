/* start: telling a created container's init to exec its workload; and
 * run, which creates, starts, supervises and deletes in one go. */
#include "runtime/container.h"
#include "runtime/container_int.h"
#include "runtime/console.h"
#include "runtime/spec.h"
#include "runtime/state.h"
#include "runtime/supervise.h"
#include "runtime/sync.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Waits for the init on conn, told to go, to exec: an empty answer. */
static int await_exec(int conn, struct umw_error **err)
{
        /* The init answers only to report a failure; exec closes the socket. */
        struct pollfd p = {.fd = conn, .events = POLLIN};
        while (poll(&p, 1, -1) < 0)
                if (errno != EINTR)
                        return umw_fail_errno(err, "wait for start");
        char probe;
        if (recv(conn, &probe, 1, MSG_PEEK) == 0)
                return 0;
        return sync_expect(conn, SYNC_READY, "container init", NULL, err);
}

/* Tells the waiting init on conn to go and waits for its exec. */
static int send_go(int conn, struct umw_error **err)
{
        int r = sync_send(conn, SYNC_GO, 0, err);
        return r < 0 ? r : await_exec(conn, err);
}

/* start from another process: through the init's start.sock. */
static int signal_start(const struct found *f, struct umw_error **err)
{
        struct sockaddr_un addr;
        ctr_socket_path(f->dirfd, STATE_START_SOCKET, &addr);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return umw_fail_errno(err, "start socket");
        if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
                return umw_fail_errno(err, "container '%s': reach its init", f->st.id);
        int r = send_go(fd, err);
        if (r < 0)
                return r;
        if (unlinkat(f->dirfd, STATE_START_SOCKET, 0) < 0)
                return umw_fail_errno(err, "remove start socket");
        return 0;
}

/* The init told to start its workload, then the poststart hooks. */
static int start_and_hook(struct found *f, const struct spec *spec, int conn, bool go_sent,
                          struct umw_error **err)
{
        int r = conn < 0  ? signal_start(f, err)
                : go_sent ? await_exec(conn, err)
                          : send_go(conn, err);
        if (r < 0)
                return r;
        f->status = STATUS_RUNNING;
        return ctr_run_hooks_outside(f, spec, SPEC_HOOK_POSTSTART, STATUS_RUNNING, err);
}

/* Starts f: through conn, run's own pair to the init it made (on which
 * create sent GO already when go_sent), or (-1) through its start.sock. */
static int start_found(struct found *f, int conn, bool go_sent, struct umw_error **err)
{
        /* run's own init has no start.sock to say it is created. */
        if (conn < 0 && f->status != STATUS_CREATED)
                return umw_fail(err, UMW_EXIT_STATE, EINVAL,
                                "container '%s' is %s: only a created container can start",
                                f->st.id, state_status_name(f->status));
        const struct spec *spec = NULL;
        struct spec *owned = NULL;
        int r = ctr_found_spec(f, &spec, &owned, err);
        if (r < 0)
                return r;
        r = start_and_hook(f, spec, conn, go_sent, err);
        spec_free(owned);
        return r;
}

int container_start(const struct runtime_opts *rt, const char *id, struct umw_error **err)
{
        struct found f;
        int r = ctr_find(rt, id, &f, err);
        if (r < 0)
                return r;
        r = start_found(&f, -1, false, err);
        ctr_found_release(&f);
        return r;
}

/* run's own delete, with the config it already has in memory and the state
 * it found at start: only the status is looked at again. */
static int delete_started(struct found *f, struct umw_error **err)
{
        f->status = state_status(&f->st, f->dirfd);
        return ctr_delete_found(f, true, err);
}

/* run's container found as start finds one, with the config in memory,
 * and started through run's own pair to its init. */
static int find_and_start(struct creation *c, struct found *f, struct umw_error **err)
{
        int r = ctr_find(c->rt, c->o->id, f, err);
        if (r < 0)
                return r;
        f->spec = c->spec;
        return start_found(f, c->start_fd, c->go_early, err);
}

static int run_started(struct creation *c, struct found *f, int *exit_status,
                       struct umw_error **err)
{
        _cleanup_close_ int master = -1;
        int r;
        if (c->console_peer >= 0 && (r = console_recv_fd(c->console_peer, &master, err)) < 0)
                return r;
        r = find_and_start(c, f, err);
        umw_close_fdp(&c->start_fd);
        if (r < 0)
                return r;
        return c->o->detach ? 0 : supervise(c->pid, master, exit_status, err);
}

/* create, start and, unless kept, delete; a container that failed after
 * create is undone. */
static int run_steps(struct creation *c, struct found *f, int *exit_status, struct umw_error **err)
{
        int r = ctr_create(c, err);
        if (r < 0)
                return r;
        r = run_started(c, f, exit_status, err);
        if (r < 0) {
                ctr_creation_abort(c);
                return r;
        }
        if (c->o->detach || c->o->keep)
                return r;
        return delete_started(f, err);
}

int container_run(const struct runtime_opts *rt, const struct create_opts *o, int *exit_status,
                  struct umw_error **err)
{
        sigset_t old;
        int r = supervise_block_signals(&old, err);
        if (r < 0)
                return r;
        if (!o->no_subreaper && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                return umw_fail_errno(err, "become subreaper");
        struct creation c;
        ctr_creation_init(&c, rt, o);
        c.interactive = !o->detach;
        c.start_in_process = true;
        /* Nothing has to happen between READY and the workload's start,
         * unless a pid file is to be written first. */
        c.go_early = !o->pid_file;
        *exit_status = 0;
        struct found f = {.rootfd = -1, .dirfd = -1};
        r = run_steps(&c, &f, exit_status, err);
        ctr_found_release(&f);
        ctr_creation_release(&c);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return r;
}
