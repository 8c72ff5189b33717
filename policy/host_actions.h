/* The host actions table, /etc/umwelt/host-actions.toml (umwelt.toml(5),
 * "HOST ACTIONS"): named, fixed commands a sandbox may ask the relay to
 * run on the host. Root's file, never a project's; the table is the
 * boundary, the approval a courtesy.
 *
 *   [[action]]
 *   name = "nginx-test"                 # [a-z0-9][a-z0-9._-]*, unique
 *   description = "check the nginx configuration"
 *   argv = ["/usr/sbin/nginx", "-t"]    # argv[0] absolute; no shell, ever
 *   timeout = "10s"                     # "N" + "ms", "s" or "m"; 30s
 *   users = ["alice"]                   # offered to; absent: everyone
 *   projects = ["/home/alice/shop"]     # offered in; absent: every project
 *   ask = false                         # absent: true, a human is asked
 *   cwd = "/"                           # absolute; "/"
 *   output_limit = 16384                # bytes kept of stdout and of stderr
 *   concurrency = 1                     # runs of it at once
 *   [action.params]                     # the only values a request may name
 *   site = ["shop.conf", "blog.conf"]   # used as "{site}" in argv
 *   [action.env]                        # all the environment it gets, with
 *   LANG = "C.UTF-8"                    # PATH and LANG where not set here
 *
 * Pure: parsing and checks only; the file's owner is checked by the reader
 * (host_actions_load). Every error names FILE:LINE:COLUMN. */
#ifndef UMW_POLICY_HOST_ACTIONS_H
#define UMW_POLICY_HOST_ACTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct umw_error;

#define HOST_ACTIONS_DIR            "/etc/umwelt"
#define HOST_ACTIONS_FILE           HOST_ACTIONS_DIR "/host-actions.toml"
#define HOST_ACTION_NAME_MAX        64
#define HOST_ACTION_PARAMS_MAX      8
#define HOST_ACTION_PARAM_MAX       32  /* bytes of a parameter's name */
#define HOST_ACTION_VALUE_MAX       256 /* bytes of one of its values */
#define HOST_ACTION_ARGV_MAX        64
#define HOST_ACTION_ENV_MAX         32
#define HOST_ACTION_TIMEOUT_MAX     3600000 /* ms: an hour */
#define HOST_ACTION_OUTPUT_MAX      32768   /* bytes of each stream an answer carries */
#define HOST_ACTION_OUTPUT_DEF      16384
#define HOST_ACTION_CONCURRENCY_MAX 16

struct host_action_param {
        const char *name;
        const char *const *values; /* NULL-terminated, at least one */
};

struct host_action {
        const char *name, *description;
        const char *const *argv; /* as written: "{param}" placeholders in place */
        unsigned timeout_ms;
        const char *const *users;    /* NULL: everyone */
        const char *const *projects; /* NULL: every project */
        bool ask;
        const char *cwd;
        const char *const *env; /* "NAME=value", the defaults added */
        size_t output_limit;
        unsigned concurrency;
        struct host_action_param params[HOST_ACTION_PARAMS_MAX];
        size_t n_params;
};

struct host_actions {
        struct host_action *items;
        size_t n;
        void *owned; /* the parsed tree and lists the members point into */
};

/* The table from len bytes of text, file naming it in messages. */
int host_actions_parse(const char *text, size_t len, const char *file, struct host_actions *out,
                       struct umw_error **err);
/* HOST_ACTIONS_FILE read through one fd: refused (UMW_EXIT_CONFIG, naming
 * the file) unless it and /etc/umwelt are root's and not writable by group
 * or others. Absent: an empty table, no error. */
int host_actions_load(struct host_actions *out, struct umw_error **err);
void host_actions_free(struct host_actions *t);

const struct host_action *host_actions_find(const struct host_actions *t, const char *name);
/* Whether a is offered to user (a name, or NULL) in project (a workspace),
 * and to user in some project. */
bool host_action_offered(const struct host_action *a, const char *user, const char *project);
bool host_action_for_user(const struct host_action *a, const char *user);

/* A request's parameters: name and value, as the sandbox sent them. */
struct host_action_arg {
        const char *name, *value;
};
/* The argv to run: each "{param}" replaced by the request's value, which
 * must be one of the parameter's values byte for byte; every declared
 * parameter must be given once, nothing else. *argv is malloc'd with its
 * strings (host_action_argv_free). Refusals are UMW_EXIT_CONFIG. */
int host_action_argv(const struct host_action *a, const struct host_action_arg *args, size_t n,
                     char ***argv, struct umw_error **err);
void host_action_argv_free(char **argv);

#endif
