#include "runtime/spec.h"
#include "runtime/namespaces.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <unistd.h>

#define FIXTURE "podman-4.3-config.json"

static void fixture_path(char *buf, size_t size)
{
        const char *srcdir = getenv("UMW_SRCDIR");
        if (srcdir) {
                snprintf(buf, size, "%s/tests/fixtures/" FIXTURE, srcdir);
                return;
        }
        char here[PATH_MAX];
        snprintf(here, sizeof(here), "%s", __FILE__);
        snprintf(buf, size, "%s/../fixtures/" FIXTURE, dirname(here));
}

static struct spec *load_fixture(void)
{
        char path[PATH_MAX];
        struct spec *spec = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        fixture_path(path, sizeof(path));
        cr_assert_eq(access(path, R_OK), 0, "fixture %s is missing", path);
        int r = spec_load_file(path, &spec, &err);
        cr_assert_eq(r, 0, "loading %s: %s", path, err ? err->msg : "?");
        return spec;
}

static struct spec *load_ok(const char *text)
{
        struct spec *spec = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        int r = spec_load(text, "config.json", &spec, &err);
        cr_assert_eq(r, 0, "%s: %s", text, err ? err->msg : "?");
        cr_assert_null(err);
        return spec;
}

static bool has_cap(uint64_t mask, int cap)
{
        return mask & (UINT64_C(1) << cap);
}

Test(spec, podman_fixture_top_level)
{
        struct spec *spec = load_fixture();
        cr_assert_str_eq(spec->oci_version, "1.0.2-dev");
        cr_assert_str_eq(spec->root_path,
                         "/var/lib/containers/storage/overlay/"
                         "cdf3f8bbe24075ef51279e4d74514907b558193ab259c1630c0437bc1afb67d3/merged");
        cr_assert_not(spec->root_readonly);
        cr_assert_str_eq(spec->hostname, "0aee2b62014a");
        cr_assert_null(spec->domainname);
        cr_assert_eq(spec->n_annotations, 8);
        cr_assert_str_eq(spec_annotation(spec, "io.container.manager"), "libpod");
        cr_assert_str_eq(spec_annotation(spec, "org.opencontainers.image.stopSignal"), "15");
        cr_assert_null(spec_annotation(spec, "run.umwelt.net"));
        for (int kind = 0; kind < SPEC_HOOK_COUNT; kind++)
                cr_assert_eq(spec->hooks[kind].count, 0);
        spec_free(spec);
}

Test(spec, podman_fixture_process)
{
        struct spec *spec = load_fixture();
        struct spec_process *p = &spec->process;
        cr_assert_not_null(p->args);
        cr_assert_str_eq(p->args[0], "echo");
        cr_assert_str_eq(p->args[1], "hi");
        cr_assert_null(p->args[2]);
        cr_assert_str_eq(p->env[2], "container=podman");
        cr_assert_null(p->env[5]);
        cr_assert_str_eq(p->cwd, "/");
        cr_assert_not(p->terminal);
        cr_assert_eq(p->uid, 0);
        cr_assert_eq(p->gid, 0);
        cr_assert(p->has_umask);
        cr_assert_eq(p->umask, 022);
        cr_assert_eq(p->n_additional_gids, 0);
        cr_assert(p->has_caps);
        cr_assert(has_cap(p->caps.bounding, CAP_CHOWN));
        cr_assert(has_cap(p->caps.bounding, CAP_SYS_CHROOT));
        cr_assert_not(has_cap(p->caps.bounding, CAP_SYS_ADMIN));
        cr_assert_eq(p->caps.effective, p->caps.bounding);
        cr_assert_eq(p->caps.permitted, p->caps.bounding);
        cr_assert_eq(__builtin_popcountll(p->caps.bounding), 14);
        cr_assert_eq(p->caps.inheritable, 0);
        cr_assert_eq(p->caps.ambient, 0);
        cr_assert_eq(p->n_rlimits, 2);
        cr_assert_eq(p->rlimits[0].resource, RLIMIT_NOFILE);
        cr_assert_eq(p->rlimits[0].soft, 20000);
        cr_assert_eq(p->rlimits[1].resource, RLIMIT_NPROC);
        cr_assert_eq(p->rlimits[1].hard, 32768);
        cr_assert_not(p->no_new_privileges);
        cr_assert_not(p->has_oom_score_adj);
        spec_free(spec);
}

