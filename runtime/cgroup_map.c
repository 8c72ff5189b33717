/* linux.resources -> (controller, file, value) for cgroup v1 or v2. Every
 * value is checked before anything is emitted, so a bad config leaves no
 * half-written cgroup behind. The kernel facts this encodes (file names,
 * formats, what each version lacks) follow crun and runc. */
#include "runtime/cgroup_map_fields.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        if ((r = cgm_member_int(obj, loc, "limit", &cgm_r_bytes, &q->has_limit, &q->limit, err)) <
                0 ||
            (r = cgm_member_int(obj, loc, "reservation", &cgm_r_bytes_or_zero, &q->has_reservation,
                                &q->reservation, err)) < 0 ||
            (r = cgm_member_int(obj, loc, "swap", &cgm_r_bytes, &q->has_swap, &q->swap, err)) < 0 ||
            (r = cgm_member_int(obj, loc, "kernel", &cgm_r_bytes, &q->has_kernel, &q->kernel,
                                err)) < 0 ||
            (r = cgm_member_int(obj, loc, "kernelTCP", &cgm_r_bytes, &q->has_kernel_tcp,
                                &q->kernel_tcp, err)) < 0 ||
            (r = cgm_member_int(obj, loc, "swappiness", &cgm_r_swappiness, &q->has_swappiness,
                                &q->swappiness, err)) < 0 ||
            (r = cgm_member_bool(obj, loc, "useHierarchy", &q->has_hierarchy, &q->use_hierarchy,
                                 err)) < 0 ||
            (r = cgm_member_bool(obj, loc, "disableOOMKiller", &q->has_oom, &q->disable_oom_killer,
                                 err)) < 0)
                return r;
        /* checkBeforeUpdate asks update to compare with current usage: a
         * read of the live cgroup, not a mapping; the type is still checked. */
        bool check;
        return cgm_member_bool(obj, loc, "checkBeforeUpdate", &unused, &check, err);
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
        if (q->has_hierarchy && (r = cgm_emit(m, loc, "memory", "memory.use_hierarchy", err, "%d",
                                              q->use_hierarchy ? 1 : 0)) < 0)
                return r;
        if (q->has_limit &&
            (r = cgm_emit_limit(m, loc, "memory", "memory.limit_in_bytes", q->limit, err)) < 0)
                return r;
        if (q->has_swap &&
            (r = cgm_emit_limit(m, loc, "memory", "memory.memsw.limit_in_bytes", q->swap, err)) < 0)
                return r;
        if (q->has_reservation &&
            (r = cgm_emit_limit(m, loc, "memory", "memory.soft_limit_in_bytes", q->reservation,
                                err)) < 0)
                return r;
        if (q->has_kernel && (r = cgm_emit_limit(m, loc, "memory", "memory.kmem.limit_in_bytes",
                                                 q->kernel, err)) < 0)
                return r;
        if (q->has_kernel_tcp &&
            (r = cgm_emit_limit(m, loc, "memory", "memory.kmem.tcp.limit_in_bytes", q->kernel_tcp,
                                err)) < 0)
                return r;
        if (q->has_swappiness && (r = cgm_emit(m, loc, "memory", "memory.swappiness", err,
                                               "%" PRId64, q->swappiness)) < 0)
                return r;
        if (q->disable_oom_killer)
                r = cgm_emit(m, loc, "memory", "memory.oom_control", err, "1");
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
                return cgm_unsupported(&at, "cgroup v2 is always hierarchical, expected true", err);
        }
        if (q->disable_oom_killer) {
                struct umw_jloc at = umw_jloc_key(loc, "disableOOMKiller");
                return cgm_unsupported(&at, "not supported on cgroup v2 (needs cgroup v1)", err);
        }
        if (q->has_limit && (r = cgm_emit_limit(m, loc, "memory", "memory.max", q->limit, err)) < 0)
                return r;
        if (q->has_swap) {
                int64_t swap_only = q->swap == -1 ? -1 : q->swap - q->limit;
                if ((r = cgm_emit_limit(m, loc, "memory", "memory.swap.max", swap_only, err)) < 0)
                        return r;
        }
        if (q->has_reservation)
                r = cgm_emit_limit(m, loc, "memory", "memory.low", q->reservation, err);
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
        if ((r = cgm_check_keys(obj, loc, memory_keys, err)) < 0 ||
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
        if ((r = cgm_check_keys(obj, loc, pids_keys, err)) < 0 ||
            (r = cgm_member_int(obj, loc, "limit", &cgm_r_pids, &present, &limit, err)) < 0 ||
            !present)
                return r;
        /* pids.max reads "max" for no limit on both versions. */
        if (limit <= 0)
                return cgm_emit(m, loc, "pids", "pids.max", err, "max");
        return cgm_emit(m, loc, "pids", "pids.max", err, "%" PRId64, limit);
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
        return cgm_emit(m, &at, "cpuset", file, err, "%s", list);
}

