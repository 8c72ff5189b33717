/* Internal to the linux.resources mapping (cgroup_map*.c): the state of one
 * mapping, integer rules and the member readers every part uses. */
#ifndef UMW_CGROUP_MAP_FIELDS_H
#define UMW_CGROUP_MAP_FIELDS_H

#include "runtime/cgroup_map.h"
#include "common/json.h"

#include <stdbool.h>
#include <stdint.h>

struct mapping {
        enum cgroup_version v;
        struct cgroup_settings *out;
        size_t cap;
};

/* An integer field's accepted values: [min, max], plus -1 ("no limit") and
 * 0 ("unset", what Go-based generators write for a field they leave alone)
 * where the field allows them. */
struct int_rule {
        int64_t min, max;
        bool minus_one, zero;
        const char *what;
};

extern const struct int_rule cgm_r_bytes;
extern const struct int_rule cgm_r_bytes_or_zero;
extern const struct int_rule cgm_r_swappiness;
extern const struct int_rule cgm_r_pids;
extern const struct int_rule cgm_r_shares;
extern const struct int_rule cgm_r_quota;
extern const struct int_rule cgm_r_period;
extern const struct int_rule cgm_r_usec;
extern const struct int_rule cgm_r_rt_runtime;
extern const struct int_rule cgm_r_idle;
extern const struct int_rule cgm_r_blkio_weight;
extern const struct int_rule cgm_r_u32;
extern const struct int_rule cgm_r_rate;

/* Whether s is one of the space-separated words / one of the NULL-ended list. */
bool cgm_in_words(const char *words, const char *s);
bool cgm_in_list(const char *const *list, const char *s);
int cgm_oom(struct umw_error **err);
int cgm_unsupported(const struct umw_jloc *loc, const char *why, struct umw_error **err);
/* Appends controller/file = the formatted value. */
int cgm_emit(struct mapping *m, const struct umw_jloc *loc, const char *controller,
             const char *file, struct umw_error **err, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* "max" on v2 and -1 on v1 both say "no limit". */
int cgm_emit_limit(struct mapping *m, const struct umw_jloc *loc, const char *controller,
                   const char *file, int64_t value, struct umw_error **err);
/* Refuses a key of obj not in known, naming it and the known ones. */
int cgm_check_keys(yajl_val obj, const struct umw_jloc *loc, const char *const *known,
                   struct umw_error **err);
/* The member key of obj as an object / array (NULL when absent), at *at. */
int cgm_member_object(yajl_val obj, const struct umw_jloc *loc, const char *key, yajl_val *out,
                      struct umw_jloc *at, struct umw_error **err);
int cgm_member_array(yajl_val obj, const struct umw_jloc *loc, const char *key, yajl_val *out,
                     struct umw_jloc *at, struct umw_error **err);
/* An integer member following rule; *present is false when it is absent. */
int cgm_member_int(yajl_val obj, const struct umw_jloc *loc, const char *key,
                   const struct int_rule *rule, bool *present, int64_t *out,
                   struct umw_error **err);
/* The same where absence and 0 both mean "leave it alone". */
int cgm_member_set_int(yajl_val obj, const struct umw_jloc *loc, const char *key,
                       const struct int_rule *rule, int64_t *out, struct umw_error **err);
/* The same for a member the spec requires. */
int cgm_member_required_int(yajl_val obj, const struct umw_jloc *loc, const char *key,
                            const struct int_rule *rule, int64_t *out, struct umw_error **err);
int cgm_member_bool(yajl_val obj, const struct umw_jloc *loc, const char *key, bool *present,
                    bool *out, struct umw_error **err);

/* The parts in cgroup_map_more.c. */
int cgm_map_hugepages(struct mapping *m, yajl_val list, const struct umw_jloc *loc,
                      struct umw_error **err);
int cgm_map_network(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                    struct umw_error **err);
int cgm_map_rdma(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                 struct umw_error **err);
int cgm_map_unified(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                    struct umw_error **err);

#endif
