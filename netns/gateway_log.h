/* The egress log: one JSON line per request the gateway answered, appended
 * to the project's log with the audit writer (whole lines only). What a line
 * never holds: a header value (Authorization, Cookie, Proxy-Authorization or
 * any other), a query string, a body. Lines are gathered and appended
 * together by gateway_log_flush(), which the loop calls after each turn and
 * before it ends; a reload's line goes out at once, with those before it. */
#ifndef UMW_NETNS_GATEWAY_LOG_H
#define UMW_NETNS_GATEWAY_LOG_H

#include <stdint.h>

/* One request. Strings may be NULL (not seen): the member is left out. */
struct gateway_record {
        const char *sandbox;
        const char *method;
        const char *host;     /* canonical (egress_host_canon's text) */
        unsigned port;        /* 0: not seen */
        const char *path;     /* canonical, without the query */
        const char *address;  /* the address dialled */
        const char *decision; /* "allow" or "deny" */
        const char *rule;     /* the rule that decided */
        const char *reason;   /* why a request was refused or failed */
        const char *tls;      /* "terminated": a CONNECT the gateway terminated, or a
                               * request inside one */
        int status;           /* the status line the client got; 0: none */
        uint64_t bytes_up;    /* to the upstream server */
        uint64_t bytes_down;  /* to the client */
        uint64_t duration_ms;
};

/* Gathers event "egress" for fd; a failure is reported on stderr and
 * otherwise ignored (the request has happened). fd < 0: nothing. */
void gateway_log_request(int fd, const struct gateway_record *r);

/* Appends event "egress-reload": the policy was read again (error NULL) or
 * could not be, and every request is refused until it can. */
void gateway_log_reload(int fd, const char *sandbox, const char *error);

/* Appends what was gathered (a failure is reported on stderr). */
void gateway_log_flush(void);

#endif
