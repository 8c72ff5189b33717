/* create: the steps from a bundle to an init waiting for start (config,
 * rootfs, state directory, cgroup, channels, the clone, id maps, the network
 * wall, hooks), and the undoing of all of them when one fails. */
#include "runtime/container.h"
#include "runtime/container_int.h"
#include "runtime/cgroup.h"
#include "runtime/console.h"
#include "runtime/hooks.h"
#include "runtime/init.h"
#include "runtime/mounts.h"
#include "runtime/namespaces.h"
#include "runtime/netwall.h"
#include "runtime/process.h"
#include "runtime/seccomp.h"
#include "runtime/selfexe.h"
#include "runtime/spec.h"
#include "runtime/state.h"
#include "runtime/sync.h"
#include "runtime/trampoline.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"

#include <errno.h>
#include <linux/capability.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

void ctr_creation_init(struct creation *c, const struct runtime_opts *rt,
                       const struct create_opts *o)
{
        *c = (struct creation){.rt = rt,
                               .o = o,
                               .rootfd = -1,
                               .dirfd = -1,
                               .sync_fd = -1,
                               .start_fd = -1,
                               .start_peer = -1,
                               .trampoline_fd = -1,
                               .console_fd = -1,
                               .console_peer = -1,
                               .cgroup_fd = -1};
}

void ctr_creation_release(struct creation *c)
{
        spec_free(c->spec);
        free(c->config_text);
        free(c->config_path);
        free(c->rootfs);
        free(c->cgroup);
        cgroup_plan_free(c->cgroup_plan);
        seccomp_filter_free(c->filter);
        umw_close_fdp(&c->rootfd);
        umw_close_fdp(&c->dirfd);
        umw_close_fdp(&c->sync_fd);
        umw_close_fdp(&c->start_fd);
        umw_close_fdp(&c->start_peer);
        umw_close_fdp(&c->console_fd);
        umw_close_fdp(&c->console_peer);
        umw_close_fdp(&c->cgroup_fd);
        umw_close_fdp(&c->trampoline_fd);
}

/* Undoes a failed create: the init, its cgroup, its state directory. The
 * mounts live in the init's mount namespace and go with it. */
void ctr_creation_abort(struct creation *c)
{
        _cleanup_error_ struct umw_error *ignored = NULL;
        if (c->pid > 0) {
                kill(c->pid, SIGKILL);
                while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        if (c->cgroup_placed)
                cgroup_remove(c->cgroup, &ignored);
        if (c->dir_created)
                state_dir_remove(c->rootfd, c->o->id, &ignored);
}

/* The init is an image of umwelt-run until start, and what the workload
 * execs may be one too: when the container's processes could change the
 * binary (selfexe.h), the init execs through the trampoline where that
 * suffices (trampoline.h), and otherwise create runs from a read-only mount
 * or a sealed copy: before anything exists, since the re-exec starts this
 * create over. A pid namespace joined with CAP_SYS_PTRACE must not hold an
 * unsealed init of another container still waiting for its start. */
static int protect_runtime(struct creation *c, struct umw_error **err)
{
        if (trampoline_suffices(c->spec))
                return trampoline_open(&c->trampoline_fd, err);
        const char *pidns = c->spec->namespaces[SPEC_NS_PID].path;
        bool ptrace = c->spec->process.caps.bounding & (1ULL << CAP_SYS_PTRACE);
        if (ptrace && pidns && selfexe_pidns_has_unsealed_runtime(pidns))
                return umw_fail(err, UMW_EXIT_STATE, EBUSY,
                                "%s: .linux.namespaces: with CAP_SYS_PTRACE, joining pid "
                                "namespace %s is refused while a container in it waits for "
                                "start (its init is still the runtime): start that first",
                                c->spec->file, pidns);
        return selfexe_protect(c->rt->argv, err);
}

static int load_config(struct creation *c, struct umw_error **err)
{
        if (c->o->config_path)
                c->config_path = strdup(c->o->config_path);
        else if (asprintf(&c->config_path, "%s/config.json", c->o->bundle) < 0)
                c->config_path = NULL;
        if (!c->config_path)
                return umw_fail_sys(err, ENOMEM, "config path");
        int r = umw_read_file_at(AT_FDCWD, c->config_path, CONFIG_MAX, &c->config_text,
                                 &c->config_len, err);
        if (r < 0) {
                if ((*err)->kind == UMW_EXIT_FAILURE && (*err)->errnum == ENOENT)
                        (*err)->kind = UMW_EXIT_CONFIG;
                return r;
        }
        const char *name = c->o->config_name ? c->o->config_name : c->config_path;
        r = spec_load(c->config_text, name, &c->spec, err);
        if (r < 0)
                return r;
        if (!c->spec->process.args)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: .process: expected an object",
                                c->spec->file);
        if ((r = ns_check(c->spec, err)) < 0)
                return r;
        return selfexe_needed(c->spec) ? protect_runtime(c, err) : 0;
}

