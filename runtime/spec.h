/* The OCI runtime spec (config.json) as the runtime uses it on Linux.
 * spec_load() checks every field it reads: a wrong type, an unknown
 * namespace, capability, rlimit or seccomp action is an error naming the file
 * and JSON path. Strings point into the parsed tree owned by the spec. */
#ifndef UMW_SPEC_H
#define UMW_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <yajl/yajl_tree.h>

struct umw_error;

enum spec_ns {
        SPEC_NS_USER,
        SPEC_NS_MOUNT,
        SPEC_NS_PID,
        SPEC_NS_NET,
        SPEC_NS_IPC,
        SPEC_NS_UTS,
        SPEC_NS_CGROUP,
        SPEC_NS_TIME,
        SPEC_NS_COUNT
};

struct spec_namespace {
        bool enabled;     /* listed in linux.namespaces */
        const char *path; /* join this one instead of creating one; NULL = new */
};

struct spec_idmap {
        uint32_t container_id, host_id, size;
};

struct spec_mount {
        const char *destination;
        const char *type;   /* NULL when absent (bind mounts may omit it) */
        const char *source; /* NULL when absent */
        const char **options;
        size_t n_options;
        /* An idmapped mount's own mapping (NULL: the container's). */
        struct spec_idmap *uid_mappings, *gid_mappings;
        size_t n_uid_mappings, n_gid_mappings;
};

struct spec_device {
        const char *path;
        char type; /* 'c', 'b', 'u' or 'p' */
        int64_t major, minor;
        uint32_t file_mode;
        bool has_file_mode;
        uint32_t uid, gid;
        bool has_uid, has_gid;
};

struct spec_rlimit {
        int resource; /* RLIMIT_* */
        uint64_t soft, hard;
};

/* Capability sets as bit masks indexed by capability number. */
struct spec_caps {
        uint64_t bounding, effective, inheritable, permitted, ambient;
};

enum spec_seccomp_action {
        SPEC_SCMP_KILL, /* SCMP_ACT_KILL and SCMP_ACT_KILL_THREAD */
        SPEC_SCMP_KILL_PROCESS,
        SPEC_SCMP_TRAP,
        SPEC_SCMP_ERRNO,
        SPEC_SCMP_TRACE,
        SPEC_SCMP_ALLOW,
        SPEC_SCMP_LOG,
        SPEC_SCMP_NOTIFY,
};

enum spec_seccomp_op {
        SPEC_SCMP_CMP_NE,
        SPEC_SCMP_CMP_LT,
        SPEC_SCMP_CMP_LE,
        SPEC_SCMP_CMP_EQ,
        SPEC_SCMP_CMP_GE,
        SPEC_SCMP_CMP_GT,
        SPEC_SCMP_CMP_MASKED_EQ,
};

struct spec_seccomp_arg {
        unsigned int index;
        uint64_t value, value_two;
        enum spec_seccomp_op op;
};

struct spec_seccomp_rule {
        const char **names;
        size_t n_names;
        enum spec_seccomp_action action;
        uint32_t errno_ret;
        bool has_errno_ret;
        struct spec_seccomp_arg *args;
        size_t n_args;
};

struct spec_seccomp {
        enum spec_seccomp_action default_action;
        uint32_t default_errno_ret;
        bool has_default_errno_ret;
        const char **architectures; /* "SCMP_ARCH_X86_64", ... */
        size_t n_architectures;
        const char **flags; /* "SECCOMP_FILTER_FLAG_LOG", ... */
        size_t n_flags;
        struct spec_seccomp_rule *rules;
        size_t n_rules;
};

struct spec_hook {
        const char *path;
        const char **args; /* NULL-terminated, may be NULL */
        const char **env;  /* NULL-terminated, may be NULL */
        int timeout;       /* seconds, 0 = none */
};

enum spec_hook_kind {
        SPEC_HOOK_PRESTART,
        SPEC_HOOK_CREATE_RUNTIME,
        SPEC_HOOK_CREATE_CONTAINER,
        SPEC_HOOK_START_CONTAINER,
        SPEC_HOOK_POSTSTART,
        SPEC_HOOK_POSTSTOP,
        SPEC_HOOK_COUNT
};

