/* umwelt-run: the OCI runtime face. Parses the global options, hands the
 * rest to one verb, prints its error as one line, exits with its class. */
#include "src/verbs.h"
#include "runtime/init.h"
#include "common/error.h"
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct verb {
        const char *name;
        int (*run)(struct global_opts *, int, char **, struct umw_error **);
        const char *summary; /* one line of --help */
        const char *usage;   /* VERB --help */
};

static const struct verb verbs[] = {
    {"create", verb_create, "create a container from a bundle; it waits for start",
     "create [-b|--bundle DIR] [-f|--config FILE] [--pid-file FILE] [--console-socket PATH]\n"
     "       [--preserve-fds N] [--no-pivot] [--no-new-keyring] [--no-subreaper] ID"},
    {"run", verb_run, "create and start a container, wait for it, delete it",
     "run [-b|--bundle DIR] [-f|--config FILE] [--pid-file FILE] [--console-socket PATH]\n"
     "    [--preserve-fds N] [--no-pivot] [--no-new-keyring] [--no-subreaper]\n"
     "    [-d|--detach] [--keep] ID"},
    {"start", verb_start, "start a created container's process", "start ID"},
    {"kill", verb_kill, "send a signal to a container's process (or all with -a)",
     "kill [-a|--all] ID [SIGNAL]"},
    {"delete", verb_delete, "remove a created or stopped container (-f: any)",
     "delete [-f|--force] ID"},
    {"state", verb_state, "print a container's OCI state as JSON", "state ID"},
    {"list", verb_list, "list the containers under --root",
     "list [-q|--quiet] [--format table|json]"},
    {"ps", verb_ps, "print the host pids of a container's processes",
     "ps [--format table|json] ID"},
    {"pause", verb_pause, "freeze every process of a running container", "pause ID"},
    {"resume", verb_resume, "thaw a paused container", "resume ID"},
    {"update", verb_update, "change a container's cgroup limits",
     "update [-r|--resources FILE|-] [--memory BYTES] [--memory-swap BYTES]\n"
     "       [--memory-reservation BYTES] [--pids-limit N] [--cpu-quota USEC]\n"
     "       [--cpu-period USEC] [--cpu-share N] [--blkio-weight N] [--cpuset-cpus LIST]\n"
     "       [--cpuset-mems LIST] ID"},
    {"exec", verb_exec, "run a new process in a created or running container",
     "exec [-p|--process FILE] [-t|--tty] [-d|--detach] [--console-socket PATH]\n"
     "     [--pid-file FILE] [--cwd DIR] [-e|--env K=V]... [-u|--user UID[:GID]]\n"
     "     [-c|--cap CAP]... [--no-new-privs] [--preserve-fds N] ID [CMD [ARG...]]"},
    {"features", verb_features, "print the OCI features document as JSON", "features"},
    {"spec", verb_spec, "write a starting config.json into a bundle",
     "spec [--rootless] [-b|--bundle DIR]"},
    {"sandbox", verb_sandbox, "a project's closed sandbox (sub-verbs below)",
     "sandbox run [-p DIR] [--preset NAME] [--grant PATH[:ro|:rw]]... [--rootfs DIR] [--json]\n"
     "                -- CMD [ARG...]\n"
     "       sandbox up [-p DIR] [--preset NAME] [--grant PATH[:ro|:rw]]... [--rootfs DIR]\n"
     "                [--publish PORT]... [--json]\n"
     "       sandbox exec [-p DIR] [-t] [--cwd DIR] [--json] -- CMD [ARG...]\n"
     "       sandbox down|status|reload [-p DIR] [--json]\n"
     "       sandbox list [--json]\n"
     "       sandbox gc [--idle DURATION] [--json]\n"
     "       sandbox log [-p DIR] [--json]"},
    {"doctor", verb_doctor, "check this host for sandboxes (--deep: from inside one)",
     "doctor [--deep] [--json]"},
    {"policy", verb_policy, "look at the project's .umwelt.toml, accept it (until then unapplied)",
     "policy diff|accept [-p DIR]"},
    {"deliver", verb_deliver, "review what the agent changed, deliver it; quarantine direct mode's",
     "deliver review [-p DIR] [--since start|last|N] [--json]\n"
     "       deliver apply --branch NAME [--include PATH]... [-m TEXT] [-p DIR] [--json]\n"
     "       deliver sync [--include PATH]... [-p DIR] [--json]\n"
     "       deliver discard [-p DIR]\n"
     "       deliver quarantine [-p DIR]"},
    {"request", verb_request, "from inside a sandbox: ask the relay for more, wait for the answer",
     "request grant PATH [--rw] --why TEXT [--json]\n"
     "       request egress RULE --why TEXT [--json]\n"
     "       request ingress PORT --why TEXT [--json]\n"
     "       request action NAME [--param NAME=VALUE]... --why TEXT [--json]\n"
     "       request revoke PATH [--json]\n"
     "       request note TEXT [--json]\n"
     "       request status [--json]"},
    {"relay", verb_relay, "on the host: the requests sandboxes make, approved or denied",
     "relay pending [--json]\n"
     "       relay approve ID [--remember]\n"
     "       relay deny ID [--why TEXT]\n"
     "       relay watch\n"
     "       relay actions [--json]"},
};

