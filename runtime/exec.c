#include "runtime/exec.h"
#include "runtime/caps.h"
#include "runtime/cgroup.h"
#include "runtime/console.h"
#include "runtime/container.h"
#include "runtime/init.h"
#include "runtime/netwall.h"
#include "runtime/process.h"
#include "runtime/seccomp.h"
#include "runtime/selfexe.h"
#include "runtime/spec.h"
#include "runtime/state.h"
#include "runtime/supervise.h"
#include "runtime/sync.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/proc.h"
#include "common/fdio.h"

#include <errno.h>
#include <linux/capability.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct execution {
        const struct runtime_opts *rt;
        const struct exec_opts *o;
        struct spec *spec; /* the container's config */
        struct spec_process proc;
        yajl_val proc_tree; /* owns proc's strings with --process */
        struct seccomp_filter *filter;
        struct container_state st;
        int sync_fd, child_end, console_fd, console_peer;
        int joins[CGROUP_MAX_JOINS]; /* v1 tasks files, for cgroup_join_self */
        size_t n_joins;
        int unified_fd; /* the cgroup2 directory, for CLONE_INTO_CGROUP */
        int pidfd;      /* the container's init */
        int ns_flags;   /* namespaces_to_join() */
        int cgroupns;   /* its cgroup namespace, when ns_flags has it */
        pid_t pid;
};

static void execution_release(struct execution *x)
{
        if (x->proc_tree) {
                spec_process_release(&x->proc);
                yajl_tree_free(x->proc_tree);
        }
        spec_free(x->spec);
        seccomp_filter_free(x->filter);
        state_release(&x->st);
        umw_close_fdp(&x->sync_fd);
        umw_close_fdp(&x->child_end);
        umw_close_fdp(&x->console_fd);
        umw_close_fdp(&x->console_peer);
        cgroup_join_close(x->joins, &x->n_joins);
        umw_close_fdp(&x->unified_fd);
        umw_close_fdp(&x->pidfd);
        umw_close_fdp(&x->cgroupns);
}

static int load_container(struct execution *x, struct umw_error **err)
{
        _cleanup_close_ int rootfd = -1, dirfd = -1;
        int r;
        if ((r = state_check_id(x->o->id, err)) < 0 ||
            (r = state_root_open(x->rt->root, false, &rootfd, err)) < 0 ||
            (r = state_dir_open(rootfd, x->o->id, &dirfd, err)) < 0 ||
            (r = state_read(dirfd, &x->st, err)) < 0)
                return r;
        enum container_status s = state_status(&x->st, dirfd);
        bool live = s == STATUS_RUNNING || s == STATUS_CREATED;
        if (live && selfexe_pid_exposes(x->st.pid) && (r = selfexe_protect(x->rt->argv, err)) < 0)
                return r;
        if (x->o->loaded && (r = x->o->loaded(x->o->loaded_ctx, &x->st, s, err)) < 0)
                return r;
        if (!live)
                return umw_fail(err, UMW_EXIT_STATE, EINVAL,
                                "container '%s' is %s: exec needs a running container", x->o->id,
                                state_status_name(s));
        _cleanup_free_ char *text = NULL;
        char name[STATE_CONFIG_NAME_MAX];
        state_config_name(x->o->id, name);
        if ((r = umw_read_file_at(dirfd, STATE_CONFIG, 16u << 20, &text, NULL, err)) < 0)
                return r;
        return spec_load(text, name, &x->spec, err);
}

static int parse_user(const char *user, struct spec_process *p, struct umw_error **err)
{
        unsigned int uid, gid;
        char tail;
        int n = sscanf(user, "%u:%u%c", &uid, &gid, &tail);
        if (n == 1 && strchr(user, ':') == NULL) {
                p->uid = uid;
                return 0;
        }
        if (n == 2) {
                p->uid = uid;
                p->gid = gid;
                return 0;
        }
        return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                        "exec: --user: expected UID[:GID] as numbers, got '%s'", user);
}

