#include "spec.h"
#include "caps.h"
#include "netwall.h"
#include "src/common/cleanup.h"
#include "src/common/error.h"
#include "src/common/fdio.h"
#include "src/common/json.h"
#include "src/common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* config.json is a few KiB; anything near this is not a config. */
#define SPEC_MAX_SIZE (16u * 1024 * 1024)

struct name_value {
        const char *name;
        int value;
};

static const struct name_value ns_names[] = {
    {"user", SPEC_NS_USER},     {"mount", SPEC_NS_MOUNT}, {"pid", SPEC_NS_PID},
    {"network", SPEC_NS_NET},   {"ipc", SPEC_NS_IPC},     {"uts", SPEC_NS_UTS},
    {"cgroup", SPEC_NS_CGROUP}, {"time", SPEC_NS_TIME},
};

static const int ns_clone_flags[SPEC_NS_COUNT] = {
    [SPEC_NS_USER] = CLONE_NEWUSER,     [SPEC_NS_MOUNT] = CLONE_NEWNS,
    [SPEC_NS_PID] = CLONE_NEWPID,       [SPEC_NS_NET] = CLONE_NEWNET,
    [SPEC_NS_IPC] = CLONE_NEWIPC,       [SPEC_NS_UTS] = CLONE_NEWUTS,
    [SPEC_NS_CGROUP] = CLONE_NEWCGROUP, [SPEC_NS_TIME] = CLONE_NEWTIME,
};

