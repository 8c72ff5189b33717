/* umwelt-relay (DESIGN.md, "The relay"): the one door through which a
 * running sandbox asks for more, a human decides outside, and the wall
 * moves live, audited. One relay per uid that owns sandboxes.
 *
 * Its directory (relay_dir: root's /run/umwelt/relay, a user's
 * $XDG_RUNTIME_DIR/umwelt/relay, 0700) holds:
 *   lock              flock'ed by the running relay: one per uid
 *   control.sock      the human side; never mounted into a sandbox
 *   sandboxes/ID/     one per running sandbox (container id ID), made by
 *                     the face before the sandbox is created and removed
 *                     when it ends; the relay follows them with inotify.
 *     state-root      the runtime's state root the sandbox lives in
 *     door/           bound read-only at /run/umwelt inside the sandbox
 *       relay.sock    the sandbox's request socket, bound by the relay:
 *                     which sandbox asks is which socket it came in on.
 *     grants, ports   what the relay gave it live (relay_record.c)
 *     egress          egress rules opened live, a rule a line; with the
 *                     files of the gateway the relay started for a sandbox
 *                     that began without egress (egress.toml, gateway.pid,
 *                     gateway.err)
 */
#ifndef UMW_FACE_RELAY_H
#define UMW_FACE_RELAY_H

#include <stdbool.h>

struct umw_error;

#define RELAY_DOOR_INSIDE "/run/umwelt"            /* where door/ is bound */
#define RELAY_SOCK_INSIDE "/run/umwelt/relay.sock" /* what a request connects to */
/* door/tls: the mount point of a sandbox's trust directory
 * (TLS_TRUST_INSIDE), made only for a sandbox that has one. */
#define RELAY_TRUST_POINT "tls"

/* The relay's directory for this uid (malloc'd), made 0700 when create
 * (and checked: ours, not a link, no other's access). */
int relay_dir(bool create, char **out, struct umw_error **err);

struct relay_opts {
        int timeout_s; /* an unanswered request is denied after it */
        int idle_s;    /* with no sandbox left, the relay ends after it (0: never) */
};

/* Serves in the foreground until SIGTERM, SIGINT or idleness (the face
 * starts it detached, relay_spawn). Another relay already running for this
 * uid: UMW_EXIT_EXISTS. */
int relay_serve(const struct relay_opts *o, struct umw_error **err);

#endif