Test(spec, podman_fixture_mounts)
{
        struct spec *spec = load_fixture();
        cr_assert_eq(spec->n_mounts, 10);
        cr_assert_str_eq(spec->mounts[0].destination, "/proc");
        cr_assert_str_eq(spec->mounts[0].type, "proc");
        cr_assert_str_eq(spec->mounts[0].source, "proc");
        cr_assert_eq(spec->mounts[0].n_options, 3);
        cr_assert_str_eq(spec->mounts[0].options[2], "nodev");
        cr_assert_null(spec->mounts[0].options[3]);
        cr_assert_str_eq(spec->mounts[3].destination, "/dev/pts");
        cr_assert_eq(spec->mounts[3].n_options, 6);
        cr_assert_str_eq(spec->mounts[3].options[5], "gid=5");
        cr_assert_str_eq(spec->mounts[9].destination, "/sys/fs/cgroup");
        cr_assert_str_eq(spec->mounts[9].options[5], "ro");
        spec_free(spec);
}

Test(spec, podman_fixture_linux)
{
        struct spec *spec = load_fixture();
        cr_assert(spec->namespaces[SPEC_NS_PID].enabled);
        cr_assert(spec->namespaces[SPEC_NS_NET].enabled);
        cr_assert(spec->namespaces[SPEC_NS_IPC].enabled);
        cr_assert(spec->namespaces[SPEC_NS_UTS].enabled);
        cr_assert(spec->namespaces[SPEC_NS_MOUNT].enabled);
        cr_assert_not(spec->namespaces[SPEC_NS_USER].enabled);
        cr_assert_not(spec->namespaces[SPEC_NS_CGROUP].enabled);
        cr_assert_not(spec->namespaces[SPEC_NS_TIME].enabled);
        cr_assert_null(spec->namespaces[SPEC_NS_NET].path);
        cr_assert_str_eq(spec->cgroups_path,
                         "/libpod_parent/"
                         "libpod-0aee2b62014a21666e9c29b1d5dda9c51803d355d62622ed8ed1e4b5855603b5");
        cr_assert(YAJL_IS_OBJECT(spec->resources));
        const char *pids_limit[] = {"pids", "limit", NULL};
        yajl_val limit = yajl_tree_get(spec->resources, pids_limit, yajl_t_number);
        cr_assert_not_null(limit);
        cr_assert_eq(YAJL_GET_INTEGER(limit), 2048);
        cr_assert_eq(spec->n_masked_paths, 11);
        cr_assert_str_eq(spec->masked_paths[10], "/sys/dev/block");
        cr_assert_eq(spec->n_readonly_paths, 6);
        cr_assert_str_eq(spec->readonly_paths[5], "/proc/sysrq-trigger");
        cr_assert_null(spec->rootfs_propagation);
        cr_assert_eq(spec->n_devices, 0);
        cr_assert_eq(spec->n_uid_mappings, 0);
        spec_free(spec);
}

Test(spec, podman_fixture_seccomp)
{
        struct spec *spec = load_fixture();
        struct spec_seccomp *sc = spec->seccomp;
        cr_assert_not_null(sc);
        cr_assert_eq(sc->default_action, SPEC_SCMP_ERRNO);
        cr_assert(sc->has_default_errno_ret);
        cr_assert_eq(sc->default_errno_ret, 38);
        cr_assert_eq(sc->n_architectures, 3);
        cr_assert_str_eq(sc->architectures[0], "SCMP_ARCH_X86_64");
        cr_assert_eq(sc->n_flags, 0);
        cr_assert_eq(sc->n_rules, 19);
        cr_assert_eq(sc->rules[0].action, SPEC_SCMP_ERRNO);
        cr_assert(sc->rules[0].has_errno_ret);
        cr_assert_eq(sc->rules[0].errno_ret, 1);
        cr_assert_str_eq(sc->rules[0].names[0], "bdflush");
        cr_assert_eq(sc->rules[1].action, SPEC_SCMP_ALLOW);
        cr_assert_not(sc->rules[1].has_errno_ret);
        struct spec_seccomp_rule *personality = &sc->rules[6];
        cr_assert_str_eq(personality->names[0], "personality");
        cr_assert_eq(personality->n_args, 1);
        cr_assert_eq(personality->args[0].index, 0);
        cr_assert_eq(personality->args[0].value, 4294967295u);
        cr_assert_eq(personality->args[0].op, SPEC_SCMP_CMP_EQ);
        spec_free(spec);
}