static const struct name_value rlimit_names[] = {
    {"RLIMIT_AS", RLIMIT_AS},
    {"RLIMIT_CORE", RLIMIT_CORE},
    {"RLIMIT_CPU", RLIMIT_CPU},
    {"RLIMIT_DATA", RLIMIT_DATA},
    {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_LOCKS", RLIMIT_LOCKS},
    {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE},
    {"RLIMIT_NICE", RLIMIT_NICE},
    {"RLIMIT_NOFILE", RLIMIT_NOFILE},
    {"RLIMIT_NPROC", RLIMIT_NPROC},
    {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},
    {"RLIMIT_RTTIME", RLIMIT_RTTIME},
    {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_STACK", RLIMIT_STACK},
};

static const struct name_value seccomp_actions[] = {
    {"SCMP_ACT_KILL", SPEC_SCMP_KILL},
    {"SCMP_ACT_KILL_THREAD", SPEC_SCMP_KILL},
    {"SCMP_ACT_KILL_PROCESS", SPEC_SCMP_KILL_PROCESS},
    {"SCMP_ACT_TRAP", SPEC_SCMP_TRAP},
    {"SCMP_ACT_ERRNO", SPEC_SCMP_ERRNO},
    {"SCMP_ACT_TRACE", SPEC_SCMP_TRACE},
    {"SCMP_ACT_ALLOW", SPEC_SCMP_ALLOW},
    {"SCMP_ACT_LOG", SPEC_SCMP_LOG},
    {"SCMP_ACT_NOTIFY", SPEC_SCMP_NOTIFY},
};

static const struct name_value seccomp_ops[] = {
    {"SCMP_CMP_NE", SPEC_SCMP_CMP_NE},
    {"SCMP_CMP_LT", SPEC_SCMP_CMP_LT},
    {"SCMP_CMP_LE", SPEC_SCMP_CMP_LE},
    {"SCMP_CMP_EQ", SPEC_SCMP_CMP_EQ},
    {"SCMP_CMP_GE", SPEC_SCMP_CMP_GE},
    {"SCMP_CMP_GT", SPEC_SCMP_CMP_GT},
    {"SCMP_CMP_MASKED_EQ", SPEC_SCMP_CMP_MASKED_EQ},
};

static const struct name_value propagations[] = {
    {"shared", 0},  {"slave", 0},  {"private", 0},  {"unbindable", 0},
    {"rshared", 0}, {"rslave", 0}, {"rprivate", 0}, {"runbindable", 0},
};

static const char *const hook_keys[SPEC_HOOK_COUNT] = {
    [SPEC_HOOK_PRESTART] = "prestart",
    [SPEC_HOOK_CREATE_RUNTIME] = "createRuntime",
    [SPEC_HOOK_CREATE_CONTAINER] = "createContainer",
    [SPEC_HOOK_START_CONTAINER] = "startContainer",
    [SPEC_HOOK_POSTSTART] = "poststart",
    [SPEC_HOOK_POSTSTOP] = "poststop",
};

static const struct {
        const char *key;
        size_t offset;
} cap_sets[] = {
    {"bounding", offsetof(struct spec_caps, bounding)},
    {"effective", offsetof(struct spec_caps, effective)},
    {"inheritable", offsetof(struct spec_caps, inheritable)},
    {"permitted", offsetof(struct spec_caps, permitted)},
    {"ambient", offsetof(struct spec_caps, ambient)},
};

/* Keys we read, per object; anything else is a newer or foreign extension. */
static const char *const top_keys[] = {"ociVersion", "root",   "process", "hostname",
                                       "domainname", "mounts", "hooks",   "annotations",
                                       "linux",      NULL};
static const char *const process_keys[] = {
    "terminal", "consoleSize", "user", "args", "env", "cwd", "capabilities", "rlimits",
    "noNewPrivileges", "oomScoreAdj",
    /* Security labels: this runtime has no LSM support, and podman sets
     * them on every container, so they are expected here. */
    "apparmorProfile", "selinuxLabel", NULL};
/* mountLabel is the SELinux label for mounts, unused like the ones above. */
static const char *const linux_keys[] = {
    "namespaces",  "uidMappings", "gidMappings",       "devices",     "cgroupsPath",
    "resources",   "sysctl",      "seccomp",           "maskedPaths", "readonlyPaths",
    "timeOffsets", "mountLabel",  "rootfsPropagation", NULL};

static int oom(struct umw_error **err)
{
        return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
}

/* calloc that never returns NULL for an empty array, so "allocated" and
 * "failed" stay distinguishable. */
static int alloc_array(size_t n, size_t size, void *out, struct umw_error **err)
{
        void *p = calloc(n ? n : 1, size);
        if (!p)
                return oom(err);
        *(void **)out = p;
        return 0;
}

static void note_unknown_keys(yajl_val obj, const struct umw_jloc *loc, const char *const *known)
{
        for (size_t i = 0; i < obj->u.object.len; i++) {
                const char *key = obj->u.object.keys[i];
                size_t k = 0;
                while (known[k] && strcmp(known[k], key) != 0)
                        k++;
                if (!known[k]) {
                        char path[UMW_JLOC_PATH_MAX];
                        umw_debug("%s: %s.%s: not supported, ignored", loc->file,
                                  umw_jloc_path(loc, path), key);
                }
        }
}

static int expected_one_of(const struct umw_jloc *loc, const struct name_value *table, size_t n,
                           struct umw_error **err)
{
        char what[512] = "one of ";
        size_t used = strlen(what);
        for (size_t i = 0; i < n; i++) {
                int w = snprintf(what + used, sizeof(what) - used, "%s%s", i ? ", " : "",
                                 table[i].name);
                if (w < 0 || (size_t)w >= sizeof(what) - used)
                        break;
                used += (size_t)w;
        }
        return umw_json_expected(loc, what, err);
}

/* "BEFORE"GOT"AFTER", with GOT quoted so that control characters in the input
 * cannot break the one-line message. */
static int expected_quoting(const struct umw_jloc *loc, const char *before, const char *got,
                            const char *after, struct umw_error **err)
{
        _cleanup_free_ char *quoted = umw_json_quote(got);
        _cleanup_free_ char *msg = NULL;
        if (!quoted || asprintf(&msg, "%s%.80s%s", before, quoted, after) < 0)
                return oom(err);
        return umw_json_expected(loc, msg, err);
}

static int read_enum(yajl_val v, const struct umw_jloc *loc, const struct name_value *table,
                     size_t n, int *out, struct umw_error **err)
{
        if (YAJL_IS_STRING(v)) {
                for (size_t i = 0; i < n; i++) {
                        if (strcmp(table[i].name, v->u.string) == 0) {
                                *out = table[i].value;
                                return 0;
                        }
                }
        }
        return expected_one_of(loc, table, n, err);
}

static int read_u32(yajl_val v, const struct umw_jloc *loc, uint32_t *out, struct umw_error **err)
{
        int64_t n = 0;
        int r = umw_json_int64(v, loc, 0, UINT32_MAX, &n, err);
        if (r < 0)
                return r;
        *out = (uint32_t)n;
        return 0;
}

static int read_absolute_path(yajl_val v, const struct umw_jloc *loc, const char **out,
                              struct umw_error **err)
{
        if (!YAJL_IS_STRING(v) || v->u.string[0] != '/')
                return umw_json_expected(loc, "an absolute path", err);
        *out = v->u.string;
        return 0;
}

/* Member readers: absent members leave *out untouched unless required. */
static int member_string(yajl_val obj, const struct umw_jloc *loc, const char *key, bool required,
                         const char **out, struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, key);
        yajl_val v = umw_json_member(obj, key);
        if (!v)
                return required ? umw_json_expected(&at, "a string", err) : 0;
        return umw_json_string(v, &at, out, err);
}

static int member_bool(yajl_val obj, const struct umw_jloc *loc, const char *key, bool *out,
                       struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, key);
        yajl_val v = umw_json_member(obj, key);
        return v ? umw_json_bool(v, &at, out, err) : 0;
}

static int member_u32(yajl_val obj, const struct umw_jloc *loc, const char *key, bool required,
                      uint32_t *out, bool *present, struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, key);
        yajl_val v = umw_json_member(obj, key);
        if (!v)
                return required ? umw_json_expected(&at, "an integer from 0 to 4294967295", err)
                                : 0;
        if (present)
                *present = true;
        return read_u32(v, &at, out, err);
}

static int member_strv(yajl_val obj, const struct umw_jloc *loc, const char *key, const char ***out,
                       size_t *count, struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, key);
        yajl_val v = umw_json_member(obj, key);
        return v ? umw_json_strv(v, &at, out, count, err) : 0;
}

