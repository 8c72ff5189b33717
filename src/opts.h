/* Command-line handling shared by every verb: the global options, the
 * verb table, and small argument parsers that report usage errors. */
#ifndef UMW_OPTS_H
#define UMW_OPTS_H

#include <getopt.h>
#include <stdbool.h>

#include "runtime/container.h"

struct umw_error;

struct global_opts {
        struct runtime_opts rt;
        const char *log_path;
        bool log_json;
        bool debug;
        char *root_alloc; /* owns rt.root when it was derived */
        bool help;        /* --help before any verb: main prints the verbs */
};

/* The global options, for --help. */
void opts_print_global_help(void);
/* Parses the options before the verb; *verb_index is where the verb is.
 * With --help it stops there, sets g->help and leaves *verb_index alone. */
int opts_parse_global(int argc, char **argv, struct global_opts *g, int *verb_index,
                      struct umw_error **err);
/* A non-negative decimal integer for a flag. */
int opts_parse_uint(const char *flag, const char *value, int *out, struct umw_error **err);
/* The error for a bad command line of verb. */
int opts_usage_error(struct umw_error **err, const char *verb, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A verb that takes an id (and up to max_args positional arguments in all)
 * and at most one flag, which sets *flag; unknown options are named. After
 * it, argv[optind] is the id. */
int opts_parse_id_verb(int argc, char **argv, const struct option *longopts, const char *shortopts,
                       int max_args, bool *flag, struct umw_error **err);
/* Exactly want positional arguments after the options, else a usage error. */
int opts_expect_args(const char *verb, int argc, char **argv, int first, int min, int max,
                     struct umw_error **err);

#endif