static const char full_config[] =
    "{\"ociVersion\":\"1.1.0\",\"root\":{\"path\":\"rootfs\",\"readonly\":true},"
    "\"hostname\":\"h\",\"domainname\":\"example.org\",\"futureKey\":{\"x\":1},"
    "\"process\":{\"terminal\":true,\"consoleSize\":{\"height\":24,\"width\":80},"
    "\"user\":{\"uid\":1000,\"gid\":100,\"additionalGids\":[10,4294967295]},"
    "\"args\":[\"sh\"],\"cwd\":\"/home/u\",\"apparmorProfile\":\"x\",\"selinuxLabel\":\"y\","
    "\"capabilities\":{\"ambient\":[\"CAP_NET_BIND_SERVICE\"],\"bounding\":[\"CAP_KILL\"]},"
    "\"rlimits\":[{\"type\":\"RLIMIT_CORE\",\"soft\":0,\"hard\":18446744073709551615}],"
    "\"noNewPrivileges\":true,\"oomScoreAdj\":-1000,\"scheduler\":{\"policy\":\"x\"}},"
    "\"mounts\":[{\"destination\":\"/w\",\"source\":\"/src\",\"options\":[\"rbind\"]}],"
    "\"hooks\":{\"prestart\":[{\"path\":\"/bin/a\"}],"
    "\"poststop\":[{\"path\":\"/bin/b\",\"args\":[\"b\",\"-x\"],\"env\":[\"A=1\"],"
    "\"timeout\":5}]},"
    "\"linux\":{\"namespaces\":[{\"type\":\"user\"},{\"type\":\"network\",\"path\":"
    "\"/run/netns/umwelt-unit\"},{\"type\":\"time\"}],"
    "\"uidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":1}],"
    "\"gidMappings\":[{\"containerID\":0,\"hostID\":100,\"size\":1},"
    "{\"containerID\":1,\"hostID\":100000,\"size\":65536}],"
    "\"devices\":[{\"path\":\"/dev/fuse\",\"type\":\"c\",\"major\":10,\"minor\":229,"
    "\"fileMode\":438,\"uid\":0,\"gid\":0},{\"path\":\"/dev/p\",\"type\":\"p\"}],"
    "\"sysctl\":{\"net.ipv4.ip_forward\":\"1\"},\"rootfsPropagation\":\"rslave\","
    "\"timeOffsets\":{\"monotonic\":{\"secs\":-5,\"nanosecs\":7},\"boottime\":{\"secs\":9}},"
    "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_KILL_PROCESS\",\"flags\":"
    "[\"SECCOMP_FILTER_FLAG_LOG\"],\"syscalls\":[{\"names\":[\"ioctl\"],\"action\":"
    "\"SCMP_ACT_NOTIFY\",\"args\":[{\"index\":5,\"value\":9223372036854775808,\"valueTwo\":3,"
    "\"op\":\"SCMP_CMP_MASKED_EQ\"}]}]},\"personality\":{\"domain\":\"LINUX\"}}}";

Test(spec, full_config_process)
{
        struct spec *spec = load_ok(full_config);
        struct spec_process *p = &spec->process;
        cr_assert(spec->root_readonly);
        cr_assert_str_eq(spec->domainname, "example.org");
        cr_assert(p->terminal);
        cr_assert_eq(p->console_height, 24);
        cr_assert_eq(p->console_width, 80);
        cr_assert_eq(p->uid, 1000);
        cr_assert_eq(p->gid, 100);
        cr_assert_not(p->has_umask);
        cr_assert_eq(p->n_additional_gids, 2);
        cr_assert_eq(p->additional_gids[1], UINT32_MAX);
        cr_assert_not_null(p->env);
        cr_assert_null(p->env[0]);
        cr_assert_eq(p->caps.ambient, UINT64_C(1) << CAP_NET_BIND_SERVICE);
        cr_assert_eq(p->caps.bounding, UINT64_C(1) << CAP_KILL);
        cr_assert_eq(p->caps.effective, 0);
        cr_assert_eq(p->rlimits[0].resource, RLIMIT_CORE);
        cr_assert_eq(p->rlimits[0].hard, UINT64_MAX);
        cr_assert(p->no_new_privileges);
        cr_assert(p->has_oom_score_adj);
        cr_assert_eq(p->oom_score_adj, -1000);
        cr_assert_null(spec->mounts[0].type);
        cr_assert_str_eq(spec->mounts[0].source, "/src");
        spec_free(spec);
}

