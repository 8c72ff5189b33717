/* What the relay's files share (relay.c the loop and its sandboxes,
 * relay_decide.c a request from receipt to answer, relay_control.c the
 * human side). Internal to umwelt-relay. */
#ifndef UMW_FACE_RELAY_INT_H
#define UMW_FACE_RELAY_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <yajl/yajl_gen.h>

#include "face/relay.h"
#include "face/relay_mount.h"
#include "face/relay_msg.h"
#include "policy/host_actions.h"

/* Bounds: a sandbox cannot grow the relay or slow another's requests. */
#define RELAY_SANDBOXES_MAX 256
#define RELAY_CONNS_PER_SB  4  /* connections a sandbox may hold open */
#define RELAY_PENDING_MAX   4  /* requests of one sandbox waiting for a human */
#define RELAY_GRANTS_MAX    64 /* live grants of one sandbox */
#define RELAY_PORTS_MAX     16 /* ports published live for one sandbox */
#define RELAY_CONTROLS_MAX  16
#define RELAY_CONTROL_LINE  4096
#define RELAY_ID_LEN        128 /* a container id */
#define RELAY_RUNS_MAX      64  /* host actions running at once */
#define RELAY_DESC_MAX      256 /* bytes of an action's description a human is shown */

/* What an epoll event points at: each struct below starts with one. */
enum relay_ev {
        EV_SIGNAL = 1,
        EV_INOTIFY,
        EV_TIMER,
        EV_CONTROL_LISTEN,
        EV_CONTROL,
        EV_DOOR,
        EV_CONN,
        EV_ACTION
};

struct relay_live {
        char path[RELAY_PATH_MAX + 1];
        bool rw, is_file;
        uint64_t mnt_id;
        char hash[RELAY_HASH_HEX + 1]; /* of the request that granted it */
};

struct relay_sandbox {
        enum relay_ev ev; /* EV_DOOR */
        int door;         /* the listening request socket */
        int dir;          /* RELAYDIR/sandboxes/ID */
        char id[RELAY_ID_LEN];
        char *state_root;
        char *workspace; /* from the runtime's state, at its first request */
        int audit_fd;    /* the project's audit log, from then on */
        unsigned conns, pending;
        struct relay_live *live; /* grown as grants come: most sandboxes have none */
        size_t n_live;
        uint16_t ports[RELAY_PORTS_MAX]; /* published live, each by a forwarder */
        size_t n_ports;
        char **egress; /* rules opened live (NULL-terminated), kept in RELAY_EGRESS_FILE */
        size_t n_egress;
        char *bundle; /* from the runtime's state, with workspace */
        bool gated;   /* started with egress: its gateway lives in bundle */
};

struct relay_pending;
struct relay_run;

struct relay_conn {
        enum relay_ev ev; /* EV_CONN: records from its parser */
        int fd, records;
        pid_t parser;
        struct relay_sandbox *sb;
        struct relay_pending *waiting; /* its request a human is asked */
        struct relay_run *running;     /* its host action, running */
};

/* A host action running under its supervisor (subreaper.h). */
struct relay_run {
        enum relay_ev ev; /* EV_ACTION: the supervisor's result pipe */
        int fd;
        pid_t supervisor;
        struct relay_conn *conn; /* NULL once the requester went */
        int audit_fd;            /* the project's audit log (its own fd) */
        char sandbox[RELAY_ID_LEN];
        char action[RELAY_ACTION_MAX + 1];
        char id[RELAY_ID_MAX + 1];
        char hash[RELAY_HASH_HEX + 1];
        char *buf; /* the result as read so far */
        size_t have;
};