struct cpu_req {
        int64_t shares, quota, period, rt_runtime, rt_period, burst, idle;
        bool has_burst, has_idle;
};

static int cpu_read(yajl_val obj, const struct umw_jloc *loc, struct cpu_req *q,
                    struct umw_error **err)
{
        int r;
        if ((r = cgm_member_set_int(obj, loc, "shares", &cgm_r_shares, &q->shares, err)) < 0 ||
            (r = cgm_member_set_int(obj, loc, "quota", &cgm_r_quota, &q->quota, err)) < 0 ||
            (r = cgm_member_set_int(obj, loc, "period", &cgm_r_period, &q->period, err)) < 0 ||
            (r = cgm_member_set_int(obj, loc, "realtimeRuntime", &cgm_r_rt_runtime, &q->rt_runtime,
                                    err)) < 0 ||
            (r = cgm_member_set_int(obj, loc, "realtimePeriod", &cgm_r_usec, &q->rt_period, err)) <
                0 ||
            (r = cgm_member_int(obj, loc, "burst", &cgm_r_usec, &q->has_burst, &q->burst, err)) < 0)
                return r;
        return cgm_member_int(obj, loc, "idle", &cgm_r_idle, &q->has_idle, &q->idle, err);
}

/* The period goes first; crun's fallback applies when lowering it is refused
 * (EINVAL) because the old quota would then exceed the parent's: write the
 * quota, then the period again. */
static int cpu_emit_v1(struct mapping *m, const struct cpu_req *q, const struct umw_jloc *loc,
                       struct umw_error **err)
{
        int r = 0;
        if (q->shares &&
            (r = cgm_emit(m, loc, "cpu", "cpu.shares", err, "%" PRId64, q->shares)) < 0)
                return r;
        if (q->period &&
            (r = cgm_emit(m, loc, "cpu", "cpu.cfs_period_us", err, "%" PRId64, q->period)) < 0)
                return r;
        if (q->quota &&
            (r = cgm_emit(m, loc, "cpu", "cpu.cfs_quota_us", err, "%" PRId64, q->quota)) < 0)
                return r;
        if (q->has_burst &&
            (r = cgm_emit(m, loc, "cpu", "cpu.cfs_burst_us", err, "%" PRId64, q->burst)) < 0)
                return r;
        /* The runtime must fit in the period, so the period is set first. */
        if (q->rt_period &&
            (r = cgm_emit(m, loc, "cpu", "cpu.rt_period_us", err, "%" PRId64, q->rt_period)) < 0)
                return r;
        if (q->rt_runtime &&
            (r = cgm_emit(m, loc, "cpu", "cpu.rt_runtime_us", err, "%" PRId64, q->rt_runtime)) < 0)
                return r;
        if (q->has_idle)
                r = cgm_emit(m, loc, "cpu", "cpu.idle", err, "%" PRId64, q->idle);
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
                return cgm_emit(m, loc, "cpu", "cpu.max", err, "%s", quota);
        return cgm_emit(m, loc, "cpu", "cpu.max", err, "%s %" PRId64, quota, q->period);
}

