/* The relay's clients (umwelt-relay(1)): a request from inside a sandbox
 * (`umwelt-run request`; umwelt-mcp's asking tools send the same lines
 * from the host, mcp/ask.c) and the
 * human side on the host (`umwelt-run relay pending|approve|deny|watch`),
 * and the list of host actions from either side (`relay actions`). */
#ifndef UMW_FACE_RELAY_CLIENT_H
#define UMW_FACE_RELAY_CLIENT_H

#include <stdbool.h>
#include <stdio.h>

#include "face/relay_msg.h"

struct umw_error;

/* `request`'s exit statuses beyond 0 (granted, or done) and the error
 * classes (umwelt-run(1)). */
enum relay_exit {
        RELAY_EXIT_DENIED = 7,
        RELAY_EXIT_TIMEOUT = 8,
        RELAY_EXIT_REFUSED = 9,
        RELAY_EXIT_ACTION_TIMEOUT = 124, /* an action killed at its timeout, as timeout(1) */
};

/* Sends q on the sandbox's socket and waits for the final answer (a
 * pending one is said on stderr, or printed with json), which is printed:
 * its line with json, else a status listing or one line on stderr for
 * anything but ok and granted. Returns the exit status, or an error (no
 * relay to reach: UMW_EXIT_FAILURE naming the socket). */
int relay_request_send(const struct relay_request *q, bool json, struct umw_error **err);

/* An answer's line, for people: a status answer's grants, egress rules
 * and ports, one a line; an actions answer's actions, a block each (name,
 * what it runs, its values). Text from the relay is written printable. */
void relay_status_print(FILE *out, const char *line);
void relay_actions_print(FILE *out, const char *line);

/* The human side: the relay's pending requests, one block each (or their
 * JSON lines). */
int relay_pending(bool json, struct umw_error **err);
/* Approves request id as it is pending now: shown whole, then approved
 * bound to its hash; remember: also at the project's next start. */
int relay_approve_id(const char *id, bool remember, struct umw_error **err);
int relay_deny_id(const char *id, const char *why, struct umw_error **err);
/* The host actions this user may ask for: inside a sandbox those offered
 * in its project (through its door), on the host all of them (through
 * the control socket); a block each, or the answer's line with json. */
int relay_actions(bool json, struct umw_error **err);
/* Shows each pending request as it comes and asks y/a/n on in (a
 * terminal or lines piped in), until in or the relay ends. */
int relay_watch(FILE *in, struct umw_error **err);

#endif