/* The workload learns of its activation sockets as systemd would say it. */
static int add_listen_env(struct creation *c, struct umw_error **err)
{
        if (c->o->listen_fds <= 0)
                return 0;
        snprintf(c->listen_env[0], sizeof(c->listen_env[0]), "LISTEN_FDS=%d", c->o->listen_fds);
        snprintf(c->listen_env[1], sizeof(c->listen_env[1]), "LISTEN_PID=1");
        const char *extra[] = {c->listen_env[0], c->listen_env[1]};
        const char **env = process_env_merge(c->spec->process.env, extra, 2);
        if (!env)
                return umw_fail_sys(err, ENOMEM, "LISTEN_FDS");
        free(c->spec->process.env);
        c->spec->process.env = env;
        return 0;
}

static int resolve_rootfs(struct creation *c, struct umw_error **err)
{
        const char *path = c->spec->root_path;
        _cleanup_free_ char *joined = NULL;
        if (path[0] != '/') {
                if (asprintf(&joined, "%s/%s", c->o->bundle, path) < 0)
                        return umw_fail_sys(err, ENOMEM, "rootfs path");
                path = joined;
        }
        c->rootfs = realpath(path, NULL);
        struct stat st;
        if (!c->rootfs || stat(c->rootfs, &st) < 0 || !S_ISDIR(st.st_mode))
                return umw_fail(err, UMW_EXIT_CONFIG, ENOENT,
                                "%s: .root.path: expected an existing directory, '%s' is not one",
                                c->spec->file, path);
        return 0;
}

/* Moves an internal fd above the range handed to the workload, so
 * --preserve-fds never passes one of ours by accident. */
static int lift_fd(int *fd, int floor, struct umw_error **err)
{
        if (*fd < 0 || *fd >= floor)
                return 0;
        int high = fcntl(*fd, F_DUPFD_CLOEXEC, floor);
        if (high < 0)
                return umw_fail_errno(err, "move internal fd");
        close(*fd);
        *fd = high;
        return 0;
}

/* Binding through /proc/self/fd keeps sun_path short whatever the root is. */
int ctr_socket_path(int dirfd, const char *name, struct sockaddr_un *addr)
{
        *addr = (struct sockaddr_un){.sun_family = AF_UNIX};
        int n =
            snprintf(addr->sun_path, sizeof(addr->sun_path), "/proc/self/fd/%d/%s", dirfd, name);
        return n < (int)sizeof(addr->sun_path) ? 0 : -ENAMETOOLONG;
}

/* run starts its init itself: a pair instead of start.sock spares an inode
 * made and freed (0.3 to 0.5 ms on ext4), and an init whose run died before
 * GO sees its end close and ends instead of waiting for a start. */
