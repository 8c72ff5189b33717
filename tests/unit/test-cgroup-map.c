/* cgroup_map_resources: linux.resources in, (controller, file, value) out,
 * for cgroup v1 and v2, and the refusals that name the JSON path. */
#include "runtime/cgroup_map.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

struct triple {
        const char *controller, *file, *value;
};

/* A resources object and what each version makes of it: the settings in
 * order, or (when error is set) the JSON path the refusal must name. */
struct expect {
        struct triple settings[12];
        const char *error;
};

struct map_case {
        const char *json;
        struct expect v1, v2;
};

static yajl_val parse(const char *json)
{
        yajl_val tree = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(umw_json_parse(json, "test.json", &tree, &err), 0, "%s: %s", json,
                     err ? err->msg : "?");
        return tree;
}

static void check_version(const char *json, enum cgroup_version v, const struct expect *want)
{
        yajl_val tree = parse(json);
        struct cgroup_settings got;
        _cleanup_error_ struct umw_error *err = NULL;
        int r = cgroup_map_resources(tree, v, "config.json", &got, &err);
        if (want->error) {
                cr_assert_lt(r, 0, "v%d %s: expected a refusal at %s", v, json, want->error);
                cr_assert_not_null(err);
                cr_assert_eq(err->kind, UMW_EXIT_CONFIG, "v%d %s: %s", v, json, err->msg);
                char prefix[600];
                snprintf(prefix, sizeof(prefix), "config.json: %s: ", want->error);
                cr_assert(strncmp(err->msg, prefix, strlen(prefix)) == 0,
                          "v%d %s: message \"%s\" does not start with \"%s\"", v, json, err->msg,
                          prefix);
                cr_assert_null(strchr(err->msg, '\n'), "one line: %s", err->msg);
                cr_assert_null(got.items);
                cr_assert_eq(got.n, 0);
                yajl_tree_free(tree);
                return;
        }
        cr_assert_eq(r, 0, "v%d %s: %s", v, json, err ? err->msg : "?");
        size_t n = 0;
        while (want->settings[n].file)
                n++;
        cr_assert_eq(got.n, n, "v%d %s: %zu settings, expected %zu", v, json, got.n, n);
        for (size_t i = 0; i < n; i++) {
                const struct triple *w = &want->settings[i];
                const struct cgroup_setting *g = &got.items[i];
                cr_expect_str_eq(g->controller, w->controller, "v%d %s [%zu]", v, json, i);
                cr_expect_str_eq(g->file, w->file, "v%d %s [%zu]", v, json, i);
                cr_expect_str_eq(g->value, w->value, "v%d %s [%zu] %s", v, json, i, w->file);
        }
        cgroup_settings_release(&got);
        cr_assert_null(got.items);
        yajl_tree_free(tree);
}

static void check_cases(const struct map_case *cases, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                check_version(cases[i].json, CGROUP_V1, &cases[i].v1);
                check_version(cases[i].json, CGROUP_V2, &cases[i].v2);
        }
}

#define M(file, value)                                                                             \
        {                                                                                          \
                "memory", file, value                                                              \
        }
#define C(file, value)                                                                             \
        {                                                                                          \
                "cpu", file, value                                                                 \
        }