static int add_caps(const char **names, size_t n, struct spec_caps *caps, struct umw_error **err)
{
        for (size_t i = 0; i < n; i++) {
                int cap;
                if (caps_from_name(names[i], &cap) < 0)
                        return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                        "exec: --cap: unknown capability '%s'", names[i]);
                /* Not inheritable, nor so ambient: a capability there reaches
                 * whatever file capabilities or setuid program the process
                 * runs next (CVE-2022-29162; runc since 1.1.2, crun). */
                uint64_t bit = 1ULL << cap;
                caps->bounding |= bit;
                caps->effective |= bit;
                caps->permitted |= bit;
        }
        return 0;
}

/* The container's process with the command line's overrides. */
static int process_from_flags(struct execution *x, struct umw_error **err)
{
        const struct exec_opts *o = x->o;
        struct spec_process *p = &x->spec->process;
        if (!o->args || !o->args[0])
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "exec: expected a command or --process FILE");
        const char **env = process_env_merge(p->env, o->env, o->n_env);
        size_t argc = 0;
        while (o->args[argc])
                argc++;
        const char **args = calloc(argc + 1, sizeof(*args));
        if (!env || !args) {
                free(env);
                free(args);
                return umw_fail_sys(err, ENOMEM, "exec");
        }
        memcpy(args, o->args, argc * sizeof(*args));
        free(p->env);
        free(p->args);
        p->env = env;
        p->args = args;
        p->terminal = o->tty;
        if (o->cwd)
                p->cwd = o->cwd;
        if (o->no_new_privs)
                p->no_new_privileges = true;
        int r;
        if ((o->user && (r = parse_user(o->user, p, err)) < 0) ||
            (r = add_caps(o->caps, o->n_caps, &p->caps, err)) < 0)
                return r;
        x->proc = *p;
        return 0;
}

static int build_process(struct execution *x, struct umw_error **err)
{
        if (!x->o->process_path)
                return process_from_flags(x, err);
        _cleanup_free_ char *text = NULL;
        int r = umw_read_file_at(AT_FDCWD, x->o->process_path, 1u << 20, &text, NULL, err);
        if (r < 0) {
                (*err)->kind = UMW_EXIT_CONFIG;
                return r;
        }
        if ((r = spec_load_process(text, x->o->process_path, &x->proc_tree, &x->proc, err)) < 0)
                return r;
        if (x->o->tty_set)
                x->proc.terminal = x->o->tty;
        return 0;
}

/* The wall the container was created with holds for what joins it too. */
static int check_netwall(const struct execution *x, struct umw_error **err)
{
        char where[4096];
        snprintf(where, sizeof(where), "%s",
                 x->o->process_path ? x->o->process_path : "exec: --cap");
        return spec_check_netwall_caps(x->spec, &x->proc.caps, where, err);
}

/* A container created but not started has the runtime as its init, sealed
 * only when its own processes could reach it (selfexe.h): a process joining
 * it with CAP_SYS_PTRACE beyond those must wait for the start. */
static int refuse_ptrace_into_waiting_init(const struct execution *x, struct umw_error **err)
{
        bool ptrace = x->proc.caps.bounding & (1ULL << CAP_SYS_PTRACE);
        if (!ptrace || x->spec->namespaces[SPEC_NS_USER].enabled ||
            !selfexe_pid_is_unsealed_runtime(x->st.pid))
                return 0;
        return umw_fail(err, UMW_EXIT_STATE, EBUSY,
                        "exec: container '%s' waits for start and its init is still the runtime: "
                        "a process with CAP_SYS_PTRACE may join it only after start",
                        x->o->id);
}

static int open_channels(struct execution *x, struct umw_error **err)
{
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return umw_fail_errno(err, "exec sync socket");
        x->sync_fd = pair[0];
        x->child_end = pair[1];
        if (!x->proc.terminal)
                return 0;
        if (x->o->console_socket)
                return console_socket_connect(x->o->console_socket, &x->console_fd, err);
        if (x->o->detach)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "exec: --tty with --detach needs --console-socket");
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
                return umw_fail_errno(err, "console socket pair");
        x->console_fd = pair[0];
        x->console_peer = pair[1];
        return 0;
}