static void print_help(void)
{
        printf("usage: umwelt-run [GLOBAL OPTIONS] VERB [OPTIONS] [ID] [ARGS]\n\nverbs:\n");
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
                printf("  %-16s %s\n", verbs[i].name, verbs[i].summary);
                if (verbs[i].run == verb_sandbox)
                        verb_sandbox_print_verbs();
        }
        printf("\n");
        opts_print_global_help();
        printf("\n'umwelt-run VERB --help' prints a verb's options. See umwelt-run(1) and "
               "umwelt.toml(5).\n");
}

static const struct verb *find_verb(const char *name)
{
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
                if (strcmp(verbs[i].name, name) == 0)
                        return &verbs[i];
        return NULL;
}

int main(int argc, char **argv)
{
        struct umw_error *err = NULL;
        struct global_opts g;
        int verb_index = 0;
        /* Installed setuid or setgid, the caller's environment, options and
         * files would steer a runtime holding ids it does not: never. */
        if (getuid() != geteuid() || getgid() != getegid()) {
                fputs("umwelt-run: refusing to run setuid or setgid (real and effective "
                      "ids differ): remove the file's setuid and setgid bits\n",
                      stderr);
                return UMW_EXIT_FAILURE;
        }
        /* A long-lived sandbox's PID 1 (runtime/init.h). */
        if (argc == 2 && strcmp(argv[0], INIT_PAUSE_ARGV0) == 0)
                init_pause_main(argv);
        if (opts_parse_global(argc, argv, &g, &verb_index, &err) < 0)
                return umw_log_exit(err);
        if (g.help) {
                print_help();
                free(g.root_alloc);
                return 0;
        }
        if (umw_log_open(g.log_path, g.log_json, g.debug, &err) < 0)
                return umw_log_exit(err);
        const struct verb *v = find_verb(argv[verb_index]);
        if (!v) {
                umw_fail(&err, UMW_EXIT_USAGE, 0, "unknown verb '%s' (see umwelt-run --help)",
                         argv[verb_index]);
                return umw_log_exit(err);
        }
        const char *first = verb_index + 1 < argc ? argv[verb_index + 1] : "";
        if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
                printf("usage: umwelt-run [GLOBAL OPTIONS] %s\nSee umwelt-run(1).\n", v->usage);
                free(g.root_alloc);
                return 0;
        }
        int status = v->run(&g, argc - verb_index, argv + verb_index, &err);
        free(g.root_alloc);
        if (status < 0)
                return umw_log_exit(err);
        return status;
}
