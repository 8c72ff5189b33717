/* exec: run a process in a running container. */
#include "src/verbs.h"
#include "runtime/exec.h"
#include "common/error.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

enum { OPT_CONSOLE_SOCKET = 256, OPT_PID_FILE, OPT_CWD, OPT_NO_NEW_PRIVS, OPT_PRESERVE_FDS };

/* Appends to a malloc'd vector of borrowed strings. */
static int push(const char ***v, size_t *n, const char *s, struct umw_error **err)
{
        const char **bigger = realloc(*v, (*n + 1) * sizeof(**v));
        if (!bigger)
                return umw_fail_sys(err, ENOMEM, "exec");
        bigger[(*n)++] = s;
        *v = bigger;
        return 0;
}

static int apply_exec_opt(int c, const char *arg, struct exec_opts *o, struct umw_error **err)
{
        switch (c) {
        case 'p':
                o->process_path = arg;
                return 0;
        case 't':
                o->tty = o->tty_set = true;
                return 0;
        case 'd':
                o->detach = true;
                return 0;
        case OPT_CONSOLE_SOCKET:
                o->console_socket = arg;
                return 0;
        case OPT_PID_FILE:
                o->pid_file = arg;
                return 0;
        case OPT_CWD:
                o->cwd = arg;
                return 0;
        case 'e':
                return push(&o->env, &o->n_env, arg, err);
        case 'u':
                o->user = arg;
                return 0;
        case 'c':
                return push(&o->caps, &o->n_caps, arg, err);
        case OPT_NO_NEW_PRIVS:
                o->no_new_privs = true;
                return 0;
        case OPT_PRESERVE_FDS:
                return opts_parse_uint("--preserve-fds", arg, &o->preserve_fds, err);
        default:
                return opts_usage_error(err, "exec", "unknown option");
        }
}

/* exec's options into o (its env and caps lists the caller's to free), the
 * container id and the command. */
static int parse_exec(int argc, char **argv, struct exec_opts *o, struct umw_error **err)
{
        static const struct option longopts[] = {
            {"process", required_argument, NULL, 'p'},
            {"tty", no_argument, NULL, 't'},
            {"detach", no_argument, NULL, 'd'},
            {"console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET},
            {"pid-file", required_argument, NULL, OPT_PID_FILE},
            {"cwd", required_argument, NULL, OPT_CWD},
            {"env", required_argument, NULL, 'e'},
            {"user", required_argument, NULL, 'u'},
            {"cap", required_argument, NULL, 'c'},
            {"no-new-privs", no_argument, NULL, OPT_NO_NEW_PRIVS},
            {"preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS},
            {0},
        };
        optind = 1;
        int c, r;
        /* '+': everything after the id is the command, options included. */
        while ((c = getopt_long(argc, argv, "+p:tde:u:c:", longopts, NULL)) != -1) {
                if (c == '?' || c == ':')
                        return opts_usage_error(err, "exec", "unknown option '%s'",
                                                argv[optind - 1]);
                if ((r = apply_exec_opt(c, optarg, o, err)) < 0)
                        return r;
        }
        if ((r = opts_expect_args("exec", argc, argv, optind, 1, -1, err)) < 0)
                return r;
        o->id = argv[optind];
        o->args = argv + optind + 1;
        return 0;
}

/* Its error, or the exit status of the process it ran. */
static int parse_and_exec(struct global_opts *g, int argc, char **argv, struct exec_opts *o,
                          struct umw_error **err)
{
        int status = 0;
        int r;
        if ((r = parse_exec(argc, argv, o, err)) < 0 ||
            (r = container_exec(&g->rt, o, &status, err)) < 0)
                return r;
        return status;
}

VERB(exec)
{
        struct exec_opts o = {0};
        int r = parse_and_exec(g, argc, argv, &o, err);
        free(o.env);
        free(o.caps);
        return r;
}