/* The namespaces of the container's init that differ from ours: joining
 * our own user namespace again is an error, the others are harmless but
 * pointless. Those the config has the init make afresh differ without a
 * look (a stat of /proc/PID/ns/X costs a ptrace check and a dentry); the
 * user and time namespaces and those shared or joined by path are
 * compared. */
static int namespaces_to_join(const struct execution *x)
{
        static const struct {
                const char *name;
                int flag, type;
        } all[] = {
            {"user", CLONE_NEWUSER, SPEC_NS_USER},       {"mnt", CLONE_NEWNS, SPEC_NS_MOUNT},
            {"pid", CLONE_NEWPID, SPEC_NS_PID},          {"net", CLONE_NEWNET, SPEC_NS_NET},
            {"ipc", CLONE_NEWIPC, SPEC_NS_IPC},          {"uts", CLONE_NEWUTS, SPEC_NS_UTS},
            {"cgroup", CLONE_NEWCGROUP, SPEC_NS_CGROUP}, {"time", CLONE_NEWTIME, SPEC_NS_TIME}};
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns", x->st.pid);
        _cleanup_close_ int theirs = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int ours = open("/proc/self/ns", O_PATH | O_DIRECTORY | O_CLOEXEC);
        int flags = 0;
        for (size_t i = 0; theirs >= 0 && ours >= 0 && i < ARRAY_SIZE(all); i++) {
                const struct spec_namespace *n = &x->spec->namespaces[all[i].type];
                bool fresh = n->enabled && !n->path && all[i].type != SPEC_NS_USER &&
                             all[i].type != SPEC_NS_TIME;
                struct stat a, b;
                if (fresh || (fstatat(theirs, all[i].name, &a, 0) == 0 &&
                              fstatat(ours, all[i].name, &b, 0) == 0 &&
                              (a.st_ino != b.st_ino || a.st_dev != b.st_dev)))
                        flags |= all[i].flag;
        }
        return flags;
}

/* The grandchild joins the container's cgroups itself, first: "0" to each
 * v1 tasks file moves the calling thread without the global lock a pid
 * written from outside waits on; cgroup2 placed it at birth, or, on a kernel
 * without CLONE_INTO_CGROUP, takes its "0" too. Only then its cgroup
 * namespace, whose checks a process outside the namespace's root would fail. */
