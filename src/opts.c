#include "src/opts.h"
#include "common/error.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UMW_VERSION_TEXT                                                                           \
        "umwelt-run version " PACKAGE_VERSION "\nspec: 1.0.2\n+CAP +SECCOMP +YAJL +NEWMOUNTAPI "   \
        "+OPENAT2\n"

int opts_usage_error(struct umw_error **err, const char *verb, const char *fmt, ...)
{
        char *msg = NULL;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        int r = umw_fail(err, UMW_EXIT_USAGE, EINVAL, "%s%s%s (see umwelt-run --help)",
                         verb ? verb : "", verb ? ": " : "", msg ? msg : "bad arguments");
        free(msg);
        return r;
}

int opts_parse_uint(const char *flag, const char *value, int *out, struct umw_error **err)
{
        char *end = NULL;
        errno = 0;
        long v = strtol(value, &end, 10);
        if (errno || !end || *end || end == value || v < 0 || v > 1 << 20)
                return opts_usage_error(err, NULL, "%s: expected a non-negative integer, got '%s'",
                                        flag, value);
        *out = (int)v;
        return 0;
}

int opts_expect_args(const char *verb, int argc, char **argv, int first, int min, int max,
                     struct umw_error **err)
{
        int n = argc - first;
        if (n < min)
                return opts_usage_error(err, verb, "missing container id");
        if (max >= 0 && n > max)
                return opts_usage_error(err, verb, "unexpected argument '%s'", argv[first + max]);
        return 0;
}

int opts_parse_id_verb(int argc, char **argv, const struct option *longopts, const char *shortopts,
                       int max_args, bool *flag, struct umw_error **err)
{
        optind = 1;
        opterr = 0;
        int c;
        while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
                if (c == '?' || c == ':' || !flag)
                        return opts_usage_error(err, argv[0], "unknown option '%s'",
                                                argv[optind - 1]);
                *flag = true;
        }
        return opts_expect_args(argv[0], argc, argv, optind, 1, max_args, err);
}

static int default_root(struct global_opts *g, struct umw_error **err)
{
        if (geteuid() == 0) {
                g->rt.root = "/run/umwelt-run";
                return 0;
        }
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        /* An empty XDG_RUNTIME_DIR is unset; without one, a per-user dir in /tmp. */
        if (xdg && *xdg) {
                if (asprintf(&g->root_alloc, "%s/umwelt-run", xdg) < 0)
                        g->root_alloc = NULL;
        } else if (asprintf(&g->root_alloc, "/tmp/umwelt-run-%u", geteuid()) < 0) {
                g->root_alloc = NULL;
        }
        if (!g->root_alloc)
                return umw_fail_sys(err, ENOMEM, "state root");
        g->rt.root = g->root_alloc;
        return 0;
}

static int parse_manager(const char *v, struct global_opts *g, struct umw_error **err)
{
        if (strcmp(v, "cgroupfs") == 0)
                g->rt.cgroup_manager = CGROUP_MANAGER_CGROUPFS;
        else if (strcmp(v, "systemd") == 0)
                g->rt.cgroup_manager = CGROUP_MANAGER_SYSTEMD;
        else if (strcmp(v, "disabled") == 0)
                g->rt.cgroup_manager = CGROUP_MANAGER_DISABLED;
        else
                return opts_usage_error(err, NULL,
                                        "--cgroup-manager: expected cgroupfs, systemd or "
                                        "disabled, got '%s'",
                                        v);
        return 0;
}

static bool is_rootless_value(const char *v)
{
        return strcmp(v, "true") == 0 || strcmp(v, "false") == 0 || strcmp(v, "auto") == 0;
}

static int parse_rootless(const char *v, struct global_opts *g, struct umw_error **err)
{
        if (!v || strcmp(v, "true") == 0)
                g->rt.rootless = true;
        else if (strcmp(v, "false") == 0)
                g->rt.rootless = false;
        else if (strcmp(v, "auto") == 0)
                g->rt.rootless = geteuid() != 0;
        else
                return opts_usage_error(err, NULL, "--rootless: expected true, false or auto");
        return 0;
}

