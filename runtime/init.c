#include "runtime/init.h"
#include "runtime/caps.h"
#include "runtime/cgroup.h"
#include "runtime/console.h"
#include "runtime/devices.h"
#include "runtime/hooks.h"
#include "runtime/mounts.h"
#include "runtime/namespaces.h"
#include "runtime/netwall.h"
#include "runtime/process.h"
#include "runtime/rootfs.h"
#include "runtime/seccomp.h"
#include "runtime/spec.h"
#include "runtime/state.h"
#include "runtime/sync.h"
#include "runtime/trampoline.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/proc.h"
#include "common/fdio.h"
#include "common/json.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The state document hooks run inside the container receive. */
static char *hook_state(const struct init_args *a, pid_t host_pid, enum container_status status,
                        size_t *len)
{
        struct container_state st = {
            .id = a->id,
            .pid = host_pid,
            .bundle = a->bundle,
            .rootfs = a->rootfs,
            .created = "",
            .owner = geteuid(),
            .annotations = umw_json_member(a->spec->tree, "annotations"),
        };
        return state_to_json(&st, status, false, len);
}

static int run_hooks_inside(const struct init_args *a, enum spec_hook_kind kind, pid_t host_pid,
                            enum container_status status, struct umw_error **err)
{
        if (a->spec->hooks[kind].count == 0)
                return 0;
        size_t len = 0;
        _cleanup_free_ char *json = hook_state(a, host_pid, status, &len);
        if (!json)
                return umw_fail_sys(err, ENOMEM, "%s hooks", spec_hook_name(kind));
        return hooks_run(&a->spec->hooks[kind], kind, json, len, err);
}

static bool maps_zero(const struct spec_idmap *maps, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (maps[i].container_id == 0 && maps[i].size > 0)
                        return true;
        return false;
}

static int become_root_in_userns(const struct spec *spec, struct umw_error **err)
{
        /* The maps are written: take uid/gid 0 of the new namespace so files
         * created while building the rootfs belong to its root. A namespace
         * without a 0 (a sandbox maps only its user, to itself) keeps the
         * creator's ids, mapped there, and the namespace's capabilities. */
        if (maps_zero(spec->gid_mappings, spec->n_gid_mappings) && setresgid(0, 0, 0) < 0)
                return umw_fail_errno(err, "become gid 0 in the user namespace");
        if (maps_zero(spec->uid_mappings, spec->n_uid_mappings) && setresuid(0, 0, 0) < 0)
                return umw_fail_errno(err, "become uid 0 in the user namespace");
        return 0;
}

/* Until execve replaces it, this process is an image of umwelt-run:
 * undumpable, no process in the container may open /proc/PID/exe and write
 * to the runtime's binary through it (CVE-2019-5736). execve resets it. Only
 * now, because /proc/PID files of an undumpable process belong to root and
 * an unprivileged umwelt-run still had to write the id maps. */
static bool holds(int cap)
{
        struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
        return syscall(SYS_capget, &head, data) == 0 &&
               (data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap));
}

bool init_runtime_ptraces(void)
{
        return holds(CAP_SYS_PTRACE);
}

bool init_runtime_may_clone(void)
{
        return holds(CAP_SYS_ADMIN);
}

static int set_names(const struct spec *spec, struct umw_error **err)
{
        /* One of our own or one joined by path (a CRI-O pod's, whose every
         * container sets the pod's name); never the host's. */
        if ((spec->hostname || spec->domainname) && !spec->namespaces[SPEC_NS_UTS].enabled)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: .hostname: setting it needs a uts namespace "
                                "in .linux.namespaces",
                                spec->file);
        if (spec->hostname && sethostname(spec->hostname, strlen(spec->hostname)) < 0)
                return umw_fail_errno(err, "set hostname '%s'", spec->hostname);
        if (spec->domainname && setdomainname(spec->domainname, strlen(spec->domainname)) < 0)
                return umw_fail_errno(err, "set domainname '%s'", spec->domainname);
        return 0;
}

