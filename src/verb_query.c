/* state, list, ps, features, spec: the verbs that report and the one that
 * writes a starting config. */
#include "src/verbs.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

VERB(state)
{
        static const struct option none[] = {{0}};
        _cleanup_free_ char *json = NULL;
        int r;
        if ((r = opts_parse_id_verb(argc, argv, none, "", 1, NULL, err)) < 0 ||
            (r = container_state(&g->rt, argv[optind], &json, err)) < 0)
                return r;
        printf("%s\n", json);
        return 0;
}

static int parse_format(const char *verb, const char *v, bool *json, struct umw_error **err)
{
        if (strcmp(v, "json") == 0)
                *json = true;
        else if (strcmp(v, "table") == 0)
                *json = false;
        else
                return opts_usage_error(err, verb, "--format: expected table or json, got '%s'", v);
        return 0;
}

/* The table `list` prints, from the JSON array the runtime produced. */
static void print_list_table(const char *json, bool quiet)
{
        yajl_val arr = yajl_tree_parse(json, NULL, 0);
        if (!quiet)
                printf("%-24s %-8s %-10s %-40s %-32s %s\n", "ID", "PID", "STATUS", "BUNDLE",
                       "CREATED", "OWNER");
        for (size_t i = 0; arr && i < arr->u.array.len; i++) {
                yajl_val c = arr->u.array.values[i];
                const char *id = YAJL_GET_STRING(umw_json_member(c, "id"));
                if (quiet) {
                        printf("%s\n", id);
                        continue;
                }
                printf("%-24s %-8lld %-10s %-40s %-32s %lld\n", id,
                       YAJL_GET_INTEGER(umw_json_member(c, "pid")),
                       YAJL_GET_STRING(umw_json_member(c, "status")),
                       YAJL_GET_STRING(umw_json_member(c, "bundle")),
                       YAJL_GET_STRING(umw_json_member(c, "created")),
                       YAJL_GET_INTEGER(umw_json_member(c, "owner")));
        }
        yajl_tree_free(arr);
}

VERB(list)
{
        static const struct option longopts[] = {
            {"quiet", no_argument, NULL, 'q'}, {"format", required_argument, NULL, 'F'}, {0}};
        bool quiet = false, json = false;
        optind = 1;
        int c, r;
        while ((c = getopt_long(argc, argv, "qf:", longopts, NULL)) != -1) {
                if (c == 'q')
                        quiet = true;
                else if (c == 'F' || c == 'f') {
                        if ((r = parse_format(argv[0], optarg, &json, err)) < 0)
                                return r;
                } else
                        return opts_usage_error(err, argv[0], "unknown option '%s'",
                                                argv[optind - 1]);
        }
        if ((r = opts_expect_args(argv[0], argc, argv, optind, 0, 0, err)) < 0)
                return r;
        _cleanup_free_ char *text = NULL;
        if ((r = container_list(&g->rt, json, &text, err)) < 0)
                return r;
        if (json && !quiet)
                printf("%s\n", text);
        else
                print_list_table(text, quiet);
        return 0;
}

VERB(ps)
{
        static const struct option longopts[] = {{"format", required_argument, NULL, 'F'}, {0}};
        bool json = false;
        optind = 1;
        int c, r;
        while ((c = getopt_long(argc, argv, "f:", longopts, NULL)) != -1) {
                if (c != 'F' && c != 'f')
                        return opts_usage_error(err, argv[0], "unknown option '%s'",
                                                argv[optind - 1]);
                if ((r = parse_format(argv[0], optarg, &json, err)) < 0)
                        return r;
        }
        if ((r = opts_expect_args(argv[0], argc, argv, optind, 1, 1, err)) < 0)
                return r;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        if ((r = container_pids(&g->rt, argv[optind], &pids, &n, err)) < 0)
                return r;
        if (!json)
                printf("PID\n");
        else
                printf("[");
        for (size_t i = 0; i < n; i++)
                printf(json ? "%s%d" : "%.0s%d\n", i ? "," : "", pids[i]);
        if (json)
                printf("]\n");
        return 0;
}