Test(spec, full_config_hooks)
{
        struct spec *spec = load_ok(full_config);
        cr_assert_eq(spec->hooks[SPEC_HOOK_PRESTART].count, 1);
        cr_assert_str_eq(spec->hooks[SPEC_HOOK_PRESTART].list[0].path, "/bin/a");
        cr_assert_null(spec->hooks[SPEC_HOOK_PRESTART].list[0].args);
        cr_assert_eq(spec->hooks[SPEC_HOOK_PRESTART].list[0].timeout, 0);
        struct spec_hook *h = &spec->hooks[SPEC_HOOK_POSTSTOP].list[0];
        cr_assert_str_eq(h->args[1], "-x");
        cr_assert_null(h->args[2]);
        cr_assert_str_eq(h->env[0], "A=1");
        cr_assert_eq(h->timeout, 5);
        cr_assert_eq(spec->hooks[SPEC_HOOK_CREATE_RUNTIME].count, 0);
        spec_free(spec);
}

Test(spec, full_config_linux)
{
        struct spec *spec = load_ok(full_config);
        cr_assert(spec->namespaces[SPEC_NS_USER].enabled);
        cr_assert(spec->namespaces[SPEC_NS_TIME].enabled);
        cr_assert_not(spec->namespaces[SPEC_NS_MOUNT].enabled);
        cr_assert_str_eq(spec->namespaces[SPEC_NS_NET].path, "/run/netns/umwelt-unit");
        cr_assert_eq(spec->n_uid_mappings, 1);
        cr_assert_eq(spec->uid_mappings[0].host_id, 1000);
        cr_assert_eq(spec->n_gid_mappings, 2);
        cr_assert_eq(spec->gid_mappings[1].container_id, 1);
        cr_assert_eq(spec->gid_mappings[1].size, 65536);
        cr_assert_eq(spec->n_devices, 2);
        cr_assert_eq(spec->devices[0].type, 'c');
        cr_assert_eq(spec->devices[0].major, 10);
        cr_assert_eq(spec->devices[0].minor, 229);
        cr_assert(spec->devices[0].has_file_mode);
        cr_assert_eq(spec->devices[0].file_mode, 0666);
        cr_assert(spec->devices[0].has_uid);
        cr_assert_eq(spec->devices[1].type, 'p');
        cr_assert_not(spec->devices[1].has_file_mode);
        cr_assert_eq(spec->n_sysctl, 1);
        cr_assert_str_eq(spec->sysctl[0].key, "net.ipv4.ip_forward");
        cr_assert_str_eq(spec->sysctl[0].value, "1");
        cr_assert_str_eq(spec->rootfs_propagation, "rslave");
        cr_assert_eq(spec->time_offset_monotonic_secs, -5);
        cr_assert_eq(spec->time_offset_monotonic_nsecs, 7);
        cr_assert_eq(spec->time_offset_boottime_secs, 9);
        cr_assert_eq(spec->time_offset_boottime_nsecs, 0);
        cr_assert_null(spec->resources);
        spec_free(spec);
}

Test(spec, full_config_seccomp)
{
        struct spec *spec = load_ok(full_config);
        struct spec_seccomp *sc = spec->seccomp;
        cr_assert_eq(sc->default_action, SPEC_SCMP_KILL_PROCESS);
        cr_assert_not(sc->has_default_errno_ret);
        cr_assert_eq(sc->n_architectures, 0);
        cr_assert_str_eq(sc->flags[0], "SECCOMP_FILTER_FLAG_LOG");
        cr_assert_eq(sc->rules[0].action, SPEC_SCMP_NOTIFY);
        cr_assert_eq(sc->rules[0].args[0].index, 5);
        cr_assert_eq(sc->rules[0].args[0].value, UINT64_C(9223372036854775808));
        cr_assert_eq(sc->rules[0].args[0].value_two, 3);
        cr_assert_eq(sc->rules[0].args[0].op, SPEC_SCMP_CMP_MASKED_EQ);
        spec_free(spec);
}

Test(spec, device_path_trailing_slashes_go)
{
        struct spec *spec = load_ok("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},"
                                    "\"linux\":{\"devices\":[{\"path\":\"/mnt//\",\"type\":\"b\","
                                    "\"major\":10,\"minor\":229}]}}");
        cr_assert_str_eq(spec->devices[0].path, "/mnt");
        spec_free(spec);
}

Test(spec, minimal_config_without_process)
{
        struct spec *spec =
            load_ok("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"rootfs\"},\"linux\":{}}");
        cr_assert_null(spec->process.args);
        cr_assert_null(spec->seccomp);
        cr_assert_eq(spec->n_mounts, 0);
        for (int ns = 0; ns < SPEC_NS_COUNT; ns++)
                cr_assert_not(spec->namespaces[ns].enabled);
        spec_free(spec);
}

