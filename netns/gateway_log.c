#include "gateway_log.h"
#include "src/common/audit.h"
#include "src/common/error.h"
#include "src/common/json.h"
#include "src/common/log.h"

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

static void append(int fd, const char *event, audit_fields_fn fields, void *ctx)
{
        struct umw_error *err = NULL;
        if (fd >= 0 && audit_append_fields(fd, event, fields, ctx, &err) < 0) {
                umw_error_prefix(&err, "egress log");
                umw_log_error(err);
                umw_error_free(err);
        }
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
}
