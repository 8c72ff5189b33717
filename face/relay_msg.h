/* The relay's wire format (umwelt-relay(1), "PROTOCOL"): JSON lines, one
 * object a line, at most RELAY_LINE_MAX bytes with its newline, every
 * member typed and bounded, unknown members refused. Three conversations:
 *
 *   sandbox -> relay  a request:  {"v":1,"kind":"grant","path":"/srv/data",
 *                     "mode":"ro","why":"..."}; kinds grant (path, mode "ro"
 *                     or "rw", why), revoke (path, why optional), egress
 *                     (rule, why), ingress (port, why), note (text), status,
 *                     action (name, params {"NAME":"VALUE",...}, why),
 *                     actions.
 *   relay -> sandbox  answers: {"v":1,"id":"7","status":"pending"} while a
 *                     human decides, then one final {"v":1,"id":"7",
 *                     "status":"granted","reason":"..."}; status "ok" for a
 *                     note, and for status with "grants", "egress", "ports";
 *                     an action's adds how it ran (exit_status, signal,
 *                     timed_out, duration_ms, stdout, stderr, ...), actions'
 *                     the list ("actions").
 *   human -> relay    control: {"v":1,"op":"pending"|"watch"|"adopt"|"actions"}, or
 *                     {"v":1,"op":"approve","id":"7","hash":"<sha256 hex>",
 *                     "remember":false}, {"v":1,"op":"deny","id":"7",
 *                     "why":"..."}.
 *
 * A request is parsed from the sandbox's bytes by a process that holds
 * nothing (umwelt-relay's per-connection child) into the fixed form below
 * and handed to the monitor as one SOCK_SEQPACKET record; the monitor
 * checks that record again (relay_request_check) before it trusts a byte
 * of it. Text a human will read (why, note, path) carries no control
 * character and is well-formed UTF-8, so it cannot steer their terminal.
 * Free of system calls; the request parser is fuzzed
 * (tests/fuzz/fuzz-relay-msg.c). */
#ifndef UMW_FACE_RELAY_MSG_H
#define UMW_FACE_RELAY_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/host_actions.h"

struct umw_error;

#define RELAY_VERSION  1
#define RELAY_LINE_MAX 65536 /* bytes a message may take, newline included */
/* An answer may carry an action's output (two streams of at most
 * HOST_ACTION_OUTPUT_MAX bytes, escaped at most twice over). */
#define RELAY_ANSWER_MAX (4 * HOST_ACTION_OUTPUT_MAX + RELAY_LINE_MAX)
#define RELAY_PATH_MAX   4095 /* bytes of a path, as PATH_MAX without its NUL */
#define RELAY_RULE_MAX   512  /* an egress rule: host[:port][/path-glob] */
#define RELAY_WHY_MAX    1024 /* the agent's reason, a denial's reason */
#define RELAY_NOTE_MAX   4096
#define RELAY_ID_MAX     20 /* a request id: decimal digits */
#define RELAY_HASH_HEX   64 /* a request's SHA-256, lowercase hex */
/* An action request: the action's name and its parameters' values. */
#define RELAY_ACTION_MAX     HOST_ACTION_NAME_MAX
#define RELAY_PARAMS_MAX     HOST_ACTION_PARAMS_MAX
#define RELAY_PARAM_NAME_MAX HOST_ACTION_PARAM_MAX
#define RELAY_PARAM_MAX      HOST_ACTION_VALUE_MAX

enum relay_kind {
        RELAY_BAD = 0, /* not a request: error says why (child -> monitor only) */
        RELAY_GRANT,
        RELAY_REVOKE,
        RELAY_EGRESS,
        RELAY_INGRESS,
        RELAY_NOTE,
        RELAY_STATUS,
        RELAY_ACTION,  /* run a host action (policy/host_actions.h) */
        RELAY_ACTIONS, /* the host actions offered to this sandbox */
};

struct relay_param {
        char name[RELAY_PARAM_NAME_MAX + 1];
        char value[RELAY_PARAM_MAX + 1];
};

