/* Errors travel up as a struct umw_error: the function that sees the failure
 * says what failed, each caller on the way up may prefix its context, and
 * main() prints the one line and exits with the error's class. */
#ifndef UMW_ERROR_H
#define UMW_ERROR_H

#include <stdarg.h>
#include <stddef.h>

/* Exit codes, documented in umwelt-run(1). */
enum umw_exit {
        UMW_EXIT_OK = 0,
        UMW_EXIT_FAILURE = 1,  /* a system call or the container failed */
        UMW_EXIT_USAGE = 2,    /* bad command line */
        UMW_EXIT_CONFIG = 3,   /* bad config.json, process.json or other input file */
        UMW_EXIT_NOTFOUND = 4, /* no container with that id */
        UMW_EXIT_EXISTS = 5,   /* a container with that id exists already */
        UMW_EXIT_STATE = 6,    /* the container is not in a state that allows the verb */
};

struct umw_error {
        enum umw_exit kind;
        int errnum; /* positive errno value, 0 when none applies */
        char *msg;
};

/* Each returns a negative errno-style value (-errnum, or -EINVAL when 0), so
 * `return umw_fail(...)` both records and reports. An error already set is
 * kept: the first failure is the one that explains. */
int umw_fail(struct umw_error **err, enum umw_exit kind, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A failed system call: appends ": strerror(errno)". */
int umw_fail_errno(struct umw_error **err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Same, with the errno value given explicitly. */
int umw_fail_sys(struct umw_error **err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds "CONTEXT: " before the message of *err. */
int umw_error_prefix(struct umw_error **err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int umw_error_code(const struct umw_error *err);
void umw_error_free(struct umw_error *err);

static inline void umw_error_freep(struct umw_error **err)
{
        umw_error_free(*err);
        *err = NULL;
}
#define _cleanup_error_ __attribute__((cleanup(umw_error_freep)))

#endif
