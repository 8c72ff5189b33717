/* pause, resume, update: the verbs that act on a live container's cgroup. */
#include "src/verbs.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RESOURCES_MAX (1u << 20)

VERB(pause)
{
        static const struct option none[] = {{0}};
        int r;
        if ((r = opts_parse_id_verb(argc, argv, none, "", 1, NULL, err)) < 0 ||
            (r = container_pause(&g->rt, argv[optind], err)) < 0)
                return r;
        return 0;
}

VERB(resume)
{
        static const struct option none[] = {{0}};
        int r;
        if ((r = opts_parse_id_verb(argc, argv, none, "", 1, NULL, err)) < 0 ||
            (r = container_resume(&g->rt, argv[optind], err)) < 0)
                return r;
        return 0;
}

/* The integer flags first (OPT_MEMORY up to N_INT_FLAGS), in longopts'
 * order: the option's index names it in messages. */
enum {
        OPT_RESOURCES = 256,
        OPT_MEMORY,
        OPT_MEMORY_SWAP,
        OPT_MEMORY_RESERVATION,
        OPT_PIDS_LIMIT,
        OPT_CPU_QUOTA,
        OPT_CPU_PERIOD,
        OPT_CPU_SHARE,
        OPT_BLKIO_WEIGHT,
        N_INT_FLAGS,
        OPT_CPUSET_CPUS = N_INT_FLAGS,
        OPT_CPUSET_MEMS,
};

/* The flags of update, each a field of linux.resources. */
struct update_flags {
        const char *resources_file;
        bool set[N_INT_FLAGS - OPT_MEMORY];
        int64_t value[N_INT_FLAGS - OPT_MEMORY];
        const char *cpuset_cpus, *cpuset_mems;
};

static bool with_units(int opt)
{
        return opt == OPT_MEMORY || opt == OPT_MEMORY_SWAP || opt == OPT_MEMORY_RESERVATION;
}

/* A decimal integer, -1 for no limit; with_units: a k, m or g suffix too. */
static int parse_int_flag(const char *flag, const char *arg, bool with_units, int64_t *out,
                          struct umw_error **err)
{
        char *end = NULL;
        errno = 0;
        long long v = strtoll(arg, &end, 10);
        int shift = 0;
        if (with_units && end && *end && !end[1]) {
                const char *units = "kmg";
                const char *u = strchr(units, end[0] | 0x20);
                shift = u ? 10 * (int)(u - units + 1) : -1;
                end += u ? 1 : 0;
        }
        bool ok = !errno && end && !*end && end != arg && v >= -1 && shift >= 0 &&
                  (v <= 0 || v <= (INT64_MAX >> shift));
        if (!ok)
                return opts_usage_error(err, "update", "%s: expected %s, got '%s'", flag,
                                        with_units ? "a number of bytes (k, m or g suffix) or -1"
                                                   : "an integer or -1",
                                        arg);
        *out = v > 0 ? (int64_t)v << shift : (int64_t)v;
        return 0;
}

static int parse_update(int argc, char **argv, struct update_flags *f, struct umw_error **err)
{
        static const struct option longopts[] = {
            {"resources", required_argument, NULL, OPT_RESOURCES},
            {"memory", required_argument, NULL, OPT_MEMORY},
            {"memory-swap", required_argument, NULL, OPT_MEMORY_SWAP},
            {"memory-reservation", required_argument, NULL, OPT_MEMORY_RESERVATION},
            {"pids-limit", required_argument, NULL, OPT_PIDS_LIMIT},
            {"cpu-quota", required_argument, NULL, OPT_CPU_QUOTA},
            {"cpu-period", required_argument, NULL, OPT_CPU_PERIOD},
            {"cpu-share", required_argument, NULL, OPT_CPU_SHARE},
            {"blkio-weight", required_argument, NULL, OPT_BLKIO_WEIGHT},
            {"cpuset-cpus", required_argument, NULL, OPT_CPUSET_CPUS},
            {"cpuset-mems", required_argument, NULL, OPT_CPUSET_MEMS},
            {0},
        };
        *f = (struct update_flags){0};
        optind = 1;
        int c;
        while ((c = getopt_long(argc, argv, "r:", longopts, NULL)) != -1) {
                if (c == '?' || c == ':')
                        return opts_usage_error(err, "update", "unknown option '%s'",
                                                argv[optind - 1]);
                if (c == OPT_RESOURCES || c == 'r') {
                        f->resources_file = optarg;
                        continue;
                }
                if (c == OPT_CPUSET_CPUS || c == OPT_CPUSET_MEMS) {
                        *(c == OPT_CPUSET_CPUS ? &f->cpuset_cpus : &f->cpuset_mems) = optarg;
                        continue;
                }
                int i = c - OPT_MEMORY;
                int r = parse_int_flag(longopts[c - OPT_RESOURCES].name, optarg, with_units(c),
                                       &f->value[i], err);
                if (r < 0)
                        return r;
                f->set[i] = true;
        }
        return opts_expect_args("update", argc, argv, optind, 1, 1, err);
}

