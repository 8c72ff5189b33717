/* What every part of the linux.resources mapping shares: the integer rules,
 * member readers that name the JSON path of a bad value, and emit(), which
 * appends one (controller, file, value) setting. */
#include "runtime/cgroup_map_fields.h"
#include "common/error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct int_rule cgm_r_bytes = {1, INT64_MAX, true, false,
                                     "-1 (no limit) or a positive number of bytes"};
const struct int_rule cgm_r_bytes_or_zero = {0, INT64_MAX, true, false,
                                             "-1 (no limit) or a number of bytes"};
const struct int_rule cgm_r_swappiness = {0, 100, false, false, "an integer from 0 to 100"};
const struct int_rule cgm_r_pids = {1, INT64_MAX, true, true,
                                    "-1 or 0 (no limit) or a positive number of processes"};
const struct int_rule cgm_r_shares = {2, 262144, false, true,
                                      "0 (unset) or an integer from 2 to 262144"};
const struct int_rule cgm_r_quota = {1000, INT64_MAX, true, true,
                                     "-1 (no limit), 0 (unset) or at least 1000 microseconds"};
const struct int_rule cgm_r_period = {1000, 1000000, false, true,
                                      "0 (unset) or 1000 to 1000000 microseconds"};
const struct int_rule cgm_r_usec = {0, INT64_MAX, false, false,
                                    "a non-negative number of microseconds"};
const struct int_rule cgm_r_rt_runtime = {0, INT64_MAX, true, false,
                                          "-1 (no limit) or a non-negative number of microseconds"};
const struct int_rule cgm_r_idle = {0, 1, false, false, "0 or 1"};
const struct int_rule cgm_r_blkio_weight = {10, 1000, false, true,
                                            "0 (unset) or an integer from 10 to 1000"};
const struct int_rule cgm_r_u32 = {0, UINT32_MAX, false, false, "an integer from 0 to 4294967295"};
const struct int_rule cgm_r_rate = {0, INT64_MAX, false, false,
                                    "a non-negative integer (0: no limit)"};

/* Whether s is one of the space-separated words. */
bool cgm_in_words(const char *words, const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || strchr(s, ' '))
                return false;
        for (const char *w = words; *w; w += strcspn(w, " "), w += *w == ' ') {
                if (strncmp(w, s, n) == 0 && (w[n] == ' ' || w[n] == '\0'))
                        return true;
        }
        return false;
}

bool cgm_in_list(const char *const *list, const char *s)
{
        for (size_t i = 0; list[i]; i++)
                if (strcmp(list[i], s) == 0)
                        return true;
        return false;
}

int cgm_oom(struct umw_error **err)
{
        return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
}

int cgm_unsupported(const struct umw_jloc *loc, const char *why, struct umw_error **err)
{
        char path[UMW_JLOC_PATH_MAX];
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: %s: %s", loc->file,
                        umw_jloc_path(loc, path), why);
}

