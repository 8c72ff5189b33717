/* The container's first process, from clone to execve. It builds the
 * container from inside (mounts, devices, pivot_root, terminal, masked
 * paths), reports READY, waits for `start`, drops everything it was not
 * granted and execs the workload. Every failure is sent back to umwelt-run
 * over the sync socket before the init exits. */
#ifndef UMW_INIT_H
#define UMW_INIT_H

#include <stdbool.h>
#include <stddef.h>

struct spec;

struct init_args {
        const struct spec *spec;
        const char *id;
        const char *bundle;
        const char *rootfs; /* absolute path of the rootfs */
        int sync_fd;        /* SOCK_SEQPACKET to umwelt-run */
        int start_fd;       /* listening SOCK_SEQPACKET socket `start` connects to, or
                             * with start_connected the start connection itself */
        int console_fd;     /* connected console socket, or -1 */
        int preserve_fds;   /* fds 3 .. 3+n-1 pass through to the workload */
        bool no_pivot;
        bool no_new_keyring;
        bool new_userns;
        size_t n_trees;                /* mounts whose trees come after GO (SYNC_TREES) */
        bool runtime_clones;           /* umwelt-run makes the host binds' trees (mounts.h) */
        bool start_connected;          /* run: GO comes from the process that cloned us */
        bool runtime_ptraces;          /* init_runtime_ptraces() of the umwelt-run that cloned it */
        int trampoline_fd;             /* the exec trampoline's memfd (trampoline.h), or -1 */
        struct seccomp_filter *filter; /* built by umwelt-run before the clone, or NULL */
};

__attribute__((noreturn)) void init_main(const struct init_args *a);

struct spec_process;
struct seccomp_filter;
struct umw_error;

/* Whether the init stops before its hooks for umwelt-run (SYNC_HOOKS). */
bool init_waits_for_hooks(const struct spec *spec);

/* The reserved annotation run.umwelt.init=pause: the init puts up every wall
 * of process (user, capabilities, no_new_privs, seccomp) but runs no
 * command; it stays as the container's PID 1, undumpable, reaping orphans,
 * until SIGTERM or SIGINT. A long-lived sandbox is such a container,
 * entered with exec. */
#define INIT_ANNOTATION "run.umwelt.init"
/* 1 when spec asks for the pause init, 0 when not, an error for a value
 * other than "pause". */
int init_pauses(const struct spec *spec, struct umw_error **err);
/* The pause init is umwelt-run exec'd again with argv
 * {INIT_PAUSE_ARGV0, "<fd of the start connection>"}: main() hands such an
 * argv to init_pause_main(), which does not return. */
#define INIT_PAUSE_ARGV0 "umwelt-sandbox-init"
__attribute__((noreturn)) void init_pause_main(char **argv);

/* Whether this process holds CAP_SYS_PTRACE in its user namespace: what
 * joining an undumpable image of umwelt-run made there takes. */
bool init_runtime_ptraces(void);
/* Whether it holds CAP_SYS_ADMIN there: what cloning a mount takes. */
bool init_runtime_may_clone(void);

/* How a container process's last exec goes: exe itself, or with
 * trampoline_fd >= 0 through the exec trampoline (trampoline.h), which
 * reports a failed exec of exe on report_fd. keep: fds above the preserved
 * ones that must stay open until the exec (they are O_CLOEXEC), the
 * trampoline's and report_fd among them. */
struct init_exec {
        const char *exe;
        int preserve_fds;
        const int *keep;
        size_t nkeep;
        int trampoline_fd, report_fd;
};

/* The last steps of every container process, the init's and exec's alike:
 * limits, capabilities, user, no_new_privs, cwd, umask, fds, seccomp, then
 * the exec. Returns only on failure. */
int init_exec_process(const struct spec_process *p, struct seccomp_filter *filter,
                      const struct init_exec *how, struct umw_error **err);

#endif
