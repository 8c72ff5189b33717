/* linux.resources fields of the less common controllers: hugetlb, v1
 * net_cls/net_prio, rdma, and the v2-only unified map. */
#include "runtime/cgroup_map_fields.h"
#include "common/error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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
            (r = cgm_check_keys(item, loc, hugepage_keys, err)) < 0)
                return r;
        yajl_val v = umw_json_member(item, "pageSize");
        if (!v || !YAJL_IS_STRING(v) || !is_page_size(v->u.string))
                return umw_json_expected(&at, "a page size such as \"2MB\" or \"1GB\"", err);
        size = v->u.string;
        if ((r = cgm_member_required_int(item, loc, "limit", &cgm_r_bytes_or_zero, &limit, err)) <
            0)
                return r;
        char file[64];
        snprintf(file, sizeof(file), "hugetlb.%s.%s", size,
                 m->v == CGROUP_V1 ? "limit_in_bytes" : "max");
        return cgm_emit_limit(m, loc, "hugetlb", file, limit, err);
}

int cgm_map_hugepages(struct mapping *m, yajl_val list, const struct umw_jloc *loc,
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
            (r = cgm_check_keys(item, loc, priority_keys, err)) < 0)
                return r;
        yajl_val name = umw_json_member(item, "name");
        if (!name || !YAJL_IS_STRING(name) || !is_ifname(name->u.string))
                return umw_json_expected(&at, "a network interface name", err);
        if ((r = cgm_member_required_int(item, loc, "priority", &cgm_r_u32, &prio, err)) < 0)
                return r;
        return cgm_emit(m, loc, "net_prio", "net_prio.ifpriomap", err, "%s %" PRId64,
                        name->u.string, prio);
}

static const char *const network_keys[] = {"classID", "priorities", NULL};

int cgm_map_network(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                    struct umw_error **err)
{
        struct umw_jloc at;
        yajl_val prios;
        bool has_class;
        int64_t class_id;
        int r;
        if ((r = cgm_check_keys(obj, loc, network_keys, err)) < 0 ||
            (r = cgm_member_int(obj, loc, "classID", &cgm_r_u32, &has_class, &class_id, err)) < 0 ||
            (r = cgm_member_array(obj, loc, "priorities", &prios, &at, err)) < 0)
                return r;
        size_t n_prios = prios ? prios->u.array.len : 0;
        if (m->v == CGROUP_V2 && (has_class || n_prios))
                return cgm_unsupported(loc,
                                       "classID and priorities are not supported on cgroup v2 "
                                       "(needs the v1 net_cls and net_prio controllers)",
                                       err);
        if (has_class &&
            (r = cgm_emit(m, loc, "net_cls", "net_cls.classid", err, "%" PRId64, class_id)) < 0)
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
            (r = cgm_check_keys(obj, loc, rdma_keys, err)) < 0 ||
            (r = cgm_member_int(obj, loc, "hcaHandles", &cgm_r_u32, &has_handles, &handles, err)) <
                0 ||
            (r = cgm_member_int(obj, loc, "hcaObjects", &cgm_r_u32, &has_objects, &objects, err)) <
                0)
                return r;
        if (has_handles)
                snprintf(h, sizeof(h), "%" PRId64, handles);
        if (has_objects)
                snprintf(o, sizeof(o), "%" PRId64, objects);
        return cgm_emit(m, loc, "rdma", "rdma.max", err, "%s hca_handle=%s hca_object=%s", dev, h,
                        o);
}

int cgm_map_rdma(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                 struct umw_error **err)
{
        for (size_t i = 0; i < obj->u.object.len; i++) {
                struct umw_jloc at = umw_jloc_key(loc, obj->u.object.keys[i]);
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
        if (cgm_in_words(unified_refused, key))
                return cgm_unsupported(at,
                                       "refused: this file moves processes or changes the cgroup "
                                       "tree, which only the runtime does",
                                       err);
        if (cgm_in_words(unified_writable, key) || is_hugetlb_key(key))
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
                        int r = cgm_emit(m, at, controller, key, err, "%.*s", (int)len, value);
                        if (r < 0)
                                return r;
                }
                value += len + (value[len] == '\n');
        }
        return 0;
}

int cgm_map_unified(struct mapping *m, yajl_val obj, const struct umw_jloc *loc,
                    struct umw_error **err)
{
        if (obj->u.object.len && m->v == CGROUP_V1)
                return cgm_unsupported(loc, "linux.resources.unified needs cgroup v2", err);
        for (size_t i = 0; i < obj->u.object.len; i++) {
                const char *key = obj->u.object.keys[i];
                struct umw_jloc at = umw_jloc_key(loc, key);
                const char *value;
                int r;
                if ((r = check_unified_key(key, &at, err)) < 0 ||
                    (r = umw_json_string(obj->u.object.values[i], &at, &value, err)) < 0 ||
                    (r = map_unified_value(m, key, value, &at, err)) < 0)
                        return r;
        }
        return 0;
}