struct relay_pending {
        uint64_t id;
        char hash[RELAY_HASH_HEX + 1];
        struct relay_request q;
        char path[RELAY_PATH_MAX + 1]; /* a grant: the path resolved */
        bool is_file;
        dev_t dev; /* ... and its inode then: the one the human is shown */
        ino_t ino;
        char standing[RELAY_PATH_MAX + 1]; /* the user's rule that allows it, or "" */
        char **argv;                       /* an action: what runs, as shown */
        char description[RELAY_DESC_MAX + 1];
        int timeout_s;            /* the user's relay.timeout, or 0 */
        struct timespec deadline; /* CLOCK_MONOTONIC */
        struct relay_conn *conn;
};

struct relay_control_conn {
        enum relay_ev ev; /* EV_CONTROL */
        int fd;
        bool watching;
        size_t have;
        char buf[RELAY_CONTROL_LINE];
};

struct relay {
        const struct relay_opts *o;
        int epfd, signals, inotify, timer, control, lock;
        char *dir;
        bool control_made; /* control.sock is ours to remove (not systemd's) */
        int sandboxes_fd;  /* RELAYDIR/sandboxes */
        int notes_fd;      /* STATE/umwelt/notes.jsonl, opened at the first note */
        uint64_t next_id;
        struct relay_sandbox *sb[RELAY_SANDBOXES_MAX];
        struct relay_conn *conns[RELAY_SANDBOXES_MAX * RELAY_CONNS_PER_SB];
        struct relay_pending *pending[RELAY_SANDBOXES_MAX * RELAY_PENDING_MAX];
        struct relay_control_conn *controls[RELAY_CONTROLS_MAX];
        struct relay_run *runs[RELAY_RUNS_MAX];
        struct timespec idle_since; /* when the last sandbox went; 0: some run */
        bool ending;                /* the relay is letting go of everything */
};

/* relay_record.c: the live grants kept in sb->dir's "grants" file. */
int relay_live_save(const struct relay_sandbox *sb, struct umw_error **err);
/* Reads them back (a relay started after one that was killed); a bad
 * line is skipped with a warning. */
void relay_live_load(struct relay_sandbox *sb);
/* The ports published live, in sb->dir's "ports" file, and back. */
int relay_ports_save(const struct relay_sandbox *sb, struct umw_error **err);
void relay_ports_load(struct relay_sandbox *sb);
/* The egress rules opened live, in sb->dir's RELAY_EGRESS_FILE, and back
 * (a bad file: a warning, and none). */
int relay_egress_save(const struct relay_sandbox *sb, struct umw_error **err);
void relay_egress_load(struct relay_sandbox *sb);
/* The requests of sb waiting for a human, in sb->dir's "pending" file. */
int relay_pending_save(const struct relay *R, const struct relay_sandbox *sb,
                       struct umw_error **err);
/* Calls left for each request a killed relay left pending (id as text),
 * then removes the file. */
typedef void (*relay_left_fn)(struct relay_sandbox *sb, const char *id, const char *hash);
void relay_pending_left(struct relay_sandbox *sb, relay_left_fn left);

/* relay_state.c: the tables every other file works on. */
/* Watches fd for input, its events pointing at ptr. */
int relay_watch(struct relay *R, int fd, void *ptr, struct umw_error **err);
/* A generated JSON object as one line (malloc'd, newline-ended; NULL when
 * out of memory); g is freed. */
char *relay_line(yajl_gen g, size_t *len);
/* Sends a line to a sandbox's connection without ever blocking the relay:
 * a sandbox that does not read its answers loses them. */
void relay_send(int fd, const char *line, size_t len);
/* An answer's object opened with "v", "id" (NULL: none) and "status":
 * its other members are the caller's, then relay_line; NULL when out of
 * memory. */
yajl_gen relay_answer_open(const char *id, enum relay_status status);
/* An answer line {"v":1,"id":..,"status":..,"reason":..} on fd (id and
 * reason NULL: none). */
void relay_reply(int fd, const char *id, enum relay_status status, const char *reason);
/* The same to a sandbox's connection (id 0: none). */
void relay_answer(struct relay_conn *c, uint64_t id, enum relay_status status, const char *reason);
/* The sandbox's init (a pidfd, checked against the runtime's state) and,
 * the first time, its workspace and audit log: UMW_EXIT_STATE when it is
 * not running. */
