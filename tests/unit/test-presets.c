#include "policy/presets.h"
#include "common/error.h"
#include "common/json.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GIB (UINT64_C(1) << 30)

static const struct machine_size big = {64 * GIB, 16};
static const struct machine_size small = {4 * GIB, 2};

static struct preset resolve(const char *name, const struct machine_size *m)
{
        struct preset p = {0};
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(preset_resolve(name, m, &p, &err), 0, "%s: %s", name, err ? err->msg : "?");
        cr_assert_str_eq(p.name, name);
        return p;
}

static void expect_preset(const char *name, const struct machine_size *m, uint64_t memory,
                          unsigned cpus_milli, uint64_t pids)
{
        struct preset p = resolve(name, m);
        cr_expect_eq(p.memory_bytes, memory, "%s memory %llu", name,
                     (unsigned long long)p.memory_bytes);
        cr_expect_eq(p.cpus_milli, cpus_milli, "%s cpus_milli %u", name, p.cpus_milli);
        cr_expect_eq(p.pids, pids, "%s pids %llu", name, (unsigned long long)p.pids);
}

Test(presets, issue_numbers_on_a_big_machine)
{
        expect_preset("review", &big, 2 * GIB, 1000, 512);
        expect_preset("dev", &big, 8 * GIB, 4000, 4096);
        expect_preset("build", &big, 16 * GIB, 6000, 8192);
        expect_preset("auto", &big, 32 * GIB, 8000, 4096);
}

Test(presets, capped_on_a_small_machine)
{
        expect_preset("review", &small, 2 * GIB, 1000, 512);
        expect_preset("dev", &small, 4 * GIB, 2000, 4096);
        expect_preset("build", &small, 4 * GIB, 2000, 8192);
        expect_preset("auto", &small, 2 * GIB, 1000, 4096);
}

Test(presets, auto_keeps_at_least_one_cpu)
{
        const struct machine_size one = {1 * GIB, 1};
        expect_preset("auto", &one, GIB / 2, 1000, 4096);
        const struct machine_size three = {6 * GIB, 3};
        expect_preset("auto", &three, 3 * GIB, 1500, 4096);
}

Test(presets, names_cover_every_preset)
{
        const char *const *names = preset_names();
        size_t n = 0;
        for (; names[n]; n++)
                resolve(names[n], &big);
        cr_expect_eq(n, 4);
}

Test(presets, unknown_name_lists_the_valid_ones)
{
        struct preset p = {0};
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(preset_resolve("huge", &big, &p, &err), 0);
        cr_assert_not_null(err);
        cr_expect_eq(err->kind, UMW_EXIT_CONFIG);
        cr_expect_str_eq(
            err->msg, "unknown resource preset \"huge\": expected one of review, dev, build, auto");
}

Test(presets, unknown_machine_size_is_refused)
{
        const struct machine_size none = {0, 0};
        struct preset p = {0};
        _cleanup_error_ struct umw_error *err = NULL;
        cr_expect_lt(preset_resolve("auto", &none, &p, &err), 0);
        cr_expect_not_null(err);
}

static int64_t member_int(yajl_val obj, const char *section, const char *key)
{
        yajl_val sec = umw_json_member(obj, section);
        cr_assert(YAJL_IS_OBJECT(sec), "%s is not an object", section);
        yajl_val v = umw_json_member(sec, key);
        cr_assert(YAJL_IS_INTEGER(v), "%s.%s is not an integer", section, key);
        return YAJL_GET_INTEGER(v);
}

Test(presets, resources_json_round_trips)
{
        struct preset p = resolve("build", &big);
        char *text = preset_resources_json(&p);
        cr_assert_not_null(text);
        yajl_val tree = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(umw_json_parse(text, "resources", &tree, &err), 0, "%s", text);
        cr_assert(YAJL_IS_OBJECT(tree));
        cr_expect_eq(tree->u.object.len, 3);
        cr_expect_eq(member_int(tree, "memory", "limit"), (int64_t)(16 * GIB));
        cr_expect_eq(member_int(tree, "memory", "swap"), (int64_t)(16 * GIB));
        cr_expect_eq(member_int(tree, "cpu", "quota"), 600000);
        cr_expect_eq(member_int(tree, "cpu", "period"), 100000);
        cr_expect_eq(member_int(tree, "pids", "limit"), 8192);
        cr_expect_eq(umw_json_member(tree, "memory")->u.object.len, 2);
        cr_expect_eq(umw_json_member(tree, "cpu")->u.object.len, 2);
        cr_expect_eq(umw_json_member(tree, "pids")->u.object.len, 1);
        yajl_tree_free(tree);
        free(text);
}

Test(presets, fractional_cpu_quota)
{
        struct preset p = {"x", GIB, 1500, 10};
        char *text = preset_resources_json(&p);
        cr_assert_not_null(text);
        cr_expect_not_null(strstr(text, "\"quota\":150000,"), "%s", text);
        free(text);
}

Test(presets, meminfo_parsing)
{
        uint64_t bytes = 0;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(presets_meminfo_total_bytes("MemTotal:       16318480 kB\nMemFree: 1 kB\n",
                                                 &bytes, &err),
                     0);
        cr_expect_eq(bytes, UINT64_C(16318480) * 1024);
        cr_assert_eq(presets_meminfo_total_bytes("Foo: 1 kB\nMemTotal: 2 kB\n", &bytes, &err), 0);
        cr_expect_eq(bytes, 2048);
}

Test(presets, meminfo_garbage_is_refused)
{
        static const char *const bad[] = {
            "MemFree: 1 kB\n",
            "MemTotal: -5 kB\n",
            "MemTotal: 0 kB\n",
            "MemTotal: 12\n",
            "MemTotal: 99999999999999999999 kB\n",
            "MemTotal: x kB\n",
            "",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                uint64_t bytes = 0;
                struct umw_error *err = NULL;
                cr_expect_lt(presets_meminfo_total_bytes(bad[i], &bytes, &err), 0, "accepted: %s",
                             bad[i]);
                cr_expect_not_null(err);
                umw_error_free(err);
        }
}

Test(presets, machine_size_of_this_machine)
{
        struct machine_size m = {0};
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(presets_machine_size_read(&m, &err), 0, "%s", err ? err->msg : "?");
        cr_expect_gt(m.memory_bytes, 0);
        cr_expect_geq(m.cpus, 1);
        cr_expect_eq((long)m.cpus, sysconf(_SC_NPROCESSORS_ONLN));
}
