/* linux.resources -> (controller, file, value) for cgroup v1 or v2. Every
 * value is checked before anything is emitted, so a bad config leaves no
 * half-written cgroup behind. The kernel facts this encodes (file names,
 * formats, what each version lacks) follow crun and runc. */
#include "runtime/cgroup_map.h"
#include "src/common/cleanup.h"
#include "src/common/error.h"
#include "src/common/json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const struct int_rule R_BYTES = {1, INT64_MAX, true, false,
                                        "-1 (no limit) or a positive number of bytes"};
static const struct int_rule R_BYTES_OR_ZERO = {0, INT64_MAX, true, false,
                                                "-1 (no limit) or a number of bytes"};
static const struct int_rule R_SWAPPINESS = {0, 100, false, false, "an integer from 0 to 100"};
static const struct int_rule R_PIDS = {1, INT64_MAX, true, true,
                                       "-1 or 0 (no limit) or a positive number of processes"};
static const struct int_rule R_SHARES = {2, 262144, false, true,
                                         "0 (unset) or an integer from 2 to 262144"};
static const struct int_rule R_QUOTA = {1000, INT64_MAX, true, true,
                                        "-1 (no limit), 0 (unset) or at least 1000 microseconds"};
static const struct int_rule R_PERIOD = {1000, 1000000, false, true,
                                         "0 (unset) or 1000 to 1000000 microseconds"};
static const struct int_rule R_USEC = {0, INT64_MAX, false, false,
                                       "a non-negative number of microseconds"};
static const struct int_rule R_RT_RUNTIME = {
    0, INT64_MAX, true, false, "-1 (no limit) or a non-negative number of microseconds"};
static const struct int_rule R_IDLE = {0, 1, false, false, "0 or 1"};
static const struct int_rule R_BLKIO_WEIGHT = {10, 1000, false, true,
                                               "0 (unset) or an integer from 10 to 1000"};
static const struct int_rule R_U32 = {0, UINT32_MAX, false, false,
                                      "an integer from 0 to 4294967295"};
static const struct int_rule R_RATE = {0, INT64_MAX, false, false,
                                       "a non-negative integer (0: no limit)"};

/* The v2 files a unified key may name (hugetlb.<size>.max and .rsvd.max
 * aside), and the ones refused because writing them moves processes,
 * changes the tree or the container's state: the cgroup code's business. */
static const char unified_writable[] =
    "cgroup.max.descendants cgroup.max.depth "
    "cpu.weight cpu.weight.nice cpu.max cpu.max.burst cpu.idle cpu.uclamp.min cpu.uclamp.max "
    "cpuset.cpus cpuset.mems cpuset.cpus.exclusive cpuset.cpus.partition "
    "io.weight io.bfq.weight io.max io.latency io.prio.class "
    "memory.min memory.low memory.high memory.max memory.swap.high memory.swap.max "
    "memory.zswap.max memory.zswap.writeback memory.oom.group "
    "pids.max rdma.max misc.max";
static const char unified_refused[] =
    "cgroup.procs cgroup.threads cgroup.subtree_control cgroup.type cgroup.kill cgroup.freeze";

/* Whether s is one of the space-separated words. */
static bool in_words(const char *words, const char *s)
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

static bool in_list(const char *const *list, const char *s)
{
        for (size_t i = 0; list[i]; i++)
                if (strcmp(list[i], s) == 0)
                        return true;
        return false;
}

/* The location of a member whose key came from the input: control
 * characters would break the one-line error, so they show as '?'. */
static struct umw_jloc key_loc(const struct umw_jloc *loc, const char *key)
{
        char shown[128];
        size_t i;
        for (i = 0; key[i] && i < sizeof(shown) - 1; i++)
                shown[i] = (unsigned char)key[i] < 0x20 || key[i] == 0x7f ? '?' : key[i];
        shown[i] = '\0';
        return umw_jloc_key(loc, shown);
}

static int oom(struct umw_error **err)
{
        return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
}

static int unsupported(const struct umw_jloc *loc, const char *why, struct umw_error **err)
{
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: %s: %s", loc->file, loc->path, why);
}