struct bad_case {
        const char *json;
        const char *message;
};

#define BASE       "\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"}"
#define PROC(x)    "{" BASE ",\"process\":{\"args\":[\"a\"],\"cwd\":\"/\"," x "}}"
#define LINUX(x)   "{" BASE ",\"linux\":{" x "}}"
#define SECCOMP(x) LINUX("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\"," x "}")
#define RULE(x)    SECCOMP("\"syscalls\":[{\"names\":[\"read\"]," x "}]")

static const struct bad_case bad_cases[] = {
    {"{\"root\":{\"path\":\"r\"}}", ".ociVersion: expected a string"},
    {"{\"ociVersion\":1,\"root\":{\"path\":\"r\"}}", ".ociVersion: expected a string"},
    {"[]", ".: expected an object"},
    {"{\"ociVersion\":\"1\"}", ".root: expected an object"},
    {"{\"ociVersion\":\"1\",\"root\":{\"path\":\"r\",\"readonly\":1}}",
     ".root.readonly: expected true or false"},
    {"{" BASE ",\"process\":{\"cwd\":\"/\"}}",
     ".process.args: expected a non-empty array of strings"},
    {"{" BASE ",\"process\":{\"args\":[],\"cwd\":\"/\"}}",
     ".process.args: expected a non-empty array of strings"},
    {"{" BASE ",\"process\":{\"args\":[\"a\",2],\"cwd\":\"/\"}}",
     ".process.args[1]: expected a string"},
    {"{" BASE ",\"process\":{\"args\":[\"a\"],\"cwd\":\"tmp\"}}",
     ".process.cwd: expected an absolute path"},
    {"{" BASE ",\"process\":{\"args\":[\"a\"]}}", ".process.cwd: expected an absolute path"},
    {PROC("\"user\":{\"uid\":-1}"), ".process.user.uid: expected an integer from 0 to 4294967295"},
    {PROC("\"user\":{\"gid\":4294967296}"),
     ".process.user.gid: expected an integer from 0 to 4294967295"},
    {PROC("\"user\":{\"additionalGids\":[1,\"x\"]}"),
     ".process.user.additionalGids[1]: expected an integer from 0 to 4294967295"},
    {PROC("\"env\":\"PATH=/bin\""), ".process.env: expected an array of strings"},
    {PROC("\"terminal\":\"yes\""), ".process.terminal: expected true or false"},
    {PROC("\"consoleSize\":{\"height\":1}"),
     ".process.consoleSize.width: expected an integer from 0 to 65535"},
    {PROC("\"capabilities\":{\"effective\":[\"CAP_CHOWN\",\"CAP_FLY\"]}"),
     ".process.capabilities.effective[1]: expected a capability name, not \"CAP_FLY\""},
    {PROC("\"capabilities\":{\"ambient\":\"CAP_CHOWN\"}"),
     ".process.capabilities.ambient: expected an array"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_FOO\",\"soft\":1,\"hard\":1}]"),
     ".process.rlimits[0].type: expected one of RLIMIT_AS, "},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":-1,\"hard\":1}]"),
     ".process.rlimits[0].soft: expected an unsigned 64-bit integer"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":1}]"),
     ".process.rlimits[0].hard: expected an unsigned 64-bit integer"},
    {PROC("\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":1,\"hard\":1},"
          "{\"type\":\"RLIMIT_NOFILE\",\"soft\":2,\"hard\":2}]"),
     ".process.rlimits[1].type: expected each type once, \"RLIMIT_NOFILE\" is listed twice"},
    {PROC("\"oomScoreAdj\":1001"), ".process.oomScoreAdj: expected an integer from -1000 to 1000"},
    {PROC("\"noNewPrivileges\":null,\"oomScoreAdj\":1.5"),
     ".process.oomScoreAdj: expected an integer from -1000 to 1000"},
    {"{" BASE ",\"hostname\":[]}", ".hostname: expected a string"},
    {"{" BASE ",\"mounts\":[{\"destination\":\"/a\"},{\"destination\":\"b\"}]}",
     ".mounts[1].destination: expected an absolute path"},
    {"{" BASE ",\"mounts\":[{\"destination\":\"/a\",\"options\":[true]}]}",
     ".mounts[0].options[0]: expected a string"},
    {"{" BASE ",\"mounts\":{}}", ".mounts: expected an array"},
    {"{" BASE ",\"hooks\":{\"poststart\":[{\"path\":\"hook\"}]}}",
     ".hooks.poststart[0].path: expected an absolute path"},
    {"{" BASE ",\"hooks\":{\"createRuntime\":[{\"path\":\"/h\",\"timeout\":0}]}}",
     ".hooks.createRuntime[0].timeout: expected an integer from 1 to 2147483647"},
    {"{" BASE ",\"annotations\":{\"a\":\"b\",\"c\":1}}", ".annotations.c: expected a string"},
    {LINUX("\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"mnt\"}]"),
     ".linux.namespaces[1].type: expected one of user, mount, pid, network, ipc, uts, cgroup, "
     "time"},
    {LINUX("\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"ipc\"},{\"type\":\"pid\"}]"),
     ".linux.namespaces[2].type: expected each type once, \"pid\" is listed twice"},
    {LINUX("\"namespaces\":[{\"type\":\"net\"}]"), ".linux.namespaces[0].type: expected one of"},
    {LINUX("\"namespaces\":[{\"type\":\"network\",\"path\":\"ns/net\"}]"),
     ".linux.namespaces[0].path: expected an absolute path"},
    {LINUX("\"uidMappings\":[{\"containerID\":0,\"hostID\":1}]"),
     ".linux.uidMappings[0].size: expected an integer from 1 to 4294967295"},
    {LINUX("\"gidMappings\":[{\"hostID\":1,\"size\":1}]"),
     ".linux.gidMappings[0].containerID: expected an integer from 0 to 4294967295"},
    {LINUX("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"x\",\"major\":1,\"minor\":1}]"),
     ".linux.devices[0].type: expected one of c, b, u, p"},
    {LINUX("\"devices\":[{\"path\":\"dev/x\",\"type\":\"c\",\"major\":1,\"minor\":1}]"),
     ".linux.devices[0].path: expected an absolute path"},
    {LINUX("\"devices\":[{\"path\":\"/dev/..\",\"type\":\"c\",\"major\":1,\"minor\":1}]"),
     ".linux.devices[0].path: expected an absolute file path"},
    {LINUX("\"devices\":[{\"path\":\"///\",\"type\":\"c\",\"major\":1,\"minor\":1}]"),
     ".linux.devices[0].path: expected an absolute file path"},
    {LINUX("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"b\",\"major\":1}]"),
     ".linux.devices[0].minor: expected an integer from 0 to 1048575"},
    {LINUX("\"devices\":[{\"path\":\"/dev/x\",\"type\":\"p\",\"fileMode\":65535}]"),
     ".linux.devices[0].fileMode: expected an integer from 0 to 4095"},
    {LINUX("\"sysctl\":{\"a\":1}"), ".linux.sysctl.a: expected a string"},
    {LINUX("\"sysctl\":{\"vm.swappiness\":\"1\"}"),
     ".linux.sysctl.vm.swappiness: no namespace holds this sysctl"},
    {LINUX("\"sysctl\":{\"fs.mqueue.queues_max\":\"1\"}"),
     ".linux.sysctl.fs.mqueue.queues_max: needs the container's own ipc namespace"},
    {LINUX("\"namespaces\":[{\"type\":\"ipc\"}],\"sysctl\":{\"net.core.somaxconn\":\"1\"}"),
     ".linux.sysctl.net.core.somaxconn: needs the container's own network namespace"},
    {LINUX("\"namespaces\":[{\"type\":\"network\",\"path\":\"/proc/self/ns/net\"}],"
           "\"sysctl\":{\"net.core.somaxconn\":\"1\"}"),
     ".linux.sysctl.net.core.somaxconn: needs the container's own network namespace"},
    {LINUX("\"namespaces\":[{\"type\":\"network\"}],\"sysctl\":{\"kernel.domainname\":\"x\"}"),
     ".linux.sysctl.kernel.domainname: needs the container's own uts namespace"},
    {LINUX("\"namespaces\":[{\"type\":\"uts\"}],\"sysctl\":{\"kernel.hostname\":\"x\"}"),
     ".linux.sysctl.kernel.hostname: set .hostname instead"},
    {"{" BASE ",\"domainname\":\"a\",\"linux\":{\"namespaces\":[{\"type\":\"uts\"}],"
     "\"sysctl\":{\"kernel.domainname\":\"b\"}}}",
     ".linux.sysctl.kernel.domainname: conflicts with .domainname"},
    {LINUX("\"namespaces\":[{\"type\":\"ipc\"}],\"sysctl\":{\"kernel.../x\":\"1\"}"),
     ".linux.sysctl.kernel.../x: expected a sysctl name"},
    {LINUX("\"resources\":[]"), ".linux.resources: expected an object"},
    {LINUX("\"maskedPaths\":[\"/a\",null]"), ".linux.maskedPaths[1]: expected a string"},
    {LINUX("\"rootfsPropagation\":\"slavish\""),
     ".linux.rootfsPropagation: expected one of shared, slave, private, unbindable, rshared, "
     "rslave, rprivate, runbindable"},
    {LINUX("\"timeOffsets\":{\"boottime\":{\"nanosecs\":1000000000}}"),
     ".linux.timeOffsets.boottime.nanosecs: expected an integer from 0 to 999999999"},
    {LINUX("\"seccomp\":{}"), ".linux.seccomp.defaultAction: expected one of SCMP_ACT_KILL, "},
    {SECCOMP("\"defaultErrnoRet\":-1"),
     ".linux.seccomp.defaultErrnoRet: expected an integer from 0 to 4294967295"},
    {SECCOMP("\"architectures\":[1]"), ".linux.seccomp.architectures[0]: expected a string"},
    {RULE("\"action\":\"SCMP_ACT_EXPLODE\""),
     ".linux.seccomp.syscalls[0].action: expected one of SCMP_ACT_KILL, "},
    {SECCOMP("\"syscalls\":[{\"names\":[],\"action\":\"SCMP_ACT_ALLOW\"}]"),
     ".linux.seccomp.syscalls[0].names: expected a non-empty array of strings"},
    {RULE("\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":1,\"op\":\"EQ\"}]"),
     ".linux.seccomp.syscalls[0].args[0].op: expected one of SCMP_CMP_NE, "},
    {RULE("\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":6,\"value\":1,"
          "\"op\":\"SCMP_CMP_EQ\"}]"),
     ".linux.seccomp.syscalls[0].args[0].index: expected an integer from 0 to 5"},
    {RULE("\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"op\":\"SCMP_CMP_EQ\"}]"),
     ".linux.seccomp.syscalls[0].args[0].value: expected an unsigned 64-bit integer"},
    {RULE("\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":\"EPERM\""),
     ".linux.seccomp.syscalls[0].errnoRet: expected an integer from 0 to 4294967295"},
};

