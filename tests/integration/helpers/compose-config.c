/* compose-config: prints the config.json policy/compose makes for a
 * workspace, so compose.sh can run it with the runtime.
 *
 * compose-config [-u UID] [-g GID] [-U] [-H HOME] [-n HOSTNAME] [-r ROOTFS]
 *                [-p PRESET] [-e NAME]... [-G PATH[:ro|:rw]]... WORKSPACE CMD [ARG...]
 *
 * -U gives a user namespace; -e passes a variable of the caller's
 * environment; -G grants a path (grant roots: all of /). The bundle is run
 * by another process, where compose's fds are gone: each bind source
 * /proc/self/fd/N is printed as the path that fd was opened on. */
#include "policy/compose.h"
#include "policy/grants.h"
#include "policy/presets.h"
#include "common/error.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LIST 32

extern char **environ;

struct opts {
        struct compose_input in;
        const char *preset;
        const char *extra[MAX_LIST + 1];
        struct grant_request grants[MAX_LIST];
        size_t n_extra, n_grants;
};

static void usage(void)
{
        fprintf(stderr, "usage: compose-config [-u UID] [-g GID] [-U] [-H HOME] [-n HOSTNAME] "
                        "[-r ROOTFS] [-p PRESET] [-e NAME]... [-G PATH[:ro|:rw]]... WORKSPACE "
                        "CMD [ARG...]\n");
        exit(2);
}

static void add_grant(struct opts *o, char *arg)
{
        if (o->n_grants == MAX_LIST)
                usage();
        char *colon = strrchr(arg, ':');
        if (colon)
                *colon = '\0';
        o->grants[o->n_grants++] =
            (struct grant_request){.path = arg, .mode = colon ? colon + 1 : NULL, .origin = "-G"};
}

static void parse(struct opts *o, int argc, char **argv)
{
        int c;
        while ((c = getopt(argc, argv, "+u:g:UH:n:r:p:e:G:")) != -1) {
                switch (c) {
                case 'u':
                        o->in.uid = (uid_t)strtoul(optarg, NULL, 10);
                        break;
                case 'g':
                        o->in.gid = (gid_t)strtoul(optarg, NULL, 10);
                        break;
                case 'U':
                        o->in.user_namespace = true;
                        break;
                case 'H':
                        o->in.home = optarg;
                        break;
                case 'n':
                        o->in.hostname = optarg;
                        break;
                case 'r':
                        o->in.rootfs = optarg;
                        break;
                case 'p':
                        o->preset = optarg;
                        break;
                case 'e':
                        if (o->n_extra == MAX_LIST)
                                usage();
                        o->extra[o->n_extra++] = optarg;
                        break;
                case 'G':
                        add_grant(o, optarg);
                        break;
                default:
                        usage();
                }
        }
        if (argc - optind < 2)
                usage();
        o->in.workspace = argv[optind];
        o->in.args = (const char *const *)&argv[optind + 1];
}

/* json with every "/proc/self/fd/N" of fds replaced by "PATH" of that fd. */
static char *sources_by_name(char *json, const struct compose_fds *fds)
{
        for (size_t i = 0; json && i < fds->n; i++) {
                char link[32], name[40], path[4096], *at;
                snprintf(link, sizeof(link), "/proc/self/fd/%d", fds->fd[i]);
                snprintf(name, sizeof(name), "\"%s\"", link);
                ssize_t n = readlink(link, path, sizeof(path) - 1);
                if (n < 0 || !(at = strstr(json, name)))
                        continue;
                path[n] = '\0';
                char *out = NULL;
                if (asprintf(&out, "%.*s\"%s\"%s", (int)(at - json), json, path,
                             at + strlen(name)) < 0)
                        out = NULL;
                free(json);
                json = out;
        }
        return json;
}

static int compose(struct opts *o, struct umw_error **err)
{
        struct machine_size m;
        struct preset preset;
        struct grant_list grants = {0};
        static const char *const roots[] = {"/", NULL}, *const never[] = {NULL};
        const struct grant_policy policy = {.roots = roots, .never = never};
        int r = presets_machine_size_read(&m, err);
        if (r >= 0)
                r = preset_resolve(o->preset, &m, &preset, err);
        if (r >= 0)
                r = grants_resolve(&policy, o->grants, o->n_grants, &grants, NULL, err);
        if (r < 0)
                return r;
        o->in.preset = &preset;
        o->in.grants = &grants;
        struct compose_fds fds = {0};
        o->in.fds = &fds;
        char *json = NULL;
        r = compose_config(&o->in, &json, err);
        grant_list_free(&grants);
        if (r >= 0 && !(json = sources_by_name(json, &fds)))
                r = umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
        compose_fds_close(&fds);
        if (r < 0)
                return r;
        r = puts(json) < 0 || fflush(stdout) != 0 ? umw_fail_errno(err, "write") : 0;
        free(json);
        return r;
}

int main(int argc, char **argv)
{
        struct opts o = {
            .in = {.uid = getuid(),
                   .gid = getgid(),
                   .home = "/home/sandbox",
                   .hostname = "umwelt-test",
                   .rootfs = "/",
                   .env = (const char *const *)environ},
            .preset = "dev",
        };
        parse(&o, argc, argv);
        o.in.env_extra = o.extra;
        struct umw_error *err = NULL;
        if (compose(&o, &err) < 0) {
                fprintf(stderr, "compose-config: %s\n", err->msg);
                umw_error_free(err);
                return 1;
        }
        return 0;
}
