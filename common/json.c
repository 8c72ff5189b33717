#include "common/json.h"
#include "common/error.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

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

/* ------------------------------------------------------------ documents */

/* The arena's blocks; the root is the first thing in the first block, which
 * is how umw_json_doc_free finds them. */
struct doc_block {
        struct doc_block *next;
        size_t used, size;
        alignas(max_align_t) unsigned char data[];
};

/* A member or element waiting for its container to close. */
struct doc_item {
        char *key; /* NULL in an array */
        yajl_val value;
};

struct doc_builder {
        struct doc_block *first, *last;
        size_t next_size;
        yajl_val root;
        char *key; /* the key the next value belongs to */
        struct doc_item *items;
        size_t n_items, cap_items;
        struct doc_open { /* each open container and where its items start */
                yajl_val value;
                size_t start;
        } * opened;
        size_t n_opened, cap_opened;
        bool oom; /* a callback stopped the parse for want of memory */
};

static void *doc_alloc(struct doc_builder *b, size_t size)
{
        size = (size + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
        if (!b->last || b->last->size - b->last->used < size) {
                size_t n = size > b->next_size ? size : b->next_size;
                struct doc_block *block = malloc(sizeof(*block) + n);
                if (!block) {
                        b->oom = true;
                        return NULL;
                }
                *block = (struct doc_block){.size = n};
                if (b->last)
                        b->last->next = block;
                else
                        b->first = block;
                b->last = block;
                b->next_size *= 2;
        }
        void *p = b->last->data + b->last->used;
        b->last->used += size;
        return p;
}

static char *doc_strndup(struct doc_builder *b, const unsigned char *s, size_t len)
{
        char *copy = doc_alloc(b, len + 1);
        if (copy) {
                memcpy(copy, s, len);
                copy[len] = '\0';
        }
        return copy;
}

static bool grow(void **v, size_t *cap, size_t n, size_t size)
{
        if (n < *cap)
                return true;
        size_t bigger = *cap ? *cap * 2 : 64;
        void *p = reallocarray(*v, bigger, size);
        if (!p)
                return false;
        *v = p;
        *cap = bigger;
        return true;
}

/* A new value of type t, the root or the next item of the open container. */
static yajl_val doc_value(struct doc_builder *b, yajl_type t)
{
        yajl_val v = doc_alloc(b, sizeof(*v));
        if (!v)
                return NULL;
        memset(v, 0, sizeof(*v));
        v->type = t;
        if (!b->n_opened) {
                b->root = v;
                return v;
        }
        if (!grow((void **)&b->items, &b->cap_items, b->n_items, sizeof(*b->items))) {
                b->oom = true;
                return NULL;
        }
        b->items[b->n_items++] = (struct doc_item){.key = b->key, .value = v};
        b->key = NULL;
        return v;
}

/* yajl's own reading of an integer (yajl_parse_integer): digits only, an
 * overflow is not an integer. */
static bool doc_integer(const char *r, long long *out)
{
        const char *p = r + (*r == '-');
        unsigned long long n = 0, limit = (unsigned long long)LLONG_MAX;
        if (!*p)
                return false;
        for (; *p; p++) {
                if (*p < '0' || *p > '9' || n > (limit - (unsigned)(*p - '0')) / 10)
                        return false;
                n = n * 10 + (unsigned)(*p - '0');
        }
        *out = *r == '-' ? -(long long)n : (long long)n;
        return true;
}

static int doc_null(void *ctx)
{
        return doc_value(ctx, yajl_t_null) != NULL;
}

static int doc_bool(void *ctx, int value)
{
        return doc_value(ctx, value ? yajl_t_true : yajl_t_false) != NULL;
}

static int doc_number(void *ctx, const char *text, size_t len)
{
        yajl_val v = doc_value(ctx, yajl_t_number);
        if (!v || !(v->u.number.r = doc_strndup(ctx, (const unsigned char *)text, len)))
                return 0;
        if (doc_integer(v->u.number.r, &v->u.number.i)) {
                /* What strtod gives for it: both round the same exact value
                 * to nearest, and "-0" is negative zero. */
                v->u.number.d =
                    v->u.number.i || *v->u.number.r != '-' ? (double)v->u.number.i : -0.0;
                v->u.number.flags |= YAJL_NUMBER_INT_VALID | YAJL_NUMBER_DOUBLE_VALID;
                return 1;
        }
        v->u.number.i = *v->u.number.r == '-' ? LLONG_MIN : LLONG_MAX;
        char *end = NULL;
        errno = 0;
        v->u.number.d = strtod(v->u.number.r, &end);
        if (errno == 0 && end && *end == '\0')
                v->u.number.flags |= YAJL_NUMBER_DOUBLE_VALID;
        return 1;
}

static int doc_string(void *ctx, const unsigned char *s, size_t len)
{
        yajl_val v = doc_value(ctx, yajl_t_string);
        return v && (v->u.string = doc_strndup(ctx, s, len)) != NULL;
}

static int doc_key(void *ctx, const unsigned char *s, size_t len)
{
        struct doc_builder *b = ctx;
        return (b->key = doc_strndup(b, s, len)) != NULL;
}

static int doc_open(struct doc_builder *b, yajl_type t)
{
        yajl_val v = doc_value(b, t);
        if (!v)
                return 0;
        if (!grow((void **)&b->opened, &b->cap_opened, b->n_opened, sizeof(*b->opened))) {
                b->oom = true;
                return 0;
        }
        b->opened[b->n_opened++] = (struct doc_open){.value = v, .start = b->n_items};
        return 1;
}

/* The container's items, now that their number is known, into the arena. */
static int doc_close(struct doc_builder *b)
{
        const struct doc_open *o = &b->opened[--b->n_opened];
        yajl_val c = o->value;
        size_t n = b->n_items - o->start;
        b->n_items = o->start;
        /* No item was ever stored for "{}" or "[]" alone: items may be NULL. */
        if (n == 0)
                return 1;
        const struct doc_item *it = b->items + o->start;
        yajl_val *values = doc_alloc(b, n * sizeof(*values));
        if (!values)
                return 0;
        for (size_t i = 0; i < n; i++)
                values[i] = it[i].value;
        if (c->type == yajl_t_array) {
                c->u.array.values = values;
                c->u.array.len = n;
                return 1;
        }
        const char **keys = doc_alloc(b, n * sizeof(*keys));
        if (!keys)
                return 0;
        for (size_t i = 0; i < n; i++)
                keys[i] = it[i].key;
        c->u.object.keys = keys;
        c->u.object.values = values;
        c->u.object.len = n;
        return 1;
}

static int doc_start_map(void *ctx)
{
        return doc_open(ctx, yajl_t_object);
}

static int doc_start_array(void *ctx)
{
        return doc_open(ctx, yajl_t_array);
}

static int doc_end(void *ctx)
{
        return doc_close(ctx);
}

static void doc_blocks_free(struct doc_block *block)
{
        while (block) {
                struct doc_block *next = block->next;
                free(block);
                block = next;
        }
}

void umw_json_doc_free(yajl_val doc)
{
        if (doc)
                doc_blocks_free(
                    (struct doc_block *)((unsigned char *)doc - offsetof(struct doc_block, data)));
}

int umw_json_parse_doc(const char *text, const char *file, yajl_val *out, struct umw_error **err)
{
        static const yajl_callbacks callbacks = {
            .yajl_null = doc_null,
            .yajl_boolean = doc_bool,
            .yajl_number = doc_number,
            .yajl_string = doc_string,
            .yajl_start_map = doc_start_map,
            .yajl_map_key = doc_key,
            .yajl_end_map = doc_end,
            .yajl_start_array = doc_start_array,
            .yajl_end_array = doc_end,
        };
        size_t len = strlen(text);
        struct doc_builder b = {.next_size = 4096 + 4 * len};
        yajl_handle h = yajl_alloc(&callbacks, NULL, &b);
        if (!h)
                return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
        /* As yajl_tree_parse: comments allowed, the completion's status. */
        yajl_config(h, yajl_allow_comments, 1);
        yajl_status st = yajl_parse(h, (const unsigned char *)text, len);
        st = yajl_complete_parse(h);
        int r = 0;
        if (b.oom) {
                r = umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "%s: out of memory", file);
        } else if (st != yajl_status_ok) {
                unsigned char *msg = yajl_get_error(h, 1, (const unsigned char *)text, len);
                /* yajl's message spans lines; the first one says what and where. */
                char first[256] = "";
                if (msg)
                        snprintf(first, sizeof(first), "%.*s",
                                 (int)strcspn((const char *)msg, "\n"), (const char *)msg);
                yajl_free_error(h, msg);
                r = umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: invalid JSON: %s", file,
                             first[0] ? first : "parse error");
        }
        yajl_free(h);
        free(b.items);
        free(b.opened);
        if (r < 0) {
                doc_blocks_free(b.first);
                return r;
        }
        *out = b.root;
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

const char *umw_json_member_str(yajl_val obj, const char *key, const char *fallback)
{
        yajl_val v = umw_json_member(obj, key);
        return YAJL_IS_STRING(v) ? v->u.string : fallback;
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

void umw_jgen_value(yajl_gen g, yajl_val v)
{
        if (YAJL_IS_OBJECT(v)) {
                yajl_gen_map_open(g);
                for (size_t i = 0; i < v->u.object.len; i++) {
                        umw_jgen_key(g, v->u.object.keys[i]);
                        umw_jgen_value(g, v->u.object.values[i]);
                }
                yajl_gen_map_close(g);
        } else if (YAJL_IS_ARRAY(v)) {
                yajl_gen_array_open(g);
                for (size_t i = 0; i < v->u.array.len; i++)
                        umw_jgen_value(g, v->u.array.values[i]);
                yajl_gen_array_close(g);
        } else if (YAJL_IS_STRING(v)) {
                umw_jgen_str(g, v->u.string);
        } else if (YAJL_IS_NUMBER(v)) {
                yajl_gen_number(g, v->u.number.r, strlen(v->u.number.r));
        } else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
                yajl_gen_bool(g, YAJL_IS_TRUE(v));
        } else {
                yajl_gen_null(g);
        }
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