/* A request as the monitor gets it: every string NUL-terminated inside its
 * array, the members a kind does not take empty or zero. */
struct relay_request {
        uint32_t kind; /* enum relay_kind */
        uint32_t rw;   /* grant: 1 for "rw" */
        uint32_t port; /* ingress: 1..65535 */
        char path[RELAY_PATH_MAX + 1];
        char rule[RELAY_RULE_MAX + 1];
        char why[RELAY_WHY_MAX + 1];
        char text[RELAY_NOTE_MAX + 1]; /* note's text; RELAY_BAD: the error line */
        char action[RELAY_ACTION_MAX + 1];
        uint32_t n_params;
        struct relay_param params[RELAY_PARAMS_MAX];
};

/* The kind's name in the protocol ("grant" ...), or NULL. */
const char *relay_kind_name(enum relay_kind kind);

/* Parses one line (len bytes, its newline already cut off) into *out. On
 * bad input returns -EINVAL with a one-line *err of kind UMW_EXIT_CONFIG
 * naming the JSON path and what was expected (a member's name is printed
 * with control characters shown as '?', no other byte of the line is
 * echoed); an unsupported version is -EPROTONOSUPPORT. *out is zeroed
 * first and is only meaningful on success. */
int relay_request_parse(const char *line, size_t len, struct relay_request *out,
                        struct umw_error **err);

/* What the monitor asks of a record from the parser child: kind in range,
 * every string terminated inside its array, the kind's members present and
 * within bounds as relay_request_parse leaves them, the others empty.
 * RELAY_BAD records must carry a one-line text. -EINVAL with *err when not. */
int relay_request_check(const struct relay_request *q, struct umw_error **err);

/* The request's line (malloc'd, newline-terminated, *len without the NUL):
 * what `umwelt-run request` sends. relay_request_parse of it gives q back.
 * q must pass relay_request_check and not be RELAY_BAD. */
int relay_request_format(const struct relay_request *q, char **out, size_t *len,
                         struct umw_error **err);

enum relay_status {
        RELAY_PENDING = 0, /* asked of a human; a final answer follows */
        RELAY_OK,          /* note, status: done */
        RELAY_GRANTED,
        RELAY_DENIED,
        RELAY_TIMEOUT,
        RELAY_REFUSED, /* by policy or by a limit, without asking */
        RELAY_ERROR,   /* malformed request, or the relay failed to apply it */
};

const char *relay_status_name(enum relay_status status);

/* An answer as the client reads it: id may be empty (an answer to a line
 * that was not a request), reason is empty when none was given. */
struct relay_answer {
        enum relay_status status;
        char id[RELAY_ID_MAX + 1];
        char reason[RELAY_WHY_MAX + 1];
};

/* Parses an answer line (len bytes, newline cut off): -EINVAL with *err on
 * anything but an object with "v" 1, a known "status", and optional string
 * "id" and "reason" within bounds; other members (status's lists) are
 * allowed and left to the caller. */
int relay_answer_parse(const char *line, size_t len, struct relay_answer *out,
                       struct umw_error **err);

enum relay_op {
        RELAY_OP_PENDING = 1,
        RELAY_OP_WATCH,
        RELAY_OP_ADOPT,
        RELAY_OP_APPROVE,
        RELAY_OP_DENY,
        RELAY_OP_ACTIONS, /* the host actions offered to this user */
};

/* A control message from the human side. */
struct relay_control {
        enum relay_op op;
        bool remember;                 /* approve */
        char id[RELAY_ID_MAX + 1];     /* approve, deny */
        char hash[RELAY_HASH_HEX + 1]; /* approve: the request's hash, as shown */
        char why[RELAY_WHY_MAX + 1];   /* deny, optional */
};

/* Parses a control line as relay_request_parse does a request: approve
 * needs id and hash (64 lowercase hex digits), deny an id; ids are 1 to
 * RELAY_ID_MAX decimal digits. */
int relay_control_parse(const char *line, size_t len, struct relay_control *out,
                        struct umw_error **err);

#endif