VERB(features)
{
        if (argc > 1)
                return opts_usage_error(err, argv[0], "unexpected argument '%s'", argv[1]);
        fputs("{\n"
              "  \"ociVersionMin\": \"1.0.0\",\n"
              "  \"ociVersionMax\": \"1.1.0\",\n"
              "  \"hooks\": [\"prestart\", \"createRuntime\", \"createContainer\", "
              "\"startContainer\", \"poststart\", \"poststop\"],\n"
              "  \"mountOptions\": [\"async\", \"atime\", \"bind\", \"defaults\", \"dev\", "
              "\"diratime\", \"dirsync\", \"exec\", \"idmap\", \"mand\", \"noatime\", \"nodev\", "
              "\"nodiratime\", \"noexec\", \"nomand\", \"norelatime\", \"nostrictatime\", "
              "\"nosuid\", \"nosymfollow\", \"private\", \"rbind\", \"relatime\", \"remount\", "
              "\"ridmap\", \"ro\", \"rprivate\", \"rshared\", \"rslave\", \"runbindable\", \"rw\", "
              "\"shared\", \"slave\", \"strictatime\", \"suid\", \"sync\", \"unbindable\"],\n"
              "  \"linux\": {\n"
              "    \"namespaces\": [\"cgroup\", \"ipc\", \"mount\", \"network\", \"pid\", "
              "\"time\", \"user\", \"uts\"],\n"
              "    \"capabilities\": \"all known to libcap\",\n"
              "    \"cgroup\": {\"v1\": true, \"v2\": true, \"systemd\": false},\n"
              "    \"seccomp\": {\"enabled\": true, \"actions\": [\"SCMP_ACT_ALLOW\", "
              "\"SCMP_ACT_ERRNO\", \"SCMP_ACT_KILL\", \"SCMP_ACT_KILL_PROCESS\", "
              "\"SCMP_ACT_KILL_THREAD\", \"SCMP_ACT_LOG\", \"SCMP_ACT_TRACE\", "
              "\"SCMP_ACT_TRAP\"], \"operators\": [\"SCMP_CMP_EQ\", \"SCMP_CMP_GE\", "
              "\"SCMP_CMP_GT\", \"SCMP_CMP_LE\", \"SCMP_CMP_LT\", \"SCMP_CMP_MASKED_EQ\", "
              "\"SCMP_CMP_NE\"]},\n"
              "    \"apparmor\": {\"enabled\": false},\n"
              "    \"selinux\": {\"enabled\": false},\n"
              "    \"mountExtensions\": {\"idmap\": {\"enabled\": true}}\n"
              "  },\n"
              "  \"annotations\": {\"run.umwelt.runtime\": \"umwelt-run\"}\n"
              "}\n",
              stdout);
        return 0;
}

/* The starting config `spec` writes: runc's shape, a shell in a busybox-like
 * rootfs with the default capabilities. */