static int join_new_keyring(bool skip, struct umw_error **err)
{
        if (skip)
                return 0;
        /* An anonymous session keyring: the container must not see the
         * caller's keys. Kernels without keyrings have nothing to share. */
        if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
                return umw_fail_errno(err, "create a session keyring");
        return 0;
}

static int apply_sysctl(const struct spec *spec, struct umw_error **err)
{
        for (size_t i = 0; i < spec->n_sysctl; i++) {
                /* spec_check_sysctl vetted the key and its namespace. */
                const char *key = spec->sysctl[i].key;
                char path[512];
                int n = snprintf(path, sizeof(path), "/proc/sys/%s", key);
                for (char *c = path + 10; c < path + n; c++)
                        if (*c == '.')
                                *c = '/';
                _cleanup_close_ int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return umw_fail_errno(err, "sysctl %s", key);
                const char *value = spec->sysctl[i].value;
                int r = umw_write_all(fd, value, strlen(value));
                if (r < 0)
                        return umw_fail_sys(err, -r, "sysctl %s=%s", key, value);
        }
        return 0;
}

bool init_waits_for_hooks(const struct spec *spec)
{
        return spec->hooks[SPEC_HOOK_PRESTART].count || spec->hooks[SPEC_HOOK_CREATE_RUNTIME].count;
}

static bool new_cgroup_namespace(const struct spec *spec)
{
        const struct spec_namespace *n = &spec->namespaces[SPEC_NS_CGROUP];
        return n->enabled && !n->path;
}

/* umwelt-run makes the init's cgroup, limits first, while the init builds
 * the mounts that do not need it; then the init joins it itself, which on
 * cgroup v1 spares an RCU grace period (cgroup_join_self), and unshares its
 * cgroup namespace, rooted there. Before anything that depends on them: the
 * cgroup mount (a bind of the init's own cgroup, never the host's), hooks
 * (what they start must land in the cgroup), READY. As late as that allows:
 * the init builds its root meanwhile instead of waiting for the cgroup. */
static int enter_cgroups(const struct init_args *a, bool *placed, struct umw_error **err)
{
        if (*placed)
                return 0;
        *placed = true;
        int joins[SYNC_MAX_FDS];
        size_t n = 0;
        int r;
        if ((r = sync_expect_fds(a->sync_fd, SYNC_PLACED, "umwelt-run", joins, &n, err)) < 0 ||
            (r = cgroup_join_self(joins, &n, err)) < 0)
                return r;
        if (new_cgroup_namespace(a->spec) && unshare(CLONE_NEWCGROUP) < 0)
                return umw_fail_errno(err, "create cgroup namespace");
        return 0;
}

static size_t first_cgroup_mount(const struct spec *spec)
{
        size_t i = 0;
        while (i < spec->n_mounts &&
               !(spec->mounts[i].type && strcmp(spec->mounts[i].type, "cgroup") == 0))
                i++;
        return i;
}

static int mount_range(const struct spec *spec, size_t from, size_t to,
                       const struct mount_root *root, bool in_userns, int *trees,
                       struct umw_error **err)
{
        struct spec part = *spec;
        part.mounts += from;
        part.n_mounts = to - from;
        return mounts_setup(&part, root, in_userns, trees ? trees + from : NULL, err);
}

/* The spec's mounts, the init in its cgroup before the first cgroup mount. */
static int mount_all(const struct init_args *a, int rootfs_fd, int *trees, bool *placed,
                     struct umw_error **err)
{
        size_t split = first_cgroup_mount(a->spec), n = a->spec->n_mounts;
        const struct mount_root root = {.fd = rootfs_fd, .path = a->rootfs};
        int r;
        if ((r = mount_range(a->spec, 0, split, &root, a->new_userns, trees, err)) < 0)
                return r;
        if (split >= n)
                return 0;
        if ((r = enter_cgroups(a, placed, err)) < 0)
                return r;
        return mount_range(a->spec, split, n, &root, a->new_userns, trees, err);
}

