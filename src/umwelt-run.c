/* umwelt-run: the OCI runtime face. Parses the global options, hands the
 * rest to one verb, prints its error as one line, exits with its class. */
#include "verbs.h"
#include "src/common/error.h"
#include "src/common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct verb {
        const char *name;
        int (*run)(struct global_opts *, int, char **, struct umw_error **);
};

static const struct verb verbs[] = {
    {"create", verb_create},     {"run", verb_run},       {"start", verb_start},
    {"kill", verb_kill},         {"delete", verb_delete}, {"state", verb_state},
    {"list", verb_list},         {"ps", verb_ps},         {"exec", verb_exec},
    {"features", verb_features}, {"spec", verb_spec},
};

static const struct verb *find_verb(const char *name)
{
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
                if (strcmp(verbs[i].name, name) == 0)
                        return &verbs[i];
        return NULL;
}

static int fail(struct umw_error *err)
{
        umw_log_error(err);
        int code = err->kind == UMW_EXIT_OK ? UMW_EXIT_FAILURE : (int)err->kind;
        umw_error_free(err);
        return code;
}

int main(int argc, char **argv)
{
        struct umw_error *err = NULL;
        struct global_opts g;
        int verb_index = 0;
        if (opts_parse_global(argc, argv, &g, &verb_index, &err) < 0)
                return fail(err);
        if (umw_log_open(g.log_path, g.log_json, g.debug, &err) < 0)
                return fail(err);
        const struct verb *v = find_verb(argv[verb_index]);
        if (!v) {
                umw_fail(&err, UMW_EXIT_USAGE, 0, "unknown verb '%s' (see umwelt-run --help)",
                         argv[verb_index]);
                return fail(err);
        }
        int status = v->run(&g, argc - verb_index, argv + verb_index, &err);
        free(g.root_alloc);
        if (status < 0)
                return fail(err);
        return status;
}