static int join_cgroups_and_ns(struct execution *x, bool born_in_unified, struct umw_error **err)
{
        int r = cgroup_join_self(x->joins, &x->n_joins, err);
        if (r < 0)
                return r;
        if (x->unified_fd >= 0 && !born_in_unified) {
                _cleanup_close_ int procs =
                    openat(x->unified_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
                r = procs < 0 ? -errno : umw_write_all(procs, "0", 1);
                if (r < 0)
                        return umw_fail_sys(err, -r, "join the container's cgroup2 directory");
        }
        if (x->cgroupns >= 0 && setns(x->cgroupns, CLONE_NEWCGROUP) < 0)
                return umw_fail_errno(err, "exec: join the cgroup namespace of container '%s'",
                                      x->o->id);
        return 0;
}

static int join_cgroups(struct execution *x, bool born_in_unified, struct umw_error **err)
{
        int r = join_cgroups_and_ns(x, born_in_unified, err);
        umw_close_fdp(&x->unified_fd);
        umw_close_fdp(&x->cgroupns);
        umw_close_fdp(&x->pidfd);
        return r;
}

static int join_namespaces(const struct execution *x, int flags, struct umw_error **err)
{
        if (flags && setns(x->pidfd, flags) < 0)
                return umw_fail_errno(err, "exec: join the namespaces of container '%s'", x->o->id);
        return 0;
}

/* In the process that will exec, in the container's pid namespace and
 * undumpable from birth: the namespaces of now, its cgroups, then become
 * the workload. The cwd comes before the executable's lookup, as in the
 * init: a relative args[0] resolves there (joining a mount namespace left
 * us at its root), as execve will see it. */
__attribute__((noreturn)) static void exec_child(struct execution *x, bool born_in_unified, int now)
{
        _cleanup_error_ struct umw_error *err = NULL;
        _cleanup_free_ char *exe = NULL;
        int fd = x->child_end;
        umw_close_fdp(&x->sync_fd);
        umw_close_fdp(&x->console_peer);
        /* A session of its own as the init has (init.c): kill(0) from
         * inside reaches not the caller. */
        if (setsid() < 0)
                umw_fail_errno(&err, "setsid");
        else if (join_namespaces(x, now, &err) == 0 &&
                 join_cgroups(x, born_in_unified, &err) == 0 &&
                 sync_expect(fd, SYNC_GO, "umwelt-run exec", NULL, &err) == 0 &&
                 (!x->proc.terminal || console_setup_pty(x->console_fd, &x->proc, &err) == 0) &&
                 process_chdir(&x->proc, &err) == 0 &&
                 process_find_executable(&x->proc, &exe, &err) == 0) {
                if (x->console_fd >= 0)
                        close(x->console_fd);
                int keep[] = {fd};
                struct init_exec how = {.exe = exe,
                                        .preserve_fds = x->o->preserve_fds,
                                        .keep = keep,
                                        .nkeep = 1,
                                        .trampoline_fd = -1,
                                        .report_fd = fd};
                init_exec_process(&x->proc, x->filter, &how, &err);
        }
        sync_send_error(fd, err);
        _exit(127);
}

/* The process that will exec, born in the container's cgroup2 directory
 * when there is one; a kernel before 5.7 refuses CLONE_INTO_CGROUP (EINVAL,
 * E2BIG) or clone3 (ENOSYS), and it is forked where we are. */
static pid_t fork_into_cgroup(int unified_fd, bool *born)
{
        struct clone_args args = {.exit_signal = SIGCHLD};
        if (unified_fd >= 0) {
                args.flags = CLONE_INTO_CGROUP;
                args.cgroup = (uint64_t)unified_fd;
        }
        pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
        *born = pid >= 0 && unified_fd >= 0;
        if (pid < 0 && (errno == EINVAL || errno == E2BIG || errno == ENOSYS))
                pid = fork();
        return pid;
}

/* The cgroup namespace of pid, opened while we are still outside: once in
 * the container's user namespace, joining through the pidfd would take the
 * ptrace access an undumpable init made by the runtime itself (the pause
 * init in an image's root) refuses to anything inside. The pidfd, still
 * alive after the open, proves the pid was not reused. */
static int open_cgroupns(pid_t pid, int pidfd, int *out)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/cgroup", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
                int e = errno;
                close(fd);
                errno = e;
                return -e;
        }
        *out = fd;
        return 0;
}

/* In the child, where umwelt-run cannot enter the container's pid
 * namespace itself (rootless): join the container, then fork the process
 * that will exec (a new pid namespace only takes children) and report its
 * pid. The cgroup namespace waits for the grandchild: CLONE_INTO_CGROUP is
 * checked against ours. */
__attribute__((noreturn)) static void join_and_fork(struct execution *x)
{
        _cleanup_error_ struct umw_error *err = NULL;
        umw_close_fdp(&x->sync_fd);
        umw_close_fdp(&x->console_peer);
        if (umw_make_undumpable(&err) < 0 ||
            join_namespaces(x, x->ns_flags & ~CLONE_NEWCGROUP, &err) < 0) {
                sync_send_error(x->child_end, err);
                _exit(1);
        }
        bool born = false;
        pid_t pid = fork_into_cgroup(x->unified_fd, &born);
        if (pid == 0)
                exec_child(x, born, 0);
        if (pid < 0) {
                umw_fail_errno(&err, "exec: fork");
                sync_send_error(x->child_end, err);
                _exit(1);
        }
        sync_send(x->child_end, SYNC_PID, pid, &err);
        _exit(0);
}

