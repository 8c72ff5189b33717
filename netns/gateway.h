/* The egress gateway's engine: one single-threaded epoll loop serving the
 * listeners it is given (made inside a sandbox's network namespace, see
 * gateway_listen.h) as an HTTP/1.1 forward proxy and CONNECT tunnel. Every
 * request is decided by the egress rules; names are resolved by the gateway
 * and every address is checked before the one dialled; a CONNECT's TLS
 * ClientHello must name the CONNECT host; where a rule needs a request's
 * method or path, a CONNECT is terminated with a leaf of the user's umwelt
 * CA and each request inside it decided and sent on over TLS verified
 * against the host's trust store; each request is one line in the egress
 * log. SIGHUP reads the policy files again (through the monitor), SIGTERM
 * and SIGINT stop. */
#ifndef UMW_NETNS_GATEWAY_H
#define UMW_NETNS_GATEWAY_H

#include <stddef.h>

struct umw_error;

struct gateway_options {
        const int *listen_fds; /* listening, non-blocking sockets: the gateway's own */
        size_t n_listen;
        const char *const *policy_files; /* see gateway_policy.h */
        size_t n_policy;
        int log_fd;                 /* the egress log (audit_open), -1: none */
        const char *hosts_file;     /* NULL: the system's resolver */
        const char *sandbox;        /* for log lines; NULL: left out */
        unsigned max_conns;         /* beyond it: 503 */
        unsigned header_timeout_ms; /* a request head or ClientHello must arrive within */
        unsigned idle_timeout_ms;   /* no byte either way for that long: closed */
        unsigned connect_timeout_ms;
        const char *upstream_ca; /* what upstream TLS trusts; NULL: the host's store */
        const char *trust_dir;   /* make the CA if missing and write the sandbox's
                                    trust files here; NULL: only open the CA */
        int ready_fd;            /* written "ready\n" once serving, "stopped\n" after a stop
                                    as asked, closed by gateway_run; -1: none */
        int owner_pidfd;         /* a pidfd of the sandbox's process: when it ends, the
                                    gateway stops (closed by gateway_run); -1: none */
};

#define GATEWAY_DEFAULT_MAX_CONNS       256
#define GATEWAY_DEFAULT_HEADER_TIMEOUT  30000
#define GATEWAY_DEFAULT_IDLE_TIMEOUT    300000
#define GATEWAY_DEFAULT_CONNECT_TIMEOUT 30000

/* Sets up (the signer forked first, every file opened), then forks the
 * engine (confined: gateway_confine.h) which serves until SIGTERM or SIGINT
 * or the end of the owner's process (returns 0) or a failure of the loop
 * itself, while this process stays the monitor (gateway_monitor.h) and
 * returns the engine's exit status (> 0: the engine has said why). A policy that cannot be read at
 * the start is an error; on SIGHUP it refuses every request until it can be read again. Closes the
 * listeners. */
int gateway_run(const struct gateway_options *o, struct umw_error **err);

#endif
