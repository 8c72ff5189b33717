/* sandbox: the face for people and agents (src/sandbox.c does the work). */
#include "verbs.h"
#include "sandbox.h"
#include "src/common/error.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_PRESET = 256, OPT_GRANT, OPT_ROOTFS };

static int parse_run(int argc, char **argv, struct sandbox_opts *o, struct umw_error **err)
{
        static const struct option longopts[] = {
            {"project", required_argument, NULL, 'p'},
            {"preset", required_argument, NULL, OPT_PRESET},
            {"grant", required_argument, NULL, OPT_GRANT},
            {"rootfs", required_argument, NULL, OPT_ROOTFS},
            {0},
        };
        optind = 1;
        opterr = 0;
        int c;
        while ((c = getopt_long(argc, argv, "+p:", longopts, NULL)) != -1) {
                if (c == 'p') {
                        o->project = optarg;
                } else if (c == OPT_PRESET) {
                        o->preset = optarg;
                } else if (c == OPT_ROOTFS) {
                        o->rootfs = optarg;
                } else if (c == OPT_GRANT) {
                        const char **more = realloc(o->grants, (o->n_grants + 1) * sizeof(char *));
                        if (!more)
                                return umw_fail_sys(err, ENOMEM, "sandbox run");
                        o->grants = more;
                        o->grants[o->n_grants++] = optarg;
                } else {
                        return opts_usage_error(err, "sandbox run", "unknown option '%s'",
                                                argv[optind - 1]);
                }
        }
        if (optind >= argc)
                return opts_usage_error(err, "sandbox run", "expected -- CMD [ARG...]");
        o->args = argv + optind;
        return 0;
}

static int sandbox_log_verb(int argc, char **argv, struct umw_error **err)
{
        static const struct option longopts[] = {
            {"project", required_argument, NULL, 'p'}, {"json", no_argument, NULL, 'j'}, {0}};
        const char *project = NULL;
        bool json = false;
        optind = 1;
        opterr = 0;
        int c;
        while ((c = getopt_long(argc, argv, "p:", longopts, NULL)) != -1) {
                if (c == 'p')
                        project = optarg;
                else if (c == 'j')
                        json = true;
                else
                        return opts_usage_error(err, "sandbox log", "unknown option '%s'",
                                                argv[optind - 1]);
        }
        int r = opts_expect_args("sandbox log", argc, argv, optind, 0, 0, err);
        return r < 0 ? r : sandbox_log(project, json, err);
}

VERB(sandbox)
{
        if (argc >= 2 && strcmp(argv[1], "log") == 0)
                return sandbox_log_verb(argc - 1, argv + 1, err);
        if (argc < 2 || strcmp(argv[1], "run") != 0)
                return opts_usage_error(
                    err, "sandbox",
                    "expected: sandbox log [-p DIR] [--json], or sandbox run [-p DIR] "
                    "[--preset NAME] [--grant PATH[:ro|:rw]] "
                    "[--rootfs DIR] -- CMD [ARG...]");
        struct sandbox_opts o = {0};
        int status = 0;
        int r = parse_run(argc - 1, argv + 1, &o, err);
        if (r == 0)
                r = sandbox_run(&g->rt, &o, &status, err);
        free(o.grants);
        return r < 0 ? r : status;
}
