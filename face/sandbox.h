/* The sandbox face: one closed sandbox per project. It never builds a
 * container itself: policy/ turns the layers, grants and preset into an OCI
 * config.json, and the runtime's own create/start/run/exec/kill/delete build
 * and end it, exactly as for podman (DESIGN.md, "Data flow"). Every start,
 * grant, refusal, exec and stop goes to the project's audit log. Verbs print
 * text for people, or with json exactly one JSON document on stdout. */
#ifndef UMW_SANDBOX_H
#define UMW_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/container.h"

struct umw_error;

/* --workspace: unset (the policy's mode: review unless it says direct),
 * review, direct. */
enum sandbox_workspace { WORKSPACE_POLICY, WORKSPACE_REVIEW, WORKSPACE_DIRECT };

struct sandbox_opts {
        const char *project; /* -p DIR; NULL: the current directory */
        const char *preset;  /* --preset; NULL: the policy's */
        const char **grants; /* --grant PATH[:ro|:rw], n_grants of them */
        size_t n_grants;
        const char *rootfs;               /* --rootfs; NULL: the host's / read-only */
        enum sandbox_workspace workspace; /* review: writes go to the layer */
        char **args;                      /* the command, NULL-terminated */
        int preserve_fds;                 /* fds 3..3+N-1 pass to the command (doctor --deep) */
        bool json;                        /* --json */
        bool tty;                         /* exec -t */
        const char *cwd;                  /* exec --cwd; NULL: the workspace */
        const uint16_t *publish;          /* up --publish PORT, n_publish of them */
        size_t n_publish;
};

/* sandbox run: build, run the command, tear down; *exit_status is the
 * command's. */
int sandbox_run(const struct runtime_opts *rt, const struct sandbox_opts *o, int *exit_status,
                struct umw_error **err);

/* sandbox up: the project's long-lived sandbox, "umwelt-<project id>", made
 * from the same config as run but with an init that runs nothing (the pause
 * init of runtime/init.h). One that runs already is UMW_EXIT_EXISTS. */
int sandbox_up(const struct runtime_opts *rt, const struct sandbox_opts *o, struct umw_error **err);
/* sandbox exec: o->args in the running sandbox, with its own process's walls
 * (runtime exec); *exit_status is the command's. Not running is
 * UMW_EXIT_STATE, with how to start it. */
int sandbox_exec(const struct runtime_opts *rt, const struct sandbox_opts *o, int *exit_status,
                 struct umw_error **err);
/* sandbox down: SIGTERM, SIGKILL after a grace period, delete, bundle gone.
 * Not running is UMW_EXIT_STATE (what a dead one left is removed). */
int sandbox_down(const struct runtime_opts *rt, const struct sandbox_opts *o,
                 struct umw_error **err);
/* sandbox status: the project's sandbox (running, stopped or absent). */
int sandbox_status(const struct runtime_opts *rt, const struct sandbox_opts *o,
                   struct umw_error **err);
/* sandbox list: every sandbox in the runtime's state root. */
int sandbox_list(const struct runtime_opts *rt, bool json, struct umw_error **err);
/* sandbox gc: removes what dead sandboxes left; with idle_secs >= 0 also
 * downs long-lived sandboxes with no exec for that long. */
int sandbox_gc(const struct runtime_opts *rt, long long idle_secs, bool json,
               struct umw_error **err);

/* sandbox reload: the running sandbox's gateway takes the project's egress
 * rules as they are now (written for it, then SIGHUP), from its next
 * request on; waits until it has read them. Policy that no longer reads (or
 * that the floor now forbids) closes egress and is an error. */
int sandbox_reload(const struct runtime_opts *rt, const struct sandbox_opts *o,
                   struct umw_error **err);

/* The socket through which the project's sandbox asks the relay, as the
 * host reaches it (RELAYDIR/sandboxes/ID/door/relay.sock; inside it is
 * /run/umwelt/relay.sock), and the project's workspace (both malloc'd):
 * where umwelt-mcp's asking tools ask, as `request` from inside does. */
int sandbox_relay_socket(const char *project, char **out, char **workspace, struct umw_error **err);

/* The project's audit log (where every start, exec and stop of its
 * sandbox is written) opened for appending (common/audit.h): umwelt-mcp
 * adds a line for each tool call. */
int sandbox_audit_open(const char *project, int *fd, struct umw_error **err);

/* sandbox log: the project's audit log, as text (a line per event) or as
 * one JSON array of the events. */
int sandbox_log(const char *project, bool json, struct umw_error **err);

/* policy diff: the project's .umwelt.toml against the copy last accepted,
 * line by line. policy accept: that file as it is now becomes the one
 * applied (after it reads as policy), audited. A sandbox applies the
 * project's file only as accepted (face/project_policy.c). */
int sandbox_policy_diff(const char *project, struct umw_error **err);
int sandbox_policy_accept(const char *project, struct umw_error **err);

/* deliver discard: the project's layer (review mode's upper and work
 * directories) removed by fd, no link followed, audited; refused
 * (UMW_EXIT_STATE) while the project's sandbox is up or running, no layer
 * is UMW_EXIT_NOTFOUND. review, apply and sync are umwelt-deliver's
 * (face/deliver.h), which umwelt-run execs. */
int sandbox_deliver_discard(const struct runtime_opts *rt, const char *project,
                            struct umw_error **err);

#endif