static const struct map_case memory_cases[] = {
    {"{\"memory\": {\"limit\": 67108864}}",
     {{M("memory.limit_in_bytes", "67108864")}},
     {{M("memory.max", "67108864")}}},
    {"{\"memory\": {\"limit\": -1, \"swap\": -1}}",
     {{M("memory.limit_in_bytes", "-1"), M("memory.memsw.limit_in_bytes", "-1")}},
     {{M("memory.max", "max"), M("memory.swap.max", "max")}}},
    /* podman --memory 64m: swap defaults to twice the limit. */
    {"{\"memory\": {\"limit\": 67108864, \"swap\": 134217728}}",
     {{M("memory.limit_in_bytes", "67108864"), M("memory.memsw.limit_in_bytes", "134217728")}},
     {{M("memory.max", "67108864"), M("memory.swap.max", "67108864")}}},
    {"{\"memory\": {\"limit\": 1000, \"swap\": 1000}}",
     {{M("memory.limit_in_bytes", "1000"), M("memory.memsw.limit_in_bytes", "1000")}},
     {{M("memory.max", "1000"), M("memory.swap.max", "0")}}},
    {"{\"memory\": {\"swap\": 4096}}",
     {{M("memory.memsw.limit_in_bytes", "4096")}},
     {.error = ".linux.resources.memory.swap"}},
    {"{\"memory\": {\"reservation\": 1048576}}",
     {{M("memory.soft_limit_in_bytes", "1048576")}},
     {{M("memory.low", "1048576")}}},
    {"{\"memory\": {\"reservation\": -1}}",
     {{M("memory.soft_limit_in_bytes", "-1")}},
     {{M("memory.low", "max")}}},
    {"{\"memory\": {\"kernel\": 8192, \"kernelTCP\": 4096}}",
     {{M("memory.kmem.limit_in_bytes", "8192"), M("memory.kmem.tcp.limit_in_bytes", "4096")}},
     {{{0}}}},
    {"{\"memory\": {\"swappiness\": 0}}", {{M("memory.swappiness", "0")}}, {{{0}}}},
    {"{\"memory\": {\"disableOOMKiller\": true}}",
     {{M("memory.oom_control", "1")}},
     {.error = ".linux.resources.memory.disableOOMKiller"}},
    {"{\"memory\": {\"disableOOMKiller\": false}}", {{{0}}}, {{{0}}}},
    {"{\"memory\": {\"useHierarchy\": true, \"limit\": 4096}}",
     {{M("memory.use_hierarchy", "1"), M("memory.limit_in_bytes", "4096")}},
     {{M("memory.max", "4096")}}},
    {"{\"memory\": {\"useHierarchy\": false}}",
     {{M("memory.use_hierarchy", "0")}},
     {.error = ".linux.resources.memory.useHierarchy"}},
    {"{\"memory\": {\"checkBeforeUpdate\": true}}", {{{0}}}, {{{0}}}},
    {"{\"memory\": {\"limit\": null}}", {{{0}}}, {{{0}}}},
};

Test(cgroup_map, memory)
{
        check_cases(memory_cases, ARRAY_SIZE(memory_cases));
}

static const struct map_case pids_cases[] = {
    {"{\"pids\": {\"limit\": 2048}}",
     {{{"pids", "pids.max", "2048"}}},
     {{{"pids", "pids.max", "2048"}}}},
    {"{\"pids\": {\"limit\": -1}}",
     {{{"pids", "pids.max", "max"}}},
     {{{"pids", "pids.max", "max"}}}},
    {"{\"pids\": {\"limit\": 0}}",
     {{{"pids", "pids.max", "max"}}},
     {{{"pids", "pids.max", "max"}}}},
    {"{\"pids\": {}}", {{{0}}}, {{{0}}}},
};

Test(cgroup_map, pids)
{
        check_cases(pids_cases, ARRAY_SIZE(pids_cases));
}