static int open_start_socket(struct creation *c, struct umw_error **err)
{
        if (c->start_in_process) {
                int pair[2];
                if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                        return umw_fail_errno(err, "create start socket pair");
                c->start_fd = pair[0];
                c->start_peer = pair[1];
                return 0;
        }
        struct sockaddr_un addr;
        ctr_socket_path(c->dirfd, STATE_START_SOCKET, &addr);
        c->start_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (c->start_fd < 0)
                return umw_fail_errno(err, "create start socket");
        if (bind(c->start_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
            listen(c->start_fd, 1) < 0)
                return umw_fail_errno(err, "listen on start socket");
        return 0;
}

static int open_console(struct creation *c, struct umw_error **err)
{
        if (!c->spec->process.terminal)
                return 0;
        if (c->o->console_socket)
                return console_socket_connect(c->o->console_socket, &c->console_fd, err);
        if (!c->interactive)
                return 0;
        /* run -t without a console socket: umwelt-run itself holds the master. */
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
                return umw_fail_errno(err, "console socket pair");
        c->console_fd = pair[0];
        c->console_peer = pair[1];
        return 0;
}

/* The sync pair (our end in c->sync_fd, the init's in *child_end), the start
 * socket and the console, all above the fds the workload is handed. */
static int open_channels(struct creation *c, int *child_end, struct umw_error **err)
{
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return umw_fail_errno(err, "create sync socket");
        c->sync_fd = pair[0];
        *child_end = pair[1];
        int floor = 3 + c->o->listen_fds + c->o->preserve_fds;
        int r;
        if ((r = open_start_socket(c, err)) < 0 || (r = open_console(c, err)) < 0 ||
            (r = lift_fd(child_end, floor, err)) < 0 ||
            (r = lift_fd(&c->sync_fd, floor, err)) < 0 ||
            (r = lift_fd(&c->start_fd, floor, err)) < 0 ||
            (r = lift_fd(&c->start_peer, floor, err)) < 0 ||
            (r = lift_fd(&c->console_fd, floor, err)) < 0)
                return r;
        return lift_fd(&c->trampoline_fd, floor, err);
}

/* The init starts in its cgroup2 directory when there is one; a kernel
 * before 5.7 refuses CLONE_INTO_CGROUP (EINVAL) or the larger clone_args
 * (E2BIG), and place_in_cgroup moves the init there instead. */
static pid_t clone_init(struct creation *c, int flags, struct umw_error **err)
{
        struct clone_args args = {.flags = (uint64_t)flags, .exit_signal = SIGCHLD};
        if (c->cgroup_fd >= 0) {
                args.flags |= CLONE_INTO_CGROUP;
                args.cgroup = (uint64_t)c->cgroup_fd;
        }
        pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
        if (pid < 0 && c->cgroup_fd >= 0 && (errno == EINVAL || errno == E2BIG)) {
                umw_debug("CLONE_INTO_CGROUP refused (%s): the init will be moved",
                          strerror(errno));
                args.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
                args.cgroup = 0;
                pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
        } else if (pid >= 0) {
                c->born_in_cgroup = c->cgroup_fd >= 0;
        }
        if (pid < 0)
                return umw_fail_errno(err, "clone the container init");
        return pid;
}

static int spawn_init(struct creation *c, int child_end, struct umw_error **err)
{
        int flags = ns_clone_flags(c->spec);
        bool ptraces = init_runtime_ptraces(); /* ours, not the init's in its namespace */
        pid_t pid = clone_init(c, flags, err);
        if (pid < 0)
                return pid;
        umw_close_fdp(&c->cgroup_fd);
        if (pid == 0) {
                close(c->sync_fd);
                if (c->console_peer >= 0)
                        close(c->console_peer);
                if (c->start_in_process)
                        close(c->start_fd);
                struct init_args a = {
                    .spec = c->spec,
                    .id = c->o->id,
                    .bundle = c->o->bundle,
                    .rootfs = c->rootfs,
                    .sync_fd = child_end,
                    .start_fd = c->start_in_process ? c->start_peer : c->start_fd,
                    .start_connected = c->start_in_process,
                    .console_fd = c->console_fd,
                    .preserve_fds = c->o->listen_fds + c->o->preserve_fds,
                    .no_pivot = c->o->no_pivot,
                    .no_new_keyring = c->o->no_new_keyring,
                    .new_userns = flags & CLONE_NEWUSER,
                    .n_trees = c->n_trees,
                    .runtime_clones = c->runtime_clones,
                    .runtime_ptraces = ptraces,
                    .filter = c->filter,
                    .trampoline_fd = c->trampoline_fd,
                };
                init_main(&a);
        }
        c->pid = pid;
        umw_close_fdp(&c->console_fd);
        umw_close_fdp(&c->start_peer);
        return 0;
}

static int write_state(struct creation *c, struct umw_error **err)
{
        return state_write(c->dirfd, c->o->id, c->pid, state_pid_start_time(c->pid), c->o->bundle,
                           c->rootfs, c->cgroup ? c->cgroup : "", c->spec->annotations,
                           c->spec->n_annotations, err);
}

static int run_parent_hooks(struct creation *c, struct umw_error **err)
{
        const struct spec_hooks *pre = &c->spec->hooks[SPEC_HOOK_PRESTART];
        const struct spec_hooks *rt = &c->spec->hooks[SPEC_HOOK_CREATE_RUNTIME];
        if (!init_waits_for_hooks(c->spec))
                return 0;
        int r = sync_expect(c->sync_fd, SYNC_HOOKS, "container init", NULL, err);
        if (r < 0)
                return r;
        struct container_state st;
        r = state_read(c->dirfd, &st, err);
        if (r < 0)
                return r;
        /* prestart sees "created", as crun shows it and runtime-tools'
         * hooks_stdin checks (runtime-spec 1.0's prestart ran at start);
         * createRuntime "creating", where the spec puts it. */
        size_t pre_len = 0, len = 0;
        _cleanup_free_ char *pre_json =
            pre->count ? state_to_json(&st, STATUS_CREATED, false, &pre_len) : NULL;
        _cleanup_free_ char *json = state_to_json(&st, STATUS_CREATING, false, &len);
        state_release(&st);
        if (!json || (pre->count && !pre_json))
                return umw_fail_sys(err, ENOMEM, "hook state");
        if ((r = hooks_run(pre, SPEC_HOOK_PRESTART, pre_json, pre_len, err)) < 0 ||
            (r = hooks_run(rt, SPEC_HOOK_CREATE_RUNTIME, json, len, err)) < 0)
                return r;
        return sync_send(c->sync_fd, SYNC_GO, 0, err);
}

static bool cgroup_strict(const struct creation *c)
{
        return geteuid() == 0 && !c->rt->rootless;
}

/* The cgroup's path and every write it needs, before anything exists: a
 * limit that cannot hold refuses the container here. */
static int plan_cgroup(struct creation *c, struct umw_error **err)
{
        if (c->rt->cgroup_manager == CGROUP_MANAGER_DISABLED)
                return 0;
        int r = cgroup_path_resolve(c->spec->cgroups_path, c->o->id, c->rt->cgroup_manager,
                                    &c->cgroup, err);
        if (r < 0)
                return (*err)->kind == UMW_EXIT_CONFIG ? umw_error_prefix(err, "%s", c->spec->file)
                                                       : r;
        struct cgroup_request req = {.path = c->cgroup,
                                     .resources = c->spec->resources,
                                     .devices = c->spec->devices,
                                     .n_devices = c->spec->n_devices,
                                     .file = c->spec->file,
                                     .strict = cgroup_strict(c)};
        return cgroup_plan_new(&req, &c->cgroup_plan, err);
}

/* The cgroup2 directory, with its limits, before the init exists: the init
 * is cloned straight into it. */
static int prepare_cgroup(struct creation *c, struct umw_error **err)
{
        if (!c->cgroup_plan)
                return 0;
        c->cgroup_placed = true; /* from here on, an abort removes it */
        return cgroup_plan_prepare_unified(c->cgroup_plan, &c->cgroup_fd, err);
}

/* Runs while the init builds its mounts. The limits are written before the
 * init enters: it joins the v1 hierarchies itself once told (a pid written
 * from here would wait for an RCU grace period), before its cgroup mount,
 * before anything it starts could escape the cgroup (hooks) and before
 * READY. */
static int enter_and_send_joins(struct creation *c, int *joins, size_t *n, struct umw_error **err)
{
        int r;
        if (c->cgroup_plan &&
            (r = cgroup_plan_enter(c->cgroup_plan, c->pid, c->born_in_cgroup, joins, n, err)) < 0)
                return r;
        return sync_send_fds(c->sync_fd, SYNC_PLACED, joins, *n, err);
}

static int place_in_cgroup(struct creation *c, struct umw_error **err)
{
        int joins[CGROUP_MAX_JOINS];
        size_t n = 0;
        int r = enter_and_send_joins(c, joins, &n, err);
        cgroup_join_close(joins, &n);
        return r;
}

/* The network wall, installed by a thread of ours while this one makes
 * the cgroups: both are create's own work on the way to READY, and a
 * second core does one while the init builds its mounts on another. */
struct wall_job {
        int netns;
        int r;
        struct umw_error *err;
};

static void *install_wall(void *data)
{
        struct wall_job *j = data;
        j->r = netwall_install(j->netns, &j->err);
        return NULL;
}

/* The cgroup placed and the wall installed, side by side where a thread
 * can be had; one after the other where not. */
static int place_and_wall(struct creation *c, int netns, struct umw_error **err)
{
        struct wall_job j = {.netns = netns};
        pthread_t t;
        if (netns < 0 || pthread_create(&t, NULL, install_wall, &j) != 0) {
                int r = place_in_cgroup(c, err);
                return r < 0 ? r : netwall_install(netns, err);
        }
        int r = place_in_cgroup(c, err);
        pthread_join(t, NULL);
        if (r < 0) {
                umw_error_freep(&j.err);
                return r;
        }
        *err = j.err;
        return j.r;
}

/* The container's user namespace: the one joined, or the init's new one
 * (its maps written). */
static int open_container_userns(const struct creation *c, struct umw_error **err)
{
        const char *path = c->spec->namespaces[SPEC_NS_USER].path;
        char own[64];
        if (!path) {
                snprintf(own, sizeof(own), "/proc/%d/ns/user", c->pid);
                path = own;
        }
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        return fd < 0 ? umw_fail_errno(err, "open user namespace %s", path) : fd;
}

/* The n slots of trees, the open ones sent in batches; the caller closes them. */
static int send_tree_fds(const struct creation *c, const int *trees, size_t n,
                         struct umw_error **err)
{
        int batch[SYNC_MAX_FDS];
        size_t k = 0, sent = 0;
        for (size_t i = 0; i < n; i++) {
                if (trees[i] >= 0)
                        batch[k++] = trees[i];
                if (k > 0 && (k == SYNC_MAX_FDS || i == n - 1)) {
                        int r = sync_send_fds(c->sync_fd, SYNC_TREES, batch, k, err);
                        if (r < 0)
                                return r;
                        sent += k;
                        k = 0;
                }
        }
        if (sent != c->n_trees)
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO, "made %zu mount trees, not %zu",
                                sent, c->n_trees);
        return 0;
}

