/* umwelt-relay: the door through which a running sandbox asks for more
 * (face/relay.h). The face starts it detached when a sandbox starts and
 * none runs; it ends when no sandbox has been left for --idle seconds. */
#include "src/opts.h"
#include "face/relay.h"
#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: umwelt-relay [--timeout SECONDS] [--idle SECONDS]\n"
    "  --timeout  an unanswered request is denied after it (default 120)\n"
    "  --idle     with no sandbox left, end after it; 0: never (default 30)\n"
    "See umwelt-relay(1).\n";

static int parse(int argc, char **argv, struct relay_opts *o, bool *help, struct umw_error **err)
{
        static const struct option longopts[] = {
            {"timeout", required_argument, NULL, 't'},
            {"idle", required_argument, NULL, 'i'},
            {"help", no_argument, NULL, 'h'},
            {0},
        };
        opterr = 0;
        int c, r = 0;
        while (r >= 0 && (c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
                if (c == 't')
                        r = opts_parse_uint("--timeout", optarg, &o->timeout_s, err);
                else if (c == 'i')
                        r = opts_parse_uint("--idle", optarg, &o->idle_s, err);
                else if (c == 'h')
                        *help = true;
                else
                        return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                        "umwelt-relay: unknown option '%s'", argv[optind - 1]);
        }
        if (r >= 0 && optind < argc)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL, "umwelt-relay: unexpected '%s'",
                                argv[optind]);
        if (r >= 0 && o->timeout_s < 1)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "umwelt-relay: --timeout: expected at least 1 second");
        return r;
}

int main(int argc, char **argv)
{
        struct umw_error *err = NULL;
        umw_log_set_program("umwelt-relay");
        if (getuid() != geteuid() || getgid() != getegid()) {
                fputs("umwelt-relay: refusing to run setuid or setgid\n", stderr);
                return UMW_EXIT_FAILURE;
        }
        struct relay_opts o = {.timeout_s = 120, .idle_s = 30};
        bool help = false;
        int r = parse(argc, argv, &o, &help, &err);
        if (r >= 0 && help) {
                fputs(usage_text, stdout);
                return 0;
        }
        if (r >= 0)
                r = relay_serve(&o, &err);
        return r >= 0 ? 0 : umw_log_exit(err);
}