/* Waits for the exec'ing process: EOF on the sync socket means it exec'd. */
static int wait_exec(struct execution *x, struct umw_error **err)
{
        struct pollfd p = {.fd = x->sync_fd, .events = POLLIN};
        while (poll(&p, 1, -1) < 0)
                if (errno != EINTR)
                        return umw_fail_errno(err, "exec: wait");
        char probe;
        if (recv(x->sync_fd, &probe, 1, MSG_PEEK) == 0)
                return 0;
        return sync_expect(x->sync_fd, SYNC_READY, "exec'd process", NULL, err);
}

/* The child that will exec, forked by umwelt-run itself after it entered
 * the container's pid namespace for its children (root may; with none to
 * enter anybody): one fork where a rootless exec needs two. It is born
 * undumpable (the flag is the mm's, copied at fork) and with its creds in
 * our user namespace, so nothing in the container can reach it while it is
 * ours; umwelt-run takes back its own pid namespace for children and its
 * dumpable flag at once. 0 with *pid -1 when the namespace cannot be
 * entered. */
/* The child forked undumpable in the pid namespace we entered; the caller
 * takes back our dumpable flag and pid namespace whatever happened. */
static int fork_undumpable(struct execution *x, pid_t *child, struct umw_error **err)
{
        int r = umw_make_undumpable(err);
        if (r < 0)
                return r;
        bool born = false;
        *child = fork_into_cgroup(x->unified_fd, &born);
        if (*child == 0)
                exec_child(x, born, x->ns_flags & ~(CLONE_NEWPID | CLONE_NEWCGROUP));
        if (*child < 0)
                return umw_fail_errno(err, "exec: fork");
        return 0;
}

static int fork_direct(struct execution *x, pid_t *pid, struct umw_error **err)
{
        *pid = -1;
        int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
        _cleanup_close_ int own = -1;
        if (dumpable < 0)
                return umw_fail_errno(err, "exec: read our dumpable flag");
        if (x->ns_flags & CLONE_NEWPID) {
                own = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
                if (own < 0 || setns(x->pidfd, CLONE_NEWPID) < 0)
                        return 0;
        }
        pid_t child = -1;
        int r = fork_undumpable(x, &child, err);
        if (prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0) < 0 ||
            (own >= 0 && setns(own, CLONE_NEWPID) < 0)) {
                if (child > 0)
                        kill(child, SIGKILL);
                return r < 0 ? r : umw_fail_errno(err, "exec: take back our own pid namespace");
        }
        *pid = child;
        return r;
}

/* The child that joins and forks the process that will exec; its pid. */
static int fork_twice(struct execution *x, pid_t *pid, struct umw_error **err)
{
        pid_t child = fork();
        if (child < 0)
                return umw_fail_errno(err, "exec: fork");
        if (child == 0)
                join_and_fork(x);
        umw_close_fdp(&x->child_end);
        int status, got = 0;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR)
                ;
        int r = sync_expect(x->sync_fd, SYNC_PID, "exec helper", &got, err);
        *pid = got;
        return r;
}

/* What the processes entering the container need from outside: its
 * cgroups, its init's pidfd, which namespaces to join, its cgroup
 * namespace. */
static int open_container(struct execution *x, struct umw_error **err)
{
        int r = x->st.cgroup[0]
                    ? cgroup_open_joins(x->st.cgroup, x->joins, &x->n_joins, &x->unified_fd, err)
                    : 0;
        if (r < 0)
                return r;
        x->pidfd = (int)syscall(SYS_pidfd_open, x->st.pid, 0);
        x->ns_flags = namespaces_to_join(x);
        if (x->pidfd < 0 || ((x->ns_flags & CLONE_NEWCGROUP) &&
                             open_cgroupns(x->st.pid, x->pidfd, &x->cgroupns) < 0))
                return umw_fail_errno(err, "exec: open the namespaces of container '%s'", x->o->id);
        return 0;
}