static int cpu_emit_v2(struct mapping *m, const struct cpu_req *q, const struct umw_jloc *loc,
                       struct umw_error **err)
{
        int r = 0;
        if (q->rt_runtime || q->rt_period) {
                struct umw_jloc at =
                    umw_jloc_key(loc, q->rt_runtime ? "realtimeRuntime" : "realtimePeriod");
                return cgm_unsupported(&at, "not supported on cgroup v2 (needs cgroup v1)", err);
        }
        if (q->shares && (r = cgm_emit(m, loc, "cpu", "cpu.weight", err, "%" PRIu64,
                                       cgroup_shares_to_weight((uint64_t)q->shares))) < 0)
                return r;
        if ((q->quota || q->period) && (r = cpu_emit_max(m, q, loc, err)) < 0)
                return r;
        if (q->has_burst &&
            (r = cgm_emit(m, loc, "cpu", "cpu.max.burst", err, "%" PRId64, q->burst)) < 0)
                return r;
        if (q->has_idle)
                r = cgm_emit(m, loc, "cpu", "cpu.idle", err, "%" PRId64, q->idle);
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
        if ((r = cgm_check_keys(obj, loc, cpu_keys, err)) < 0 ||
            (r = cpu_read(obj, loc, &q, err)) < 0)
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
            (r = cgm_member_required_int(obj, loc, "major", &cgm_r_u32, &d->major, err)) < 0)
                return r;
        return cgm_member_required_int(obj, loc, "minor", &cgm_r_u32, &d->minor, err);
}

static const char *const weight_device_keys[] = {"major", "minor", "weight", "leafWeight", NULL};

static int map_weight_device(struct mapping *m, yajl_val item, const struct umw_jloc *loc,
                             struct umw_error **err)
{
        struct blkio_dev d;
        int64_t weight, leaf;
        int r;
        if ((r = blkio_dev_read(item, loc, &d, err)) < 0 ||
            (r = cgm_check_keys(item, loc, weight_device_keys, err)) < 0 ||
            (r = cgm_member_set_int(item, loc, "weight", &cgm_r_blkio_weight, &weight, err)) < 0 ||
            (r = cgm_member_set_int(item, loc, "leafWeight", &cgm_r_blkio_weight, &leaf, err)) < 0)
                return r;
        if (m->v == CGROUP_V2) {
                if (leaf) {
                        struct umw_jloc at = umw_jloc_key(loc, "leafWeight");
                        return cgm_unsupported(&at, "not supported on cgroup v2 (needs cgroup v1)",
                                               err);
                }
                if (!weight)
                        return 0;
                return cgm_emit(m, loc, "io", "io.weight", err, "%" PRId64 ":%" PRId64 " %" PRId64,
                                d.major, d.minor, blkio_weight_to_io_weight(weight));
        }
        if (weight &&
            (r = cgm_emit(m, loc, "blkio", "blkio.bfq.weight_device", err,
                          "%" PRId64 ":%" PRId64 " %" PRId64, d.major, d.minor, weight)) < 0)
                return r;
        if (leaf)
                r = cgm_emit(m, loc, "blkio", "blkio.leaf_weight_device", err,
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
            (r = cgm_check_keys(item, loc, throttle_device_keys, err)) < 0 ||
            (r = cgm_member_required_int(item, loc, "rate", &cgm_r_rate, &rate, err)) < 0)
                return r;
        if (m->v == CGROUP_V1)
                return cgm_emit(m, loc, "blkio", t->v1_file, err,
                                "%" PRId64 ":%" PRId64 " %" PRId64, d.major, d.minor, rate);
        if (rate == 0)
                return cgm_emit(m, loc, "io", "io.max", err, "%" PRId64 ":%" PRId64 " %s=max",
                                d.major, d.minor, t->v2_key);
        return cgm_emit(m, loc, "io", "io.max", err, "%" PRId64 ":%" PRId64 " %s=%" PRId64, d.major,
                        d.minor, t->v2_key, rate);
}