/* The trees made here (mounts.h says which and why), while the init
 * prepares its root. */
static int send_trees(struct creation *c, struct umw_error **err)
{
        if (!c->n_trees)
                return 0;
        size_t n = c->spec->n_mounts;
        _cleanup_free_ int *trees = malloc(n * sizeof(*trees));
        if (!trees)
                return umw_fail_sys(err, ENOMEM, "mount trees");
        /* None without one: then every idmapped mount has a mapping of its own. */
        bool has_userns = c->spec->namespaces[SPEC_NS_USER].enabled;
        _cleanup_close_ int userns = has_userns ? open_container_userns(c, err) : -1;
        int r = has_userns && userns < 0
                    ? userns
                    : mounts_make_trees(c->spec, c->rootfs, c->runtime_clones, userns, trees, err);
        if (r < 0)
                return r;
        r = send_tree_fds(c, trees, n, err);
        for (size_t i = 0; i < n; i++)
                umw_close_fdp(&trees[i]);
        return r;
}

/* GO, the cgroup and the network wall. The wall stands before anything runs
 * in the container: the init runs nothing of it before READY, so the wall
 * goes up while the init builds its mounts, unless a createContainer hook
 * would run in the namespace before that. */
static int go_and_wall(struct creation *c, struct umw_error **err)
{
        bool wall_first = c->spec->hooks[SPEC_HOOK_CREATE_CONTAINER].count > 0;
        _cleanup_close_ int netns = -1;
        int r;
        if ((r = netwall_open(c->spec, c->pid, &netns, err)) < 0 ||
            (wall_first && (r = netwall_install(netns, err)) < 0) ||
            (r = sync_send(c->sync_fd, SYNC_GO, c->pid, err)) < 0 || (r = send_trees(c, err)) < 0)
                return r;
        return place_and_wall(c, wall_first ? -1 : netns, err);
}

