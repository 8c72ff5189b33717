/* `umwelt-mcp install|uninstall HARNESS [--project DIR] [--dry-run]`: the
 * command line, the project, and the one error line. */
#include "mcp/install.h"
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: umwelt-mcp install|uninstall opencode|claude|codex [--project DIR] [--dry-run]\n"
    "Writes (or takes out again) the harness's configuration in DIR (default: the current\n"
    "directory) so that it runs umwelt-mcp and its own bash, edit and write are off.\n"
    "See umwelt-mcp(1), INSTALLING INTO HARNESSES.\n";

static int parse_args(int argc, char **argv, struct install_opts *o, struct umw_error **err)
{
        static const struct option longopts[] = {
            {"project", required_argument, NULL, 'p'},
            {"dry-run", no_argument, NULL, 'n'},
            {"help", no_argument, NULL, 'h'},
            {0},
        };
        *o = (struct install_opts){.project = "."};
        if (argc < 1 || (strcmp(argv[0], "install") != 0 && strcmp(argv[0], "uninstall") != 0))
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL, "expected install or uninstall");
        o->uninstall = strcmp(argv[0], "uninstall") == 0;
        optind = 1;
        opterr = 0;
        int c;
        while ((c = getopt_long(argc, argv, "p:nh", longopts, NULL)) != -1) {
                if (c == 'p')
                        o->project = optarg;
                else if (c == 'n')
                        o->dry_run = true;
                else if (c == 'h')
                        o->help = true;
                else
                        return umw_fail(err, UMW_EXIT_USAGE, EINVAL, "%s: %s '%s'", argv[0],
                                        c == ':' ? "option needs a value" : "unknown option",
                                        argv[optind - 1]);
        }
        if (o->help)
                return 0;
        if (optind + 1 != argc)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "%s: expected one harness (opencode, claude or codex)%s", argv[0],
                                optind < argc ? ", and nothing after it" : "");
        o->harness = argv[optind];
        return 0;
}

static bool utf8_text(const char *s)
{
        size_t n = strlen(s);
        for (size_t i = 0; i < n;) {
                uint32_t cp;
                size_t u = (unsigned char)s[i] < 0x80
                               ? 1
                               : umw_utf8_decode((const unsigned char *)s + i, n - i, &cp);
                if (!u)
                        return false;
                i += u;
        }
        return true;
}

/* The project's absolute path (links resolved: the server is started with
 * it) and its directory, opened. */
static int open_project(struct install_opts *o, struct umw_error **err)
{
        o->projfd = open(o->project, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (o->projfd < 0)
                return umw_fail(err, UMW_EXIT_USAGE, errno, "--project %s: %s", o->project,
                                strerror(errno));
        o->project_abs = realpath(o->project, NULL);
        if (!o->project_abs)
                return umw_fail_errno(err, "--project %s", o->project);
        if (!utf8_text(o->project_abs))
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "--project %s: a path that is not UTF-8 cannot be written into "
                                "a JSON or TOML file",
                                o->project);
        return 0;
}

static int run(int argc, char **argv, const char *self, struct install_opts *o,
               struct umw_error **err)
{
        int r = parse_args(argc, argv, o, err);
        if (r < 0 || o->help)
                return r;
        if (!self || self[0] != '/' || !utf8_text(self))
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                                "the path of umwelt-mcp itself is not an absolute UTF-8 path");
        o->self = self;
        if ((r = open_project(o, err)) < 0)
                return r;
        return o->uninstall ? install_undo(o, err) : install_do(o, err);
}

int mcp_install_main(int argc, char **argv, const char *self)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct install_opts o = {.projfd = -1};
        int r = run(argc, argv, self, &o, &err);
        if (o.projfd >= 0)
                close(o.projfd);
        free(o.project_abs);
        if (o.help) {
                fputs(usage_text, stdout);
                return 0;
        }
        if (fflush(stdout) != 0 && r == 0)
                r = umw_fail_errno(&err, "stdout");
        if (r < 0) {
                fprintf(stderr, "umwelt-mcp: %s\n", err ? err->msg : strerror(-r));
                return err ? (int)err->kind : UMW_EXIT_FAILURE;
        }
        return 0;
}