static const struct map_case cpu_cases[] = {
    {"{\"cpu\": {\"shares\": 1024}}", {{C("cpu.shares", "1024")}}, {{C("cpu.weight", "39")}}},
    {"{\"cpu\": {\"shares\": 0, \"quota\": 0, \"period\": 0}}", {{{0}}}, {{{0}}}},
    /* podman --cpus 0.5 */
    {"{\"cpu\": {\"quota\": 50000, \"period\": 100000}}",
     {{C("cpu.cfs_period_us", "100000"), C("cpu.cfs_quota_us", "50000")}},
     {{C("cpu.max", "50000 100000")}}},
    {"{\"cpu\": {\"quota\": 20000}}",
     {{C("cpu.cfs_quota_us", "20000")}},
     {{C("cpu.max", "20000")}}},
    {"{\"cpu\": {\"quota\": -1}}", {{C("cpu.cfs_quota_us", "-1")}}, {{C("cpu.max", "max")}}},
    {"{\"cpu\": {\"period\": 50000}}",
     {{C("cpu.cfs_period_us", "50000")}},
     {{C("cpu.max", "max 50000")}}},
    {"{\"cpu\": {\"quota\": -1, \"period\": 1000000}}",
     {{C("cpu.cfs_period_us", "1000000"), C("cpu.cfs_quota_us", "-1")}},
     {{C("cpu.max", "max 1000000")}}},
    {"{\"cpu\": {\"burst\": 10000, \"idle\": 1}}",
     {{C("cpu.cfs_burst_us", "10000"), C("cpu.idle", "1")}},
     {{C("cpu.max.burst", "10000"), C("cpu.idle", "1")}}},
    {"{\"cpu\": {\"realtimeRuntime\": 95000, \"realtimePeriod\": 1000000}}",
     {{C("cpu.rt_period_us", "1000000"), C("cpu.rt_runtime_us", "95000")}},
     {.error = ".linux.resources.cpu.realtimeRuntime"}},
    {"{\"cpu\": {\"realtimePeriod\": 1000000}}",
     {{C("cpu.rt_period_us", "1000000")}},
     {.error = ".linux.resources.cpu.realtimePeriod"}},
    {"{\"cpu\": {\"cpus\": \"0-3,5\", \"mems\": \"0\"}}",
     {{{"cpuset", "cpuset.cpus", "0-3,5"}, {"cpuset", "cpuset.mems", "0"}}},
     {{{"cpuset", "cpuset.cpus", "0-3,5"}, {"cpuset", "cpuset.mems", "0"}}}},
    {"{\"cpu\": {\"cpus\": \"\", \"mems\": \"\"}}", {{{0}}}, {{{0}}}},
    {"{\"cpu\": {\"shares\": 2, \"cpus\": \"1\"}}",
     {{C("cpu.shares", "2"), {"cpuset", "cpuset.cpus", "1"}}},
     {{C("cpu.weight", "1"), {"cpuset", "cpuset.cpus", "1"}}}},
};

Test(cgroup_map, cpu)
{
        check_cases(cpu_cases, ARRAY_SIZE(cpu_cases));
}

#define B(file, value)                                                                             \
        {                                                                                          \
                "blkio", file, value                                                               \
        }
#define IO(file, value)                                                                            \
        {                                                                                          \
                "io", file, value                                                                  \
        }

static const struct map_case blkio_cases[] = {
    {"{\"blockIO\": {\"weight\": 500}}",
     {{B("blkio.bfq.weight", "500")}},
     {{IO("io.weight", "default 4950")}}},
    {"{\"blockIO\": {\"weight\": 10}}",
     {{B("blkio.bfq.weight", "10")}},
     {{IO("io.weight", "default 1")}}},
    {"{\"blockIO\": {\"weight\": 1000}}",
     {{B("blkio.bfq.weight", "1000")}},
     {{IO("io.weight", "default 10000")}}},
    {"{\"blockIO\": {\"leafWeight\": 300}}",
     {{B("blkio.leaf_weight", "300")}},
     {.error = ".linux.resources.blockIO.leafWeight"}},
    {"{\"blockIO\": {\"weightDevice\": [{\"major\": 8, \"minor\": 0, \"weight\": 100}]}}",
     {{B("blkio.bfq.weight_device", "8:0 100")}},
     {{IO("io.weight", "8:0 910")}}},
    {"{\"blockIO\": {\"weightDevice\": [{\"major\": 8, \"minor\": 16, \"leafWeight\": 20}]}}",
     {{B("blkio.leaf_weight_device", "8:16 20")}},
     {.error = ".linux.resources.blockIO.weightDevice[0].leafWeight"}},
    {"{\"blockIO\": {\"throttleReadBpsDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": "
     "1048576}, {\"major\": 253, \"minor\": 1, \"rate\": 0}],"
     " \"throttleWriteBpsDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": 2048}],"
     " \"throttleReadIOPSDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": 100}],"
     " \"throttleWriteIOPSDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": 50}]}}",
     {{B("blkio.throttle.read_bps_device", "8:0 1048576"),
       B("blkio.throttle.read_bps_device", "253:1 0"),
       B("blkio.throttle.write_bps_device", "8:0 2048"),
       B("blkio.throttle.read_iops_device", "8:0 100"),
       B("blkio.throttle.write_iops_device", "8:0 50")}},
     {{IO("io.max", "8:0 rbps=1048576"), IO("io.max", "253:1 rbps=max"),
       IO("io.max", "8:0 wbps=2048"), IO("io.max", "8:0 riops=100"),
       IO("io.max", "8:0 wiops=50")}}},
};