static void gen_int(yajl_gen g, const struct update_flags *f, int opt, const char *key)
{
        if (f->set[opt - OPT_MEMORY])
                umw_jgen_key_int(g, key, f->value[opt - OPT_MEMORY]);
}

/* The flags as a linux.resources document. */
static char *flags_to_json(const struct update_flags *f)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return NULL;
        yajl_gen_map_open(g);
        if (f->set[OPT_MEMORY - OPT_MEMORY] || f->set[OPT_MEMORY_SWAP - OPT_MEMORY] ||
            f->set[OPT_MEMORY_RESERVATION - OPT_MEMORY]) {
                umw_jgen_key(g, "memory");
                yajl_gen_map_open(g);
                gen_int(g, f, OPT_MEMORY, "limit");
                gen_int(g, f, OPT_MEMORY_SWAP, "swap");
                gen_int(g, f, OPT_MEMORY_RESERVATION, "reservation");
                yajl_gen_map_close(g);
        }
        if (f->set[OPT_BLKIO_WEIGHT - OPT_MEMORY]) {
                umw_jgen_key(g, "blockIO");
                yajl_gen_map_open(g);
                gen_int(g, f, OPT_BLKIO_WEIGHT, "weight");
                yajl_gen_map_close(g);
        }
        if (f->set[OPT_PIDS_LIMIT - OPT_MEMORY]) {
                umw_jgen_key(g, "pids");
                yajl_gen_map_open(g);
                gen_int(g, f, OPT_PIDS_LIMIT, "limit");
                yajl_gen_map_close(g);
        }
        umw_jgen_key(g, "cpu");
        yajl_gen_map_open(g);
        gen_int(g, f, OPT_CPU_SHARE, "shares");
        gen_int(g, f, OPT_CPU_QUOTA, "quota");
        gen_int(g, f, OPT_CPU_PERIOD, "period");
        if (f->cpuset_cpus)
                umw_jgen_key_str(g, "cpus", f->cpuset_cpus);
        if (f->cpuset_mems)
                umw_jgen_key_str(g, "mems", f->cpuset_mems);
        yajl_gen_map_close(g);
        yajl_gen_map_close(g);
        return umw_jgen_finish(g, NULL);
}

static int update_from_text(struct global_opts *g, const char *id, const char *text,
                            const char *file, struct umw_error **err)
{
        yajl_val tree = NULL;
        int r = umw_json_parse(text, file, &tree, err);
        if (r < 0) {
                (*err)->kind = UMW_EXIT_CONFIG;
                return r;
        }
        r = container_update(&g->rt, id, tree, file, err);
        yajl_tree_free(tree);
        return r;
}

static int update_from_file(struct global_opts *g, const char *id, const char *path,
                            struct umw_error **err)
{
        _cleanup_free_ char *text = NULL;
        int r = strcmp(path, "-") == 0
                    ? umw_read_fd(STDIN_FILENO, "stdin", RESOURCES_MAX, &text, NULL, err)
                    : umw_read_file_at(AT_FDCWD, path, RESOURCES_MAX, &text, NULL, err);
        if (r < 0) {
                (*err)->kind = UMW_EXIT_CONFIG;
                return r;
        }
        return update_from_text(g, id, text, path, err);
}

/* The file first, then the flags: a flag overrides the file's value. */
VERB(update)
{
        struct update_flags f;
        int r = parse_update(argc, argv, &f, err);
        if (r < 0)
                return r;
        const char *id = argv[optind];
        if (f.resources_file && (r = update_from_file(g, id, f.resources_file, err)) < 0)
                return r;
        bool any_flag = f.cpuset_cpus || f.cpuset_mems;
        for (size_t i = 0; i < ARRAY_SIZE(f.set); i++)
                any_flag |= f.set[i];
        if (!any_flag && f.resources_file)
                return 0;
        _cleanup_free_ char *json = flags_to_json(&f);
        if (!json)
                return umw_fail_sys(err, ENOMEM, "update");
        r = update_from_text(g, id, json, "update flags", err);
        return r < 0 ? r : 0;
}