struct spec_hooks {
        struct spec_hook *list;
        size_t count;
};

/* The kind's key in config.json's hooks ("createRuntime"). */
const char *spec_hook_name(enum spec_hook_kind kind);

struct spec_kv {
        const char *key, *value;
};

struct spec_process {
        bool terminal;
        unsigned int console_height, console_width;
        uint32_t uid, gid;
        uint32_t *additional_gids;
        size_t n_additional_gids;
        uint32_t umask;
        bool has_umask;
        const char **args; /* NULL-terminated, at least one */
        const char **env;  /* NULL-terminated, may be empty */
        const char *cwd;   /* absolute */
        struct spec_caps caps;
        bool has_caps;
        struct spec_rlimit *rlimits;
        size_t n_rlimits;
        bool no_new_privileges;
        int oom_score_adj;
        bool has_oom_score_adj;
};

struct spec {
        yajl_val tree; /* owns every string below */
        /* The document's name in every message about it ("FILE: .json.path:
         * expected ..."): the path it was read from as given (BUNDLE/config.json),
         * or what the caller calls a document that is no file of the user's
         * (a sandbox's composed config, read from a memfd). Owned. */
        char *file;
        const char *oci_version;
        const char *root_path; /* as written; relative to the bundle when not absolute */
        bool root_readonly;
        const char *hostname, *domainname;
        struct spec_process process; /* absent process: args == NULL */
        struct spec_mount *mounts;
        size_t n_mounts;
        struct spec_hooks hooks[SPEC_HOOK_COUNT];
        struct spec_kv *annotations;
        size_t n_annotations;
        bool netwall; /* .annotations[SPEC_NETWALL_ANNOTATION] is SPEC_NETWALL_DEFAULT_DROP */

        struct spec_namespace namespaces[SPEC_NS_COUNT];
        struct spec_idmap *uid_mappings, *gid_mappings;
        size_t n_uid_mappings, n_gid_mappings;
        struct spec_device *devices;
        size_t n_devices;
        const char *cgroups_path;
        yajl_val resources; /* linux.resources, applied by the cgroup code */
        struct spec_kv *sysctl;
        size_t n_sysctl;
        struct spec_seccomp *seccomp; /* NULL: no filter */
        const char **masked_paths, **readonly_paths;
        size_t n_masked_paths, n_readonly_paths;
        const char *rootfs_propagation; /* "private", "rslave", ...; NULL = default */
        int64_t time_offset_monotonic_secs, time_offset_boottime_secs;
        uint32_t time_offset_monotonic_nsecs, time_offset_boottime_nsecs;
};

/* Parses the config at path (file name used in messages). */
int spec_load_file(const char *path, struct spec **out, struct umw_error **err);
/* Parses text; file names it in error messages, then and later (spec->file). */
int spec_load(const char *text, const char *file, struct spec **out, struct umw_error **err);
/* Parses a process object (for exec --process) into p, owned by tree. */
int spec_load_process(const char *text, const char *file, yajl_val *tree, struct spec_process *p,
                      struct umw_error **err);
void spec_process_release(struct spec_process *p);
void spec_free(struct spec *spec);

const char *spec_ns_name(enum spec_ns ns); /* "user", "mount", ... as in the spec */
int spec_ns_clone_flag(enum spec_ns ns);   /* CLONE_NEWUSER, ... */
const char *spec_annotation(const struct spec *spec, const char *key);

/* The kernel's network wall a bundle asks for (runtime/netwall.h installs
 * it): the annotation and its one value, the ruleset of netns/nft_build.h. */
#define SPEC_NETWALL_ANNOTATION   "run.umwelt.net"
#define SPEC_NETWALL_DEFAULT_DROP "default-drop"
/* For a process exec'd into a walled container: CAP_NET_ADMIN in any set of
 * caps is refused (the workload could take the wall down); where names the
 * input in the message. */
int spec_check_netwall_caps(const struct spec *spec, const struct spec_caps *caps,
                            const char *where, struct umw_error **err);

#endif
