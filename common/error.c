#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *vformat(const char *fmt, va_list ap)
{
        char *s = NULL;
        if (vasprintf(&s, fmt, ap) < 0)
                return NULL;
        return s;
}

int umw_error_code(const struct umw_error *err)
{
        if (err && err->errnum > 0)
                return -err->errnum;
        return -EINVAL;
}

static int set_error(struct umw_error **err, enum umw_exit kind, int errnum, char *msg)
{
        if (!err || *err) {
                free(msg);
                return err && *err ? umw_error_code(*err) : (errnum > 0 ? -errnum : -EINVAL);
        }
        struct umw_error *e = calloc(1, sizeof(*e));
        if (!e) {
                free(msg);
                return -ENOMEM;
        }
        e->kind = kind;
        e->errnum = errnum;
        e->msg = msg ? msg : strdup("out of memory");
        *err = e;
        return umw_error_code(e);
}

int umw_fail(struct umw_error **err, enum umw_exit kind, int errnum, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *msg = vformat(fmt, ap);
        va_end(ap);
        return set_error(err, kind, errnum, msg);
}

static int fail_sys_v(struct umw_error **err, int errnum, const char *fmt, va_list ap)
{
        char *what = vformat(fmt, ap);
        char *msg = NULL;
        if (what && asprintf(&msg, "%s: %s", what, strerror(errnum)) < 0)
                msg = NULL;
        free(what);
        return set_error(err, UMW_EXIT_FAILURE, errnum, msg);
}

int umw_fail_errno(struct umw_error **err, const char *fmt, ...)
{
        int errnum = errno;
        va_list ap;
        va_start(ap, fmt);
        int r = fail_sys_v(err, errnum, fmt, ap);
        va_end(ap);
        return r;
}

int umw_fail_sys(struct umw_error **err, int errnum, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int r = fail_sys_v(err, errnum, fmt, ap);
        va_end(ap);
        return r;
}

int umw_error_prefix(struct umw_error **err, const char *fmt, ...)
{
        if (!err || !*err)
                return -EINVAL;
        va_list ap;
        va_start(ap, fmt);
        char *ctx = vformat(fmt, ap);
        va_end(ap);
        char *msg = NULL;
        if (ctx && asprintf(&msg, "%s: %s", ctx, (*err)->msg) >= 0) {
                free((*err)->msg);
                (*err)->msg = msg;
        }
        free(ctx);
        return umw_error_code(*err);
}

void umw_error_free(struct umw_error *err)
{
        if (!err)
                return;
        free(err->msg);
        free(err);
}
