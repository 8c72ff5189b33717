/* config.json's linux object: namespaces and id mappings, devices, sysctl,
 * masked and read-only paths, rootfs propagation, time offsets (its seccomp
 * object is spec_seccomp.c's). */
#include "runtime/spec.h"
#include "runtime/spec_int.h"
#include "common/cleanup.h"
#include "common/json.h"

#include <string.h>

static const struct name_value propagations[] = {
    {"shared", 0},  {"slave", 0},  {"private", 0},  {"unbindable", 0},
    {"rshared", 0}, {"rslave", 0}, {"rprivate", 0}, {"runbindable", 0},
};

/* mountLabel is the SELinux label for mounts, unused like the ones above. */
static const char *const linux_keys[] = {
    "namespaces",  "uidMappings", "gidMappings",       "devices",     "cgroupsPath",
    "resources",   "sysctl",      "seccomp",           "maskedPaths", "readonlyPaths",
    "timeOffsets", "mountLabel",  "rootfsPropagation", NULL};

static int parse_namespace(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                           struct umw_error **err)
{
        struct umw_jloc type_at = umw_jloc_key(loc, "type");
        struct umw_jloc path_at = umw_jloc_key(loc, "path");
        int type = 0;
        int r;
        if ((r = umw_json_object(obj, loc, err)) < 0 ||
            (r = spec_read_enum(umw_json_member(obj, "type"), &type_at, spec_ns_names,
                                SPEC_NS_COUNT, &type, err)) < 0)
                return r;
        struct spec_namespace *ns = &spec->namespaces[type];
        if (ns->enabled)
                return spec_expected_quoting(&type_at, "each type once, ", spec_ns_name(type),
                                             " is listed twice", err);
        ns->enabled = true;
        yajl_val path = umw_json_member(obj, "path");
        return path ? spec_read_absolute_path(path, &path_at, &ns->path, err) : 0;
}

int spec_parse_idmaps(yajl_val arr, const struct umw_jloc *loc, struct spec_idmap **out,
                      size_t *count, struct umw_error **err)
{
        int r = spec_alloc_array(arr->u.array.len, sizeof(**out), out, err);
        if (r < 0)
                return r;
        *count = arr->u.array.len;
        for (size_t i = 0; i < arr->u.array.len; i++) {
                struct umw_jloc at = umw_jloc_index(loc, i);
                struct umw_jloc size_at = umw_jloc_key(&at, "size");
                yajl_val m = arr->u.array.values[i];
                struct spec_idmap *map = &(*out)[i];
                int64_t size = 0;
                if ((r = umw_json_object(m, &at, err)) < 0 ||
                    (r = member_u32(m, &at, "containerID", true, &map->container_id, NULL, err)) <
                        0 ||
                    (r = member_u32(m, &at, "hostID", true, &map->host_id, NULL, err)) < 0 ||
                    (r = umw_json_int64(umw_json_member(m, "size"), &size_at, 1, UINT32_MAX, &size,
                                        err)) < 0)
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

/* A file's absolute path; trailing slashes (runc and crun strip them) name
 * the same file, so they go, in the tree's own copy. */
static int parse_device_path(yajl_val v, const struct umw_jloc *loc, const char **out,
                             struct umw_error **err)
{
        int r = spec_read_absolute_path(v, loc, out, err);
        if (r < 0)
                return r;
        char *path = v->u.string;
        size_t n = strlen(path);
        while (n > 1 && path[n - 1] == '/')
                path[--n] = '\0';
        const char *name = strrchr(path, '/') + 1;
        if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return umw_json_expected(loc, "an absolute file path", err);
        return 0;
}

static int parse_device(yajl_val obj, const struct umw_jloc *loc, struct spec_device *d,
                        struct umw_error **err)
{
        struct umw_jloc path_at = umw_jloc_key(loc, "path");
        struct umw_jloc mode_at = umw_jloc_key(loc, "fileMode");
        yajl_val mode;
        int r;
        if ((r = umw_json_object(obj, loc, err)) < 0 ||
            (r = parse_device_path(umw_json_member(obj, "path"), &path_at, &d->path, err)) < 0 ||
            (r = parse_device_type(obj, loc, d, err)) < 0 ||
            (r = parse_device_number(obj, loc, "major", d->type != 'p', &d->major, err)) < 0 ||
            (r = parse_device_number(obj, loc, "minor", d->type != 'p', &d->minor, err)) < 0 ||
            (r = member_u32(obj, loc, "uid", false, &d->uid, &d->has_uid, err)) < 0 ||
            (r = member_u32(obj, loc, "gid", false, &d->gid, &d->has_gid, err)) < 0)
                return r;
        if (!(mode = umw_json_member(obj, "fileMode")))
                return 0;
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
        int r = spec_alloc_array(arr->u.array.len, sizeof(*spec->devices), &spec->devices, err);
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
            (v &&
             (r = spec_parse_idmaps(v, &at, &spec->uid_mappings, &spec->n_uid_mappings, err)) < 0))
                return r;
        if ((r = member_typed(obj, loc, "gidMappings", true, &v, &at, err)) < 0 ||
            (v &&
             (r = spec_parse_idmaps(v, &at, &spec->gid_mappings, &spec->n_gid_mappings, err)) < 0))
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

int spec_parse_linux(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                     struct umw_error **err)
{
        struct umw_jloc at;
        yajl_val v;
        int r;
        spec_note_unknown_keys(obj, loc, linux_keys);
        if ((r = parse_linux_arrays(obj, loc, spec, err)) < 0)
                return r;
        if ((r = member_string(obj, loc, "cgroupsPath", false, &spec->cgroups_path, err)) < 0)
                return r;
        if ((r = member_typed(obj, loc, "resources", false, &spec->resources, &at, err)) < 0)
                return r;
        if ((r = member_typed(obj, loc, "sysctl", false, &v, &at, err)) < 0 ||
            (v && (r = spec_parse_kv_object(v, &at, &spec->sysctl, &spec->n_sysctl, err)) < 0) ||
            (v && (r = spec_check_sysctl(spec, &at, err)) < 0))
                return r;
        if ((r = member_typed(obj, loc, "seccomp", false, &v, &at, err)) < 0 ||
            (v && (r = spec_parse_seccomp(v, &at, spec, err)) < 0))
                return r;
        at = umw_jloc_key(loc, "rootfsPropagation");
        if ((v = umw_json_member(obj, "rootfsPropagation"))) {
                int unused = 0;
                if ((r = spec_read_enum(v, &at, propagations, ARRAY_SIZE(propagations), &unused,
                                        err)) < 0)
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