static void close_trees(int *trees, size_t n)
{
        for (size_t i = 0; trees && i < n; i++)
                umw_close_fdp(&trees[i]);
        free(trees);
}

/* The trees umwelt-run made (mounts.h), right after GO, in batches of
 * SYNC_MAX_FDS: trees[i] for mount i, -1 for the others. */
static int receive_trees(const struct init_args *a, int **out, struct umw_error **err)
{
        const struct spec *spec = a->spec;
        *out = NULL;
        if (!a->n_trees)
                return 0;
        int *trees = malloc(spec->n_mounts * sizeof(*trees));
        if (!trees)
                return umw_fail_sys(err, ENOMEM, "mount trees");
        for (size_t i = 0; i < spec->n_mounts; i++)
                trees[i] = -1;
        size_t next = 0, got = 0;
        while (got < a->n_trees) {
                int fds[SYNC_MAX_FDS];
                size_t n = 0;
                int r = sync_expect_fds(a->sync_fd, SYNC_TREES, "umwelt-run", fds, &n, err);
                if (r < 0 || n == 0) {
                        close_trees(trees, spec->n_mounts);
                        return r < 0
                                   ? r
                                   : umw_fail(err, UMW_EXIT_FAILURE, EPROTO, "no mount trees came");
                }
                for (size_t k = 0; k < n; k++) {
                        while (next < spec->n_mounts &&
                               !mounts_tree_from_runtime(spec, &spec->mounts[next], a->rootfs,
                                                         a->runtime_clones))
                                next++;
                        if (next < spec->n_mounts)
                                trees[next++] = fds[k];
                        else
                                close(fds[k]);
                }
                got += n;
        }
        *out = trees;
        return 0;
}

/* The trees umwelt-run made, received, mounted with the rest and closed. */
static int mount_with_trees(const struct init_args *a, int rootfs_fd, bool *placed,
                            struct umw_error **err)
{
        int *trees = NULL;
        int r = receive_trees(a, &trees, err);
        if (r < 0)
                return r; /* receive_trees closed what it had */
        r = mount_all(a, rootfs_fd, trees, placed, err);
        close_trees(trees, a->spec->n_mounts);
        return r;
}

/* Hooks that run before READY: the cgroup must be entered before them. */
static bool hooks_before_ready(const struct spec *spec)
{
        return init_waits_for_hooks(spec) || spec->hooks[SPEC_HOOK_CREATE_CONTAINER].count > 0;
}

static int build_mount_namespace(const struct init_args *a, pid_t host_pid, bool *placed,
                                 struct umw_error **err)
{
        const struct spec *spec = a->spec;
        _cleanup_close_ int rootfs_fd = -1;
        int r;
        if ((r = rootfs_prepare(spec, a->rootfs, &rootfs_fd, err)) < 0 ||
            (r = mount_with_trees(a, rootfs_fd, placed, err)) < 0 ||
            (r = devices_setup(spec, rootfs_fd, a->new_userns, err)) < 0 ||
            (hooks_before_ready(spec) && (r = enter_cgroups(a, placed, err)) < 0))
                return r;
        if (init_waits_for_hooks(spec) &&
            ((r = sync_send(a->sync_fd, SYNC_HOOKS, 0, err)) < 0 ||
             (r = sync_expect(a->sync_fd, SYNC_GO, "umwelt-run", NULL, err)) < 0))
                return r;
        r = run_hooks_inside(a, SPEC_HOOK_CREATE_CONTAINER, host_pid, STATUS_CREATING, err);
        if (r < 0)
                return r;
        return rootfs_pivot(a->rootfs, a->no_pivot, err);
}