/* What create checks and makes before the init exists: the config, the
 * rootfs, the seccomp filter, the state directory and the cgroup. */
static int prepare_steps(struct creation *c, struct umw_error **err)
{
        int r;
        if ((r = load_config(c, err)) < 0 || (r = add_listen_env(c, err)) < 0 ||
            (r = resolve_rootfs(c, err)) < 0 ||
            (r = state_root_open(c->rt->root, true, &c->rootfd, err)) < 0 ||
            (r = state_check_id(c->o->id, err)) < 0)
                return r;
        c->runtime_clones = init_runtime_may_clone();
        int trees = mounts_count_trees(c->spec, c->rootfs, c->runtime_clones, err);
        if (trees < 0)
                return trees;
        c->n_trees = (size_t)trees;
        /* The init loads it last; a bad profile fails before anything exists. */
        if (c->spec->seccomp &&
            (r = seccomp_filter_build_cached(c->spec->seccomp, c->rt->root, &c->filter, err)) < 0)
                return r;
        if ((r = state_dir_create(c->rootfd, c->o->id, &c->dirfd, err)) < 0)
                return r;
        c->dir_created = true;
        if ((r = umw_write_file_atomic(c->dirfd, STATE_CONFIG, c->config_text, c->config_len, 0600,
                                       err)) < 0 ||
            (r = plan_cgroup(c, err)) < 0)
                return r;
        return prepare_cgroup(c, err);
}

