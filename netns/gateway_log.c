/* The gateway answers many requests in one turn of its loop: their lines
 * are gathered and appended together when the turn ends (one locked
 * append instead of one per request), so a line waits at most for the
 * events of that turn to be handled. Only whole lines are gathered, and the
 * append writes them whole or cuts them back (audit_append_lines). */
#include "netns/gateway_log.h"
#include "common/audit.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Beyond this, the gathered lines go out before the next joins them. */
#define GATHER_MAX (256 * 1024)

/* One engine per process, one log. */
static struct {
        int fd;
        char *buf;
        size_t len, cap;
} gathered = {.fd = -1};

static void key_str_opt(yajl_gen g, const char *key, const char *value)
{
        if (value)
                umw_jgen_key_str(g, key, value);
}

static void request_fields(yajl_gen g, void *ctx)
{
        const struct gateway_record *r = ctx;
        key_str_opt(g, "sandbox", r->sandbox);
        key_str_opt(g, "method", r->method);
        key_str_opt(g, "host", r->host);
        if (r->port)
                umw_jgen_key_int(g, "port", r->port);
        key_str_opt(g, "path", r->path);
        key_str_opt(g, "address", r->address);
        key_str_opt(g, "decision", r->decision);
        key_str_opt(g, "rule", r->rule);
        key_str_opt(g, "reason", r->reason);
        key_str_opt(g, "tls", r->tls);
        if (r->status)
                umw_jgen_key_int(g, "status", r->status);
        umw_jgen_key_int(g, "bytes_up", (long long)r->bytes_up);
        umw_jgen_key_int(g, "bytes_down", (long long)r->bytes_down);
        umw_jgen_key_int(g, "duration_ms", (long long)r->duration_ms);
}

static void report(struct umw_error **err)
{
        umw_error_prefix(err, "egress log");
        umw_log_error(*err);
}

void gateway_log_flush(void)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (gathered.len > 0 &&
            audit_append_lines(gathered.fd, gathered.buf, gathered.len, &err) < 0)
                report(&err);
        gathered.len = 0;
}

static int gather(int fd, const char *line, size_t len)
{
        if (fd != gathered.fd || gathered.len + len > GATHER_MAX)
                gateway_log_flush();
        gathered.fd = fd;
        if (gathered.len + len > gathered.cap) {
                size_t cap = gathered.len + len > GATHER_MAX ? gathered.len + len : GATHER_MAX;
                char *buf = realloc(gathered.buf, cap);
                if (!buf)
                        return -ENOMEM;
                gathered.buf = buf;
                gathered.cap = cap;
        }
        memcpy(gathered.buf + gathered.len, line, len);
        gathered.len += len;
        return 0;
}

static void append(int fd, const char *event, audit_fields_fn fields, void *ctx)
{
        _cleanup_error_ struct umw_error *err = NULL;
        char *line = NULL;
        size_t len = 0;
        if (fd < 0)
                return;
        if (audit_line(event, fields, ctx, &line, &len, &err) < 0) {
                report(&err);
                return;
        }
        if (gather(fd, line, len) < 0) {
                /* no room to gather it: after the others, on its own */
                gateway_log_flush();
                if (audit_append_lines(fd, line, len, &err) < 0)
                        report(&err);
        }
        free(line);
}

void gateway_log_request(int fd, const struct gateway_record *r)
{
        append(fd, "egress", request_fields, (void *)r);
}

struct reload_ctx {
        const char *sandbox, *error;
};

static void reload_fields(yajl_gen g, void *ctx)
{
        const struct reload_ctx *c = ctx;
        key_str_opt(g, "sandbox", c->sandbox);
        umw_jgen_key_str(g, "result", c->error ? "error" : "ok");
        key_str_opt(g, "error", c->error);
}

void gateway_log_reload(int fd, const char *sandbox, const char *error)
{
        struct reload_ctx c = {sandbox, error};
        append(fd, "egress-reload", reload_fields, &c);
        /* whoever sent the SIGHUP waits for this line */
        gateway_log_flush();
}
