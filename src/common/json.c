#include "json.h"
#include "error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void umw_jloc_init(struct umw_jloc *loc, const char *file)
{
        umw_jloc_init_at(loc, file, NULL);
}

void umw_jloc_init_at(struct umw_jloc *loc, const char *file, const char *path)
{
        *loc = (struct umw_jloc){.file = file, .key = path};
}

struct umw_jloc umw_jloc_key(const struct umw_jloc *parent, const char *key)
{
        return (struct umw_jloc){.file = parent->file, .parent = parent, .key = key};
}

struct umw_jloc umw_jloc_index(const struct umw_jloc *parent, size_t index)
{
        return (struct umw_jloc){.file = parent->file, .parent = parent, .index = index};
}

/* Appends text at *used, cut where buf ends (as snprintf would). */
static void path_append(char *buf, size_t *used, const char *text, bool sanitize)
{
        for (; *text && *used < UMW_JLOC_PATH_MAX - 1; text++) {
                unsigned char c = (unsigned char)*text;
                buf[(*used)++] = sanitize && (c < 0x20 || c == 0x7f) ? '?' : (char)c;
        }
        buf[*used] = '\0';
}

static void path_render(const struct umw_jloc *loc, char *buf, size_t *used)
{
        if (!loc->parent) {
                path_append(buf, used, loc->key ? loc->key : "", false);
                return;
        }
        path_render(loc->parent, buf, used);
        if (loc->key) {
                path_append(buf, used, ".", false);
                path_append(buf, used, loc->key, true);
        } else {
                char index[24];
                snprintf(index, sizeof(index), "[%zu]", loc->index);
                path_append(buf, used, index, false);
        }
}

const char *umw_jloc_path(const struct umw_jloc *loc, char buf[static UMW_JLOC_PATH_MAX])
{
        size_t used = 0;
        buf[0] = '\0';
        path_render(loc, buf, &used);
        return buf;
}

int umw_json_parse(const char *text, const char *file, yajl_val *out, struct umw_error **err)
{
        char errbuf[256] = "";
        yajl_val tree = yajl_tree_parse(text, errbuf, sizeof(errbuf));
        if (!tree) {
                /* yajl's message spans lines; the first one says what and where. */
                errbuf[strcspn(errbuf, "\n")] = '\0';
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: invalid JSON: %s", file,
                                errbuf[0] ? errbuf : "parse error");
        }
        *out = tree;
        return 0;
}

int umw_json_expected(const struct umw_jloc *loc, const char *what, struct umw_error **err)
{
        char path[UMW_JLOC_PATH_MAX];
        umw_jloc_path(loc, path);
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: %s: expected %s", loc->file,
                        path[0] ? path : ".", what);
}

yajl_val umw_json_member(yajl_val obj, const char *key)
{
        if (!YAJL_IS_OBJECT(obj))
                return NULL;
        for (size_t i = 0; i < obj->u.object.len; i++) {
                if (strcmp(obj->u.object.keys[i], key) == 0) {
                        yajl_val v = obj->u.object.values[i];
                        return YAJL_IS_NULL(v) ? NULL : v;
                }
        }
        return NULL;
}

int umw_json_object(yajl_val v, const struct umw_jloc *loc, struct umw_error **err)
{
        return YAJL_IS_OBJECT(v) ? 0 : umw_json_expected(loc, "an object", err);
}

int umw_json_array(yajl_val v, const struct umw_jloc *loc, struct umw_error **err)
{
        return YAJL_IS_ARRAY(v) ? 0 : umw_json_expected(loc, "an array", err);
}

int umw_json_string(yajl_val v, const struct umw_jloc *loc, const char **out,
                    struct umw_error **err)
{
        if (!YAJL_IS_STRING(v))
                return umw_json_expected(loc, "a string", err);
        *out = v->u.string;
        return 0;
}