void opts_print_global_help(void)
{
        printf("global options:\n"
               "  --root DIR --log FILE --log-format text|json --log-level LEVEL --debug\n"
               "  --systemd-cgroup --cgroup-manager cgroupfs|systemd|disabled\n"
               "  --rootless[=true|false|auto] -v|--version -h|--help\n");
}

enum {
        OPT_ROOT = 256,
        OPT_LOG,
        OPT_LOG_FORMAT,
        OPT_LOG_LEVEL,
        OPT_DEBUG,
        OPT_SYSTEMD_CGROUP,
        OPT_CGROUP_MANAGER,
        OPT_ROOTLESS,
        OPT_VERSION,
        OPT_HELP
};

static int apply_global(int c, const char *arg, struct global_opts *g, struct umw_error **err)
{
        switch (c) {
        case OPT_ROOT:
                g->rt.root = arg;
                return 0;
        case OPT_LOG:
                g->log_path = arg;
                return 0;
        case OPT_LOG_FORMAT:
                if (strcmp(arg, "json") != 0 && strcmp(arg, "text") != 0)
                        return opts_usage_error(err, NULL, "--log-format: expected text or json");
                g->log_json = strcmp(arg, "json") == 0;
                return 0;
        case OPT_LOG_LEVEL:
                g->debug = g->debug || strcmp(arg, "debug") == 0;
                return 0;
        case OPT_DEBUG:
                g->debug = true;
                return 0;
        case OPT_SYSTEMD_CGROUP:
                g->rt.cgroup_manager = CGROUP_MANAGER_SYSTEMD;
                return 0;
        case OPT_CGROUP_MANAGER:
                return parse_manager(arg, g, err);
        case OPT_ROOTLESS:
                return parse_rootless(arg, g, err);
        case OPT_VERSION:
                fputs(UMW_VERSION_TEXT, stdout);
                exit(0);
        case OPT_HELP:
                /* The verbs are main's to list (src/umwelt-run.c). */
                g->help = true;
                return 0;
        default:
                return opts_usage_error(err, NULL, "unknown global option");
        }
}

int opts_parse_global(int argc, char **argv, struct global_opts *g, int *verb_index,
                      struct umw_error **err)
{
        static const struct option longopts[] = {
            {"root", required_argument, NULL, OPT_ROOT},
            {"log", required_argument, NULL, OPT_LOG},
            {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
            {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
            {"debug", no_argument, NULL, OPT_DEBUG},
            {"systemd-cgroup", no_argument, NULL, OPT_SYSTEMD_CGROUP},
            {"cgroup-manager", required_argument, NULL, OPT_CGROUP_MANAGER},
            {"rootless", optional_argument, NULL, OPT_ROOTLESS},
            {"version", no_argument, NULL, OPT_VERSION},
            {"help", no_argument, NULL, OPT_HELP},
            {0},
        };
        *g = (struct global_opts){.rt.cgroup_manager = CGROUP_MANAGER_CGROUPFS,
                                  .rt.rootless = geteuid() != 0,
                                  .rt.argv = argv};
        opterr = 0;
        optind = 1;
        int c;
        /* '+': stop at the verb; what follows belongs to it. */
        while ((c = getopt_long(argc, argv, "+hv", longopts, NULL)) != -1) {
                if (c == '?')
                        return opts_usage_error(err, NULL, "unknown option '%s'", argv[optind - 1]);
                if (c == 'h')
                        c = OPT_HELP;
                if (c == 'v')
                        c = OPT_VERSION;
                const char *arg = optarg;
                /* runc spells it "--rootless true": take the value that follows. */
                if (c == OPT_ROOTLESS && !arg && optind < argc && is_rootless_value(argv[optind]))
                        arg = argv[optind++];
                int r = apply_global(c, arg, g, err);
                if (r < 0 || g->help)
                        return r;
        }
        if (optind >= argc)
                return opts_usage_error(err, NULL, "missing verb");
        *verb_index = optind;
        return g->rt.root ? 0 : default_root(g, err);
}
