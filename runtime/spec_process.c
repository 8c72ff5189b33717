/* config.json's process object, also what exec --process reads: args, env,
 * cwd, user, console size, capabilities, rlimits. */
#include "runtime/spec.h"
#include "runtime/spec_int.h"
#include "runtime/caps.h"
#include "common/cleanup.h"
#include "common/json.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

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

static const char *const process_keys[] = {
    "terminal", "consoleSize", "user", "args", "env", "cwd", "capabilities", "rlimits",
    "noNewPrivileges", "oomScoreAdj",
    /* Security labels: this runtime has no LSM support, and podman sets
     * them on every container, so they are expected here. */
    "apparmorProfile", "selinuxLabel", NULL};

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
                                return spec_expected_quoting(&at, "a capability name, not ", name,
                                                             "", err);
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
        r = spec_read_enum(umw_json_member(obj, "type"), &type_at, rlimit_names,
                           ARRAY_SIZE(rlimit_names), &rl->resource, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_prev; i++) {
                if (prev[i].resource == rl->resource)
                        return spec_expected_quoting(&type_at, "each type once, ",
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
        int r = spec_alloc_array(arr->u.array.len, sizeof(*p->rlimits), &p->rlimits, err);
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
        int r;
        if ((r = member_u32(user, loc, "uid", false, &p->uid, NULL, err)) < 0 ||
            (r = member_u32(user, loc, "gid", false, &p->gid, NULL, err)) < 0 ||
            (r = member_u32(user, loc, "umask", false, &p->umask, &p->has_umask, err)) < 0 ||
            (r = member_typed(user, loc, "additionalGids", true, &gids, &gids_at, err)) < 0)
                return r;
        if (!gids)
                return 0;
        r = spec_alloc_array(gids->u.array.len, sizeof(uint32_t), &p->additional_gids, err);
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
        int r;
        if ((r = umw_json_int64(umw_json_member(obj, "height"), &h_at, 0, UINT16_MAX, &h, err)) <
                0 ||
            (r = umw_json_int64(umw_json_member(obj, "width"), &w_at, 0, UINT16_MAX, &w, err)) < 0)
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
        return spec_alloc_array(1, sizeof(*p->env), &p->env, err);
}

static int parse_process_members(yajl_val obj, const struct umw_jloc *loc, struct spec_process *p,
                                 struct umw_error **err)
{
        struct umw_jloc at;
        yajl_val v;
        int r = umw_json_object(obj, loc, err);
        if (r < 0)
                return r;
        spec_note_unknown_keys(obj, loc, process_keys);
        if ((r = parse_args(obj, loc, p, err)) < 0 || (r = parse_env(obj, loc, p, err)) < 0)
                return r;
        at = umw_jloc_key(loc, "cwd");
        if ((r = spec_read_absolute_path(umw_json_member(obj, "cwd"), &at, &p->cwd, err)) < 0)
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

int spec_parse_process(yajl_val obj, const struct umw_jloc *loc, struct spec_process *p,
                       struct umw_error **err)
{
        int r = parse_process_members(obj, loc, p, err);
        if (r < 0)
                spec_process_release(p);
        return r;
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
        r = spec_parse_process(parsed, &loc, p, err);
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