Test(spec, bad_inputs_name_the_path)
{
        for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
                const struct bad_case *c = &bad_cases[i];
                struct spec *spec = NULL;
                _cleanup_error_ struct umw_error *err = NULL;
                char want[1024];
                snprintf(want, sizeof(want), "config.json: %s", c->message);
                int r = spec_load(c->json, "config.json", &spec, &err);
                cr_expect_lt(r, 0, "accepted: %s", c->json);
                cr_expect_null(spec, "spec set on failure: %s", c->json);
                if (!err) {
                        cr_expect_not_null(err, "no error for %s", c->json);
                        continue;
                }
                cr_expect_eq(err->kind, UMW_EXIT_CONFIG, "kind %d for %s", err->kind, c->json);
                cr_expect_eq(strncmp(err->msg, want, strlen(want)), 0,
                             "input %s\n  got:  %s\n  want: %s", c->json, err->msg, want);
                cr_expect_null(strchr(err->msg, '\n'), "multi-line message: %s", err->msg);
        }
}

Test(spec, malformed_json)
{
        struct spec *spec = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        int r = spec_load("{\"ociVersion\": \"1.0\",", "config.json", &spec, &err);
        cr_assert_lt(r, 0);
        cr_assert_null(spec);
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
        cr_assert_eq(strncmp(err->msg, "config.json: invalid JSON", 25), 0, "%s", err->msg);
        cr_assert_null(strchr(err->msg, '\n'));
}

