/* What the sandbox verbs share (src/sandbox.c): a project located on disk,
 * its policy composed into a bundle, its audit log. Internal to src/. */
#ifndef UMW_SANDBOX_INT_H
#define UMW_SANDBOX_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "face/sandbox.h"
#include "netns/ingress.h"
#include "policy/compose.h"
#include "policy/config.h"
#include "policy/grants.h"
#include "policy/presets.h"

/* The annotations a sandbox's config carries (kept in the runtime's state,
 * so list, status and gc find sandboxes among all containers). */
#define ANNOTATION_PROJECT "run.umwelt.project" /* the workspace */
#define ANNOTATION_PRESET  "run.umwelt.preset"
#define ANNOTATION_GRANTS  "run.umwelt.grants"  /* a JSON array of {"path","mode"} */
#define ANNOTATION_EGRESS  "run.umwelt.egress"  /* "on": the sandbox has a gateway */
#define ANNOTATION_INGRESS "run.umwelt.ingress" /* the published ports: "5173,8080" */

/* A file in a long-lived sandbox's bundle whose mtime is the last exec (or
 * the up), for gc --idle. */
#define LAST_EXEC_FILE "last-exec"
/* The egress files in a bundle (sandbox_net.c): the rules the gateway reads,
 * its pid and start time, its own messages; the console socket of a run. */
#define EGRESS_POLICY_FILE  "egress.toml"
#define GATEWAY_PID_FILE    "gateway.pid"
#define GATEWAY_ERR_FILE    "gateway.err"
#define CONSOLE_SOCKET_FILE "console.sock"

/* Who the sandbox runs as: the invoking user, or the sudo caller when root
 * came through sudo. Root otherwise stays root, with no capability. */
struct identity {
        uid_t uid;
        gid_t gid;
        char *home;
        bool rootless;
        /* root's: the host ids the container's 0 maps to (sandbox_root_id). */
        uid_t root_uid;
        gid_t root_gid;
};

/* The host id root's sandboxes run as in place of the host's 0 when root
 * has no range of its own in /etc/subuid (/etc/subgid): 0x70000000, past
 * what distributions and systemd hand out (users, DynamicUser, and
 * systemd-nspawn's container ranges 0x80000..0x6FFFFFFF). */
#define SANDBOX_ROOT_ID 1879048192u

/* The project: whose sandbox, where, its names, its audit log. */
struct sandbox_project {
        struct identity who;
        char *workspace, *id, *container_id, *audit_file;
        int audit_fd;
};

/* The policy as this sandbox sees it: the layers read, the grants resolved,
 * the preset chosen. */
struct sandbox_view {
        struct policy_config policy;
        bool loaded;
        struct grant_list grants;
        struct grant_request *requests;
        char **request_paths;
        struct preset preset;
        bool review; /* the workspace is an overlay over the project's layer */
};

/* Its network (sandbox_net.c): egress enabled, the gateway binary, the
 * variables the sandbox gets, the trust directory bound inside, the CA's
 * directory hidden inside; the ports up publishes. */
struct sandbox_net {
        bool egress;
        char *gateway_bin;
        char **env_set;
        char *trust_dir, *ca_dir;
        uint16_t ports[INGRESS_PORTS_MAX];
        size_t n_ports;
};

struct sandbox {
        struct sandbox_project project;
        struct sandbox_view view;
        struct sandbox_net net;
        /* The bundle, and the config composed into it. up: the bundle lives
         * as long as the sandbox; a plain run: the bundle is the runtime's
         * state directory. */
        char *bundle, *config;
        bool keep_bundle;
        /* The binds' sources compose opened, open until the container is
         * created (config's sources name them as /proc/self/fd/N). */
        struct compose_fds fds;
        bool terminal;  /* run: the command gets a pty */
        bool pause_run; /* run: a pause init, the command exec'd into it (see sandbox_run.c) */
        /* The runtime's state root the sandbox is made in (the relay reads
         * its state there); its door to the relay, bound at /run/umwelt,
         * kept when the sandbox outlives this process (up); a relay runs
         * or was started, so the start waits for the door's socket. */
        const char *state_root;
        char *relay_door;
        bool relay_keep;
        bool relay_awaited;
        /* Review mode: LAYER/lock, flock'ed while this process starts or
         * runs a sandbox on the layer (two overlays on one upper are
         * undefined behaviour to overlayfs). */
        int layer_lock;
};

#define SANDBOX_INIT                                                                               \
        {                                                                                          \
                .project.audit_fd = -1, .layer_lock = -1                                           \
        }

/* ------------------------------------------------------------ the project
 * (project.c) */

/* Who: the invoking user (face/user.h), their home, and for root the ids
 * its sandboxes run as. */
int sandbox_identity_get(struct identity *id, struct umw_error **err);
/* Where the bundle of container id lives while it runs, made 0700: root's
 * in /run, a user's in their runtime directory (*out malloc'd). */
