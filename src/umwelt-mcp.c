/* umwelt-mcp: the MCP server whose tools act only inside the project's
 * sandbox (mcp/server.h), the worker it runs there (mcp/worker.h), and
 * its installer into agent harnesses. See umwelt-mcp(1). */
#include "src/opts.h"
#include "mcp/install.h"
#include "mcp/server.h"
#include "mcp/worker.h"
#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: umwelt-mcp [--project DIR] [--preset NAME] [--workspace review|direct]\n"
    "                  [--on-exit keep|down] [--root DIR]\n"
    "       umwelt-mcp install|uninstall opencode|claude|codex [--project DIR] [--dry-run]\n"
    "  Serves MCP on stdin and stdout; its tools act only inside the project's sandbox\n"
    "  (`umwelt-run sandbox up` on the first call).\n"
    "  --project    the project directory (default: the current one)\n"
    "  --preset     the sandbox's preset when it is brought up\n"
    "  --workspace  its workspace mode when it is brought up\n"
    "  --on-exit    what becomes of the sandbox when stdin ends (default keep)\n"
    "  --root       umwelt-run's state root (its --root)\n"
    "See umwelt-mcp(1).\n";

enum { OPT_PRESET = 256, OPT_WORKSPACE, OPT_ON_EXIT, OPT_ROOT };

struct parsed {
        struct mcp_server_opts o;
        const char *project;
        bool help;
};

static int apply(int c, const char *arg, struct parsed *p, struct umw_error **err)
{
        switch (c) {
        case 'p':
                p->project = arg;
                return 0;
        case OPT_PRESET:
                p->o.target.preset = arg;
                return 0;
        case OPT_WORKSPACE:
                if (strcmp(arg, "review") != 0 && strcmp(arg, "direct") != 0)
                        return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                        "--workspace %s: expected review or direct", arg);
                p->o.target.workspace = arg;
                return 0;
        case OPT_ON_EXIT:
                if (strcmp(arg, "keep") != 0 && strcmp(arg, "down") != 0)
                        return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                        "--on-exit %s: expected keep or down", arg);
                p->o.down_on_exit = arg[0] == 'd';
                return 0;
        case OPT_ROOT:
                p->o.target.root = arg;
                return 0;
        case 'h':
                p->help = true;
                return 0;
        default:
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL, "unknown option '%s'",
                                arg ? arg : "?");
        }
}

static int parse(int argc, char **argv, struct parsed *p, struct umw_error **err)
{
        static const struct option longopts[] = {
            {"project", required_argument, NULL, 'p'},
            {"preset", required_argument, NULL, OPT_PRESET},
            {"workspace", required_argument, NULL, OPT_WORKSPACE},
            {"on-exit", required_argument, NULL, OPT_ON_EXIT},
            {"root", required_argument, NULL, OPT_ROOT},
            {"help", no_argument, NULL, 'h'},
            {0},
        };
        opterr = 0;
        int c, r = 0;
        while (r >= 0 && (c = getopt_long(argc, argv, "+:p:h", longopts, NULL)) != -1)
                r = apply(c, c == '?' || c == ':' ? argv[optind - 1] : optarg, p, err);
        if (r >= 0 && optind < argc)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL, "unexpected '%s'", argv[optind]);
        return r;
}

/* The project as an absolute directory: what the harness's config and
 * umwelt-run are given. */
static int project_dir(struct parsed *p, char **out, struct umw_error **err)
{
        struct stat st;
        *out = realpath(p->project ? p->project : ".", NULL);
        if (!*out || stat(*out, &st) < 0 || !S_ISDIR(st.st_mode))
                return umw_fail(err, UMW_EXIT_USAGE, ENOENT, "--project %s: expected a directory",
                                p->project ? p->project : ".");
        return 0;
}

static int serve(int argc, char **argv, struct umw_error **err)
{
        struct parsed p = {0};
        char *project = NULL;
        int r = parse(argc, argv, &p, err);
        if (r >= 0 && p.help) {
                fputs(usage_text, stdout);
                return 0;
        }
        if (r >= 0 && (r = project_dir(&p, &project, err)) >= 0) {
                p.o.target.project = project;
                r = mcp_serve(&p.o, err);
        }
        free(project);
        return r;
}

/* The entry a harness starts names this binary by its real path. */
static int install(int argc, char **argv)
{
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n < 0) {
                perror("umwelt-mcp: /proc/self/exe");
                return UMW_EXIT_FAILURE;
        }
        self[n] = '\0';
        return mcp_install_main(argc, argv, self);
}

int main(int argc, char **argv)
{
        struct umw_error *err = NULL;
        umw_log_set_program("umwelt-mcp");
        if (getuid() != geteuid() || getgid() != getegid()) {
                fputs("umwelt-mcp: refusing to run setuid or setgid\n", stderr);
                return UMW_EXIT_FAILURE;
        }
        /* Inside the sandbox, exec'd by umwelt-mcp from its sealed copy. */
        if (argc == 2 && strcmp(argv[1], "worker") == 0)
                return mcp_worker_main();
        if (argc >= 2 && (strcmp(argv[1], "install") == 0 || strcmp(argv[1], "uninstall") == 0))
                return install(argc - 1, argv + 1);
        int r = serve(argc, argv, &err);
        return r >= 0 ? r : umw_log_exit(err);
}
