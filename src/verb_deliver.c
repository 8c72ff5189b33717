/* deliver: the agent's changes in review mode, looked at before anything
 * of them reaches the host (face/deliver.c). */
#include "src/verbs.h"
#include "face/direct_report.h"
#include "face/sandbox.h"
#include "common/error.h"

#include <getopt.h>
#include <string.h>

enum { OPT_JSON = 256 };

VERB(deliver)
{
        (void)g;
        static const struct option longopts[] = {
            {"project", required_argument, NULL, 'p'},
            {"json", no_argument, NULL, OPT_JSON},
            {0},
        };
        const char *sub = argc > 1 ? argv[1] : "";
        bool quarantine = strcmp(sub, "quarantine") == 0;
        if (strcmp(sub, "review") != 0 && !quarantine)
                return opts_usage_error(err, "deliver", "expected review or quarantine, found '%s'",
                                        sub);
        const char *project = NULL;
        bool json = false;
        optind = 2;
        opterr = 0;
        int c;
        while ((c = getopt_long(argc, argv, "+p:", longopts, NULL)) != -1) {
                if (c == 'p')
                        project = optarg;
                else if (c == OPT_JSON)
                        json = true;
                else
                        return opts_usage_error(err, "deliver", "unknown option '%s'",
                                                argv[optind - 1]);
        }
        int r = opts_expect_args("deliver", argc, argv, optind, 0, 0, err);
        if (r < 0)
                return r;
        return quarantine ? sandbox_deliver_quarantine(project, err)
                          : sandbox_deliver_review(project, json, err);
}
