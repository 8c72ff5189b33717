/* The readers every part of the config.json parser shares (the member
 * readers are inline in spec_int.h): names looked up in a table, arrays,
 * paths, and the one-line "expected ..." error each reports. */
#include "runtime/spec_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int spec_oom(struct umw_error **err)
{
        return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
}

/* calloc that never returns NULL for an empty array, so "allocated" and
 * "failed" stay distinguishable. */
int spec_alloc_array(size_t n, size_t size, void *out, struct umw_error **err)
{
        void *p = calloc(n ? n : 1, size);
        if (!p)
                return spec_oom(err);
        *(void **)out = p;
        return 0;
}

void spec_note_unknown_keys(yajl_val obj, const struct umw_jloc *loc, const char *const *known)
{
        for (size_t i = 0; i < obj->u.object.len; i++) {
                const char *key = obj->u.object.keys[i];
                size_t k = 0;
                while (known[k] && strcmp(known[k], key) != 0)
                        k++;
                if (!known[k]) {
                        char path[UMW_JLOC_PATH_MAX];
                        umw_debug("%s: %s.%s: not supported, ignored", loc->file,
                                  umw_jloc_path(loc, path), key);
                }
        }
}

static int expected_one_of(const struct umw_jloc *loc, const struct name_value *table, size_t n,
                           struct umw_error **err)
{
        char what[512] = "one of ";
        size_t used = strlen(what);
        for (size_t i = 0; i < n; i++) {
                int w = snprintf(what + used, sizeof(what) - used, "%s%s", i ? ", " : "",
                                 table[i].name);
                if (w < 0 || (size_t)w >= sizeof(what) - used)
                        break;
                used += (size_t)w;
        }
        return umw_json_expected(loc, what, err);
}

/* "BEFORE"GOT"AFTER", with GOT quoted so that control characters in the input
 * cannot break the one-line message. */
int spec_expected_quoting(const struct umw_jloc *loc, const char *before, const char *got,
                          const char *after, struct umw_error **err)
{
        _cleanup_free_ char *quoted = umw_json_quote(got);
        _cleanup_free_ char *msg = NULL;
        if (!quoted || asprintf(&msg, "%s%.80s%s", before, quoted, after) < 0)
                return spec_oom(err);
        return umw_json_expected(loc, msg, err);
}

int spec_read_enum(yajl_val v, const struct umw_jloc *loc, const struct name_value *table, size_t n,
                   int *out, struct umw_error **err)
{
        if (YAJL_IS_STRING(v)) {
                for (size_t i = 0; i < n; i++) {
                        if (strcmp(table[i].name, v->u.string) == 0) {
                                *out = table[i].value;
                                return 0;
                        }
                }
        }
        return expected_one_of(loc, table, n, err);
}

int spec_read_absolute_path(yajl_val v, const struct umw_jloc *loc, const char **out,
                            struct umw_error **err)
{
        if (!YAJL_IS_STRING(v) || v->u.string[0] != '/')
                return umw_json_expected(loc, "an absolute path", err);
        *out = v->u.string;
        return 0;
}

int spec_parse_kv_object(yajl_val obj, const struct umw_jloc *loc, struct spec_kv **out,
                         size_t *count, struct umw_error **err)
{
        size_t n = obj->u.object.len;
        int r = spec_alloc_array(n, sizeof(**out), out, err);
        if (r < 0)
                return r;
        *count = n;
        for (size_t i = 0; i < n; i++) {
                struct umw_jloc at = umw_jloc_key(loc, obj->u.object.keys[i]);
                (*out)[i].key = obj->u.object.keys[i];
                r = umw_json_string(obj->u.object.values[i], &at, &(*out)[i].value, err);
                if (r < 0)
                        return r;
        }
        return 0;
}