/* The process that will exec, forked; the caller closes what it took. */
static int fork_process(struct execution *x, pid_t *pid, struct umw_error **err)
{
        int r;
        if ((r = open_container(x, err)) < 0 || (r = fork_direct(x, pid, err)) < 0)
                return r;
        return *pid < 0 ? fork_twice(x, pid, err) : 0;
}

static int launch(struct execution *x, int *exit_status, struct umw_error **err)
{
        pid_t pid = -1;
        int r = fork_process(x, &pid, err);
        umw_close_fdp(&x->child_end);
        umw_close_fdp(&x->console_fd);
        cgroup_join_close(x->joins, &x->n_joins);
        umw_close_fdp(&x->unified_fd);
        umw_close_fdp(&x->pidfd);
        umw_close_fdp(&x->cgroupns);
        if (r < 0)
                return r;
        x->pid = pid;
        _cleanup_close_ int master = -1;
        if ((r = sync_send(x->sync_fd, SYNC_GO, 0, err)) < 0 || (r = wait_exec(x, err)) < 0 ||
            (x->console_peer >= 0 && (r = console_recv_fd(x->console_peer, &master, err)) < 0) ||
            (r = umw_write_pid_file(x->o->pid_file, pid, err)) < 0)
                return r;
        return x->o->detach ? 0 : supervise(pid, master, exit_status, err);
}

/* The container, the process and the channels, checked and opened before
 * anything is forked. */
static int prepare_exec(struct execution *x, struct umw_error **err)
{
        int r;
        if ((r = load_container(x, err)) < 0 || (r = build_process(x, err)) < 0 ||
            (r = check_netwall(x, err)) < 0 || (r = refuse_ptrace_into_waiting_init(x, err)) < 0 ||
            (x->spec->seccomp && (r = seccomp_filter_build_cached(x->spec->seccomp, x->rt->root,
                                                                  &x->filter, err)) < 0) ||
            (r = open_channels(x, err)) < 0)
                return r;
        if (!x->o->detach && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                return umw_fail_errno(err, "become subreaper");
        return 0;
}

/* The launch with our signals blocked for supervise and unblocked after;
 * a process left behind by a failure is killed. */
static int exec_steps(struct execution *x, int *exit_status, struct umw_error **err)
{
        sigset_t old;
        int r;
        if ((r = prepare_exec(x, err)) < 0 || (r = supervise_block_signals(&old, err)) < 0)
                return r;
        r = launch(x, exit_status, err);
        if (r < 0 && x->pid > 0)
                kill(x->pid, SIGKILL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return r;
}

/* The joining processes are images of umwelt-run until they exec, and
 * /proc/PID/exe of them is the host's binary (CVE-2019-5736). They are
 * undumpable before they join anything (from birth where umwelt-run forks
 * into the pid namespace itself), so ptracing them or opening that link
 * takes CAP_SYS_PTRACE in the user namespace their memory was made in:
 * ours, where this binary was exec'd (fork keeps it, setns does not change
 * it). Until one joins the container's user namespace, and always for
 * umwelt-run that stays outside, their creds are in ours too, which the
 * ptrace check refuses to a process of a namespace below without that
 * capability there. When the container's user namespace
 * lies strictly below ours (root's and a user's sandbox alike), nothing in
 * it holds a capability in ours: neither wall can be passed from inside,
 * and exec runs as it is (security.sh and sandbox-life.sh try both from
 * inside while exec enters). Otherwise (no user namespace, or one joined by
 * path that is not below ours) a process of the container may hold
 * CAP_SYS_PTRACE over us, and exec first re-execs from a sealed copy. */
int container_exec(const struct runtime_opts *rt, const struct exec_opts *o, int *exit_status,
                   struct umw_error **err)
{
        struct execution x = {.rt = rt,
                              .o = o,
                              .sync_fd = -1,
                              .child_end = -1,
                              .console_fd = -1,
                              .console_peer = -1,
                              .unified_fd = -1,
                              .pidfd = -1,
                              .cgroupns = -1};
        *exit_status = 0;
        int r = exec_steps(&x, exit_status, err);
        execution_release(&x);
        return r;
}