Test(cgroup_map, block_io)
{
        check_cases(blkio_cases, ARRAY_SIZE(blkio_cases));
}

static const struct map_case other_cases[] = {
    {"{\"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 209715200},"
     " {\"pageSize\": \"1GB\", \"limit\": 0}]}",
     {{{"hugetlb", "hugetlb.2MB.limit_in_bytes", "209715200"},
       {"hugetlb", "hugetlb.1GB.limit_in_bytes", "0"}}},
     {{{"hugetlb", "hugetlb.2MB.max", "209715200"}, {"hugetlb", "hugetlb.1GB.max", "0"}}}},
    {"{\"network\": {\"classID\": 1048577, \"priorities\": [{\"name\": \"eth0\", \"priority\": "
     "500}, {\"name\": \"lo\", \"priority\": 1}]}}",
     {{{"net_cls", "net_cls.classid", "1048577"},
       {"net_prio", "net_prio.ifpriomap", "eth0 500"},
       {"net_prio", "net_prio.ifpriomap", "lo 1"}}},
     {.error = ".linux.resources.network"}},
    {"{\"network\": {}}", {{{0}}}, {{{0}}}},
    {"{\"rdma\": {\"mlx5_1\": {\"hcaHandles\": 3, \"hcaObjects\": 10000}, \"mlx4_0\": "
     "{\"hcaObjects\": 100}}}",
     {{{"rdma", "rdma.max", "mlx5_1 hca_handle=3 hca_object=10000"},
       {"rdma", "rdma.max", "mlx4_0 hca_handle=max hca_object=100"}}},
     {{{"rdma", "rdma.max", "mlx5_1 hca_handle=3 hca_object=10000"},
       {"rdma", "rdma.max", "mlx4_0 hca_handle=max hca_object=100"}}}},
    /* Devices are the cgroup code's; the podman fixture's resources. */
    {"{\"devices\": [{\"allow\": false, \"access\": \"rwm\"}], \"pids\": {\"limit\": 2048}}",
     {{{"pids", "pids.max", "2048"}}},
     {{{"pids", "pids.max", "2048"}}}},
    {"{}", {{{0}}}, {{{0}}}},
};

Test(cgroup_map, hugetlb_network_rdma_devices)
{
        check_cases(other_cases, ARRAY_SIZE(other_cases));
}