static int emit(struct mapping *m, const struct umw_jloc *loc, const char *controller,
                const char *file, struct umw_error **err, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int emit(struct mapping *m, const struct umw_jloc *loc, const char *controller,
                const char *file, struct umw_error **err, const char *fmt, ...)
{
        struct cgroup_settings *out = m->out;
        if (out->n == m->cap) {
                size_t cap = m->cap ? 2 * m->cap : 16;
                struct cgroup_setting *items = reallocarray(out->items, cap, sizeof(*items));
                if (!items)
                        return oom(err);
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
static int emit_limit(struct mapping *m, const struct umw_jloc *loc, const char *controller,
                      const char *file, int64_t value, struct umw_error **err)
{
        if (value == -1 && m->v == CGROUP_V2)
                return emit(m, loc, controller, file, err, "max");
        return emit(m, loc, controller, file, err, "%" PRId64, value);
}

static int check_keys(yajl_val obj, const struct umw_jloc *loc, const char *const *known,
                      struct umw_error **err)
{
        for (size_t i = 0; i < obj->u.object.len; i++) {
                if (in_list(known, obj->u.object.keys[i]))
                        continue;
                char what[512] = "one of";
                for (size_t k = 0; known[k]; k++)
                        snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s %s",
                                 k ? "," : "", known[k]);
                struct umw_jloc at = key_loc(loc, obj->u.object.keys[i]);
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: %s: unknown resource field (a limit that cannot be "
                                "applied is refused), expected %s",
                                at.file, at.path, what);
        }
        return 0;
}

/* The member key of obj as an object (NULL when absent), at *at. */
static int member_object(yajl_val obj, const struct umw_jloc *loc, const char *key, yajl_val *out,
                         struct umw_jloc *at, struct umw_error **err)
{
        *at = umw_jloc_key(loc, key);
        *out = umw_json_member(obj, key);
        return *out ? umw_json_object(*out, at, err) : 0;
}

static int member_array(yajl_val obj, const struct umw_jloc *loc, const char *key, yajl_val *out,
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
static int member_int(yajl_val obj, const struct umw_jloc *loc, const char *key,
                      const struct int_rule *rule, bool *present, int64_t *out,
                      struct umw_error **err)
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
static int member_set_int(yajl_val obj, const struct umw_jloc *loc, const char *key,
                          const struct int_rule *rule, int64_t *out, struct umw_error **err)
{
        bool present;
        return member_int(obj, loc, key, rule, &present, out, err);
}

/* The same for a member the spec requires. */
static int member_required_int(yajl_val obj, const struct umw_jloc *loc, const char *key,
                               const struct int_rule *rule, int64_t *out, struct umw_error **err)
{
        bool present;
        int r = member_int(obj, loc, key, rule, &present, out, err);
        if (r < 0 || present)
                return r;
        struct umw_jloc at = umw_jloc_key(loc, key);
        return umw_json_expected(&at, rule->what, err);
}

static int member_bool(yajl_val obj, const struct umw_jloc *loc, const char *key, bool *present,
                       bool *out, struct umw_error **err)
{
        yajl_val v = umw_json_member(obj, key);
        struct umw_jloc at = umw_jloc_key(loc, key);
        *present = v != NULL;
        *out = false;
        return v ? umw_json_bool(v, &at, out, err) : 0;
}

/* --- memory --- */

struct memory_req {
        bool has_limit, has_reservation, has_swap, has_kernel, has_kernel_tcp, has_swappiness,
            has_hierarchy, has_oom;
        int64_t limit, reservation, swap, kernel, kernel_tcp, swappiness;
        bool use_hierarchy, disable_oom_killer;
};

static int memory_read(yajl_val obj, const struct umw_jloc *loc, struct memory_req *q,
                       struct umw_error **err)
{
        bool unused;
        int r;
        if ((r = member_int(obj, loc, "limit", &R_BYTES, &q->has_limit, &q->limit, err)) < 0 ||
            (r = member_int(obj, loc, "reservation", &R_BYTES_OR_ZERO, &q->has_reservation,
                            &q->reservation, err)) < 0 ||
            (r = member_int(obj, loc, "swap", &R_BYTES, &q->has_swap, &q->swap, err)) < 0 ||
            (r = member_int(obj, loc, "kernel", &R_BYTES, &q->has_kernel, &q->kernel, err)) < 0 ||
            (r = member_int(obj, loc, "kernelTCP", &R_BYTES, &q->has_kernel_tcp, &q->kernel_tcp,
                            err)) < 0 ||
            (r = member_int(obj, loc, "swappiness", &R_SWAPPINESS, &q->has_swappiness,
                            &q->swappiness, err)) < 0 ||
            (r = member_bool(obj, loc, "useHierarchy", &q->has_hierarchy, &q->use_hierarchy, err)) <
                0 ||
            (r = member_bool(obj, loc, "disableOOMKiller", &q->has_oom, &q->disable_oom_killer,
                             err)) < 0)
                return r;
        /* checkBeforeUpdate asks update to compare with current usage: a
         * read of the live cgroup, not a mapping; the type is still checked. */
        bool check;
        return member_bool(obj, loc, "checkBeforeUpdate", &unused, &check, err);
}

/* OCI swap is memory+swap together, so it can never be below the limit, and
 * v2's swap-only value can only be derived from a known limit. */
static int memory_check_swap(const struct memory_req *q, const struct umw_jloc *loc,
                             enum cgroup_version v, struct umw_error **err)
{
        if (!q->has_swap || q->swap == -1)
                return 0;
        struct umw_jloc at = umw_jloc_key(loc, "swap");
        if (q->has_limit && q->limit == -1)
                return umw_json_expected(&at, "-1 when .limit is -1 (swap counts memory+swap)",
                                         err);
        if (q->has_limit && q->swap < q->limit)
                return umw_json_expected(&at, "a value not below .limit (swap counts memory+swap)",
                                         err);
        if (v == CGROUP_V2 && !q->has_limit)
                return umw_json_expected(
                    &at, "-1 unless .limit is set (cgroup v2 needs it to derive memory.swap.max)",
                    err);
        return 0;
}

static int memory_emit_v1(struct mapping *m, const struct memory_req *q, const struct umw_jloc *loc,
                          struct umw_error **err)
{
        int r = 0;
        /* use_hierarchy can only change while the cgroup is still empty. */
        if (q->has_hierarchy && (r = emit(m, loc, "memory", "memory.use_hierarchy", err, "%d",
                                          q->use_hierarchy ? 1 : 0)) < 0)
                return r;
        if (q->has_limit &&
            (r = emit_limit(m, loc, "memory", "memory.limit_in_bytes", q->limit, err)) < 0)
                return r;
        if (q->has_swap &&
            (r = emit_limit(m, loc, "memory", "memory.memsw.limit_in_bytes", q->swap, err)) < 0)
                return r;
        if (q->has_reservation && (r = emit_limit(m, loc, "memory", "memory.soft_limit_in_bytes",
                                                  q->reservation, err)) < 0)
                return r;
        if (q->has_kernel &&
            (r = emit_limit(m, loc, "memory", "memory.kmem.limit_in_bytes", q->kernel, err)) < 0)
                return r;
        if (q->has_kernel_tcp && (r = emit_limit(m, loc, "memory", "memory.kmem.tcp.limit_in_bytes",
                                                 q->kernel_tcp, err)) < 0)
                return r;
        if (q->has_swappiness &&
            (r = emit(m, loc, "memory", "memory.swappiness", err, "%" PRId64, q->swappiness)) < 0)
                return r;
        if (q->disable_oom_killer)
                r = emit(m, loc, "memory", "memory.oom_control", err, "1");
        return r;
}

/* v2 has no kernel-memory limits (the deprecated kernel and kernelTCP are
 * ignored, as by runc) and no per-cgroup swappiness (ignored too: it tunes
 * reclaim, it is not a limit). What v2 cannot do that would leave a wall
 * missing is refused. */
static int memory_emit_v2(struct mapping *m, const struct memory_req *q, const struct umw_jloc *loc,
                          struct umw_error **err)
{
        int r = 0;
        if (q->has_hierarchy && !q->use_hierarchy) {
                struct umw_jloc at = umw_jloc_key(loc, "useHierarchy");
                return unsupported(&at, "cgroup v2 is always hierarchical, expected true", err);
        }
        if (q->disable_oom_killer) {
                struct umw_jloc at = umw_jloc_key(loc, "disableOOMKiller");
                return unsupported(&at, "not supported on cgroup v2 (needs cgroup v1)", err);
        }
        if (q->has_limit && (r = emit_limit(m, loc, "memory", "memory.max", q->limit, err)) < 0)
                return r;
        if (q->has_swap) {
                int64_t swap_only = q->swap == -1 ? -1 : q->swap - q->limit;
                if ((r = emit_limit(m, loc, "memory", "memory.swap.max", swap_only, err)) < 0)
                        return r;
        }
        if (q->has_reservation)
                r = emit_limit(m, loc, "memory", "memory.low", q->reservation, err);
        return r;
}

static const char *const memory_keys[] = {"limit",
                                          "reservation",
                                          "swap",
                                          "kernel",
                                          "kernelTCP",
                                          "swappiness",
                                          "disableOOMKiller",
                                          "useHierarchy",
                                          "checkBeforeUpdate",
                                          NULL};

static int map_memory(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                      struct umw_error **err)
{
        struct memory_req q;
        int r;
        if ((r = check_keys(obj, loc, memory_keys, err)) < 0 ||
            (r = memory_read(obj, loc, &q, err)) < 0 ||
            (r = memory_check_swap(&q, loc, m->v, err)) < 0)
                return r;
        return m->v == CGROUP_V1 ? memory_emit_v1(m, &q, loc, err)
                                 : memory_emit_v2(m, &q, loc, err);
}

/* --- pids --- */

static const char *const pids_keys[] = {"limit", NULL};

static int map_pids(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                    struct umw_error **err)
{
        bool present;
        int64_t limit;
        int r;
        if ((r = check_keys(obj, loc, pids_keys, err)) < 0 ||
            (r = member_int(obj, loc, "limit", &R_PIDS, &present, &limit, err)) < 0 || !present)
                return r;
        /* pids.max reads "max" for no limit on both versions. */
        if (limit <= 0)
                return emit(m, loc, "pids", "pids.max", err, "max");
        return emit(m, loc, "pids", "pids.max", err, "%" PRId64, limit);
}

/* --- cpu and cpuset --- */

uint64_t cgroup_shares_to_weight(uint64_t shares)
{
        if (shares == 0)
                return 0;
        if (shares <= 2)
                return 1;
        if (shares >= 262144)
                return 10000;
        return 1 + ((shares - 2) * 9999) / 262142;
}

/* The kernel's list syntax for cpus and memory nodes: "N" or "N-M" items,
 * comma-separated, each range ascending. */
static bool is_id_list(const char *s)
{
        for (;;) {
                char *end;
                if (*s < '0' || *s > '9')
                        return false;
                unsigned long lo = strtoul(s, &end, 10), hi = lo;
                if (*end == '-') {
                        if (end[1] < '0' || end[1] > '9')
                                return false;
                        hi = strtoul(end + 1, &end, 10);
                }
                if (lo > hi || hi > 65535)
                        return false;
                if (*end != ',')
                        return *end == '\0';
                s = end + 1;
        }
}

static int map_cpuset_file(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                           const char *key, const char *file, const char *what,
                           struct umw_error **err)
{
        yajl_val v = umw_json_member(obj, key);
        struct umw_jloc at = umw_jloc_key(loc, key);
        const char *list;
        int r;
        if (!v)
                return 0;
        if ((r = umw_json_string(v, &at, &list, err)) < 0)
                return r;
        /* An empty list is what generators write for "not pinned". */
        if (!*list)
                return 0;
        if (!is_id_list(list))
                return umw_json_expected(&at, what, err);
        return emit(m, &at, "cpuset", file, err, "%s", list);
}

struct cpu_req {
        int64_t shares, quota, period, rt_runtime, rt_period, burst, idle;
        bool has_burst, has_idle;
};

static int cpu_read(yajl_val obj, const struct umw_jloc *loc, struct cpu_req *q,
                    struct umw_error **err)
{
        int r;
        if ((r = member_set_int(obj, loc, "shares", &R_SHARES, &q->shares, err)) < 0 ||
            (r = member_set_int(obj, loc, "quota", &R_QUOTA, &q->quota, err)) < 0 ||
            (r = member_set_int(obj, loc, "period", &R_PERIOD, &q->period, err)) < 0 ||
            (r = member_set_int(obj, loc, "realtimeRuntime", &R_RT_RUNTIME, &q->rt_runtime, err)) <
                0 ||
            (r = member_set_int(obj, loc, "realtimePeriod", &R_USEC, &q->rt_period, err)) < 0 ||
            (r = member_int(obj, loc, "burst", &R_USEC, &q->has_burst, &q->burst, err)) < 0)
                return r;
        return member_int(obj, loc, "idle", &R_IDLE, &q->has_idle, &q->idle, err);
}

/* The period goes first; crun's fallback applies when lowering it is refused
 * (EINVAL) because the old quota would then exceed the parent's: write the
 * quota, then the period again. */
static int cpu_emit_v1(struct mapping *m, const struct cpu_req *q, const struct umw_jloc *loc,
                       struct umw_error **err)
{
        int r = 0;
        if (q->shares && (r = emit(m, loc, "cpu", "cpu.shares", err, "%" PRId64, q->shares)) < 0)
                return r;
        if (q->period &&
            (r = emit(m, loc, "cpu", "cpu.cfs_period_us", err, "%" PRId64, q->period)) < 0)
                return r;
        if (q->quota &&
            (r = emit(m, loc, "cpu", "cpu.cfs_quota_us", err, "%" PRId64, q->quota)) < 0)
                return r;
        if (q->has_burst &&
            (r = emit(m, loc, "cpu", "cpu.cfs_burst_us", err, "%" PRId64, q->burst)) < 0)
                return r;
        /* The runtime must fit in the period, so the period is set first. */
        if (q->rt_period &&
            (r = emit(m, loc, "cpu", "cpu.rt_period_us", err, "%" PRId64, q->rt_period)) < 0)
                return r;
        if (q->rt_runtime &&
            (r = emit(m, loc, "cpu", "cpu.rt_runtime_us", err, "%" PRId64, q->rt_runtime)) < 0)
                return r;
        if (q->has_idle)
                r = emit(m, loc, "cpu", "cpu.idle", err, "%" PRId64, q->idle);
        return r;
}

/* cpu.max holds quota and period together: "QUOTA PERIOD", or "QUOTA" alone
 * (the kernel keeps the period); a period alone is "max PERIOD", as crun
 * and runc write it. */
static int cpu_emit_max(struct mapping *m, const struct cpu_req *q, const struct umw_jloc *loc,
                        struct umw_error **err)
{
        char quota[32] = "max";
        if (q->quota > 0)
                snprintf(quota, sizeof(quota), "%" PRId64, q->quota);
        if (!q->period)
                return emit(m, loc, "cpu", "cpu.max", err, "%s", quota);
        return emit(m, loc, "cpu", "cpu.max", err, "%s %" PRId64, quota, q->period);
}

static int cpu_emit_v2(struct mapping *m, const struct cpu_req *q, const struct umw_jloc *loc,
                       struct umw_error **err)
{
        int r = 0;
        if (q->rt_runtime || q->rt_period) {
                struct umw_jloc at =
                    umw_jloc_key(loc, q->rt_runtime ? "realtimeRuntime" : "realtimePeriod");
                return unsupported(&at, "not supported on cgroup v2 (needs cgroup v1)", err);
        }
        if (q->shares && (r = emit(m, loc, "cpu", "cpu.weight", err, "%" PRIu64,
                                   cgroup_shares_to_weight((uint64_t)q->shares))) < 0)
                return r;
        if ((q->quota || q->period) && (r = cpu_emit_max(m, q, loc, err)) < 0)
                return r;
        if (q->has_burst &&
            (r = emit(m, loc, "cpu", "cpu.max.burst", err, "%" PRId64, q->burst)) < 0)
                return r;
        if (q->has_idle)
                r = emit(m, loc, "cpu", "cpu.idle", err, "%" PRId64, q->idle);
        return r;
}

static const char *const cpu_keys[] = {
    "shares",         "quota", "burst", "period", "realtimeRuntime",
    "realtimePeriod", "cpus",  "mems",  "idle",   NULL};

static int map_cpu(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                   struct umw_error **err)
{
        struct cpu_req q;
        int r;
        if ((r = check_keys(obj, loc, cpu_keys, err)) < 0 || (r = cpu_read(obj, loc, &q, err)) < 0)
                return r;
        r = m->v == CGROUP_V1 ? cpu_emit_v1(m, &q, loc, err) : cpu_emit_v2(m, &q, loc, err);
        if (r < 0 || (r = map_cpuset_file(m, obj, loc, "cpus", "cpuset.cpus",
                                          "a CPU list such as \"0-3,5\"", err)) < 0)
                return r;
        return map_cpuset_file(m, obj, loc, "mems", "cpuset.mems",
                               "a memory node list such as \"0-1\"", err);
}

/* --- blockIO --- */

/* OCI weights are v1's 10..1000; io.weight is 1..10000, linearly (crun). */
static int64_t blkio_weight_to_io_weight(int64_t weight)
{
        return 1 + (weight - 10) * 9999 / 990;
}

struct blkio_dev {
        int64_t major, minor;
};

static int blkio_dev_read(yajl_val obj, const struct umw_jloc *loc, struct blkio_dev *d,
                          struct umw_error **err)
{
        int r;
        if ((r = umw_json_object(obj, loc, err)) < 0 ||
            (r = member_required_int(obj, loc, "major", &R_U32, &d->major, err)) < 0)
                return r;
        return member_required_int(obj, loc, "minor", &R_U32, &d->minor, err);
}

static const char *const weight_device_keys[] = {"major", "minor", "weight", "leafWeight", NULL};

static int map_weight_device(struct mapping *m, yajl_val item, const struct umw_jloc *loc,
                             struct umw_error **err)
{
        struct blkio_dev d;
        int64_t weight, leaf;
        int r;
        if ((r = blkio_dev_read(item, loc, &d, err)) < 0 ||
            (r = check_keys(item, loc, weight_device_keys, err)) < 0 ||
            (r = member_set_int(item, loc, "weight", &R_BLKIO_WEIGHT, &weight, err)) < 0 ||
            (r = member_set_int(item, loc, "leafWeight", &R_BLKIO_WEIGHT, &leaf, err)) < 0)
                return r;
        if (m->v == CGROUP_V2) {
                if (leaf) {
                        struct umw_jloc at = umw_jloc_key(loc, "leafWeight");
                        return unsupported(&at, "not supported on cgroup v2 (needs cgroup v1)",
                                           err);
                }
                if (!weight)
                        return 0;
                return emit(m, loc, "io", "io.weight", err, "%" PRId64 ":%" PRId64 " %" PRId64,
                            d.major, d.minor, blkio_weight_to_io_weight(weight));
        }
        if (weight && (r = emit(m, loc, "blkio", "blkio.bfq.weight_device", err,
                                "%" PRId64 ":%" PRId64 " %" PRId64, d.major, d.minor, weight)) < 0)
                return r;
        if (leaf)
                r = emit(m, loc, "blkio", "blkio.leaf_weight_device", err,
                         "%" PRId64 ":%" PRId64 " %" PRId64, d.major, d.minor, leaf);
        return r;
}

static const struct throttle {
        const char *key, *v1_file, *v2_key;
} throttles[] = {
    {"throttleReadBpsDevice", "blkio.throttle.read_bps_device", "rbps"},
    {"throttleWriteBpsDevice", "blkio.throttle.write_bps_device", "wbps"},
    {"throttleReadIOPSDevice", "blkio.throttle.read_iops_device", "riops"},
    {"throttleWriteIOPSDevice", "blkio.throttle.write_iops_device", "wiops"},
};

static const char *const throttle_device_keys[] = {"major", "minor", "rate", NULL};

/* One line per device: "MAJ:MIN RATE" on v1, "MAJ:MIN KEY=RATE" in io.max
 * on v2. A rate of 0 lifts the limit: v1 reads it so, v2 wants "max". */
static int map_throttle_device(struct mapping *m, const struct throttle *t, yajl_val item,
                               const struct umw_jloc *loc, struct umw_error **err)
{
        struct blkio_dev d;
        int64_t rate;
        int r;
        if ((r = blkio_dev_read(item, loc, &d, err)) < 0 ||
            (r = check_keys(item, loc, throttle_device_keys, err)) < 0 ||
            (r = member_required_int(item, loc, "rate", &R_RATE, &rate, err)) < 0)
                return r;
        if (m->v == CGROUP_V1)
                return emit(m, loc, "blkio", t->v1_file, err, "%" PRId64 ":%" PRId64 " %" PRId64,
                            d.major, d.minor, rate);
        if (rate == 0)
                return emit(m, loc, "io", "io.max", err, "%" PRId64 ":%" PRId64 " %s=max", d.major,
                            d.minor, t->v2_key);
        return emit(m, loc, "io", "io.max", err, "%" PRId64 ":%" PRId64 " %s=%" PRId64, d.major,
                    d.minor, t->v2_key, rate);
}

static int map_blkio_weights(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                             struct umw_error **err)
{
        int64_t weight, leaf;
        int r;
        if ((r = member_set_int(obj, loc, "weight", &R_BLKIO_WEIGHT, &weight, err)) < 0 ||
            (r = member_set_int(obj, loc, "leafWeight", &R_BLKIO_WEIGHT, &leaf, err)) < 0)
                return r;
        if (m->v == CGROUP_V2) {
                if (leaf) {
                        struct umw_jloc at = umw_jloc_key(loc, "leafWeight");
                        return unsupported(&at, "not supported on cgroup v2 (needs cgroup v1)",
                                           err);
                }
                if (!weight)
                        return 0;
                return emit(m, loc, "io", "io.weight", err, "default %" PRId64,
                            blkio_weight_to_io_weight(weight));
        }
        /* blkio.weight was CFQ's, gone since Linux 5.0; BFQ's file is what
         * kernels have now. */
        if (weight && (r = emit(m, loc, "blkio", "blkio.bfq.weight", err, "%" PRId64, weight)) < 0)
                return r;
        if (leaf)
                r = emit(m, loc, "blkio", "blkio.leaf_weight", err, "%" PRId64, leaf);
        return r;
}

static const char *const blkio_keys[] = {"weight",
                                         "leafWeight",
                                         "weightDevice",
                                         "throttleReadBpsDevice",
                                         "throttleWriteBpsDevice",
                                         "throttleReadIOPSDevice",
                                         "throttleWriteIOPSDevice",
                                         NULL};

static int map_blkio(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                     struct umw_error **err)
{
        struct umw_jloc at;
        yajl_val list;
        int r;
        if ((r = check_keys(obj, loc, blkio_keys, err)) < 0 ||
            (r = map_blkio_weights(m, obj, loc, err)) < 0 ||
            (r = member_array(obj, loc, "weightDevice", &list, &at, err)) < 0)
                return r;
        for (size_t i = 0; list && i < list->u.array.len; i++) {
                struct umw_jloc item = umw_jloc_index(&at, i);
                if ((r = map_weight_device(m, list->u.array.values[i], &item, err)) < 0)
                        return r;
        }
        for (size_t t = 0; t < ARRAY_SIZE(throttles); t++) {
                if ((r = member_array(obj, loc, throttles[t].key, &list, &at, err)) < 0)
                        return r;
                for (size_t i = 0; list && i < list->u.array.len; i++) {
                        struct umw_jloc item = umw_jloc_index(&at, i);
                        r = map_throttle_device(m, &throttles[t], list->u.array.values[i], &item,
                                                err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* --- hugetlb --- */

/* The kernel names hugetlb files by page size: digits and KB, MB or GB. */
static bool is_page_size(const char *s)
{
        size_t digits = strspn(s, "0123456789");
        return digits > 0 && digits <= 10 && s[0] != '0' &&
               (strcmp(s + digits, "KB") == 0 || strcmp(s + digits, "MB") == 0 ||
                strcmp(s + digits, "GB") == 0);
}

static const char *const hugepage_keys[] = {"pageSize", "limit", NULL};

static int map_hugepage_limit(struct mapping *m, yajl_val item, const struct umw_jloc *loc,
                              struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, "pageSize");
        const char *size;
        int64_t limit;
        int r;
        if ((r = umw_json_object(item, loc, err)) < 0 ||
            (r = check_keys(item, loc, hugepage_keys, err)) < 0)
                return r;
        yajl_val v = umw_json_member(item, "pageSize");
        if (!v || !YAJL_IS_STRING(v) || !is_page_size(v->u.string))
                return umw_json_expected(&at, "a page size such as \"2MB\" or \"1GB\"", err);
        size = v->u.string;
        if ((r = member_required_int(item, loc, "limit", &R_BYTES_OR_ZERO, &limit, err)) < 0)
                return r;
        char file[64];
        snprintf(file, sizeof(file), "hugetlb.%s.%s", size,
                 m->v == CGROUP_V1 ? "limit_in_bytes" : "max");
        return emit_limit(m, loc, "hugetlb", file, limit, err);
}

static int map_hugepages(struct mapping *m, yajl_val list, const struct umw_jloc *loc,
                         struct umw_error **err)
{
        for (size_t i = 0; i < list->u.array.len; i++) {
                struct umw_jloc item = umw_jloc_index(loc, i);
                int r = map_hugepage_limit(m, list->u.array.values[i], &item, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* --- network (v1 net_cls and net_prio only) --- */

static bool is_ifname(const char *s)
{
        size_t n = strlen(s);
        return n > 0 && n < 16 && strcspn(s, " \t\n/:") == n && strcmp(s, ".") != 0 &&
               strcmp(s, "..") != 0;
}

static const char *const priority_keys[] = {"name", "priority", NULL};

static int map_net_priority(struct mapping *m, yajl_val item, const struct umw_jloc *loc,
                            struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, "name");
        int64_t prio;
        int r;
        if ((r = umw_json_object(item, loc, err)) < 0 ||
            (r = check_keys(item, loc, priority_keys, err)) < 0)
                return r;
        yajl_val name = umw_json_member(item, "name");
        if (!name || !YAJL_IS_STRING(name) || !is_ifname(name->u.string))
                return umw_json_expected(&at, "a network interface name", err);
        if ((r = member_required_int(item, loc, "priority", &R_U32, &prio, err)) < 0)
                return r;
        return emit(m, loc, "net_prio", "net_prio.ifpriomap", err, "%s %" PRId64, name->u.string,
                    prio);
}

static const char *const network_keys[] = {"classID", "priorities", NULL};

static int map_network(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                       struct umw_error **err)
{
        struct umw_jloc at;
        yajl_val prios;
        bool has_class;
        int64_t class_id;
        int r;
        if ((r = check_keys(obj, loc, network_keys, err)) < 0 ||
            (r = member_int(obj, loc, "classID", &R_U32, &has_class, &class_id, err)) < 0 ||
            (r = member_array(obj, loc, "priorities", &prios, &at, err)) < 0)
                return r;
        size_t n_prios = prios ? prios->u.array.len : 0;
        if (m->v == CGROUP_V2 && (has_class || n_prios))
                return unsupported(loc,
                                   "classID and priorities are not supported on cgroup v2 "
                                   "(needs the v1 net_cls and net_prio controllers)",
                                   err);
        if (has_class &&
            (r = emit(m, loc, "net_cls", "net_cls.classid", err, "%" PRId64, class_id)) < 0)
                return r;
        for (size_t i = 0; i < n_prios; i++) {
                struct umw_jloc item = umw_jloc_index(&at, i);
                if ((r = map_net_priority(m, prios->u.array.values[i], &item, err)) < 0)
                        return r;
        }
        return 0;
}

/* --- rdma --- */

static const char *const rdma_keys[] = {"hcaHandles", "hcaObjects", NULL};

static int map_rdma_device(struct mapping *m, const char *dev, yajl_val obj,
                           const struct umw_jloc *loc, struct umw_error **err)
{
        bool has_handles, has_objects;
        int64_t handles, objects;
        char h[24] = "max", o[24] = "max";
        int r;
        if (!is_ifname(dev))
                return umw_json_expected(loc, "an object keyed by RDMA device name", err);
        if ((r = umw_json_object(obj, loc, err)) < 0 ||
            (r = check_keys(obj, loc, rdma_keys, err)) < 0 ||
            (r = member_int(obj, loc, "hcaHandles", &R_U32, &has_handles, &handles, err)) < 0 ||
            (r = member_int(obj, loc, "hcaObjects", &R_U32, &has_objects, &objects, err)) < 0)
                return r;
        if (has_handles)
                snprintf(h, sizeof(h), "%" PRId64, handles);
        if (has_objects)
                snprintf(o, sizeof(o), "%" PRId64, objects);
        return emit(m, loc, "rdma", "rdma.max", err, "%s hca_handle=%s hca_object=%s", dev, h, o);
}

static int map_rdma(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                    struct umw_error **err)
{
        for (size_t i = 0; i < obj->u.object.len; i++) {
                struct umw_jloc at = key_loc(loc, obj->u.object.keys[i]);
                int r =
                    map_rdma_device(m, obj->u.object.keys[i], obj->u.object.values[i], &at, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* --- unified (v2 only) --- */

/* hugetlb.<size>.max and hugetlb.<size>.rsvd.max, for any page size. */
static bool is_hugetlb_key(const char *key)
{
        char size[16];
        const char *rest;
        if (strncmp(key, "hugetlb.", 8) != 0)
                return false;
        key += 8;
        rest = strchr(key, '.');
        if (!rest || (size_t)(rest - key) >= sizeof(size))
                return false;
        memcpy(size, key, (size_t)(rest - key));
        size[rest - key] = '\0';
        return is_page_size(size) && (strcmp(rest, ".max") == 0 || strcmp(rest, ".rsvd.max") == 0);
}

static int check_unified_key(const char *key, const struct umw_jloc *at, struct umw_error **err)
{
        if (in_words(unified_refused, key))
                return unsupported(at,
                                   "refused: this file moves processes or changes the cgroup "
                                   "tree, which only the runtime does",
                                   err);
        if (in_words(unified_writable, key) || is_hugetlb_key(key))
                return 0;
        return umw_json_expected(at, "a known cgroup v2 limit file such as \"memory.high\"", err);
}

/* "memory.high" -> "memory"; core files ("cgroup.*") need no controller. */
static void unified_controller(const char *key, char *out, size_t size)
{
        size_t n = strcspn(key, ".");
        if ((n == 6 && strncmp(key, "cgroup", n) == 0) || n >= size)
                n = 0;
        memcpy(out, key, n);
        out[n] = '\0';
}

/* A value with several lines (io.max for two devices, say) is written one
 * line at a time, as the kernel parses one line per write. */
static int map_unified_value(struct mapping *m, const char *key, const char *value,
                             const struct umw_jloc *at, struct umw_error **err)
{
        char controller[16];
        unified_controller(key, controller, sizeof(controller));
        while (*value) {
                size_t len = strcspn(value, "\n");
                if (len > 0) {
                        int r = emit(m, at, controller, key, err, "%.*s", (int)len, value);
                        if (r < 0)
                                return r;
                }
                value += len + (value[len] == '\n');
        }
        return 0;
}

static int map_unified(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                       struct umw_error **err)
{
        if (obj->u.object.len && m->v == CGROUP_V1)
                return unsupported(loc, "linux.resources.unified needs cgroup v2", err);
        for (size_t i = 0; i < obj->u.object.len; i++) {
                const char *key = obj->u.object.keys[i];
                struct umw_jloc at = key_loc(loc, key);
                const char *value;
                int r;
                if ((r = check_unified_key(key, &at, err)) < 0 ||
                    (r = umw_json_string(obj->u.object.values[i], &at, &value, err)) < 0 ||
                    (r = map_unified_value(m, key, value, &at, err)) < 0)
                        return r;
        }
        return 0;
}

/* --- the whole object --- */

static const char *const resource_keys[] = {
    "devices",        "memory",  "cpu",  "pids",    "blockIO",
    "hugepageLimits", "network", "rdma", "unified", NULL};

static int map_all(struct mapping *m, yajl_val res, const struct umw_jloc *loc,
                   struct umw_error **err)
{
        static const struct {
                const char *key;
                int (*map)(struct mapping *, yajl_val, const struct umw_jloc *,
                           struct umw_error **);
        } objects[] = {
            {"memory", map_memory}, {"pids", map_pids},       {"cpu", map_cpu},
            {"blockIO", map_blkio}, {"network", map_network}, {"rdma", map_rdma},
        };
        struct umw_jloc at;
        yajl_val v;
        int r;
        if ((r = umw_json_object(res, loc, err)) < 0 ||
            (r = check_keys(res, loc, resource_keys, err)) < 0)
                return r;
        for (size_t i = 0; i < ARRAY_SIZE(objects); i++) {
                if ((r = member_object(res, loc, objects[i].key, &v, &at, err)) < 0 ||
                    (v && (r = objects[i].map(m, v, &at, err)) < 0))
                        return r;
        }
        if ((r = member_array(res, loc, "hugepageLimits", &v, &at, err)) < 0 ||
            (v && (r = map_hugepages(m, v, &at, err)) < 0))
                return r;
        /* Last, so a unified value overrides what the fields above wrote. */
        if ((r = member_object(res, loc, "unified", &v, &at, err)) < 0 ||
            (v && (r = map_unified(m, v, &at, err)) < 0))
                return r;
        return 0;
}

int cgroup_map_resources(yajl_val resources, enum cgroup_version v, const char *file,
                         struct cgroup_settings *out, struct umw_error **err)
{
        struct mapping m = {.v = v, .out = out};
        struct umw_jloc loc;
        umw_jloc_init(&loc, file);
        snprintf(loc.path, sizeof(loc.path), ".linux.resources");
        *out = (struct cgroup_settings){0};
        if (!resources)
                return 0;
        int r = map_all(&m, resources, &loc, err);
        if (r < 0)
                cgroup_settings_release(out);
        return r;
}

void cgroup_settings_release(struct cgroup_settings *s)
{
        free(s->items);
        s->items = NULL;
        s->n = 0;
}