static int init_setup(const struct init_args *a, pid_t *host_pid, int *userns_fd, char **exe,
                      struct umw_error **err)
{
        const struct spec *spec = a->spec;
        int pid = 0;
        bool placed = false;
        int r = sync_expect(a->sync_fd, SYNC_GO, "umwelt-run", &pid, err);
        if (r < 0)
                return r;
        *host_pid = pid;
        if (a->new_userns && (r = become_root_in_userns(a->spec, err)) < 0)
                return r;
        /* Until READY the init dies with a create that is killed, even while
         * it runs createContainer hooks; armed after the uid change, which
         * clears it. A parent already gone shows as EOF on sync_fd. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                return umw_fail_errno(err, "set the init's parent death signal");
        if ((r = umw_make_undumpable(err)) < 0)
                return r;
        if ((r = ns_open_user(spec, userns_fd, err)) < 0 || (r = ns_join_paths(spec, err)) < 0 ||
            (r = join_new_keyring(a->no_new_keyring, err)) < 0 || (r = set_names(spec, err)) < 0 ||
            (r = netwall_loopback_init(spec, err)) < 0 ||
            (r = build_mount_namespace(a, pid, &placed, err)) < 0 ||
            (r = apply_sysctl(spec, err)) < 0)
                return r;
        /* A session and process group of its own, as runc and crun give: a
         * kill(0, ...) or kill(-pgid) from inside then reaches the container
         * alone, not the caller's shell or the supervising runtime (or
         * conmon). The pty, when there is one, becomes its terminal. */
        if (setsid() < 0)
                return umw_fail_errno(err, "setsid");
        if (spec->process.terminal) {
                if (a->console_fd < 0)
                        return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                        "process.terminal is set: --console-socket is required");
                r = console_setup_pty(a->console_fd, &spec->process, err);
                close(a->console_fd);
                if (r < 0)
                        return r;
        }
        if ((r = process_make_cwd(&spec->process, err)) < 0 ||
            (r = rootfs_finalize(spec, err)) < 0 || (r = enter_cgroups(a, &placed, err)) < 0)
                return r;
        /* From the cwd, as execve will see it: a relative args[0] resolves there.
         * A pause init execs nothing: its args need not exist inside. */
        int pauses = init_pauses(spec, err);
        if (pauses < 0)
                return pauses;
        if ((r = process_chdir(&spec->process, err)) < 0 ||
            (!pauses && (r = process_find_executable(&spec->process, exe, err)) < 0))
                return r;
        /* create exits once it has READY: from here the init outlives it. */
        if (prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0) < 0)
                return umw_fail_errno(err, "clear the init's parent death signal");
        return sync_send(a->sync_fd, SYNC_READY, 0, err);
}

static int clear_cloexec(int fd)
{
        int flags = fcntl(fd, F_GETFD);
        if (flags < 0 || fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) < 0)
                return -errno;
        return 0;
}

/* Loading a filter needs no_new_privs or CAP_SYS_ADMIN. With no_new_privs
 * it goes on last, so the filter never sees the runtime's own calls;
 * without, it must go on while the capability is still held, before the
 * user and capability switch (what runc and crun do too). */
static int load_filter(struct seccomp_filter *filter, struct umw_error **err)
{
        return filter ? seccomp_filter_load(filter, err) : 0;
}

static int preserve_and_close_fds(int preserve_fds, const int *keep, size_t nkeep,
                                  struct umw_error **err)
{
        for (int fd = 3; fd < 3 + preserve_fds; fd++)
                if (clear_cloexec(fd) < 0 && errno != EBADF)
                        return umw_fail_errno(err, "preserve fd %d", fd);
        /* Nothing of the runtime's may reach the workload (CVE-2024-21626):
         * every fd past the preserved ones goes, but for those that close on
         * exec and report its success. */
        int r = umw_close_fds_from(3 + preserve_fds, keep, nkeep);
        return r < 0 ? umw_fail_sys(err, -r, "close inherited fds") : 0;
}