int sandbox_bundle_dir(const char *id, char **out, struct umw_error **err);
/* The project at project (NULL: "."), which must be a directory: its
 * workspace, project id and the long-lived container id
 * "umwelt-<project id>". */
int sandbox_locate(struct sandbox *s, const char *project, struct umw_error **err);
/* Same for a workspace path as recorded (gc: it may be gone by now). */
int sandbox_for_workspace(struct sandbox *s, const char *workspace, struct umw_error **err);
/* The project's layer in review mode: STATE/PROJECT-ID/layer, whose
 * upper/ holds the agent's writes (*out malloc'd). */
int sandbox_layer_dir(const struct sandbox *s, char **out, struct umw_error **err);
/* UMW_EXIT_STATE, saying what (a gerund: "discarding") waits for, while
 * the project's sandbox runs: its workspace is an overlay on the layer
 * (sandbox_life.c). */
int sandbox_refuse_running(const struct runtime_opts *rt, struct sandbox *s, const char *what,
                           struct umw_error **err);
/* Review mode's layer (open as layer_fd) locked for s (s->layer_lock,
 * until released): another start or run on it is UMW_EXIT_STATE. */
int sandbox_layer_lock(struct sandbox *s, int layer_fd, struct umw_error **err);
/* Opens the project's audit log (once): verbs that act open it before they
 * act and fail when they cannot; status and list never create one. */
int sandbox_open_audit(struct sandbox *s, struct umw_error **err);
/* Policy layers, grants and preset for o, composed into s->config with the
 * sandbox's annotations (the audit log opened first) and, for a long-lived
 * sandbox or one with egress, written to s->bundle/config.json (a plain
 * run's config goes to the runtime in memory); long_lived adds
 * run.umwelt.init=pause and takes no command. Refusals are audited. */
int sandbox_compose(struct sandbox *s, const struct sandbox_opts *o, bool long_lived,
                    struct umw_error **err);
/* The runtime options a sandbox is built with: without the cgroup manager
 * where the floor allows best-effort limits for an unprivileged user. */
struct runtime_opts sandbox_runtime(const struct sandbox *s, const struct runtime_opts *rt);
/* Frees s; its bundle is removed unless keep_bundle. */
void sandbox_release(struct sandbox *s);
/* A struct sandbox released when it goes out of scope. */
#define _cleanup_sandbox_ __attribute__((cleanup(sandbox_release)))

/* The identity and the policy layers alone (reload: no grant, no preset),
 * the project's file only as accepted: one that is not is refused and the
 * refusal audited (project_policy.c). */
/* The floor and the user's config alone, into s->view.policy (what
 * delivery reads: the project's file has no say in it). */
int sandbox_user_policy_read(struct sandbox *s, struct umw_error **err);
int sandbox_policy_read(struct sandbox *s, struct umw_error **err);

/* ------------------------------------------------------------ network
 * (sandbox_net.c before the start, sandbox_gateway.c the gateway's process,
 * sandbox_run.c and sandbox_reload.c on a running sandbox) */

/* Before compose: the ports up publishes ([ingress] ports and --publish,
 * long_lived only), and with egress enabled its prerequisites (the gateway
 * binary; the CA and trust bundle, required where a rule needs TLS
 * termination) and the variables they give the sandbox. A missing one
 * refuses the start, naming it. s->ca_dir, to hide, in every case. */
int sandbox_net_prepare(struct sandbox *s, const struct sandbox_opts *o, bool long_lived,
                        struct umw_error **err);
/* For a created container: its gateway (egress) listening in the init's
 * network namespace before the start, the start, then the published ports.
 * tied: the gateway ends with this process (run). On failure the gateway
 * is gone again; the container is the caller's to delete. */
int sandbox_start_gated(struct sandbox *s, const struct runtime_opts *rt, bool tied,
                        struct umw_error **err);
/* sandbox run with egress: create, gateway, start, supervise, delete. */
int sandbox_run_gated(struct sandbox *s, const struct runtime_opts *rt,
                      const struct sandbox_opts *o, int *exit_status, struct umw_error **err);
/* Writes bundle/EGRESS_POLICY_FILE (0600, atomically): the project's rules
 * as the floor bounds them where it enables egress, and with live (a
 * running sandbox: a start has none) the rules the relay opened live where
 * the floor allows egress; with allow false (a policy that did not read)
 * none at all. */
int sandbox_egress_policy_write(const struct sandbox *s, bool allow, bool live,
                                struct umw_error **err);
/* A running sandbox's egress rules (its policy read into s, with the
 * relay's live ones) given to its gateway at s->bundle: reloaded where it
 * runs (SIGHUP, its confirmation awaited); where none runs and may_start,
 * a gateway started there, listening in init's network namespace, that
 * ends with the init (*started: its pid; 0 when one was reloaded). */
int sandbox_egress_live(struct sandbox *s, pid_t init, bool may_start, pid_t *started,
                        struct umw_error **err);
/* An audit line of the egress rules in force (event "egress" at the start,
 * "egress-rules" at a reload), with the gateway's state and any error. */
