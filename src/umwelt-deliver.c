/* umwelt-deliver: review mode's delivery, the one program that links
 * libgit2 (face/deliver.h). umwelt-run's deliver verb execs it with its
 * arguments, so a sandbox's start never loads the library (2.8 ms). */
#include "src/opts.h"
#include "face/deliver.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <getopt.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: umwelt-deliver [--root DIR] review [-p DIR] [--since start|last|N] [--json]\n"
    "       umwelt-deliver apply --branch NAME [--include PATH]... [-m TEXT] [-p DIR] [--json]\n"
    "       umwelt-deliver sync [--include PATH]... [-p DIR] [--json]\n"
    "See umwelt-run(1), deliver.\n";

enum { OPT_JSON = 256, OPT_BRANCH, OPT_INCLUDE, OPT_SINCE };

/* Which options each sub-verb takes. */
struct sub {
        const char *name;
        int (*run)(const struct deliver_opts *, struct umw_error **);
        const char *takes; /* the option letters and codes it accepts, as chars */
};

static const struct sub subs[] = {
    {"review", deliver_review, "pjs"},
    {"apply", deliver_apply, "pjbim"},
    {"sync", deliver_sync, "pji"},
};

static char opt_char(int c)
{
        return c == 'p'           ? 'p'
               : c == 'm'         ? 'm'
               : c == OPT_JSON    ? 'j'
               : c == OPT_BRANCH  ? 'b'
               : c == OPT_INCLUDE ? 'i'
               : c == OPT_SINCE   ? 's'
                                  : '?';
}

static int parse(const struct sub *sub, int argc, char **argv, struct deliver_opts *o,
                 struct umw_error **err)
{
        static const struct option longopts[] = {
            {"project", required_argument, NULL, 'p'},
            {"json", no_argument, NULL, OPT_JSON},
            {"branch", required_argument, NULL, OPT_BRANCH},
            {"include", required_argument, NULL, OPT_INCLUDE},
            {"message", required_argument, NULL, 'm'},
            {"since", required_argument, NULL, OPT_SINCE},
            {0},
        };
        optind = 2;
        opterr = 0;
        int c;
        while ((c = getopt_long(argc, argv, "+p:m:", longopts, NULL)) != -1) {
                if (c == '?' || c == ':' || !strchr(sub->takes, opt_char(c)))
                        return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                        "deliver %s: unknown option '%s'", sub->name,
                                        argv[optind - 1]);
                if (c == 'p')
                        o->project = optarg;
                else if (c == 'm')
                        o->message = optarg;
                else if (c == OPT_JSON)
                        o->json = true;
                else if (c == OPT_BRANCH)
                        o->branch = optarg;
                else if (c == OPT_INCLUDE)
                        o->include[o->n_include++] = optarg;
                else
                        o->since = optarg;
        }
        if (optind < argc)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL, "deliver %s: unexpected '%s'",
                                sub->name, argv[optind]);
        if (strcmp(sub->name, "apply") == 0 && !o->branch)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "deliver apply: expected --branch NAME (the working branch)");
        return 0;
}

/* --include may come once per argument: room for all. */
static int run_sub(const struct runtime_opts *rt, const struct sub *sub, int argc, char **argv,
                   struct umw_error **err)
{
        _cleanup_free_ const char **include = calloc((size_t)argc, sizeof(*include));
        struct deliver_opts o = {.rt = rt, .include = include};
        if (!include)
                return umw_fail_sys(err, ENOMEM, "arguments");
        int r = parse(sub, argc, argv, &o, err);
        return r < 0 ? r : sub->run(&o, err);
}

/* argv[1] is the sub-verb. */
static int run_verb(const struct runtime_opts *rt, int argc, char **argv, struct umw_error **err)
{
        const char *name = argv[1];
        for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
                if (strcmp(subs[i].name, name) != 0)
                        continue;
                return run_sub(rt, &subs[i], argc, argv, err);
        }
        return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                        "deliver: expected review, apply, sync or discard, found '%s'", name);
}

/* umwelt-run's global options first (umwelt-run passes --root: where
 * the runtime's state says whether the sandbox runs), then the sub-verb. */
static int run(int argc, char **argv, struct umw_error **err)
{
        struct global_opts g;
        int at = 0;
        int r = opts_parse_global(argc, argv, &g, &at, err);
        if (r < 0 || g.help) {
                free(g.root_alloc);
                if (g.help)
                        fputs(usage_text, stdout);
                return r;
        }
        r = run_verb(&g.rt, argc - at + 1, argv + at - 1, err);
        free(g.root_alloc);
        return r;
}

int main(int argc, char **argv)
{
        struct umw_error *err = NULL;
        umw_log_set_program("umwelt-deliver");
        if (getuid() != geteuid() || getgid() != getegid()) {
                fputs("umwelt-deliver: refusing to run setuid or setgid\n", stderr);
                return UMW_EXIT_FAILURE;
        }
        if (git_libgit2_init() < 0) {
                fputs("umwelt-deliver: libgit2 could not start\n", stderr);
                return UMW_EXIT_FAILURE;
        }
        int r = run(argc, argv, &err);
        git_libgit2_shutdown();
        return r >= 0 ? 0 : umw_log_exit(err);
}