static int map_blkio_weights(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                             struct umw_error **err)
{
        int64_t weight, leaf;
        int r;
        if ((r = cgm_member_set_int(obj, loc, "weight", &cgm_r_blkio_weight, &weight, err)) < 0 ||
            (r = cgm_member_set_int(obj, loc, "leafWeight", &cgm_r_blkio_weight, &leaf, err)) < 0)
                return r;
        if (m->v == CGROUP_V2) {
                if (leaf) {
                        struct umw_jloc at = umw_jloc_key(loc, "leafWeight");
                        return cgm_unsupported(&at, "not supported on cgroup v2 (needs cgroup v1)",
                                               err);
                }
                if (!weight)
                        return 0;
                return cgm_emit(m, loc, "io", "io.weight", err, "default %" PRId64,
                                blkio_weight_to_io_weight(weight));
        }
        /* blkio.weight was CFQ's, gone since Linux 5.0; BFQ's file is what
         * kernels have now. */
        if (weight &&
            (r = cgm_emit(m, loc, "blkio", "blkio.bfq.weight", err, "%" PRId64, weight)) < 0)
                return r;
        if (leaf)
                r = cgm_emit(m, loc, "blkio", "blkio.leaf_weight", err, "%" PRId64, leaf);
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
        if ((r = cgm_check_keys(obj, loc, blkio_keys, err)) < 0 ||
            (r = map_blkio_weights(m, obj, loc, err)) < 0 ||
            (r = cgm_member_array(obj, loc, "weightDevice", &list, &at, err)) < 0)
                return r;
        for (size_t i = 0; list && i < list->u.array.len; i++) {
                struct umw_jloc item = umw_jloc_index(&at, i);
                if ((r = map_weight_device(m, list->u.array.values[i], &item, err)) < 0)
                        return r;
        }
        for (size_t t = 0; t < ARRAY_SIZE(throttles); t++) {
                if ((r = cgm_member_array(obj, loc, throttles[t].key, &list, &at, err)) < 0)
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
            {"memory", map_memory}, {"pids", map_pids},           {"cpu", map_cpu},
            {"blockIO", map_blkio}, {"network", cgm_map_network}, {"rdma", cgm_map_rdma},
        };
        struct umw_jloc at;
        yajl_val v;
        int r;
        if ((r = umw_json_object(res, loc, err)) < 0 ||
            (r = cgm_check_keys(res, loc, resource_keys, err)) < 0)
                return r;
        for (size_t i = 0; i < ARRAY_SIZE(objects); i++) {
                if ((r = cgm_member_object(res, loc, objects[i].key, &v, &at, err)) < 0 ||
                    (v && (r = objects[i].map(m, v, &at, err)) < 0))
                        return r;
        }
        if ((r = cgm_member_array(res, loc, "hugepageLimits", &v, &at, err)) < 0 ||
            (v && (r = cgm_map_hugepages(m, v, &at, err)) < 0))
                return r;
        /* Last, so a unified value overrides what the fields above wrote. */
        if ((r = cgm_member_object(res, loc, "unified", &v, &at, err)) < 0 ||
            (v && (r = cgm_map_unified(m, v, &at, err)) < 0))
                return r;
        return 0;
}

int cgroup_map_resources(yajl_val resources, enum cgroup_version v, const char *file,
                         struct cgroup_settings *out, struct umw_error **err)
{
        struct mapping m = {.v = v, .out = out};
        struct umw_jloc loc;
        umw_jloc_init_at(&loc, file, ".linux.resources");
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
