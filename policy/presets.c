/* Resource presets as data, fitted to the machine they run on. */
#include "policy/presets.h"

#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#define GIB           (UINT64_C(1) << 30)
#define CPU_PERIOD_US 100000
#define MEMINFO_MAX   (1 << 20)
/* Processes are not a machine resource to halve: auto gets dev's count. */
#define AUTO_PIDS           4096
#define AUTO_MIN_CPUS_MILLI 1000

static const struct preset fixed_presets[] = {
    {"review", 2 * GIB, 1000, 512},
    {"dev", 8 * GIB, 4000, 4096},
    {"build", 16 * GIB, 6000, 8192},
};

static const char *const names[] = {"review", "dev", "build", "auto", NULL};

const char *const *preset_names(void)
{
        return names;
}

int presets_meminfo_total_bytes(const char *meminfo, uint64_t *out, struct umw_error **err)
{
        static const char key[] = "MemTotal:";
        const char *line = meminfo;
        while (line && strncmp(line, key, strlen(key)) != 0) {
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
        if (!line)
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL, "/proc/meminfo: no MemTotal line");
        const char *digits = line + strlen(key);
        digits += strspn(digits, " \t");
        char *end = NULL;
        errno = 0;
        unsigned long long kib = isdigit((unsigned char)*digits) ? strtoull(digits, &end, 10) : 0;
        if (kib == 0 || errno != 0 || strncmp(end, " kB", 3) != 0 || kib > UINT64_MAX / 1024)
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                                "/proc/meminfo: MemTotal: expected a positive size in kB");
        *out = (uint64_t)kib * 1024;
        return 0;
}

int presets_machine_size_read(struct machine_size *out, struct umw_error **err)
{
        _cleanup_free_ char *meminfo = NULL;
        int r = umw_read_file_at(AT_FDCWD, "/proc/meminfo", MEMINFO_MAX, &meminfo, NULL, err);
        if (r < 0)
                return r;
        r = presets_meminfo_total_bytes(meminfo, &out->memory_bytes, err);
        if (r < 0)
                return r;
        errno = 0;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        if (cpus < 1)
                return umw_fail(err, UMW_EXIT_FAILURE, errno ? errno : EINVAL,
                                "cannot count the online CPUs");
        out->cpus = (unsigned)cpus;
        return 0;
}

static void preset_fit(struct preset *p, const struct machine_size *m)
{
        uint64_t machine_milli = (uint64_t)m->cpus * 1000;
        if (p->memory_bytes > m->memory_bytes)
                p->memory_bytes = m->memory_bytes;
        if (p->cpus_milli > machine_milli)
                p->cpus_milli = (unsigned)machine_milli;
}

static struct preset preset_auto(const struct machine_size *m)
{
        uint64_t half_milli = (uint64_t)m->cpus * 500;
        if (half_milli < AUTO_MIN_CPUS_MILLI)
                half_milli = AUTO_MIN_CPUS_MILLI;
        return (struct preset){
            .name = "auto",
            .memory_bytes = m->memory_bytes / 2,
            .cpus_milli = (unsigned)half_milli,
            .pids = AUTO_PIDS,
        };
}

static bool preset_lookup(const char *name, const struct machine_size *m, struct preset *out)
{
        if (strcmp(name, "auto") == 0) {
                *out = preset_auto(m);
                return true;
        }
        for (size_t i = 0; i < ARRAY_SIZE(fixed_presets); i++) {
                if (strcmp(name, fixed_presets[i].name) == 0) {
                        *out = fixed_presets[i];
                        return true;
                }
        }
        return false;
}

static int preset_unknown(const char *name, struct umw_error **err)
{
        char valid[128] = "";
        for (size_t i = 0; names[i]; i++) {
                if (i > 0)
                        strcat(valid, ", ");
                strcat(valid, names[i]);
        }
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                        "unknown resource preset \"%s\": expected one of %s", name, valid);
}

int preset_resolve(const char *name, const struct machine_size *m, struct preset *out,
                   struct umw_error **err)
{
        if (m->memory_bytes == 0 || m->cpus == 0)
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                                "machine size unknown (%llu bytes, %u CPUs): no preset fits",
                                (unsigned long long)m->memory_bytes, m->cpus);
        if (!preset_lookup(name, m, out))
                return preset_unknown(name, err);
        preset_fit(out, m);
        return 0;
}

static void jgen_open_key(yajl_gen g, const char *key)
{
        umw_jgen_key(g, key);
        yajl_gen_map_open(g);
}

char *preset_resources_json(const struct preset *p)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return NULL;
        yajl_gen_map_open(g);
        jgen_open_key(g, "memory");
        umw_jgen_key_int(g, "limit", (long long)p->memory_bytes);
        /* OCI's swap is memory plus swap: equal to the limit means no swap. */
        umw_jgen_key_int(g, "swap", (long long)p->memory_bytes);
        yajl_gen_map_close(g);
        jgen_open_key(g, "cpu");
        umw_jgen_key_int(g, "quota", (long long)p->cpus_milli * CPU_PERIOD_US / 1000);
        umw_jgen_key_int(g, "period", CPU_PERIOD_US);
        yajl_gen_map_close(g);
        jgen_open_key(g, "pids");
        umw_jgen_key_int(g, "limit", (long long)p->pids);
        yajl_gen_map_close(g);
        yajl_gen_map_close(g);
        return umw_jgen_finish(g, NULL);
}
