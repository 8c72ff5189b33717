/* linux.resources -> the cgroup files that carry it, as a pure function:
 * no syscall, so every conversion (shares to weight, quota/period to
 * cpu.max, swap to memsw or swap.max, ...) is unit-tested. The cgroup code
 * writes the result; a bad value is refused here, before anything exists. */
#ifndef UMW_CGROUP_MAP_H
#define UMW_CGROUP_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

struct umw_error;

enum cgroup_version { CGROUP_V1 = 1, CGROUP_V2 = 2 };

struct cgroup_setting {
        /* The controller that must be there for the file to exist: on v1 the
         * hierarchy's controller ("memory", "cpu", "cpuacct", "cpuset",
         * "blkio", "pids", "hugetlb", "devices", "net_cls", "net_prio",
         * "rdma"), on v2 the controller to enable in cgroup.subtree_control
         * ("memory", "cpu", "io", "pids", "cpuset", "hugetlb", "rdma",
         * "misc"), or "" for core files (cgroup.*). */
        char controller[16];
        char file[64];   /* "memory.limit_in_bytes", "memory.max", "cpu.weight" ... */
        char value[256]; /* exactly what is written */
};

struct cgroup_settings {
        struct cgroup_setting *items;
        size_t n;
};

/* Maps resources (the linux.resources object, may be NULL) for version v.
 * Settings come in the order to write them; a file may repeat (one line per
 * device or per line of a unified value). On v1 two pairs depend on the
 * values already there, which a pure function cannot see: when
 * memory.limit_in_bytes fails with EINVAL (the new limit is above the old
 * memsw), write memory.memsw.limit_in_bytes first and retry it; when
 * cpu.cfs_period_us fails with EINVAL, write cpu.cfs_quota_us and retry it
 * (what crun does). v1-only fields that would leave a wall missing on v2
 * (disableOOMKiller, realtime*, leafWeight, network) are refused there;
 * swappiness and the deprecated kernel/kernelTCP are ignored on v2.
 * file names the config in errors: "FILE: .linux.resources.memory.limit:
 * expected ...". Device rules are not mapped here (v1 devices.allow/deny
 * and the v2 BPF program are the cgroup code's). */
int cgroup_map_resources(yajl_val resources, enum cgroup_version v, const char *file,
                         struct cgroup_settings *out, struct umw_error **err);
void cgroup_settings_release(struct cgroup_settings *s);

/* cpu.shares (2..262144) -> cpu.weight (1..10000), the conversion crun and
 * runc use; 0 means unset and maps to 0. */
uint64_t cgroup_shares_to_weight(uint64_t shares);

#endif
