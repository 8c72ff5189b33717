/* kill and delete: signalling a container's init or all its processes, and
 * removing a container (its processes, poststop hooks, cgroup, state
 * directory), also one whose create was killed half-way. */
#include "runtime/container.h"
#include "runtime/container_int.h"
#include "runtime/cgroup.h"
#include "runtime/hooks.h"
#include "runtime/spec.h"
#include "runtime/state.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int signal_pid(const struct container_state *st, int sig, struct umw_error **err)
{
        _cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, st->pid, 0);
        if (pidfd < 0 && errno == ESRCH)
                return umw_fail(err, UMW_EXIT_STATE, ESRCH, "container '%s' is not running",
                                st->id);
        if (pidfd < 0)
                return umw_fail_errno(err, "pidfd_open %d", st->pid);
        /* The pidfd pins the process: check it is still ours, then signal it. */
        if (!state_pid_alive(st))
                return umw_fail(err, UMW_EXIT_STATE, ESRCH, "container '%s' is not running",
                                st->id);
        if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
                return umw_fail_errno(err, "signal container '%s'", st->id);
        return 0;
}

static int signal_all(const struct container_state *st, int sig, struct umw_error **err)
{
        bool killed = false;
        int r = sig == SIGKILL && st->cgroup[0] ? cgroup_kill(st->cgroup, &killed, err) : 0;
        if (r < 0 || killed)
                return r;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        r = ctr_list_processes(st, &pids, &n, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (kill(pids[i], sig) < 0 && errno != ESRCH)
                        return umw_fail_errno(err, "signal pid %d", pids[i]);
        return 0;
}

int container_kill(const struct runtime_opts *rt, const char *id, int sig, bool all,
                   struct umw_error **err)
{
        struct found f;
        int r = ctr_find(rt, id, &f, err);
        if (r < 0)
                return r;
        if (f.status == STATUS_STOPPED)
                r = umw_fail(err, UMW_EXIT_STATE, ESRCH, "container '%s' is not running", id);
        else
                r = all ? signal_all(&f.st, sig, err) : signal_pid(&f.st, sig, err);
        ctr_found_release(&f);
        return r;
}

/* Waits until the init is gone (it need not be our child). */
static int wait_gone(const struct container_state *st, struct umw_error **err)
{
        _cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, st->pid, 0);
        if (pidfd < 0)
                return errno == ESRCH ? 0 : umw_fail_errno(err, "pidfd_open %d", st->pid);
        if (!state_pid_alive(st))
                return 0;
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        while (poll(&p, 1, 10000) < 0)
                if (errno != EINTR)
                        return umw_fail_errno(err, "wait for container init");
        /* Our own child: collect it so no zombie is left behind. */
        waitpid(st->pid, NULL, WNOHANG);
        return 0;
}

/* A frozen process dies only once thawed: thaw after the signal is queued,
 * so that nothing of the container runs in between. */
static int kill_everything(struct found *f, struct umw_error **err)
{
        int r = signal_all(&f->st, SIGKILL, err);
        if (r < 0)
                return r;
        if (f->st.cgroup[0] && cgroup_is_frozen(f->st.cgroup) &&
            (r = cgroup_freeze(f->st.cgroup, false, err)) < 0)
                return r;
        return wait_gone(&f->st, err);
}

int ctr_delete_found(struct found *f, bool force, struct umw_error **err)
{
        bool live = f->status == STATUS_RUNNING || f->status == STATUS_PAUSED;
        if (live && !force)
                return umw_fail(err, UMW_EXIT_STATE, EBUSY,
                                "container '%s' is %s: stop it first or use --force", f->st.id,
                                state_status_name(f->status));
        int r = f->status == STATUS_STOPPED ? 0 : kill_everything(f, err);
        if (r < 0)
                return r;
        const struct spec *spec = NULL;
        struct spec *owned = NULL;
        _cleanup_error_ struct umw_error *spec_err = NULL;
        /* A poststop hook that fails is a warning and the next ones still
         * run: the container is gone. */
        if (ctr_found_spec(f, &spec, &owned, &spec_err) == 0 &&
            spec->hooks[SPEC_HOOK_POSTSTOP].count) {
                size_t len = 0;
                _cleanup_free_ char *json = state_to_json(&f->st, STATUS_STOPPED, false, &len);
                if (json)
                        hooks_run_all(&spec->hooks[SPEC_HOOK_POSTSTOP], SPEC_HOOK_POSTSTOP, json,
                                      len);
                else
                        umw_warn("poststop hooks: no memory for the state");
        }
        spec_free(owned);
        if (f->st.cgroup[0] && (r = cgroup_remove(f->st.cgroup, err)) < 0)
                return r;
        return state_dir_remove(f->rootfd, f->st.id, err);
}

/* The cgroup spec names for container id, removed. */
static int remove_spec_cgroup(const struct runtime_opts *rt, const struct spec *spec,
                              const char *id, struct umw_error **err)
{
        _cleanup_free_ char *path = NULL;
        int r = cgroup_path_resolve(spec->cgroups_path, id, rt->cgroup_manager, &path, err);
        if (r < 0)
                return r;
        return cgroup_remove(path, err);
}

/* The cgroup a create killed before state.json made: the init is cloned
 * into its cgroup2 directory, which therefore exists first. Its path comes
 * from the saved config; without one, create made no cgroup. */
static int remove_unfinished_cgroup(const struct runtime_opts *rt, int rootfd, const char *id,
                                    struct umw_error **err)
{
        if (rt->cgroup_manager == CGROUP_MANAGER_DISABLED)
                return 0;
        /* Not state_dir_open: that one refuses a directory without state.json. */
        struct found f = {.rootfd = -1, .dirfd = -1, .st.id = id};
        f.dirfd = openat(rootfd, id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (f.dirfd < 0)
                return umw_fail_errno(err, "open state directory for '%s'", id);
        int r = 0;
        struct spec *spec = NULL;
        _cleanup_error_ struct umw_error *no_config = NULL;
        if (ctr_load_saved_spec(&f, &spec, &no_config) == 0)
                r = remove_spec_cgroup(rt, spec, id, err);
        if (r < 0 && (*err)->kind == UMW_EXIT_CONFIG)
                umw_error_prefix(err, "%s", spec->file);
        spec_free(spec);
        umw_close_fdp(&f.dirfd);
        return r;
}

/* A state directory whose create was killed before it wrote state.json;
 * none at all is success, as runc and crun answer delete --force (engines'
 * cleanup paths delete what may already be gone). */
static int delete_unfinished(const struct runtime_opts *rt, const char *id, struct umw_error **err)
{
        _cleanup_close_ int rootfd = -1;
        int r = state_root_open(rt->root, false, &rootfd, err);
        if (r < 0)
                return r;
        if (rootfd < 0 || faccessat(rootfd, id, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                return 0;
        if ((r = remove_unfinished_cgroup(rt, rootfd, id, err)) < 0)
                return r;
        return state_dir_remove(rootfd, id, err);
}

int container_delete(const struct runtime_opts *rt, const char *id, bool force,
                     struct umw_error **err)
{
        struct found f;
        int r = ctr_find(rt, id, &f, err);
        if (r < 0) {
                if (force && (*err)->kind == UMW_EXIT_NOTFOUND) {
                        umw_error_freep(err);
                        return delete_unfinished(rt, id, err);
                }
                return r;
        }
        r = ctr_delete_found(&f, force, err);
        ctr_found_release(&f);
        return r;
}