static const struct map_case unified_cases[] = {
    {"{\"unified\": {\"memory.high\": \"1073741824\", \"cgroup.max.depth\": \"2\","
     " \"hugetlb.2MB.rsvd.max\": \"0\"}}",
     {.error = ".linux.resources.unified"},
     {{M("memory.high", "1073741824"),
       {"", "cgroup.max.depth", "2"},
       {"hugetlb", "hugetlb.2MB.rsvd.max", "0"}}}},
    {"{\"unified\": {}}", {{{0}}}, {{{0}}}},
    /* One write per line; an empty value writes nothing. */
    {"{\"unified\": {\"io.max\": \"8:0 rbps=1\\n8:16 wiops=2\\n\", \"memory.low\": \"\"}}",
     {.error = ".linux.resources.unified"},
     {{IO("io.max", "8:0 rbps=1"), IO("io.max", "8:16 wiops=2")}}},
    /* Written after the fields, so the unified value wins. */
    {"{\"unified\": {\"memory.max\": \"2048\"}, \"memory\": {\"limit\": 4096}}",
     {.error = ".linux.resources.unified"},
     {{M("memory.max", "4096"), M("memory.max", "2048")}}},
    {"{\"unified\": {\"cgroup.procs\": \"1\"}}",
     {.error = ".linux.resources.unified"},
     {.error = ".linux.resources.unified.cgroup.procs"}},
    {"{\"unified\": {\"cgroup.subtree_control\": \"+memory\"}}",
     {.error = ".linux.resources.unified"},
     {.error = ".linux.resources.unified.cgroup.subtree_control"}},
    {"{\"unified\": {\"cgroup.kill\": \"1\"}}",
     {.error = ".linux.resources.unified"},
     {.error = ".linux.resources.unified.cgroup.kill"}},
    {"{\"unified\": {\"../memory.max\": \"1\"}}",
     {.error = ".linux.resources.unified"},
     {.error = ".linux.resources.unified.../memory.max"}},
    {"{\"unified\": {\"memory.foo\": \"1\"}}",
     {.error = ".linux.resources.unified"},
     {.error = ".linux.resources.unified.memory.foo"}},
    {"{\"unified\": {\"hugetlb.2XB.max\": \"1\"}}",
     {.error = ".linux.resources.unified"},
     {.error = ".linux.resources.unified.hugetlb.2XB.max"}},
    {"{\"unified\": {\"memory.pressure\": \"some 150000 1000000\"}}",
     {.error = ".linux.resources.unified"},
     {.error = ".linux.resources.unified.memory.pressure"}},
    {"{\"unified\": {\"cpu.max cpu.max.burst\": \"1\"}}",
     {.error = ".linux.resources.unified"},
     {.error = ".linux.resources.unified.cpu.max cpu.max.burst"}},
    {"{\"unified\": {\"\": \"1\"}}",
     {.error = ".linux.resources.unified"},
     {.error = ".linux.resources.unified."}},
    {"{\"unified\": {\"memory.max\": 5}}",
     {.error = ".linux.resources.unified"},
     {.error = ".linux.resources.unified.memory.max"}},
};

Test(cgroup_map, unified)
{
        check_cases(unified_cases, ARRAY_SIZE(unified_cases));
}