/* Every wall of a container process, in order, short of the execve. */
static int apply_process(const struct spec_process *p, struct seccomp_filter *filter,
                         int preserve_fds, const int *keep, size_t nkeep, struct umw_error **err)
{
        int r;
        bool nnp = p->no_new_privileges;
        if ((r = preserve_and_close_fds(preserve_fds, keep, nkeep, err)) < 0 ||
            (r = process_set_rlimits(p, err)) < 0 || (r = process_set_oom_score_adj(p, err)) < 0 ||
            (!nnp && (r = load_filter(filter, err)) < 0) ||
            (r = caps_drop_bounding(&p->caps, err)) < 0 || (r = process_set_user(p, err)) < 0 ||
            (r = caps_apply(&p->caps, err)) < 0)
                return r;
        if (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return umw_fail_errno(err, "set no_new_privs");
        if ((r = process_chdir(p, err)) < 0)
                return r;
        /* umwelt-run blocks signals while it supervises; the workload starts clean. */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        return nnp ? load_filter(filter, err) : 0;
}

int init_exec_process(const struct spec_process *p, struct seccomp_filter *filter,
                      const struct init_exec *how, struct umw_error **err)
{
        const char **env = NULL;
        int r = process_env_with_home(p, &env, err);
        if (r < 0)
                return r;
        char *const *envp = (char *const *)(env ? env : p->env);
        _cleanup_free_ char **targv = NULL;
        if (how->trampoline_fd >= 0) {
                targv = trampoline_argv(how->report_fd, how->exe, (char *const *)p->args);
                if (!targv)
                        return umw_fail_sys(err, ENOMEM, "the exec trampoline's arguments");
                if (clear_cloexec(how->report_fd) < 0)
                        return umw_fail_errno(err, "pass the start connection to the trampoline");
        }
        r = apply_process(p, filter, how->preserve_fds, how->keep, how->nkeep, err);
        if (r < 0)
                return r;
        if (targv) {
                syscall(SYS_execveat, how->trampoline_fd, "", targv, envp, AT_EMPTY_PATH);
                return umw_fail_errno(err, "exec %s through the exec trampoline", how->exe);
        }
        execve(how->exe, (char *const *)p->args, envp);
        return umw_fail_errno(err, "exec %s", how->exe);
}

int init_pauses(const struct spec *spec, struct umw_error **err)
{
        const char *mode = spec_annotation(spec, INIT_ANNOTATION);
        if (!mode)
                return 0;
        if (strcmp(mode, "pause") != 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: .annotations[\"" INIT_ANNOTATION
                                "\"]: expected \"pause\", got \"%s\"",
                                spec->file, mode);
        return 1;
}

/* PID 1 of a long-lived sandbox: it keeps the namespaces alive for exec,
 * reaps what is orphaned to it and ends on SIGTERM or SIGINT. The signals are
 * blocked and taken with sigwaitinfo: a blocked signal reaches even a pid
 * namespace's init, which ignores those it has no handler for. */
__attribute__((noreturn)) static void pause_forever(void)
{
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGCHLD);
        sigprocmask(SIG_SETMASK, &set, NULL);
        for (;;) {
                int sig = sigwaitinfo(&set, NULL);
                if (sig == SIGTERM || sig == SIGINT)
                        _exit(0);
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
        }
}

/* The walls go up exactly as for a workload, then umwelt-run execs itself
 * (through /proc/self/exe: it need not be visible inside) as the pause init,
 * with the process's environment and conn as argv[1]. An image exec'd in the
 * sandbox's user namespace belongs to it: made undumpable, its owner outside
 * may still join it (exec) while nothing inside may ptrace it or read its
 * memory, and that memory holds nothing of the caller's (environment,
 * credentials). */
static int pause_here(int conn, struct umw_error **err)
{
        int r = umw_make_undumpable(err);
        if (r < 0)
                return r;
        /* The caller's stdio goes (a `sandbox up` in a pipe returns); closing
         * conn tells start the sandbox is up. */
        for (int fd = 0; fd <= 2; fd++)
                close(fd);
        close(conn);
        pause_forever();
}

static int pause_process(const struct init_args *a, int conn, struct umw_error **err)
{
        const struct spec_process *p = &a->spec->process;
        int keep[] = {conn};
        int r = apply_process(p, a->filter, a->preserve_fds, keep, 1, err);
        if (r < 0)
                return r;
        if (clear_cloexec(conn) < 0)
                return umw_fail_errno(err, "pass the start connection to the pause init");
        char fd[16];
        snprintf(fd, sizeof(fd), "%d", conn);
        char *const argv[] = {INIT_PAUSE_ARGV0, fd, NULL};
        execve("/proc/self/exe", argv, (char *const *)p->env);
        /* A root without umwelt-run's loader and libraries (an image's): the
         * init pauses as it is, undumpable with the caller's memory, its mm
         * the runtime's (made in the runtime's user namespace). Only a
         * runtime holding CAP_SYS_PTRACE there can join that (root's; a
         * rootless one cannot): refused for the others. The container's
         * own processes are kept from it as from a waiting init
         * (selfexe.h). */
        if (!a->runtime_ptraces)
                return umw_fail_errno(err, "exec the pause init (a long-lived container of an "
                                           "unprivileged runtime needs umwelt-run and its "
                                           "libraries to run inside its root)");
        return pause_here(conn, err);
}

void init_pause_main(char **argv)
{
        _cleanup_error_ struct umw_error *err = NULL;
        int conn = atoi(argv[1]);
        pause_here(conn, &err);
        sync_send_error(conn, err);
        _exit(1);
}

/* Blocks until `start` connects (run's own start: until GO on the pair it
 * made; its end closed before GO means it died and the init ends), then runs what comes between
 * start and the workload. Returns the connection, on which a failure is reported. */
static int wait_for_start(const struct init_args *a, int *conn, struct umw_error **err)
{
        int fd = a->start_fd;
        if (!a->start_connected)
                do
                        fd = accept4(a->start_fd, NULL, NULL, SOCK_CLOEXEC);
                while (fd < 0 && errno == EINTR);
        if (fd < 0)
                return umw_fail_errno(err, "wait for start");
        *conn = fd;
        return sync_expect(fd, SYNC_GO, "umwelt-run start", NULL, err);
}

void init_main(const struct init_args *a)
{
        _cleanup_error_ struct umw_error *err = NULL;
        _cleanup_free_ char *exe = NULL;
        struct seccomp_filter *filter = a->filter;
        pid_t host_pid = 0;
        int conn = -1, userns_fd = -1;

        if (init_setup(a, &host_pid, &userns_fd, &exe, &err) < 0) {
                sync_send_error(a->sync_fd, err);
                _exit(1);
        }
        close(a->sync_fd);
        if (wait_for_start(a, &conn, &err) == 0 &&
            run_hooks_inside(a, SPEC_HOOK_START_CONTAINER, host_pid, STATUS_CREATED, &err) == 0 &&
            ns_join_user(userns_fd, &err) == 0) {
                if (!a->start_connected)
                        close(a->start_fd);
                int keep[] = {conn, a->trampoline_fd};
                struct init_exec how = {.exe = exe,
                                        .preserve_fds = a->preserve_fds,
                                        .keep = keep,
                                        .nkeep = a->trampoline_fd >= 0 ? 2 : 1,
                                        .trampoline_fd = a->trampoline_fd,
                                        .report_fd = conn};
                if (init_pauses(a->spec, &err) > 0)
                        pause_process(a, conn, &err);
                else
                        init_exec_process(&a->spec->process, filter, &how, &err);
        }
        if (conn >= 0)
                sync_send_error(conn, err);
        _exit(127);
}
