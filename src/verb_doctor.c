/* doctor: the verb (face/doctor.h does the checking). */
#include "src/verbs.h"
#include "face/doctor.h"
#include "common/error.h"

#include <getopt.h>
#include <stdbool.h>

struct doctor_args {
        bool deep, json, inside;
        const char *workspace; /* --inside: the sandbox's workspace */
};

enum { OPT_DEEP = 256, OPT_JSON, OPT_INSIDE, OPT_WORKSPACE };

static int parse_args(int argc, char **argv, struct doctor_args *a, struct umw_error **err)
{
        /* --inside and --workspace are doctor --deep's own, run in the sandbox. */
        static const struct option longopts[] = {
            {"deep", no_argument, NULL, OPT_DEEP},
            {"json", no_argument, NULL, OPT_JSON},
            {"inside", no_argument, NULL, OPT_INSIDE},
            {"workspace", required_argument, NULL, OPT_WORKSPACE},
            {0},
        };
        optind = 1;
        opterr = 0;
        int c;
        while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
                if (c == OPT_DEEP)
                        a->deep = true;
                else if (c == OPT_JSON)
                        a->json = true;
                else if (c == OPT_INSIDE)
                        a->inside = true;
                else if (c == OPT_WORKSPACE)
                        a->workspace = optarg;
                else
                        return opts_usage_error(err, "doctor", "unknown option '%s'",
                                                argv[optind - 1]);
        }
        if (a->inside && a->deep)
                return opts_usage_error(err, "doctor", "--inside and --deep exclude each other");
        if (a->workspace && !a->inside)
                return opts_usage_error(err, "doctor", "--workspace goes with --inside");
        return opts_expect_args("doctor", argc, argv, optind, 0, 0, err);
}

/* Exit status: 0 when every needed check passed, 1 when one failed. */
VERB(doctor)
{
        struct doctor_args a = {0};
        int r = parse_args(argc, argv, &a, err);
        if (r < 0)
                return r;
        struct doctor_report report = {0};
        if (a.inside) {
                doctor_inside_checks(&report, a.workspace);
        } else {
                doctor_host_checks(&report, &g->rt);
                if (a.deep)
                        doctor_deep_checks(&report, &g->rt);
        }
        doctor_report_print(&report, a.json);
        bool ok = doctor_report_ok(&report);
        doctor_report_free(&report);
        return ok ? 0 : UMW_EXIT_FAILURE;
}
