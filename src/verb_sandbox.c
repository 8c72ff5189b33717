/* sandbox: the face for people and agents (src/sandbox.c, src/sandbox_life.c
 * do the work). One option parser for every sub-verb; each accepts only its
 * own options. */
#include "src/verbs.h"
#include "face/sandbox.h"
#include "netns/ingress.h"
#include "common/error.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
        OPT_PRESET = 256,
        OPT_GRANT,
        OPT_ROOTFS,
        OPT_CWD,
        OPT_IDLE,
        OPT_JSON,
        OPT_PUBLISH,
        OPT_WORKSPACE,
        OPT_PRESERVE_FDS
};

/* What a sub-verb accepts. */
enum {
        ACCEPT_PROJECT = 1 << 0, /* -p DIR */
        ACCEPT_POLICY = 1 << 1,  /* --preset, --grant, --rootfs, --workspace */
        ACCEPT_TTY = 1 << 2,     /* -t, --cwd, --preserve-fds */
        ACCEPT_IDLE = 1 << 3,    /* --idle DURATION */
        NEEDS_COMMAND = 1 << 4,  /* -- CMD [ARG...] */
        ACCEPT_PUBLISH = 1 << 5, /* --publish PORT */
};

struct sub_verb {
        const char *name;
        unsigned accepts;
        const char *summary; /* one line of umwelt-run --help */
        const char *usage;
};

static const struct sub_verb sub_verbs[] = {
    {"run", ACCEPT_PROJECT | ACCEPT_POLICY | NEEDS_COMMAND,
     "run a command in a one-shot sandbox of the project",
     "sandbox run [-p DIR] [--preset NAME] [--grant PATH[:ro|:rw]]... [--rootfs DIR] "
     "[--workspace review|direct] [--json] -- "
     "CMD [ARG...]"},
    {"up", ACCEPT_PROJECT | ACCEPT_POLICY | ACCEPT_PUBLISH,
     "start the project's long-lived sandbox",
     "sandbox up [-p DIR] [--preset NAME] [--grant PATH[:ro|:rw]]... [--rootfs DIR] "
     "[--workspace review|direct] "
     "[--publish PORT]... [--json]"},
    {"exec", ACCEPT_PROJECT | ACCEPT_TTY | NEEDS_COMMAND,
     "run a command in the project's running sandbox",
     "sandbox exec [-p DIR] [-t] [--cwd DIR] [--preserve-fds N] [--json] -- CMD [ARG...]"},
    {"down", ACCEPT_PROJECT, "end the project's sandbox", "sandbox down [-p DIR] [--json]"},
    {"status", ACCEPT_PROJECT, "print the project's sandbox: status, preset, grants, egress",
     "sandbox status [-p DIR] [--json]"},
    {"reload", ACCEPT_PROJECT, "give the running sandbox's gateway the egress rules anew",
     "sandbox reload [-p DIR] [--json]"},
    {"list", 0, "list this user's sandboxes, running or dead", "sandbox list [--json]"},
    {"gc", ACCEPT_IDLE, "remove what dead (or, with --idle, idle) sandboxes left",
     "sandbox gc [--idle DURATION] [--json]"},
    {"log", ACCEPT_PROJECT, "print the project's audit log", "sandbox log [-p DIR] [--json]"},
};

void verb_sandbox_print_verbs(void)
{
        for (size_t i = 0; i < sizeof(sub_verbs) / sizeof(sub_verbs[0]); i++)
                printf("    sandbox %-8s %s\n", sub_verbs[i].name, sub_verbs[i].summary);
}

struct parsed {
        struct sandbox_opts o;
        long long idle_secs; /* -1: no --idle */
        uint16_t publish[INGRESS_PORTS_MAX];
};

