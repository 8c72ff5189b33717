/* The worker's bounded text and its arguments (worker_int.h). */
#include "mcp/worker_int.h"
#include "common/error.h"
#include "common/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mcp_text_add(struct mcp_text *t, const char *s, size_t n)
{
        size_t take = t->max - t->len < n ? t->max - t->len : n;
        if (take < n)
                t->cut = true;
        if (t->cap - t->len < take + 1) {
                size_t cap = t->cap ? t->cap : 4096;
                while (cap - t->len < take + 1)
                        cap *= 2;
                char *p = realloc(t->p, cap);
                if (!p)
                        return -ENOMEM;
                t->p = p;
                t->cap = cap;
        }
        memcpy(t->p + t->len, s, take);
        t->len += take;
        t->p[t->len] = '\0';
        return 0;
}

int mcp_text_printf(struct mcp_text *t, const char *fmt, ...)
{
        char line[8192];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        if (n < 0)
                return -EINVAL;
        return mcp_text_add(t, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

void mcp_text_free(struct mcp_text *t)
{
        free(t->p);
        *t = (struct mcp_text){0};
}

/* Argument errors read "arguments: .NAME: expected WHAT". */
static struct umw_jloc arg_loc(struct umw_jloc *root, const char *key)
{
        umw_jloc_init_at(root, "arguments", NULL);
        return umw_jloc_key(root, key);
}

int worker_arg_str(yajl_val args, const char *key, bool required, const char **out,
                   struct umw_error **err)
{
        yajl_val v = umw_json_member(args, key);
        struct umw_jloc root, loc = arg_loc(&root, key);
        if (!v && required)
                return umw_json_expected(&loc, "a string (it is required)", err);
        return v ? umw_json_string(v, &loc, out, err) : 0;
}

int worker_arg_uint(yajl_val args, const char *key, unsigned long max, unsigned long *out,
                    struct umw_error **err)
{
        yajl_val v = umw_json_member(args, key);
        struct umw_jloc root, loc = arg_loc(&root, key);
        int64_t n;
        if (!v)
                return 0;
        int r = umw_json_int64(v, &loc, 0, (int64_t)max, &n, err);
        if (r >= 0)
                *out = (unsigned long)n;
        return r;
}

int worker_arg_bool(yajl_val args, const char *key, bool *out, struct umw_error **err)
{
        yajl_val v = umw_json_member(args, key);
        struct umw_jloc root, loc = arg_loc(&root, key);
        return v ? umw_json_bool(v, &loc, out, err) : 0;
}