void sandbox_audit_rules(struct sandbox *s, const char *event, const char *gateway,
                         const char *error);

/* HTTP_PROXY=http://127.0.0.1:3128 and its kin: the variables that send a
 * sandbox's clients to its gateway (NULL-terminated). */
extern const char *const sandbox_proxy_env[];

/* s->gateway_bin: next to umwelt-run, else in the install's bindir. */
int sandbox_gateway_locate(struct sandbox *s, struct umw_error **err);
/* A gateway this process started: its pid, a pidfd, and the read end of
 * its ready fd, which says "ready" once it serves and "stopped" when it
 * stops as asked (run's reaping of every child may take its status). */
struct sandbox_gateway {
        pid_t pid;
        int pidfd, ready; /* -1: none (any more) */
        char said[32];    /* what ready has said so far */
};
#define SANDBOX_GATEWAY_INIT                                                                       \
        {                                                                                          \
                .pidfd = -1, .ready = -1                                                           \
        }
/* Makes the gateway's listeners inside the init's network namespace (the
 * door exists from then on: a connection waits in their backlog) and starts
 * the gateway with them, recorded in the bundle. With wait, at once and
 * until it is ready or fails with the gateway's own message; without, it
 * is exec'd at the first connection and sandbox_gateway_end() reports a
 * gateway that failed. */
int sandbox_gateway_start(const struct sandbox *s, pid_t init, bool tied, bool wait,
                          struct sandbox_gateway *gw, struct umw_error **err);
/* Stops gw (SIGTERM, SIGKILL after a grace period) and reaps it: gone when
 * this returns. One that had ended before, other than by its own stop at
 * the end of the init, is reported (a warning and an audit line; s NULL:
 * not reported). */
void sandbox_gateway_end(struct sandbox *s, struct sandbox_gateway *gw);
/* Leaves gw running (up: it outlives this process). */
void sandbox_gateway_release(struct sandbox_gateway *gw);
/* The live gateway recorded in bundle (pid and start time must match), or 0. */
pid_t sandbox_gateway_pid(const char *bundle);
/* Sends sig to it; false when there is none. */
bool sandbox_gateway_signal(const char *bundle, int sig);
/* SIGTERM, SIGKILL after a grace period; reaps it when it is our child. */
void sandbox_gateway_stop(const char *bundle);

/* ------------------------------------------------------------ the relay
 * (sandbox_relay.c) */

/* RELAYDIR/sandboxes/ID for s (state_root: the runtime's), s->relay_door
 * set, and the relay started when none runs. */
int sandbox_relay_prepare(struct sandbox *s, const char *state_root, struct umw_error **err);
/* Waits (a bounded while) until the relay has bound the door's socket: a
 * request made at once from inside must find it. Late: a warning. */
void sandbox_relay_await(const struct sandbox *s);
/* The door of sandbox id removed (it ended), and the same for an entry of
 * an open sandboxes directory. */
void sandbox_relay_remove(const char *id);
void sandbox_relay_remove_at(int sandboxes, const char *name);
/* Egress rules the relay opened live (`request egress`, approved): at most
 * SANDBOX_LIVE_EGRESS_MAX, a rule a line in the relay's directory of the
 * sandbox (RELAY_EGRESS_FILE), each parsed again as it is read. *rules: a
 * NULL-terminated list (grants_strv_free), NULL when there are none (no
 * such file, no directory: a sandbox the relay never served). A bad line is
 * an error: the caller writes no rule then, so a fault closes, never widens. */
#define SANDBOX_LIVE_EGRESS_MAX 32
#define RELAY_EGRESS_FILE       "egress"
int sandbox_relay_egress_at(int dir, char ***rules, struct umw_error **err);
int sandbox_relay_egress(const char *id, char ***rules, struct umw_error **err);
/* RELAYDIR/sandboxes/ID (malloc'd): where the gateway the relay starts for
 * a sandbox that began without egress keeps its files, as a bundle would
 * (EGRESS_POLICY_FILE, GATEWAY_PID_FILE, GATEWAY_ERR_FILE). */
int sandbox_relay_sandbox_dir(const char *id, char **out, struct umw_error **err);

/* One audit line (a failure to write it is a warning). */
void sandbox_audit(struct sandbox *s, const char *event, const char *const *kv);
/* The "start" line and a "grant" line per grant; command NULL for up. */
void sandbox_audit_start(struct sandbox *s, const char *command);

/* {"id":ID,"exit_status":N} on stdout: run and exec with --json, after the
 * command's own output. */
void sandbox_print_exit(const char *id, int status);
/* Removes a bundle directory umwelt made for container id (the files it
 * puts there, then the directory); anything else at path is left alone. */
void sandbox_remove_bundle(const char *path, const char *id);

/* The project's egress log, next to its audit log (malloc'd). */
char *sandbox_egress_log(const struct sandbox *s);
/* "no sandbox is running for WORKSPACE", with how to start one: a state error. */
int sandbox_not_running(const struct sandbox *s, struct umw_error **err);

#endif
