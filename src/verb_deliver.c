/* deliver: the agent's changes in review mode, looked at and brought to
 * the host. review, apply and sync are umwelt-deliver's, the program that
 * links libgit2 (face/deliver.h): exec'd here with the arguments as they
 * came, so that umwelt-run, whose start is measured, never loads it.
 * discard is here: it needs nothing of libgit2. umwelt-deliver gets the
 * runtime's state root, for sync to see whether the sandbox runs. */
#include "src/verbs.h"
#include "face/direct_report.h"
#include "face/sandbox.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/paths.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DELIVER_BIN "umwelt-deliver"

/* umwelt-deliver --root ROOT SUB ARGS...: the state root as this
 * umwelt-run has it, so that sync sees a running sandbox. */
static int exec_deliver(const struct global_opts *g, int argc, char **argv, struct umw_error **err)
{
        _cleanup_free_ char *bin = NULL;
        int r = umw_find_program(DELIVER_BIN, &bin, err);
        if (r < 0)
                return umw_error_prefix(err, "deliver %s", argv[1]);
        _cleanup_free_ char **args = calloc((size_t)argc + 3, sizeof(*args));
        if (!args)
                return umw_fail_sys(err, ENOMEM, "deliver");
        args[0] = (char *)DELIVER_BIN;
        args[1] = (char *)"--root";
        args[2] = (char *)g->rt.root;
        for (int i = 1; i < argc; i++)
                args[i + 2] = argv[i];
        execv(bin, args);
        return umw_fail_errno(err, "deliver: exec %s", bin);
}

/* discard and quarantine: umwelt-run's own, -p DIR their only option. */
static int local_sub(struct global_opts *g, int argc, char **argv, struct umw_error **err)
{
        static const struct option longopts[] = {
            {"project", required_argument, NULL, 'p'},
            {0},
        };
        const char *project = NULL;
        optind = 2;
        opterr = 0;
        int c;
        while ((c = getopt_long(argc, argv, "+p:", longopts, NULL)) != -1) {
                if (c != 'p')
                        return opts_usage_error(err, "deliver", "unknown option '%s'",
                                                argv[optind - 1]);
                project = optarg;
        }
        int r = opts_expect_args("deliver", argc, argv, optind, 0, 0, err);
        if (r < 0)
                return r;
        return strcmp(argv[1], "discard") == 0 ? sandbox_deliver_discard(&g->rt, project, err)
                                               : sandbox_deliver_quarantine(project, err);
}

VERB(deliver)
{
        static const char *const delivered[] = {"review", "apply", "sync"};
        const char *sub = argc > 1 ? argv[1] : "";
        if (strcmp(sub, "discard") == 0 || strcmp(sub, "quarantine") == 0)
                return local_sub(g, argc, argv, err);
        for (size_t i = 0; i < ARRAY_SIZE(delivered); i++)
                if (strcmp(sub, delivered[i]) == 0)
                        return exec_deliver(g, argc, argv, err);
        return opts_usage_error(
            err, "deliver", "expected review, apply, sync, discard or quarantine, found '%s'", sub);
}