/* N followed by s, m, h or d: 90s, 30m, 2h, 1d. */
static int parse_duration(const char *v, long long *secs, struct umw_error **err)
{
        static const struct {
                char unit;
                long long secs;
        } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
        char *end = NULL;
        errno = 0;
        long long n = v[0] >= '0' && v[0] <= '9' ? strtoll(v, &end, 10) : -1;
        for (size_t i = 0; n >= 0 && !errno && end && end[1] == '\0' && i < 4; i++)
                if (*end == units[i].unit && n <= LLONG_MAX / units[i].secs) {
                        *secs = n * units[i].secs;
                        return 0;
                }
        return opts_usage_error(err, "sandbox gc",
                                "--idle: expected a duration such as 90s, 30m, 2h or 1d, got '%s'",
                                v);
}

static int add_publish(struct parsed *p, const char *arg, struct umw_error **err)
{
        uint16_t port;
        int r = ingress_port_parse("--publish", arg, &port, err);
        if (r < 0)
                return r;
        if (p->o.n_publish == INGRESS_PORTS_MAX)
                return opts_usage_error(err, "sandbox up", "--publish: at most %d ports",
                                        INGRESS_PORTS_MAX);
        p->publish[p->o.n_publish++] = port;
        p->o.publish = p->publish;
        return 0;
}

static int add_grant(struct sandbox_opts *o, const char *grant, struct umw_error **err)
{
        const char **more = realloc(o->grants, (o->n_grants + 1) * sizeof(char *));
        if (!more)
                return umw_fail_sys(err, ENOMEM, "sandbox");
        o->grants = more;
        o->grants[o->n_grants++] = grant;
        return 0;
}

/* Which ACCEPT_ flag an option needs; 0: every sub-verb takes it. */
static unsigned option_needs(int c)
{
        switch (c) {
        case 'p':
                return ACCEPT_PROJECT;
        case OPT_PRESET:
        case OPT_GRANT:
        case OPT_ROOTFS:
        case OPT_WORKSPACE:
                return ACCEPT_POLICY;
        case 't':
        case OPT_CWD:
        case OPT_PRESERVE_FDS:
                return ACCEPT_TTY;
        case OPT_IDLE:
                return ACCEPT_IDLE;
        case OPT_PUBLISH:
                return ACCEPT_PUBLISH;
        default: /* OPT_JSON, and '?' refused before */
                return 0;
        }
}

static int apply_option(int c, const char *arg, struct parsed *p, struct umw_error **err)
{
        struct sandbox_opts *o = &p->o;
        switch (c) {
        case 'p':
                o->project = arg;
                return 0;
        case OPT_PRESET:
                o->preset = arg;
                return 0;
        case OPT_ROOTFS:
                o->rootfs = arg;
                return 0;
        case OPT_WORKSPACE:
                if (strcmp(arg, "review") != 0 && strcmp(arg, "direct") != 0)
                        return opts_usage_error(err, "sandbox",
                                                "--workspace %s: expected review or direct", arg);
                o->workspace = arg[0] == 'r' ? WORKSPACE_REVIEW : WORKSPACE_DIRECT;
                return 0;
        case OPT_GRANT:
                return add_grant(o, arg, err);
        case 't':
                o->tty = true;
                return 0;
        case OPT_CWD:
                o->cwd = arg;
                return 0;
        case OPT_PRESERVE_FDS:
                return opts_parse_uint("--preserve-fds", arg, &o->preserve_fds, err);
        case OPT_IDLE:
                return parse_duration(arg, &p->idle_secs, err);
        case OPT_PUBLISH:
                return add_publish(p, arg, err);
        default: /* OPT_JSON */
                o->json = true;
                return 0;
        }
}