/* The init cloned from the namespaces it starts in; the caller returns this
 * thread to its own whether or not that worked. */
static int spawn_in_namespaces(struct creation *c, int child_end, struct ns_saved *saved,
                               struct umw_error **err)
{
        int r = ns_prepare_parent(c->spec, saved, err);
        if (r < 0)
                return r;
        return spawn_init(c, child_end, err);
}

/* The channels and the init; the init's end of the sync pair is closed here
 * on every path, so that its exit is seen as the end of that socket. */
static int spawn_steps(struct creation *c, struct umw_error **err)
{
        _cleanup_close_ int child_end = -1;
        int r = open_channels(c, &child_end, err);
        if (r < 0)
                return r;
        struct ns_saved saved = {-1, -1};
        r = spawn_in_namespaces(c, child_end, &saved, err);
        int restored = ns_restore_parent(&saved, err);
        return r < 0 ? r : restored;
}

/* From the id maps to READY: the init builds its mounts from GO on, and
 * waits only for its cgroup; state.json comes after. A create killed before
 * it leaves cgroup directories that delete --force finds from the saved
 * config. */
static int ready_steps(struct creation *c, struct umw_error **err)
{
        int r;
        if (c->spec->namespaces[SPEC_NS_USER].enabled && !c->spec->namespaces[SPEC_NS_USER].path &&
            (r = ns_write_id_maps(c->spec, c->pid, err)) < 0)
                return r;
        if ((r = go_and_wall(c, err)) < 0 || (r = write_state(c, err)) < 0 ||
            (r = run_parent_hooks(c, err)) < 0)
                return r;
        /* The walls are up and the state written: run's caller acts on the
         * created container now (the sandbox's egress door), beside the
         * init's last steps; with nothing left to do between READY and the
         * start, the start's GO goes out too and the init execs right after
         * READY, without a round trip. */
        if (c->o->created && (r = c->o->created(c->pid, c->o->created_data, err)) < 0)
                return r;
        /* An init that failed has closed start.sock too: its own error
         * waits on sync_fd, and is the one to report. */
        _cleanup_error_ struct umw_error *go_err = NULL;
        if (c->go_early && sync_send(c->start_fd, SYNC_GO, 0, &go_err) < 0) {
                if ((r = sync_expect(c->sync_fd, SYNC_READY, "container init", NULL, err)) < 0)
                        return r;
                *err = TAKE_PTR(go_err);
                return -1;
        }
        if ((r = sync_expect(c->sync_fd, SYNC_READY, "container init", NULL, err)) < 0)
                return r;
        return umw_write_pid_file(c->o->pid_file, c->pid, err);
}

/* The steps of create, in order; c->pid > 0 once there is an init to kill. */
static int create_steps(struct creation *c, struct umw_error **err)
{
        int r;
        if ((r = prepare_steps(c, err)) < 0 || (r = spawn_steps(c, err)) < 0)
                return r;
        return ready_steps(c, err);
}
/* A message to the init that found it gone (EPIPE, ECONNRESET): the error it sent as
 * it failed is still queued and says why; without waiting for more. */
static void prefer_init_error(const struct creation *c, struct umw_error **err)
{
        if (!*err || ((*err)->errnum != EPIPE && (*err)->errnum != ECONNRESET) || c->sync_fd < 0 ||
            fcntl(c->sync_fd, F_SETFL, O_NONBLOCK) < 0)
                return;
        struct umw_error *why = NULL;
        if (sync_expect(c->sync_fd, SYNC_READY, "container init", NULL, &why) < 0 && why &&
            why->errnum != EPIPE && why->errnum != EPROTO && why->errnum != EAGAIN) {
                umw_error_freep(err);
                *err = why;
                return;
        }
        umw_error_freep(&why);
}

int ctr_create(struct creation *c, struct umw_error **err)
{
        int r = create_steps(c, err);
        if (r < 0) {
                prefer_init_error(c, err);
                ctr_creation_abort(c);
        }
        return r;
}

int container_create(const struct runtime_opts *rt, const struct create_opts *o,
                     struct umw_error **err)
{
        struct creation c;
        ctr_creation_init(&c, rt, o);
        int r = ctr_create(&c, err);
        ctr_creation_release(&c);
        return r;
}