static const char spec_template[] =
    "{\n"
    "  \"ociVersion\": \"1.0.2\",\n"
    "  \"process\": {\n"
    "    \"terminal\": true,\n"
    "    \"user\": {\"uid\": 0, \"gid\": 0},\n"
    "    \"args\": [\"sh\"],\n"
    "    \"env\": [\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\", "
    "\"TERM=xterm\"],\n"
    "    \"cwd\": \"/\",\n"
    "    \"capabilities\": {\n"
    "      \"bounding\": [\"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\"],\n"
    "      \"effective\": [\"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\"],\n"
    "      \"permitted\": [\"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\"]\n"
    "    },\n"
    "    \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 1024, \"soft\": 1024}],\n"
    "    \"noNewPrivileges\": true\n"
    "  },\n"
    "  \"root\": {\"path\": \"rootfs\", \"readonly\": true},\n"
    "  \"hostname\": \"umwelt\",\n"
    "  \"mounts\": [\n"
    "    {\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"},\n"
    "    {\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", "
    "\"options\": [\"nosuid\", \"strictatime\", \"mode=755\", \"size=65536k\"]},\n"
    "    {\"destination\": \"/dev/pts\", \"type\": \"devpts\", \"source\": \"devpts\", "
    "\"options\": [\"nosuid\", \"noexec\", \"newinstance\", \"ptmxmode=0666\", "
    "\"mode=0620\"%s]},\n"
    "    {\"destination\": \"/dev/shm\", \"type\": \"tmpfs\", \"source\": \"shm\", "
    "\"options\": [\"nosuid\", \"noexec\", \"nodev\", \"mode=1777\", \"size=65536k\"]},\n"
    "    {\"destination\": \"/dev/mqueue\", \"type\": \"mqueue\", \"source\": \"mqueue\", "
    "\"options\": [\"nosuid\", \"noexec\", \"nodev\"]},\n"
    "    %s\n"
    "  ],\n"
    "  \"linux\": {\n"
    "%s"
    "    \"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"}, "
    "{\"type\": \"mount\"}, {\"type\": \"cgroup\"}, %s],\n"
    "    \"maskedPaths\": [\"/proc/acpi\", \"/proc/asound\", \"/proc/kcore\", "
    "\"/proc/keys\", \"/proc/latency_stats\", \"/proc/timer_list\", \"/proc/timer_stats\", "
    "\"/proc/sched_debug\", \"/sys/firmware\", \"/proc/scsi\"],\n"
    "    \"readonlyPaths\": [\"/proc/bus\", \"/proc/fs\", \"/proc/irq\", \"/proc/sys\", "
    "\"/proc/sysrq-trigger\"]\n"
    "  }\n"
    "}\n";

static char *render_spec(bool rootless)
{
        char *text = NULL, *maps = NULL;
        if (rootless && asprintf(&maps,
                                 "    \"uidMappings\": [{\"containerID\": 0, \"hostID\": %u, "
                                 "\"size\": 1}],\n"
                                 "    \"gidMappings\": [{\"containerID\": 0, \"hostID\": %u, "
                                 "\"size\": 1}],\n",
                                 geteuid(), getegid()) < 0)
                return NULL;
        /* Rootless: no gid=5 on devpts (unmapped), /sys bound from the host
         * (a new sysfs needs a network namespace we own), a user namespace. */
        const char *sys = rootless ? "{\"destination\": \"/sys\", \"type\": \"none\", \"source\": "
                                     "\"/sys\", \"options\": [\"rbind\", \"nosuid\", \"noexec\", "
                                     "\"nodev\", \"ro\"]}"
                                   : "{\"destination\": \"/sys\", \"type\": \"sysfs\", "
                                     "\"source\": \"sysfs\", \"options\": [\"nosuid\", "
                                     "\"noexec\", \"nodev\", \"ro\"]}";
        int n =
            asprintf(&text, spec_template, rootless ? "" : ", \"gid=5\"", sys, rootless ? maps : "",
                     rootless ? "{\"type\": \"user\"}" : "{\"type\": \"network\"}");
        free(maps);
        return n < 0 ? NULL : text;
}

VERB(spec)
{
        static const struct option longopts[] = {
            {"rootless", no_argument, NULL, 'r'}, {"bundle", required_argument, NULL, 'b'}, {0}};
        bool rootless = false;
        const char *bundle = ".";
        optind = 1;
        int c;
        while ((c = getopt_long(argc, argv, "b:", longopts, NULL)) != -1) {
                if (c == 'r')
                        rootless = true;
                else if (c == 'b')
                        bundle = optarg;
                else
                        return opts_usage_error(err, argv[0], "unknown option '%s'",
                                                argv[optind - 1]);
        }
        int r = opts_expect_args(argv[0], argc, argv, optind, 0, 0, err);
        if (r < 0)
                return r;
        _cleanup_close_ int dirfd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return umw_fail_errno(err, "spec: bundle %s", bundle);
        if (faccessat(dirfd, "config.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                return umw_fail(err, UMW_EXIT_EXISTS, EEXIST,
                                "spec: %s/config.json exists already: remove it first", bundle);
        _cleanup_free_ char *text = render_spec(rootless);
        if (!text)
                return umw_fail_sys(err, ENOMEM, "spec");
        r = umw_write_file_atomic(dirfd, "config.json", text, strlen(text), 0644, err);
        return r < 0 ? r : 0;
}
