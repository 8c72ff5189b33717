/* policy: the project's own policy file, looked at and accepted by the
 * user (face/sandbox.h; face/project_policy.c says why it must be). */
#include "src/verbs.h"
#include "face/sandbox.h"
#include "common/error.h"

#include <getopt.h>
#include <string.h>

static int parse_args(int argc, char **argv, const char **project, struct umw_error **err)
{
        static const struct option longopts[] = {
            {"project", required_argument, NULL, 'p'},
            {0},
        };
        optind = 2;
        opterr = 0;
        int c;
        while ((c = getopt_long(argc, argv, "+p:", longopts, NULL)) != -1) {
                if (c != 'p')
                        return opts_usage_error(err, "policy", "unknown option '%s'",
                                                argv[optind - 1]);
                *project = optarg;
        }
        return opts_expect_args("policy", argc, argv, optind, 0, 0, err);
}

VERB(policy)
{
        (void)g;
        const char *sub = argc > 1 ? argv[1] : "";
        bool diff = strcmp(sub, "diff") == 0;
        if (!diff && strcmp(sub, "accept") != 0)
                return opts_usage_error(err, "policy", "expected diff or accept, found '%s'", sub);
        const char *project = NULL;
        int r = parse_args(argc, argv, &project, err);
        if (r < 0)
                return r;
        return diff ? sandbox_policy_diff(project, err) : sandbox_policy_accept(project, err);
}