/* The member as an object or array; *out stays NULL when absent. */
static int member_typed(yajl_val obj, const struct umw_jloc *loc, const char *key, bool array,
                        yajl_val *out, struct umw_jloc *at, struct umw_error **err)
{
        *at = umw_jloc_key(loc, key);
        *out = umw_json_member(obj, key);
        if (!*out)
                return 0;
        return array ? umw_json_array(*out, at, err) : umw_json_object(*out, at, err);
}

static int parse_kv_object(yajl_val obj, const struct umw_jloc *loc, struct spec_kv **out,
                           size_t *count, struct umw_error **err)
{
        size_t n = obj->u.object.len;
        int r = alloc_array(n, sizeof(**out), out, err);
        if (r < 0)
                return r;
        *count = n;
        for (size_t i = 0; i < n; i++) {
                struct umw_jloc at = umw_jloc_key(loc, obj->u.object.keys[i]);
                (*out)[i].key = obj->u.object.keys[i];
                r = umw_json_string(obj->u.object.values[i], &at, &(*out)[i].value, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_caps(yajl_val obj, const struct umw_jloc *loc, struct spec_caps *caps,
                      struct umw_error **err)
{
        for (size_t s = 0; s < ARRAY_SIZE(cap_sets); s++) {
                struct umw_jloc set_at;
                yajl_val set;
                int r = member_typed(obj, loc, cap_sets[s].key, true, &set, &set_at, err);
                if (r < 0)
                        return r;
                uint64_t *mask = (uint64_t *)((char *)caps + cap_sets[s].offset);
                for (size_t i = 0; set && i < set->u.array.len; i++) {
                        struct umw_jloc at = umw_jloc_index(&set_at, i);
                        const char *name;
                        int cap = 0;
                        r = umw_json_string(set->u.array.values[i], &at, &name, err);
                        if (r < 0)
                                return r;
                        if (caps_from_name(name, &cap) < 0 || cap < 0 || cap >= 64)
                                return expected_quoting(&at, "a capability name, not ", name, "",
                                                        err);
                        *mask |= UINT64_C(1) << cap;
                }
        }
        return 0;
}

static int parse_rlimit(yajl_val obj, const struct umw_jloc *loc, const struct spec_rlimit *prev,
                        size_t n_prev, struct spec_rlimit *rl, struct umw_error **err)
{
        struct umw_jloc type_at = umw_jloc_key(loc, "type");
        struct umw_jloc soft_at = umw_jloc_key(loc, "soft");
        struct umw_jloc hard_at = umw_jloc_key(loc, "hard");
        int r = umw_json_object(obj, loc, err);
        if (r < 0)
                return r;
        r = read_enum(umw_json_member(obj, "type"), &type_at, rlimit_names,
                      ARRAY_SIZE(rlimit_names), &rl->resource, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_prev; i++) {
                if (prev[i].resource == rl->resource)
                        return expected_quoting(&type_at, "each type once, ",
                                                umw_json_member(obj, "type")->u.string,
                                                " is listed twice", err);
        }
        r = umw_json_uint64(umw_json_member(obj, "soft"), &soft_at, &rl->soft, err);
        if (r < 0)
                return r;
        return umw_json_uint64(umw_json_member(obj, "hard"), &hard_at, &rl->hard, err);
}

static int parse_rlimits(yajl_val arr, const struct umw_jloc *loc, struct spec_process *p,
                         struct umw_error **err)
{
        int r = alloc_array(arr->u.array.len, sizeof(*p->rlimits), &p->rlimits, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < arr->u.array.len; i++) {
                struct umw_jloc at = umw_jloc_index(loc, i);
                r = parse_rlimit(arr->u.array.values[i], &at, p->rlimits, i, &p->rlimits[i], err);
                if (r < 0)
                        return r;
                p->n_rlimits = i + 1;
        }
        return 0;
}

static int parse_user(yajl_val user, const struct umw_jloc *loc, struct spec_process *p,
                      struct umw_error **err)
{
        struct umw_jloc gids_at;
        yajl_val gids = NULL;
        int r = member_u32(user, loc, "uid", false, &p->uid, NULL, err);
        if (r == 0)
                r = member_u32(user, loc, "gid", false, &p->gid, NULL, err);
        if (r == 0)
                r = member_u32(user, loc, "umask", false, &p->umask, &p->has_umask, err);
        if (r == 0)
                r = member_typed(user, loc, "additionalGids", true, &gids, &gids_at, err);
        if (r < 0 || !gids)
                return r;
        r = alloc_array(gids->u.array.len, sizeof(uint32_t), &p->additional_gids, err);
        if (r < 0)
                return r;
        p->n_additional_gids = gids->u.array.len;
        for (size_t i = 0; i < gids->u.array.len; i++) {
                struct umw_jloc at = umw_jloc_index(&gids_at, i);
                r = read_u32(gids->u.array.values[i], &at, &p->additional_gids[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_console_size(yajl_val obj, const struct umw_jloc *loc, struct spec_process *p,
                              struct umw_error **err)
{
        /* The kernel's winsize holds 16 bits. */
        struct umw_jloc h_at = umw_jloc_key(loc, "height");
        struct umw_jloc w_at = umw_jloc_key(loc, "width");
        int64_t h = 0, w = 0;
        int r = umw_json_int64(umw_json_member(obj, "height"), &h_at, 0, UINT16_MAX, &h, err);
        if (r == 0)
                r = umw_json_int64(umw_json_member(obj, "width"), &w_at, 0, UINT16_MAX, &w, err);
        if (r < 0)
                return r;
        p->console_height = (unsigned int)h;
        p->console_width = (unsigned int)w;
        return 0;
}

static int parse_args(yajl_val obj, const struct umw_jloc *loc, struct spec_process *p,
                      struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, "args");
        yajl_val args = umw_json_member(obj, "args");
        size_t n = 0;
        if (!YAJL_IS_ARRAY(args) || args->u.array.len == 0)
                return umw_json_expected(&at, "a non-empty array of strings", err);
        return umw_json_strv(args, &at, &p->args, &n, err);
}

static int parse_env(yajl_val obj, const struct umw_jloc *loc, struct spec_process *p,
                     struct umw_error **err)
{
        int r = member_strv(obj, loc, "env", &p->env, NULL, err);
        if (r < 0 || p->env)
                return r;
        return alloc_array(1, sizeof(*p->env), &p->env, err);
}

static int parse_process_members(yajl_val obj, const struct umw_jloc *loc, struct spec_process *p,
                                 struct umw_error **err)
{
        struct umw_jloc at;
        yajl_val v;
        int r = umw_json_object(obj, loc, err);
        if (r < 0)
                return r;
        note_unknown_keys(obj, loc, process_keys);
        if ((r = parse_args(obj, loc, p, err)) < 0 || (r = parse_env(obj, loc, p, err)) < 0)
                return r;
        at = umw_jloc_key(loc, "cwd");
        if ((r = read_absolute_path(umw_json_member(obj, "cwd"), &at, &p->cwd, err)) < 0)
                return r;
        if ((r = member_bool(obj, loc, "terminal", &p->terminal, err)) < 0)
                return r;
        if ((r = member_typed(obj, loc, "consoleSize", false, &v, &at, err)) < 0 ||
            (v && (r = parse_console_size(v, &at, p, err)) < 0))
                return r;
        if ((r = member_typed(obj, loc, "user", false, &v, &at, err)) < 0 ||
            (v && (r = parse_user(v, &at, p, err)) < 0))
                return r;
        if ((r = member_typed(obj, loc, "capabilities", false, &v, &at, err)) < 0)
                return r;
        p->has_caps = v != NULL;
        if (v && (r = parse_caps(v, &at, &p->caps, err)) < 0)
                return r;
        if ((r = member_typed(obj, loc, "rlimits", true, &v, &at, err)) < 0 ||
            (v && (r = parse_rlimits(v, &at, p, err)) < 0))
                return r;
        if ((r = member_bool(obj, loc, "noNewPrivileges", &p->no_new_privileges, err)) < 0)
                return r;
        at = umw_jloc_key(loc, "oomScoreAdj");
        if ((v = umw_json_member(obj, "oomScoreAdj"))) {
                int64_t adj = 0;
                if ((r = umw_json_int64(v, &at, -1000, 1000, &adj, err)) < 0)
                        return r;
                p->oom_score_adj = (int)adj;
                p->has_oom_score_adj = true;
        }
        return 0;
}

static int parse_process(yajl_val obj, const struct umw_jloc *loc, struct spec_process *p,
                         struct umw_error **err)
{
        int r = parse_process_members(obj, loc, p, err);
        if (r < 0)
                spec_process_release(p);
        return r;
}

static int parse_mount(yajl_val obj, const struct umw_jloc *loc, struct spec_mount *m,
                       struct umw_error **err)
{
        struct umw_jloc dest_at = umw_jloc_key(loc, "destination");
        int r = umw_json_object(obj, loc, err);
        if (r == 0)
                r = read_absolute_path(umw_json_member(obj, "destination"), &dest_at,
                                       &m->destination, err);
        if (r == 0)
                r = member_string(obj, loc, "type", false, &m->type, err);
        if (r == 0)
                r = member_string(obj, loc, "source", false, &m->source, err);
        if (r == 0)
                r = member_strv(obj, loc, "options", &m->options, &m->n_options, err);
        return r;
}

static int parse_mounts(yajl_val arr, const struct umw_jloc *loc, struct spec *spec,
                        struct umw_error **err)
{
        int r = alloc_array(arr->u.array.len, sizeof(*spec->mounts), &spec->mounts, err);
        if (r < 0)
                return r;
        spec->n_mounts = arr->u.array.len;
        for (size_t i = 0; i < arr->u.array.len; i++) {
                struct umw_jloc at = umw_jloc_index(loc, i);
                r = parse_mount(arr->u.array.values[i], &at, &spec->mounts[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_hook(yajl_val obj, const struct umw_jloc *loc, struct spec_hook *h,
                      struct umw_error **err)
{
        struct umw_jloc path_at = umw_jloc_key(loc, "path");
        struct umw_jloc timeout_at = umw_jloc_key(loc, "timeout");
        yajl_val timeout;
        int r = umw_json_object(obj, loc, err);
        if (r == 0)
                r = read_absolute_path(umw_json_member(obj, "path"), &path_at, &h->path, err);
        if (r == 0)
                r = member_strv(obj, loc, "args", &h->args, NULL, err);
        if (r == 0)
                r = member_strv(obj, loc, "env", &h->env, NULL, err);
        if (r < 0 || !(timeout = umw_json_member(obj, "timeout")))
                return r;
        int64_t secs = 0;
        r = umw_json_int64(timeout, &timeout_at, 1, INT_MAX, &secs, err);
        if (r == 0)
                h->timeout = (int)secs;
        return r;
}

static int parse_hooks(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                       struct umw_error **err)
{
        for (int kind = 0; kind < SPEC_HOOK_COUNT; kind++) {
                struct spec_hooks *hooks = &spec->hooks[kind];
                struct umw_jloc list_at;
                yajl_val list;
                int r = member_typed(obj, loc, hook_keys[kind], true, &list, &list_at, err);
                if (r < 0)
                        return r;
                if (!list)
                        continue;
                r = alloc_array(list->u.array.len, sizeof(*hooks->list), &hooks->list, err);
                if (r < 0)
                        return r;
                hooks->count = list->u.array.len;
                for (size_t i = 0; i < list->u.array.len; i++) {
                        struct umw_jloc at = umw_jloc_index(&list_at, i);
                        r = parse_hook(list->u.array.values[i], &at, &hooks->list[i], err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int parse_namespace(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                           struct umw_error **err)
{
        struct umw_jloc type_at = umw_jloc_key(loc, "type");
        struct umw_jloc path_at = umw_jloc_key(loc, "path");
        int type = 0;
        int r = umw_json_object(obj, loc, err);
        if (r == 0)
                r = read_enum(umw_json_member(obj, "type"), &type_at, ns_names,
                              ARRAY_SIZE(ns_names), &type, err);
        if (r < 0)
                return r;
        struct spec_namespace *ns = &spec->namespaces[type];
        if (ns->enabled)
                return expected_quoting(&type_at, "each type once, ", spec_ns_name(type),
                                        " is listed twice", err);
        ns->enabled = true;
        yajl_val path = umw_json_member(obj, "path");
        return path ? read_absolute_path(path, &path_at, &ns->path, err) : 0;
}

static int parse_idmaps(yajl_val arr, const struct umw_jloc *loc, struct spec_idmap **out,
                        size_t *count, struct umw_error **err)
{
        int r = alloc_array(arr->u.array.len, sizeof(**out), out, err);
        if (r < 0)
                return r;
        *count = arr->u.array.len;
        for (size_t i = 0; i < arr->u.array.len; i++) {
                struct umw_jloc at = umw_jloc_index(loc, i);
                struct umw_jloc size_at = umw_jloc_key(&at, "size");
                yajl_val m = arr->u.array.values[i];
                struct spec_idmap *map = &(*out)[i];
                int64_t size = 0;
                r = umw_json_object(m, &at, err);
                if (r == 0)
                        r = member_u32(m, &at, "containerID", true, &map->container_id, NULL, err);
                if (r == 0)
                        r = member_u32(m, &at, "hostID", true, &map->host_id, NULL, err);
                if (r == 0)
                        r = umw_json_int64(umw_json_member(m, "size"), &size_at, 1, UINT32_MAX,
                                           &size, err);
                if (r < 0)
                        return r;
                map->size = (uint32_t)size;
        }
        return 0;
}

static int parse_device_type(yajl_val obj, const struct umw_jloc *loc, struct spec_device *d,
                             struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, "type");
        yajl_val v = umw_json_member(obj, "type");
        if (!YAJL_IS_STRING(v) || strlen(v->u.string) != 1 || !strchr("cbup", v->u.string[0]))
                return umw_json_expected(&at, "one of c, b, u, p", err);
        d->type = v->u.string[0];
        return 0;
}

static int parse_device_number(yajl_val obj, const struct umw_jloc *loc, const char *key,
                               bool required, int64_t *out, struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, key);
        yajl_val v = umw_json_member(obj, key);
        if (!v && !required)
                return 0;
        /* Linux device numbers: 12-bit major, 20-bit minor. */
        return umw_json_int64(v, &at, 0, strcmp(key, "major") == 0 ? 4095 : 1048575, out, err);
}

static int parse_device(yajl_val obj, const struct umw_jloc *loc, struct spec_device *d,
                        struct umw_error **err)
{
        struct umw_jloc path_at = umw_jloc_key(loc, "path");
        struct umw_jloc mode_at = umw_jloc_key(loc, "fileMode");
        yajl_val mode;
        int r = umw_json_object(obj, loc, err);
        if (r == 0)
                r = read_absolute_path(umw_json_member(obj, "path"), &path_at, &d->path, err);
        if (r == 0)
                r = parse_device_type(obj, loc, d, err);
        if (r == 0)
                r = parse_device_number(obj, loc, "major", d->type != 'p', &d->major, err);
        if (r == 0)
                r = parse_device_number(obj, loc, "minor", d->type != 'p', &d->minor, err);
        if (r == 0)
                r = member_u32(obj, loc, "uid", false, &d->uid, &d->has_uid, err);
        if (r == 0)
                r = member_u32(obj, loc, "gid", false, &d->gid, &d->has_gid, err);
        if (r < 0 || !(mode = umw_json_member(obj, "fileMode")))
                return r;
        /* Permission bits only: the file type comes from "type". */
        int64_t m = 0;
        r = umw_json_int64(mode, &mode_at, 0, 07777, &m, err);
        if (r < 0)
                return r;
        d->file_mode = (uint32_t)m;
        d->has_file_mode = true;
        return 0;
}

static int parse_devices(yajl_val arr, const struct umw_jloc *loc, struct spec *spec,
                         struct umw_error **err)
{
        int r = alloc_array(arr->u.array.len, sizeof(*spec->devices), &spec->devices, err);
        if (r < 0)
                return r;
        spec->n_devices = arr->u.array.len;
        for (size_t i = 0; i < arr->u.array.len; i++) {
                struct umw_jloc at = umw_jloc_index(loc, i);
                r = parse_device(arr->u.array.values[i], &at, &spec->devices[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_seccomp_arg(yajl_val obj, const struct umw_jloc *loc, struct spec_seccomp_arg *a,
                             struct umw_error **err)
{
        struct umw_jloc index_at = umw_jloc_key(loc, "index");
        struct umw_jloc value_at = umw_jloc_key(loc, "value");
        struct umw_jloc two_at = umw_jloc_key(loc, "valueTwo");
        struct umw_jloc op_at = umw_jloc_key(loc, "op");
        int64_t index = 0;
        int op = 0;
        int r = umw_json_object(obj, loc, err);
        if (r == 0)
                r = umw_json_int64(umw_json_member(obj, "index"), &index_at, 0, 5, &index, err);
        if (r == 0)
                r = umw_json_uint64(umw_json_member(obj, "value"), &value_at, &a->value, err);
        if (r == 0 && umw_json_member(obj, "valueTwo"))
                r = umw_json_uint64(umw_json_member(obj, "valueTwo"), &two_at, &a->value_two, err);
        if (r == 0)
                r = read_enum(umw_json_member(obj, "op"), &op_at, seccomp_ops,
                              ARRAY_SIZE(seccomp_ops), &op, err);
        if (r < 0)
                return r;
        a->index = (unsigned int)index;
        a->op = op;
        return 0;
}

static int parse_seccomp_rule(yajl_val obj, const struct umw_jloc *loc,
                              struct spec_seccomp_rule *rule, struct umw_error **err)
{
        struct umw_jloc names_at = umw_jloc_key(loc, "names");
        struct umw_jloc action_at = umw_jloc_key(loc, "action");
        struct umw_jloc args_at;
        yajl_val names, args = NULL;
        int action = 0;
        int r = umw_json_object(obj, loc, err);
        if (r < 0)
                return r;
        names = umw_json_member(obj, "names");
        if (!YAJL_IS_ARRAY(names) || names->u.array.len == 0)
                return umw_json_expected(&names_at, "a non-empty array of strings", err);
        r = umw_json_strv(names, &names_at, &rule->names, &rule->n_names, err);
        if (r == 0)
                r = read_enum(umw_json_member(obj, "action"), &action_at, seccomp_actions,
                              ARRAY_SIZE(seccomp_actions), &action, err);
        if (r == 0)
                r = member_u32(obj, loc, "errnoRet", false, &rule->errno_ret, &rule->has_errno_ret,
                               err);
        if (r == 0)
                r = member_typed(obj, loc, "args", true, &args, &args_at, err);
        if (r < 0)
                return r;
        rule->action = action;
        if (!args)
                return 0;
        r = alloc_array(args->u.array.len, sizeof(*rule->args), &rule->args, err);
        if (r < 0)
                return r;
        rule->n_args = args->u.array.len;
        for (size_t i = 0; i < args->u.array.len; i++) {
                struct umw_jloc at = umw_jloc_index(&args_at, i);
                r = parse_seccomp_arg(args->u.array.values[i], &at, &rule->args[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_seccomp_rules(yajl_val arr, const struct umw_jloc *loc, struct spec_seccomp *sc,
                               struct umw_error **err)
{
        int r = alloc_array(arr->u.array.len, sizeof(*sc->rules), &sc->rules, err);
        if (r < 0)
                return r;
        sc->n_rules = arr->u.array.len;
        for (size_t i = 0; i < arr->u.array.len; i++) {
                struct umw_jloc at = umw_jloc_index(loc, i);
                r = parse_seccomp_rule(arr->u.array.values[i], &at, &sc->rules[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_seccomp(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                         struct umw_error **err)
{
        struct umw_jloc action_at = umw_jloc_key(loc, "defaultAction");
        struct umw_jloc rules_at;
        yajl_val rules;
        int action = 0;
        int r = alloc_array(1, sizeof(*spec->seccomp), &spec->seccomp, err);
        if (r < 0)
                return r;
        struct spec_seccomp *sc = spec->seccomp;
        r = read_enum(umw_json_member(obj, "defaultAction"), &action_at, seccomp_actions,
                      ARRAY_SIZE(seccomp_actions), &action, err);
        if (r < 0)
                return r;
        sc->default_action = action;
        if ((r = member_u32(obj, loc, "defaultErrnoRet", false, &sc->default_errno_ret,
                            &sc->has_default_errno_ret, err)) < 0 ||
            (r = member_strv(obj, loc, "architectures", &sc->architectures, &sc->n_architectures,
                             err)) < 0 ||
            (r = member_strv(obj, loc, "flags", &sc->flags, &sc->n_flags, err)) < 0 ||
            (r = member_typed(obj, loc, "syscalls", true, &rules, &rules_at, err)) < 0)
                return r;
        return rules ? parse_seccomp_rules(rules, &rules_at, sc, err) : 0;
}

static int parse_time_offset(yajl_val obj, const struct umw_jloc *loc, const char *key,
                             int64_t *secs, uint32_t *nsecs, struct umw_error **err)
{
        struct umw_jloc at;
        yajl_val v;
        int r = member_typed(obj, loc, key, false, &v, &at, err);
        if (r < 0 || !v)
                return r;
        struct umw_jloc secs_at = umw_jloc_key(&at, "secs");
        struct umw_jloc nsecs_at = umw_jloc_key(&at, "nanosecs");
        yajl_val s = umw_json_member(v, "secs"), ns = umw_json_member(v, "nanosecs");
        int64_t n = 0;
        if (s && (r = umw_json_int64(s, &secs_at, INT64_MIN, INT64_MAX, secs, err)) < 0)
                return r;
        if (ns && (r = umw_json_int64(ns, &nsecs_at, 0, 999999999, &n, err)) < 0)
                return r;
        *nsecs = (uint32_t)n;
        return 0;
}

static int parse_linux_arrays(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                              struct umw_error **err)
{
        struct umw_jloc at;
        yajl_val v;
        int r;
        if ((r = member_typed(obj, loc, "namespaces", true, &v, &at, err)) < 0)
                return r;
        for (size_t i = 0; v && i < v->u.array.len; i++) {
                struct umw_jloc ns_at = umw_jloc_index(&at, i);
                if ((r = parse_namespace(v->u.array.values[i], &ns_at, spec, err)) < 0)
                        return r;
        }
        if ((r = member_typed(obj, loc, "uidMappings", true, &v, &at, err)) < 0 ||
            (v && (r = parse_idmaps(v, &at, &spec->uid_mappings, &spec->n_uid_mappings, err)) < 0))
                return r;
        if ((r = member_typed(obj, loc, "gidMappings", true, &v, &at, err)) < 0 ||
            (v && (r = parse_idmaps(v, &at, &spec->gid_mappings, &spec->n_gid_mappings, err)) < 0))
                return r;
        if ((r = member_typed(obj, loc, "devices", true, &v, &at, err)) < 0 ||
            (v && (r = parse_devices(v, &at, spec, err)) < 0))
                return r;
        if ((r = member_strv(obj, loc, "maskedPaths", &spec->masked_paths, &spec->n_masked_paths,
                             err)) < 0)
                return r;
        return member_strv(obj, loc, "readonlyPaths", &spec->readonly_paths,
                           &spec->n_readonly_paths, err);
}

static int parse_linux(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                       struct umw_error **err)
{
        struct umw_jloc at;
        yajl_val v;
        int r;
        note_unknown_keys(obj, loc, linux_keys);
        if ((r = parse_linux_arrays(obj, loc, spec, err)) < 0)
                return r;
        if ((r = member_string(obj, loc, "cgroupsPath", false, &spec->cgroups_path, err)) < 0)
                return r;
        if ((r = member_typed(obj, loc, "resources", false, &spec->resources, &at, err)) < 0)
                return r;
        if ((r = member_typed(obj, loc, "sysctl", false, &v, &at, err)) < 0 ||
            (v && (r = parse_kv_object(v, &at, &spec->sysctl, &spec->n_sysctl, err)) < 0))
                return r;
        if ((r = member_typed(obj, loc, "seccomp", false, &v, &at, err)) < 0 ||
            (v && (r = parse_seccomp(v, &at, spec, err)) < 0))
                return r;
        at = umw_jloc_key(loc, "rootfsPropagation");
        if ((v = umw_json_member(obj, "rootfsPropagation"))) {
                int unused = 0;
                if ((r = read_enum(v, &at, propagations, ARRAY_SIZE(propagations), &unused, err)) <
                    0)
                        return r;
                spec->rootfs_propagation = v->u.string;
        }
        if ((r = member_typed(obj, loc, "timeOffsets", false, &v, &at, err)) < 0 || !v)
                return r;
        if ((r = parse_time_offset(v, &at, "monotonic", &spec->time_offset_monotonic_secs,
                                   &spec->time_offset_monotonic_nsecs, err)) < 0)
                return r;
        return parse_time_offset(v, &at, "boottime", &spec->time_offset_boottime_secs,
                                 &spec->time_offset_boottime_nsecs, err);
}

static int parse_root(yajl_val top, const struct umw_jloc *loc, struct spec *spec,
                      struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, "root");
        yajl_val root = umw_json_member(top, "root");
        int r = umw_json_object(root, &at, err);
        if (r == 0)
                r = member_string(root, &at, "path", true, &spec->root_path, err);
        if (r == 0)
                r = member_bool(root, &at, "readonly", &spec->root_readonly, err);
        return r;
}

static int parse_spec(yajl_val top, const struct umw_jloc *loc, struct spec *spec,
                      struct umw_error **err)
{
        struct umw_jloc at;
        yajl_val v;
        int r;
        if ((r = umw_json_object(top, loc, err)) < 0)
                return r;
        note_unknown_keys(top, loc, top_keys);
        if ((r = member_string(top, loc, "ociVersion", true, &spec->oci_version, err)) < 0 ||
            (r = parse_root(top, loc, spec, err)) < 0 ||
            (r = member_string(top, loc, "hostname", false, &spec->hostname, err)) < 0 ||
            (r = member_string(top, loc, "domainname", false, &spec->domainname, err)) < 0)
                return r;
        if ((r = member_typed(top, loc, "process", false, &v, &at, err)) < 0 ||
            (v && (r = parse_process(v, &at, &spec->process, err)) < 0))
                return r;
        if ((r = member_typed(top, loc, "mounts", true, &v, &at, err)) < 0 ||
            (v && (r = parse_mounts(v, &at, spec, err)) < 0))
                return r;
        if ((r = member_typed(top, loc, "hooks", false, &v, &at, err)) < 0 ||
            (v && (r = parse_hooks(v, &at, spec, err)) < 0))
                return r;
        if ((r = member_typed(top, loc, "annotations", false, &v, &at, err)) < 0 ||
            (v && (r = parse_kv_object(v, &at, &spec->annotations, &spec->n_annotations, err)) < 0))
                return r;
        if ((r = member_typed(top, loc, "linux", false, &v, &at, err)) < 0 ||
            (v && (r = parse_linux(v, &at, spec, err)) < 0))
                return r;
        return 0;
}

int spec_load(const char *text, const char *file, struct spec **out, struct umw_error **err)
{
        struct umw_jloc loc;
        struct spec *spec = calloc(1, sizeof(*spec));
        if (!spec)
                return oom(err);
        /* In one arena: read at every start and exec (the sandbox's: 30 kB). */
        int r = umw_json_parse_doc(text, file, &spec->tree, err);
        if (r == 0) {
                umw_jloc_init(&loc, file);
                r = parse_spec(spec->tree, &loc, spec, err);
        }
        if (r == 0)
                r = netwall_check(spec, file, err);
        if (r < 0) {
                spec_free(spec);
                return r;
        }
        *out = spec;
        return 0;
}

int spec_load_file(const char *path, struct spec **out, struct umw_error **err)
{
        _cleanup_free_ char *text = NULL;
        int r = umw_read_file_at(AT_FDCWD, path, SPEC_MAX_SIZE, &text, NULL, err);
        if (r < 0)
                return r;
        return spec_load(text, path, out, err);
}

int spec_load_process(const char *text, const char *file, yajl_val *tree, struct spec_process *p,
                      struct umw_error **err)
{
        struct umw_jloc loc;
        yajl_val parsed = NULL;
        memset(p, 0, sizeof(*p));
        int r = umw_json_parse(text, file, &parsed, err);
        if (r < 0)
                return r;
        umw_jloc_init(&loc, file);
        r = parse_process(parsed, &loc, p, err);
        if (r < 0) {
                yajl_tree_free(parsed);
                return r;
        }
        *tree = parsed;
        return 0;
}

void spec_process_release(struct spec_process *p)
{
        free(p->additional_gids);
        free(p->args);
        free(p->env);
        free(p->rlimits);
        memset(p, 0, sizeof(*p));
}

static void seccomp_free(struct spec_seccomp *sc)
{
        if (!sc)
                return;
        for (size_t i = 0; sc->rules && i < sc->n_rules; i++) {
                free(sc->rules[i].names);
                free(sc->rules[i].args);
        }
        free(sc->rules);
        free(sc->architectures);
        free(sc->flags);
        free(sc);
}

void spec_free(struct spec *spec)
{
        if (!spec)
                return;
        spec_process_release(&spec->process);
        for (size_t i = 0; spec->mounts && i < spec->n_mounts; i++)
                free(spec->mounts[i].options);
        free(spec->mounts);
        for (int kind = 0; kind < SPEC_HOOK_COUNT; kind++) {
                for (size_t i = 0; i < spec->hooks[kind].count; i++) {
                        free(spec->hooks[kind].list[i].args);
                        free(spec->hooks[kind].list[i].env);
                }
                free(spec->hooks[kind].list);
        }
        free(spec->annotations);
        free(spec->uid_mappings);
        free(spec->gid_mappings);
        free(spec->devices);
        free(spec->sysctl);
        seccomp_free(spec->seccomp);
        free(spec->masked_paths);
        free(spec->readonly_paths);
        umw_json_doc_free(spec->tree);
        free(spec);
}

const char *spec_ns_name(enum spec_ns ns)
{
        for (size_t i = 0; i < ARRAY_SIZE(ns_names); i++) {
                if (ns_names[i].value == (int)ns)
                        return ns_names[i].name;
        }
        return NULL;
}

int spec_ns_clone_flag(enum spec_ns ns)
{
        return (unsigned int)ns < SPEC_NS_COUNT ? ns_clone_flags[ns] : 0;
}

const char *spec_annotation(const struct spec *spec, const char *key)
{
        for (size_t i = 0; i < spec->n_annotations; i++) {
                if (strcmp(spec->annotations[i].key, key) == 0)
                        return spec->annotations[i].value;
        }
        return NULL;
}
