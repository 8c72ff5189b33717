/* Internal to the lifecycle verbs (runtime/container*.c): what create builds
 * (container_create.c), a container found by id (container.c), and the steps
 * start, run and delete share. */
#ifndef UMW_CONTAINER_INT_H
#define UMW_CONTAINER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/un.h>

#include "runtime/container.h"
#include "runtime/spec.h"
#include "runtime/state.h"

struct umw_error;
struct cgroup_plan;
struct seccomp_filter;

/* The most of config.json create reads, and delete reads back. */
#define CONFIG_MAX (16u << 20)

/* Everything create builds, so that a failure at any step can undo it all. */
struct creation {
        const struct runtime_opts *rt;
        const struct create_opts *o;
        struct spec *spec;
        char *config_text;
        size_t config_len;
        char *config_path;
        char *rootfs;
        char *cgroup;
        struct cgroup_plan *cgroup_plan;
        struct seccomp_filter *filter;
        int rootfd, dirfd;
        int sync_fd, console_fd, console_peer;
        /* The listening start.sock, or with start_in_process our end of a
         * pair whose other end (start_peer) the init waits on for GO. */
        int start_fd, start_peer;
        int cgroup_fd;          /* the cgroup2 directory the init is cloned into */
        int trampoline_fd;      /* the exec trampoline the init execs through, or -1 */
        char listen_env[2][32]; /* LISTEN_FDS=N and LISTEN_PID=1 (add_listen_env) */
        pid_t pid;
        bool interactive;      /* run in the foreground: umwelt-run may hold the terminal */
        bool start_in_process; /* run: no start.sock, this process starts the init */
        bool go_early;         /* run: GO sent with the walls up, before READY is read */
        bool dir_created, cgroup_placed;
        bool born_in_cgroup; /* CLONE_INTO_CGROUP took: no cgroup2 migration */
        size_t n_trees;      /* mounts whose trees go to the init after GO (mounts.h) */
        bool runtime_clones; /* init_runtime_may_clone() */
};

void ctr_creation_init(struct creation *c, const struct runtime_opts *rt,
                       const struct create_opts *o);
void ctr_creation_release(struct creation *c);
/* Undoes a failed create: the init, its cgroup, its state directory. */
void ctr_creation_abort(struct creation *c);
/* Every step of create; on failure, undone (ctr_creation_abort). */
int ctr_create(struct creation *c, struct umw_error **err);
/* The address of socket name in directory dirfd: 0 or -ENAMETOOLONG. */
int ctr_socket_path(int dirfd, const char *name, struct sockaddr_un *addr);

/* A container looked up by id: its state and state directory. */
struct found {
        int rootfd, dirfd;
        struct container_state st;
        enum container_status status;
        const struct spec *spec; /* its config when the caller has it (run), else NULL */
};

/* Looks container id up in rt's state root; ctr_found_release frees it. */
int ctr_find(const struct runtime_opts *rt, const char *id, struct found *f,
             struct umw_error **err);
void ctr_found_release(struct found *f);
/* The config saved at create, in f's state directory. */
int ctr_load_saved_spec(const struct found *f, struct spec **spec, struct umw_error **err);
/* f's config: f->spec, or the saved one loaded into *owned. */
int ctr_found_spec(const struct found *f, const struct spec **spec, struct spec **owned,
                   struct umw_error **err);
/* Runs spec's hooks of kind (none: nothing), handing them f's state as
 * status. */
int ctr_run_hooks_outside(const struct found *f, const struct spec *spec, enum spec_hook_kind kind,
                          enum container_status status, struct umw_error **err);
/* The container's processes (malloc'd). */
int ctr_list_processes(const struct container_state *st, pid_t **pids, size_t *n,
                       struct umw_error **err);
/* Deletes f (killing it first with force), its hooks, cgroup and state. */
int ctr_delete_found(struct found *f, bool force, struct umw_error **err);

#endif
