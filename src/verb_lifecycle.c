/* create, run, start, kill, delete. */
#include "src/verbs.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/signals.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
        OPT_PID_FILE = 256,
        OPT_CONSOLE_SOCKET,
        OPT_PRESERVE_FDS,
        OPT_NO_PIVOT,
        OPT_NO_NEW_KEYRING,
        OPT_NO_SUBREAPER,
        OPT_KEEP
};

static int apply_create_opt(int c, const char *arg, struct create_opts *o, bool is_run,
                            const char *verb, struct umw_error **err)
{
        switch (c) {
        case 'b':
                o->bundle = arg;
                return 0;
        case 'f':
                o->config_path = arg;
                return 0;
        case OPT_PID_FILE:
                o->pid_file = arg;
                return 0;
        case OPT_CONSOLE_SOCKET:
                o->console_socket = arg;
                return 0;
        case OPT_PRESERVE_FDS:
                return opts_parse_uint("--preserve-fds", arg, &o->preserve_fds, err);
        case OPT_NO_PIVOT:
                o->no_pivot = true;
                return 0;
        case OPT_NO_NEW_KEYRING:
                o->no_new_keyring = true;
                return 0;
        case OPT_NO_SUBREAPER:
                o->no_subreaper = true;
                return 0;
        case 'd':
                if (is_run) {
                        o->detach = true;
                        return 0;
                }
                break;
        case OPT_KEEP:
                if (is_run) {
                        o->keep = true;
                        return 0;
                }
                break;
        }
        return opts_usage_error(err, verb, "unknown option");
}

/* The bundle as an absolute path: the state and hooks report it. */
static int absolute_bundle(const char *bundle, char **out, struct umw_error **err)
{
        *out = realpath(bundle ? bundle : ".", NULL);
        struct stat st;
        if (!*out || stat(*out, &st) < 0 || !S_ISDIR(st.st_mode))
                return umw_fail(err, UMW_EXIT_CONFIG, ENOENT,
                                "bundle '%s': expected an existing directory",
                                bundle ? bundle : ".");
        return 0;
}

/* systemd's socket activation (sd_listen_fds(3)): LISTEN_FDS sockets from
 * fd 3 on, meant for this process when LISTEN_PID names it (or, as crun
 * takes it, is unset). A malformed or foreign value hands nothing on. */
static int listen_fds_from_env(void)
{
        const char *fds = getenv("LISTEN_FDS"), *pid = getenv("LISTEN_PID");
        if (!fds || (pid && strtol(pid, NULL, 10) != getpid()))
                return 0;
        char *end = NULL;
        errno = 0;
        long n = strtol(fds, &end, 10);
        return errno || end == fds || *end || n <= 0 || n > 1024 ? 0 : (int)n;
}

static int parse_create(int argc, char **argv, bool is_run, struct create_opts *o,
                        struct umw_error **err)
{
        static const struct option longopts[] = {
            {"bundle", required_argument, NULL, 'b'},
            {"config", required_argument, NULL, 'f'},
            {"pid-file", required_argument, NULL, OPT_PID_FILE},
            {"console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET},
            {"preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS},
            {"no-pivot", no_argument, NULL, OPT_NO_PIVOT},
            {"no-new-keyring", no_argument, NULL, OPT_NO_NEW_KEYRING},
            {"no-subreaper", no_argument, NULL, OPT_NO_SUBREAPER},
            {"detach", no_argument, NULL, 'd'},
            {"keep", no_argument, NULL, OPT_KEEP},
            {0},
        };
        *o = (struct create_opts){0};
        optind = 1;
        int c;
        while ((c = getopt_long(argc, argv, "b:f:d", longopts, NULL)) != -1) {
                if (c == '?' || c == ':')
                        return opts_usage_error(err, argv[0], "unknown option '%s'",
                                                argv[optind - 1]);
                int r = apply_create_opt(c, optarg, o, is_run, argv[0], err);
                if (r < 0)
                        return r;
        }
        int r = opts_expect_args(argv[0], argc, argv, optind, 1, 1, err);
        if (r < 0)
                return r;
        o->id = argv[optind];
        o->listen_fds = listen_fds_from_env();
        return 0;
}

VERB(create)
{
        struct create_opts o;
        int r = parse_create(argc, argv, false, &o, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *bundle = NULL;
        if ((r = absolute_bundle(o.bundle, &bundle, err)) < 0)
                return r;
        o.bundle = bundle;
        r = container_create(&g->rt, &o, err);
        return r < 0 ? r : 0;
}

VERB(run)
{
        struct create_opts o;
        int r = parse_create(argc, argv, true, &o, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *bundle = NULL;
        int status = 0;
        if ((r = absolute_bundle(o.bundle, &bundle, err)) < 0)
                return r;
        o.bundle = bundle;
        r = container_run(&g->rt, &o, &status, err);
        return r < 0 ? r : status;
}

VERB(start)
{
        static const struct option none[] = {{0}};
        int r;
        if ((r = opts_parse_id_verb(argc, argv, none, "", 1, NULL, err)) < 0 ||
            (r = container_start(&g->rt, argv[optind], err)) < 0)
                return r;
        return 0;
}

VERB(kill)
{
        static const struct option longopts[] = {{"all", no_argument, NULL, 'a'}, {0}};
        bool all = false;
        int r = opts_parse_id_verb(argc, argv, longopts, "a", 2, &all, err);
        if (r < 0)
                return r;
        int sig = 15;
        const char *name = optind + 1 < argc ? argv[optind + 1] : NULL;
        if (name && umw_signal_parse(name, &sig) < 0)
                return opts_usage_error(err, "kill", "unknown signal '%s'", name);
        r = container_kill(&g->rt, argv[optind], sig, all, err);
        return r < 0 ? r : 0;
}

VERB(delete)
{
        static const struct option longopts[] = {{"force", no_argument, NULL, 'f'}, {0}};
        bool force = false;
        int r;
        if ((r = opts_parse_id_verb(argc, argv, longopts, "f", 1, &force, err)) < 0 ||
            (r = container_delete(&g->rt, argv[optind], force, err)) < 0)
                return r;
        return 0;
}
