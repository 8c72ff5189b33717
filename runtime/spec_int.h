/* Internal to the config.json parser (runtime/spec*.c): the readers every
 * section uses (spec_read.c) and the section parsers spec.c calls. Each
 * reader reports a bad value as one line naming the file and JSON path. */
#ifndef UMW_SPEC_INT_H
#define UMW_SPEC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "runtime/spec.h"
#include "common/json.h"

struct umw_error;

struct name_value {
        const char *name;
        int value;
};

int spec_oom(struct umw_error **err);
/* calloc of n elements into *(void **)out, never NULL for n == 0. */
int spec_alloc_array(size_t n, size_t size, void *out, struct umw_error **err);
/* An array of LinuxIDMapping (containerID, hostID, size) into *out. */
int spec_parse_idmaps(yajl_val arr, const struct umw_jloc *loc, struct spec_idmap **out,
                      size_t *count, struct umw_error **err);
/* Logs (debug) each key of obj that is not in known (NULL-terminated). */
void spec_note_unknown_keys(yajl_val obj, const struct umw_jloc *loc, const char *const *known);
/* "expected BEFORE"GOT"AFTER", GOT quoted. */
int spec_expected_quoting(const struct umw_jloc *loc, const char *before, const char *got,
                          const char *after, struct umw_error **err);
/* v as one of table's names: its value in *out. */
/* "user", "mount", ... with their enum spec_ns (spec_ns.c). */
extern const struct name_value spec_ns_names[SPEC_NS_COUNT];

int spec_read_enum(yajl_val v, const struct umw_jloc *loc, const struct name_value *table, size_t n,
                   int *out, struct umw_error **err);
int spec_read_absolute_path(yajl_val v, const struct umw_jloc *loc, const char **out,
                            struct umw_error **err);
/* An object of strings (annotations, sysctl) as key/value pairs. */
int spec_parse_kv_object(yajl_val obj, const struct umw_jloc *loc, struct spec_kv **out,
                         size_t *count, struct umw_error **err);

/* Inline, as they were when the parser was one file: they read every member
 * of every config, at each create and exec, and as calls into spec_read.c
 * they cost 1% of spec_load's instructions (callgrind, podman's and the
 * sandbox's config). */
static inline int read_u32(yajl_val v, const struct umw_jloc *loc, uint32_t *out,
                           struct umw_error **err)
{
        int64_t n = 0;
        int r = umw_json_int64(v, loc, 0, UINT32_MAX, &n, err);
        if (r < 0)
                return r;
        *out = (uint32_t)n;
        return 0;
}

/* Member readers: absent members leave *out untouched unless required. */
static inline int member_string(yajl_val obj, const struct umw_jloc *loc, const char *key,
                                bool required, const char **out, struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, key);
        yajl_val v = umw_json_member(obj, key);
        if (!v)
                return required ? umw_json_expected(&at, "a string", err) : 0;
        return umw_json_string(v, &at, out, err);
}

static inline int member_bool(yajl_val obj, const struct umw_jloc *loc, const char *key, bool *out,
                              struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, key);
        yajl_val v = umw_json_member(obj, key);
        return v ? umw_json_bool(v, &at, out, err) : 0;
}

/* *present, when given, is set when the member is there. */
static inline int member_u32(yajl_val obj, const struct umw_jloc *loc, const char *key,
                             bool required, uint32_t *out, bool *present, struct umw_error **err)
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

static inline int member_strv(yajl_val obj, const struct umw_jloc *loc, const char *key,
                              const char ***out, size_t *count, struct umw_error **err)
{
        struct umw_jloc at = umw_jloc_key(loc, key);
        yajl_val v = umw_json_member(obj, key);
        return v ? umw_json_strv(v, &at, out, count, err) : 0;
}

/* The member as an object or array; *out stays NULL when absent. */
static inline int member_typed(yajl_val obj, const struct umw_jloc *loc, const char *key,
                               bool array, yajl_val *out, struct umw_jloc *at,
                               struct umw_error **err)
{
        *at = umw_jloc_key(loc, key);
        *out = umw_json_member(obj, key);
        if (!*out)
                return 0;
        return array ? umw_json_array(*out, at, err) : umw_json_object(*out, at, err);
}

/* The sections: process (spec_process.c; on failure p is released), hooks
 * (spec_hooks.c), linux (spec_linux.c) and its seccomp (spec_seccomp.c). */
int spec_parse_process(yajl_val obj, const struct umw_jloc *loc, struct spec_process *p,
                       struct umw_error **err);
int spec_parse_hooks(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                     struct umw_error **err);
int spec_parse_linux(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                     struct umw_error **err);
/* Refuses a linux.sysctl key (at loc) no namespace of the container's own
 * holds (spec_sysctl.c): namespaces must be parsed before. */
int spec_check_sysctl(const struct spec *spec, const struct umw_jloc *loc, struct umw_error **err);
int spec_parse_seccomp(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                       struct umw_error **err);
/* Sets spec->netwall from value, the annotation's (spec_netwall.c), refusing as bad
 * config naming file and the annotation: a value other than default-drop;
 * default-drop without a network namespace of the container's own or joined
 * by path (it would wall the host's); default-drop with CAP_NET_ADMIN in any
 * set of process.capabilities. Everything else must be parsed before. */
int spec_check_netwall(struct spec *spec, const char *value, const char *file,
                       struct umw_error **err);

#endif