int umw_json_bool(yajl_val v, const struct umw_jloc *loc, bool *out, struct umw_error **err)
{
        if (YAJL_IS_TRUE(v))
                *out = true;
        else if (YAJL_IS_FALSE(v))
                *out = false;
        else
                return umw_json_expected(loc, "true or false", err);
        return 0;
}

int umw_json_int64(yajl_val v, const struct umw_jloc *loc, int64_t min, int64_t max, int64_t *out,
                   struct umw_error **err)
{
        if (YAJL_IS_INTEGER(v) && v->u.number.i >= min && v->u.number.i <= max) {
                *out = v->u.number.i;
                return 0;
        }
        char what[96];
        snprintf(what, sizeof(what), "an integer from %" PRId64 " to %" PRId64, min, max);
        return umw_json_expected(loc, what, err);
}

int umw_json_uint64(yajl_val v, const struct umw_jloc *loc, uint64_t *out, struct umw_error **err)
{
        /* yajl keeps integers as long long; larger values arrive as doubles
         * and raw text, which we parse ourselves to keep all 64 bits. */
        if (YAJL_IS_INTEGER(v) && v->u.number.i >= 0) {
                *out = (uint64_t)v->u.number.i;
                return 0;
        }
        if (YAJL_IS_NUMBER(v) && v->u.number.r && v->u.number.r[0] != '-') {
                char *end = NULL;
                errno = 0;
                unsigned long long n = strtoull(v->u.number.r, &end, 10);
                if (errno == 0 && end && *end == '\0') {
                        *out = n;
                        return 0;
                }
        }
        return umw_json_expected(loc, "an unsigned 64-bit integer", err);
}

int umw_json_strv(yajl_val v, const struct umw_jloc *loc, const char ***out, size_t *count,
                  struct umw_error **err)
{
        if (!YAJL_IS_ARRAY(v))
                return umw_json_expected(loc, "an array of strings", err);
        size_t n = v->u.array.len;
        const char **strv = calloc(n + 1, sizeof(*strv));
        if (!strv)
                return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                struct umw_jloc at = umw_jloc_index(loc, i);
                int r = umw_json_string(v->u.array.values[i], &at, &strv[i], err);
                if (r < 0) {
                        free(strv);
                        return r;
                }
        }
        *out = strv;
        if (count)
                *count = n;
        return 0;
}

char *umw_json_quote(const char *s)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return NULL;
        umw_jgen_str(g, s);
        return umw_jgen_finish(g, NULL);
}

yajl_gen umw_jgen_new(bool pretty)
{
        yajl_gen g = yajl_gen_alloc(NULL);
        if (g && pretty) {
                yajl_gen_config(g, yajl_gen_beautify, 1);
                yajl_gen_config(g, yajl_gen_indent_string, "  ");
        }
        return g;
}

void umw_jgen_str(yajl_gen g, const char *s)
{
        yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

void umw_jgen_key(yajl_gen g, const char *key)
{
        umw_jgen_str(g, key);
}

void umw_jgen_key_str(yajl_gen g, const char *key, const char *value)
{
        umw_jgen_str(g, key);
        umw_jgen_str(g, value ? value : "");
}

void umw_jgen_key_int(yajl_gen g, const char *key, long long value)
{
        umw_jgen_str(g, key);
        yajl_gen_integer(g, value);
}

void umw_jgen_key_bool(yajl_gen g, const char *key, bool value)
{
        umw_jgen_str(g, key);
        yajl_gen_bool(g, value);
}

char *umw_jgen_finish(yajl_gen g, size_t *len)
{
        const unsigned char *buf = NULL;
        size_t n = 0;
        char *copy = NULL;
        if (yajl_gen_get_buf(g, &buf, &n) == yajl_gen_status_ok) {
                copy = malloc(n + 1);
                if (copy) {
                        memcpy(copy, buf, n);
                        copy[n] = '\0';
                        if (len)
                                *len = n;
                }
        }
        yajl_gen_free(g);
        return copy;
}