Test(spec, bad_capability_name_is_quoted)
{
        struct spec *spec = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        int r = spec_load(PROC("\"capabilities\":{\"bounding\":[\"CAP_\\nX\"]}"), "c.json", &spec,
                          &err);
        cr_assert_lt(r, 0);
        cr_assert_str_eq(err->msg, "c.json: .process.capabilities.bounding[0]: expected a "
                                   "capability name, not \"CAP_\\nX\"");
}

Test(spec, load_file_errors)
{
        struct spec *spec = NULL;
        _cleanup_error_ struct umw_error *missing = NULL;
        cr_assert_lt(spec_load_file("/nonexistent/config.json", &spec, &missing), 0);
        cr_assert_eq(missing->kind, UMW_EXIT_FAILURE);
        cr_assert_not_null(strstr(missing->msg, "/nonexistent/config.json"));

        char path[] = "/tmp/test-spec-big-XXXXXX";
        int fd = mkostemp(path, O_CLOEXEC);
        cr_assert_geq(fd, 0);
        cr_assert_eq(ftruncate(fd, 17 * 1024 * 1024), 0);
        close(fd);
        _cleanup_error_ struct umw_error *big = NULL;
        int r = spec_load_file(path, &spec, &big);
        unlink(path);
        cr_assert_lt(r, 0);
        cr_assert_eq(big->kind, UMW_EXIT_CONFIG);
        cr_assert_null(spec);
}