/* Inputs refused the same way on both versions, and the path each names. */
static const struct {
        const char *json, *path;
} bad_cases[] = {
    {"[]", ".linux.resources"},
    {"{\"memory\": 5}", ".linux.resources.memory"},
    {"{\"memory\": {\"limit\": \"64m\"}}", ".linux.resources.memory.limit"},
    {"{\"memory\": {\"limit\": 0}}", ".linux.resources.memory.limit"},
    {"{\"memory\": {\"limit\": -2}}", ".linux.resources.memory.limit"},
    {"{\"memory\": {\"limit\": 1.5}}", ".linux.resources.memory.limit"},
    {"{\"memory\": {\"limit\": 18446744073709551615}}", ".linux.resources.memory.limit"},
    {"{\"memory\": {\"limit\": 4096, \"swap\": 2048}}", ".linux.resources.memory.swap"},
    {"{\"memory\": {\"limit\": -1, \"swap\": 2048}}", ".linux.resources.memory.swap"},
    {"{\"memory\": {\"swap\": 0}}", ".linux.resources.memory.swap"},
    {"{\"memory\": {\"reservation\": -5}}", ".linux.resources.memory.reservation"},
    {"{\"memory\": {\"swappiness\": 101}}", ".linux.resources.memory.swappiness"},
    {"{\"memory\": {\"disableOOMKiller\": 1}}", ".linux.resources.memory.disableOOMKiller"},
    {"{\"memory\": {\"limits\": 4096}}", ".linux.resources.memory.limits"},
    {"{\"pids\": {\"limit\": -2}}", ".linux.resources.pids.limit"},
    {"{\"pids\": {\"limit\": \"10\"}}", ".linux.resources.pids.limit"},
    {"{\"cpu\": {\"shares\": 1}}", ".linux.resources.cpu.shares"},
    {"{\"cpu\": {\"shares\": 262145}}", ".linux.resources.cpu.shares"},
    {"{\"cpu\": {\"quota\": 999}}", ".linux.resources.cpu.quota"},
    {"{\"cpu\": {\"quota\": -2}}", ".linux.resources.cpu.quota"},
    {"{\"cpu\": {\"period\": 999}}", ".linux.resources.cpu.period"},
    {"{\"cpu\": {\"period\": 1000001}}", ".linux.resources.cpu.period"},
    {"{\"cpu\": {\"idle\": 2}}", ".linux.resources.cpu.idle"},
    {"{\"cpu\": {\"realtimeRuntime\": -3}}", ".linux.resources.cpu.realtimeRuntime"},
    {"{\"cpu\": {\"cpus\": \"0-\"}}", ".linux.resources.cpu.cpus"},
    {"{\"cpu\": {\"cpus\": \"3-1\"}}", ".linux.resources.cpu.cpus"},
    {"{\"cpu\": {\"cpus\": \"0,\"}}", ".linux.resources.cpu.cpus"},
    {"{\"cpu\": {\"cpus\": \"a\"}}", ".linux.resources.cpu.cpus"},
    {"{\"cpu\": {\"cpus\": \" 1\"}}", ".linux.resources.cpu.cpus"},
    {"{\"cpu\": {\"cpus\": \"-1\"}}", ".linux.resources.cpu.cpus"},
    {"{\"cpu\": {\"mems\": \"0;1\"}}", ".linux.resources.cpu.mems"},
    {"{\"cpu\": {\"mems\": 0}}", ".linux.resources.cpu.mems"},
    {"{\"blockIO\": {\"weight\": 9}}", ".linux.resources.blockIO.weight"},
    {"{\"blockIO\": {\"weight\": 1001}}", ".linux.resources.blockIO.weight"},
    {"{\"blockIO\": {\"weightDevice\": {}}}", ".linux.resources.blockIO.weightDevice"},
    {"{\"blockIO\": {\"weightDevice\": [{\"minor\": 0, \"weight\": 100}]}}",
     ".linux.resources.blockIO.weightDevice[0].major"},
    {"{\"blockIO\": {\"weightDevice\": [{\"major\": 8, \"minor\": 0, \"weight\": 5}]}}",
     ".linux.resources.blockIO.weightDevice[0].weight"},
    {"{\"blockIO\": {\"throttleReadBpsDevice\": [{\"major\": 8, \"minor\": 0}]}}",
     ".linux.resources.blockIO.throttleReadBpsDevice[0].rate"},
    {"{\"blockIO\": {\"throttleWriteIOPSDevice\": [{\"major\": 8, \"minor\": -1, \"rate\": 1}]}}",
     ".linux.resources.blockIO.throttleWriteIOPSDevice[0].minor"},
    {"{\"blockIO\": {\"throttleReadBpsDevice\": [5]}}",
     ".linux.resources.blockIO.throttleReadBpsDevice[0]"},
    {"{\"hugepageLimits\": [{\"pageSize\": \"2MB/../x\", \"limit\": 1}]}",
     ".linux.resources.hugepageLimits[0].pageSize"},
    {"{\"hugepageLimits\": [{\"pageSize\": \"2MB\"}]}", ".linux.resources.hugepageLimits[0].limit"},
    {"{\"hugepageLimits\": {}}", ".linux.resources.hugepageLimits"},
    {"{\"rdma\": {\"a b\": {\"hcaHandles\": 1}}}", ".linux.resources.rdma.a b"},
    {"{\"rdma\": {\"mlx\": {\"hcaHandles\": -1}}}", ".linux.resources.rdma.mlx.hcaHandles"},
    {"{\"unified\": []}", ".linux.resources.unified"},
    {"{\"blkio\": {}}", ".linux.resources.blkio"},
    {"{\"memory\\n\": {}}", ".linux.resources.memory?"},
};