static int parse(const struct sub_verb *v, int argc, char **argv, struct parsed *p,
                 struct umw_error **err)
{
        static const struct option longopts[] = {
            {"project", required_argument, NULL, 'p'},
            {"preset", required_argument, NULL, OPT_PRESET},
            {"grant", required_argument, NULL, OPT_GRANT},
            {"rootfs", required_argument, NULL, OPT_ROOTFS},
            {"tty", no_argument, NULL, 't'},
            {"cwd", required_argument, NULL, OPT_CWD},
            {"idle", required_argument, NULL, OPT_IDLE},
            {"json", no_argument, NULL, OPT_JSON},
            {"publish", required_argument, NULL, OPT_PUBLISH},
            {"workspace", required_argument, NULL, OPT_WORKSPACE},
            {"preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS},
            {0},
        };
        char verb[32];
        snprintf(verb, sizeof(verb), "sandbox %s", v->name);
        optind = 1;
        opterr = 0;
        int c, idx = -1;
        /* '+': everything after the options is the command, its options included. */
        while ((c = getopt_long(argc, argv, "+:p:t", longopts, &idx)) != -1) {
                unsigned needs = option_needs(c);
                int r;
                if (c == ':')
                        r = opts_usage_error(err, verb, "'%s' expects a value; usage: %s",
                                             argv[optind - 1], v->usage);
                else if (c == '?')
                        r = opts_usage_error(err, verb, "unknown option '%s'; usage: %s",
                                             argv[optind - 1], v->usage);
                else if (needs && !(v->accepts & needs))
                        /* By its name: argv[optind - 1] may be its value. */
                        r = opts_usage_error(
                            err, verb, "unknown option '%s%s'; usage: %s", idx >= 0 ? "--" : "-",
                            idx >= 0 ? longopts[idx].name : (char[]){(char)c, 0}, v->usage);
                else
                        r = apply_option(c, optarg, p, err);
                idx = -1;
                if (r < 0)
                        return r;
        }
        if ((v->accepts & NEEDS_COMMAND) && optind >= argc)
                return opts_usage_error(err, verb, "expected -- CMD [ARG...]; usage: %s", v->usage);
        if (!(v->accepts & NEEDS_COMMAND) && optind < argc)
                return opts_usage_error(err, verb, "unexpected argument '%s'; usage: %s",
                                        argv[optind], v->usage);
        p->o.args = argv + optind;
        return 0;
}

static int dispatch(struct global_opts *g, const struct sub_verb *v, struct parsed *p,
                    struct umw_error **err)
{
        int status = 0, r;
        const struct sandbox_opts *o = &p->o;
        if (strcmp(v->name, "run") == 0)
                r = sandbox_run(&g->rt, o, &status, err);
        else if (strcmp(v->name, "exec") == 0)
                r = sandbox_exec(&g->rt, o, &status, err);
        else if (strcmp(v->name, "up") == 0)
                r = sandbox_up(&g->rt, o, err);
        else if (strcmp(v->name, "down") == 0)
                r = sandbox_down(&g->rt, o, err);
        else if (strcmp(v->name, "status") == 0)
                r = sandbox_status(&g->rt, o, err);
        else if (strcmp(v->name, "reload") == 0)
                r = sandbox_reload(&g->rt, o, err);
        else if (strcmp(v->name, "list") == 0)
                r = sandbox_list(&g->rt, o->json, err);
        else if (strcmp(v->name, "gc") == 0)
                r = sandbox_gc(&g->rt, p->idle_secs, o->json, err);
        else
                r = sandbox_log(o->project, o->json, err);
        return r < 0 ? r : status;
}

/* The sub-verb's options, then the sub-verb: its error, or its exit status. */
static int parse_and_dispatch(struct global_opts *g, const struct sub_verb *v, int argc,
                              char **argv, struct parsed *p, struct umw_error **err)
{
        int r = parse(v, argc - 1, argv + 1, p, err);
        if (r < 0)
                return r;
        return dispatch(g, v, p, err);
}

VERB(sandbox)
{
        const struct sub_verb *v = NULL;
        for (size_t i = 0; argc >= 2 && i < sizeof(sub_verbs) / sizeof(sub_verbs[0]); i++)
                if (strcmp(argv[1], sub_verbs[i].name) == 0)
                        v = &sub_verbs[i];
        if (!v)
                return opts_usage_error(err, "sandbox",
                                        "expected run, up, exec, down, status, reload, list, gc "
                                        "or log "
                                        "(see umwelt-run sandbox --help)");
        if (argc >= 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
                printf("usage: umwelt-run [GLOBAL OPTIONS] %s\nSee umwelt-run(1).\n", v->usage);
                return 0;
        }
        struct parsed p = {.idle_secs = -1};
        int r = parse_and_dispatch(g, v, argc, argv, &p, err);
        free(p.o.grants);
        return r;
}