int relay_sandbox_target(struct relay_sandbox *sb, struct relay_target *t, struct umw_error **err);
/* One audit line in the sandbox's project log (kv as audit_append's,
 * "sandbox" added); a failure is a warning. */
void relay_audit(struct relay_sandbox *sb, const char *event, const char *const *kv);
/* The line of a request the relay denied without a human: a killed
 * relay's leftover, or one whose connection or relay ended. */
void relay_audit_denied(struct relay_sandbox *sb, const char *id, const char *hash,
                        const char *why);
/* Stops (paused) or resumes reading c's records: a connection whose
 * request waits or runs is not read. */
void relay_conn_pause(struct relay *R, struct relay_conn *c, bool paused);
/* Frees a request and what it holds. */
void relay_pending_free(struct relay_pending *p);
/* A new pending request for c (the sandbox's limit checked: -EBUSY),
 * waiting until deadline; c stops being read until it is answered. */
int relay_pending_add(struct relay *R, struct relay_conn *c, struct relay_pending *p,
                      struct umw_error **err);
struct relay_pending *relay_pending_find(struct relay *R, uint64_t id);
/* p is no longer pending (its connection stays paused); the caller
 * keeps p. */
void relay_pending_remove(struct relay *R, struct relay_pending *p);
/* Answers p's connection (when it is still there), resumes reading it,
 * frees p. */
void relay_pending_drop(struct relay *R, struct relay_pending *p, enum relay_status status,
                        const char *reason);
/* Denies (as timed out) every request whose deadline passed; the nearest
 * deadline left in *next (0 when none). */
void relay_expire(struct relay *R, struct timespec *next);
/* p as the human side sees it: one JSON line (malloc'd, newline-ended). */
char *relay_pending_line(const struct relay_pending *p, size_t *len);
/* Tells every watching control client of p. */
void relay_announce(struct relay *R, const struct relay_pending *p);

/* relay_action.c: host actions. */
/* The action p asks for, found in the table t loaded here, offered to this
 * user in sb's project, its argv made from p's parameters (p->argv) and
 * its description kept; *a the action. Else *rule names what refused it. */
int relay_action_resolve(struct relay *R, struct relay_pending *p, const struct relay_sandbox *sb,
                         struct host_actions *t, const struct host_action **a, const char **rule,
                         struct umw_error **err);
/* Starts p's action a under a supervisor; c is not read until the answer
 * (if it closes first, the action runs on, audited, unanswered). by: who
 * allowed it, for the audit log. */
int relay_action_start(struct relay *R, struct relay_conn *c, struct relay_pending *p,
                       const struct host_action *a, const char *by, struct umw_error **err);
/* The supervisor's result readable: read, and at its end answered and
 * audited. */
void relay_action_read(struct relay *R, struct relay_run *run);
/* The relay ends: every action is ended with it, audited. */
void relay_actions_end(struct relay *R);
/* The actions offered to this user (in project; NULL: in any), as the
 * answer line {"v":1,"status":"ok","actions":[...]} on fd. */
void relay_actions_list(int fd, const char *project);

/* relay_decide.c: a request from receipt to answer. */
/* One record from c's parser, answered now or once a human decides. */
void relay_decide(struct relay *R, struct relay_conn *c, const struct relay_request *q);
/* A human's answer to pending id; hash: the request as it was shown. The
 * grant applied (and with remembered, kept for the project's next start)
 * and the sandbox answered; *err for the control client. */
int relay_approve(struct relay *R, uint64_t id, const char *hash, bool remembered,
                  struct umw_error **err);
int relay_deny(struct relay *R, uint64_t id, const char *why, struct umw_error **err);

/* relay_control.c: the human side. */
void relay_control_accept(struct relay *R);
void relay_control_read(struct relay *R, struct relay_control_conn *cc);

#endif