Test(cgroup_map, bad_input_names_the_path)
{
        for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
                const struct expect want = {.error = bad_cases[i].path};
                check_version(bad_cases[i].json, CGROUP_V1, &want);
                check_version(bad_cases[i].json, CGROUP_V2, &want);
        }
}

Test(cgroup_map, messages_say_what_was_expected)
{
        yajl_val tree = parse("{\"memory\": {\"limit\": 0}}");
        struct cgroup_settings got;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(cgroup_map_resources(tree, CGROUP_V2, "config.json", &got, &err), 0);
        cr_assert_str_eq(err->msg, "config.json: .linux.resources.memory.limit: expected -1 (no "
                                   "limit) or a positive number of bytes");
        yajl_tree_free(tree);
}

Test(cgroup_map, unified_on_v1_says_it_needs_v2)
{
        yajl_val tree = parse("{\"unified\": {\"memory.high\": \"1\"}}");
        struct cgroup_settings got;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(cgroup_map_resources(tree, CGROUP_V1, "config.json", &got, &err), 0);
        cr_assert_str_eq(err->msg, "config.json: .linux.resources.unified: "
                                   "linux.resources.unified needs cgroup v2");
        yajl_tree_free(tree);
}

Test(cgroup_map, absent_resources_map_to_nothing)
{
        struct cgroup_settings got = {(struct cgroup_setting *)&got, 7};
        cr_assert_eq(cgroup_map_resources(NULL, CGROUP_V2, "config.json", &got, NULL), 0);
        cr_assert_eq(got.n, 0);
        cr_assert_null(got.items);
}

Test(cgroup_map, many_settings_grow_the_array)
{
        char json[8192] = "{\"blockIO\": {\"throttleReadBpsDevice\": [";
        for (int i = 0; i < 100; i++)
                snprintf(json + strlen(json), sizeof(json) - strlen(json),
                         "%s{\"major\": 8, \"minor\": %d, \"rate\": %d}", i ? "," : "", i, i + 1);
        strcat(json, "]}}");
        yajl_val tree = parse(json);
        struct cgroup_settings got;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(cgroup_map_resources(tree, CGROUP_V2, "config.json", &got, &err), 0);
        cr_assert_eq(got.n, 100);
        cr_assert_str_eq(got.items[99].value, "8:99 rbps=100");
        cgroup_settings_release(&got);
        yajl_tree_free(tree);
}

Test(cgroup_map, shares_to_weight)
{
        cr_assert_eq(cgroup_shares_to_weight(0), 0);
        cr_assert_eq(cgroup_shares_to_weight(2), 1);
        cr_assert_eq(cgroup_shares_to_weight(1024), 39);
        cr_assert_eq(cgroup_shares_to_weight(262144), 10000);
        /* Out of range clamps instead of wrapping. */
        cr_assert_eq(cgroup_shares_to_weight(1), 1);
        cr_assert_eq(cgroup_shares_to_weight(1000000), 10000);
        /* Monotonic over the whole range. */
        uint64_t last = 0;
        for (uint64_t s = 2; s <= 262144; s++) {
                uint64_t w = cgroup_shares_to_weight(s);
                cr_assert_geq(w, last, "shares %lu", (unsigned long)s);
                last = w;
        }
}
