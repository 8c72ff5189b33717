/* The state directory: ROOT/ID/ holds state.json (what `state` reports,
 * plus what the runtime needs later), config.json (the config the container
 * was created from, for exec) and start.sock (present while the container
 * waits for `start`). ROOT and ROOT/ID are 0700; every file is written to a
 * temp name and renamed. */
#ifndef UMW_STATE_H
#define UMW_STATE_H

#include <stdbool.h>
#include <sys/types.h>
#include <yajl/yajl_tree.h>

struct umw_error;
struct spec_kv;

enum container_status {
        STATUS_CREATING,
        STATUS_CREATED,
        STATUS_RUNNING,
        STATUS_PAUSED,
        STATUS_STOPPED,
};

struct container_state {
        yajl_val tree; /* owns the strings */
        const char *id;
        pid_t pid;
        unsigned long long start_time; /* of pid, from /proc/PID/stat: guards pid reuse */
        const char *bundle;
        const char *rootfs;
        const char *created; /* RFC 3339 */
        uid_t owner;
        const char *cgroup; /* relative cgroup path, "" when not placed */
        yajl_val annotations;
};

#define STATE_START_SOCKET "start.sock"
#define STATE_CONFIG       "config.json"
/* How messages name the config saved at create (STATE_CONFIG in the state
 * directory of container id, at most 1024 bytes): the container, not a bare
 * "config.json" the reader would look for in the bundle. */
#define STATE_CONFIG_NAME_MAX 1100
void state_config_name(const char *id, char buf[static STATE_CONFIG_NAME_MAX]);

/* Opens (creating when asked) the state root. */
int state_root_open(const char *root, bool create, int *out, struct umw_error **err);
/* A container id: letters, digits, '_', '.', '+', '-', not starting with '.'. */
int state_check_id(const char *id, struct umw_error **err);
/* Creates ROOT/ID; an existing one is UMW_EXIT_EXISTS. */
int state_dir_create(int rootfd, const char *id, int *dirfd, struct umw_error **err);
/* Opens ROOT/ID; a missing one is UMW_EXIT_NOTFOUND. */
int state_dir_open(int rootfd, const char *id, int *dirfd, struct umw_error **err);
/* Removes ROOT/ID and everything in it. */
int state_dir_remove(int rootfd, const char *id, struct umw_error **err);

int state_write(int dirfd, const char *id, pid_t pid, unsigned long long start_time,
                const char *bundle, const char *rootfs, const char *cgroup,
                const struct spec_kv *annotations, size_t n_annotations, struct umw_error **err);
int state_read(int dirfd, struct container_state *st, struct umw_error **err);
void state_release(struct container_state *st);

/* Where the container is, from its pid, start time, start socket and cgroup. */
enum container_status state_status(const struct container_state *st, int dirfd);
const char *state_status_name(enum container_status s);
/* The OCI state document (what `state` prints and hooks get on stdin). */
char *state_to_json(const struct container_state *st, enum container_status status, bool pretty,
                    size_t *len);
/* Generates the same document into g (for `list --format json`). */
void state_gen(void *g, const struct container_state *st, enum container_status status);

/* The start time of pid (field 22 of /proc/PID/stat), or 0 when it is gone. */
unsigned long long state_pid_start_time(pid_t pid);
/* True when st->pid is still the process that was created. */
bool state_pid_alive(const struct container_state *st);

#endif