int cgm_emit(struct mapping *m, const struct umw_jloc *loc, const char *controller,
             const char *file, struct umw_error **err, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

int cgm_emit(struct mapping *m, const struct umw_jloc *loc, const char *controller,
             const char *file, struct umw_error **err, const char *fmt, ...)
{
        struct cgroup_settings *out = m->out;
        if (out->n == m->cap) {
                size_t cap = m->cap ? 2 * m->cap : 16;
                struct cgroup_setting *items = reallocarray(out->items, cap, sizeof(*items));
                if (!items)
                        return cgm_oom(err);
                out->items = items;
                m->cap = cap;
        }
        struct cgroup_setting *s = &out->items[out->n];
        snprintf(s->controller, sizeof(s->controller), "%s", controller);
        snprintf(s->file, sizeof(s->file), "%s", file);
        va_list ap;
        va_start(ap, fmt);
        int len = vsnprintf(s->value, sizeof(s->value), fmt, ap);
        va_end(ap);
        if (len < 0 || (size_t)len >= sizeof(s->value))
                return umw_json_expected(loc, "a value of at most 255 bytes", err);
        out->n++;
        return 0;
}

/* "max" on v2 and -1 on v1 both say "no limit". */
int cgm_emit_limit(struct mapping *m, const struct umw_jloc *loc, const char *controller,
                   const char *file, int64_t value, struct umw_error **err)
{
        if (value == -1 && m->v == CGROUP_V2)
                return cgm_emit(m, loc, controller, file, err, "max");
        return cgm_emit(m, loc, controller, file, err, "%" PRId64, value);
}

int cgm_check_keys(yajl_val obj, const struct umw_jloc *loc, const char *const *known,
                   struct umw_error **err)
{
        for (size_t i = 0; i < obj->u.object.len; i++) {
                if (cgm_in_list(known, obj->u.object.keys[i]))
                        continue;
                char what[512] = "one of";
                for (size_t k = 0; known[k]; k++)
                        snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s %s",
                                 k ? "," : "", known[k]);
                struct umw_jloc at = umw_jloc_key(loc, obj->u.object.keys[i]);
                char path[UMW_JLOC_PATH_MAX];
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: %s: unknown resource field (a limit that cannot be "
                                "applied is refused), expected %s",
                                at.file, umw_jloc_path(&at, path), what);
        }
        return 0;
}

/* The member key of obj as an object (NULL when absent), at *at. */
int cgm_member_object(yajl_val obj, const struct umw_jloc *loc, const char *key, yajl_val *out,
                      struct umw_jloc *at, struct umw_error **err)
{
        *at = umw_jloc_key(loc, key);
        *out = umw_json_member(obj, key);
        return *out ? umw_json_object(*out, at, err) : 0;
}

int cgm_member_array(yajl_val obj, const struct umw_jloc *loc, const char *key, yajl_val *out,
                     struct umw_jloc *at, struct umw_error **err)
{
        *at = umw_jloc_key(loc, key);
        *out = umw_json_member(obj, key);
        return *out ? umw_json_array(*out, at, err) : 0;
}

static bool rule_allows(const struct int_rule *rule, int64_t v)
{
        return (v >= rule->min && v <= rule->max) || (rule->minus_one && v == -1) ||
               (rule->zero && v == 0);
}

/* An integer member following rule; *present is false when it is absent. */
int cgm_member_int(yajl_val obj, const struct umw_jloc *loc, const char *key,
                   const struct int_rule *rule, bool *present, int64_t *out, struct umw_error **err)
{
        yajl_val v = umw_json_member(obj, key);
        *present = v != NULL;
        *out = 0;
        if (!v)
                return 0;
        struct umw_jloc at = umw_jloc_key(loc, key);
        if (!YAJL_IS_INTEGER(v) || !rule_allows(rule, v->u.number.i))
                return umw_json_expected(&at, rule->what, err);
        *out = v->u.number.i;
        return 0;
}

/* The same where absence and 0 both mean "leave it alone". */
int cgm_member_set_int(yajl_val obj, const struct umw_jloc *loc, const char *key,
                       const struct int_rule *rule, int64_t *out, struct umw_error **err)
{
        bool present;
        return cgm_member_int(obj, loc, key, rule, &present, out, err);
}

/* The same for a member the spec requires. */
int cgm_member_required_int(yajl_val obj, const struct umw_jloc *loc, const char *key,
                            const struct int_rule *rule, int64_t *out, struct umw_error **err)
{
        bool present;
        int r = cgm_member_int(obj, loc, key, rule, &present, out, err);
        if (r < 0 || present)
                return r;
        struct umw_jloc at = umw_jloc_key(loc, key);
        return umw_json_expected(&at, rule->what, err);
}

int cgm_member_bool(yajl_val obj, const struct umw_jloc *loc, const char *key, bool *present,
                    bool *out, struct umw_error **err)
{
        yajl_val v = umw_json_member(obj, key);
        struct umw_jloc at = umw_jloc_key(loc, key);
        *present = v != NULL;
        *out = false;
        return v ? umw_json_bool(v, &at, out, err) : 0;
}
