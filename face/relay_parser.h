/* The process that reads a sandbox's bytes (DESIGN.md, "The relay's
 * privilege separation"): one per connection to a sandbox's request
 * socket, forked by the monitor. It holds the connection (to read), one
 * end of a SOCK_SEQPACKET pair (to write) and stderr, nothing else: every
 * other fd closed, root's relay's child become nobody, no_new_privs, and a
 * seccomp filter that kills it for anything but reading the connection,
 * writing the pair or stderr, memory without PROT_EXEC, and exit. Each line
 * it reads becomes one struct relay_request record (RELAY_BAD with the
 * error for a line that is not a request); a line over RELAY_LINE_MAX ends
 * the connection after its RELAY_BAD. */
#ifndef UMW_FACE_RELAY_PARSER_H
#define UMW_FACE_RELAY_PARSER_H

#include <sys/types.h>

struct umw_error;

/* Forks the child for conn: *records, the monitor's end of the pair
 * (O_CLOEXEC, nonblocking); *pid, the child's. conn stays open in the
 * caller, which writes the answers. */
int relay_parser_spawn(int conn, int *records, pid_t *pid, struct umw_error **err);

#endif