Test(spec, process_json_for_exec)
{
        yajl_val tree = NULL;
        struct spec_process p;
        _cleanup_error_ struct umw_error *err = NULL;
        int r = spec_load_process("{\"args\":[\"ls\",\"-l\"],\"cwd\":\"/srv\",\"env\":[\"A=b\"],"
                                  "\"user\":{\"uid\":5,\"gid\":6},\"rlimits\":[{\"type\":"
                                  "\"RLIMIT_NOFILE\",\"soft\":1,\"hard\":2}]}",
                                  "process.json", &tree, &p, &err);
        cr_assert_eq(r, 0, "%s", err ? err->msg : "");
        cr_assert_str_eq(p.args[1], "-l");
        cr_assert_str_eq(p.cwd, "/srv");
        cr_assert_str_eq(p.env[0], "A=b");
        cr_assert_eq(p.uid, 5);
        cr_assert_eq(p.n_rlimits, 1);
        cr_assert_not(p.has_caps);
        spec_process_release(&p);
        cr_assert_null(p.args);
        yajl_tree_free(tree);
}

Test(spec, process_json_errors)
{
        yajl_val tree = NULL;
        struct spec_process p;
        _cleanup_error_ struct umw_error *err = NULL;
        int r = spec_load_process("{\"args\":[\"ls\"],\"cwd\":\"srv\"}", "process.json", &tree, &p,
                                  &err);
        cr_assert_lt(r, 0);
        cr_assert_null(tree);
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
        cr_assert_str_eq(err->msg, "process.json: .cwd: expected an absolute path");
        cr_assert_null(p.args);
}

Test(spec, namespace_names_and_flags)
{
        cr_assert_str_eq(spec_ns_name(SPEC_NS_NET), "network");
        cr_assert_str_eq(spec_ns_name(SPEC_NS_MOUNT), "mount");
        cr_assert_str_eq(spec_ns_name(SPEC_NS_TIME), "time");
        cr_assert_eq(spec_ns_clone_flag(SPEC_NS_MOUNT), CLONE_NEWNS);
        cr_assert_eq(spec_ns_clone_flag(SPEC_NS_USER), CLONE_NEWUSER);
        cr_assert_eq(spec_ns_clone_flag(SPEC_NS_CGROUP), CLONE_NEWCGROUP);
        cr_assert_eq(spec_ns_clone_flag(SPEC_NS_TIME), CLONE_NEWTIME);
        int all = 0;
        for (int ns = 0; ns < SPEC_NS_COUNT; ns++) {
                cr_assert_not_null(spec_ns_name(ns));
                cr_assert_eq(all & spec_ns_clone_flag(ns), 0);
                all |= spec_ns_clone_flag(ns);
        }
        cr_assert_null(spec_ns_name(SPEC_NS_COUNT));
        cr_assert_eq(spec_ns_clone_flag(SPEC_NS_COUNT), 0);
}

/* The document's name outlives spec_load: the checks made later, as the
 * container is built, name the file the user gave, not a bare config.json. */
Test(spec, later_checks_name_the_document)
{
        static const char *const names[] = {"/srv/bundle/config.json",
                                            "the sandbox config composed for /home/me/proj"};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                struct spec *spec = NULL;
                _cleanup_error_ struct umw_error *err = NULL;
                cr_assert_eq(spec_load("{" BASE "}", names[i], &spec, &err), 0, "%s",
                             err ? err->msg : "?");
                cr_assert_str_eq(spec->file, names[i]);
                char want[256];
                snprintf(want, sizeof(want), "%s: .linux.namespaces: expected a mount namespace",
                         names[i]);
                cr_assert_lt(ns_check(spec, &err), 0);
                cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
                cr_assert_eq(strncmp(err->msg, want, strlen(want)), 0, "got:  %s\nwant: %s",
                             err->msg, want);
                spec_free(spec);
        }
}
