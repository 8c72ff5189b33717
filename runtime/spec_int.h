/* Internal to the config.json parser (runtime/spec*.c): the readers every
 * section uses (spec_read.c) and the section parsers spec.c calls. Each
 * reader reports a bad value as one line naming the file and JSON path. */
#ifndef UMW_SPEC_INT_H
#define UMW_SPEC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "spec.h"

struct umw_error;
struct umw_jloc;

struct name_value {
        const char *name;
        int value;
};

int oom(struct umw_error **err);
/* calloc of n elements into *(void **)out, never NULL for n == 0. */
int alloc_array(size_t n, size_t size, void *out, struct umw_error **err);
/* Logs (debug) each key of obj that is not in known (NULL-terminated). */
void note_unknown_keys(yajl_val obj, const struct umw_jloc *loc, const char *const *known);
/* "expected BEFORE"GOT"AFTER", GOT quoted. */
int expected_quoting(const struct umw_jloc *loc, const char *before, const char *got,
                     const char *after, struct umw_error **err);
/* v as one of table's names: its value in *out. */
int read_enum(yajl_val v, const struct umw_jloc *loc, const struct name_value *table, size_t n,
              int *out, struct umw_error **err);
int read_u32(yajl_val v, const struct umw_jloc *loc, uint32_t *out, struct umw_error **err);
int read_absolute_path(yajl_val v, const struct umw_jloc *loc, const char **out,
                       struct umw_error **err);

/* Members of obj: absent ones leave *out untouched unless required. */
int member_string(yajl_val obj, const struct umw_jloc *loc, const char *key, bool required,
                  const char **out, struct umw_error **err);
int member_bool(yajl_val obj, const struct umw_jloc *loc, const char *key, bool *out,
                struct umw_error **err);
/* *present, when given, is set when the member is there. */
int member_u32(yajl_val obj, const struct umw_jloc *loc, const char *key, bool required,
               uint32_t *out, bool *present, struct umw_error **err);
int member_strv(yajl_val obj, const struct umw_jloc *loc, const char *key, const char ***out,
                size_t *count, struct umw_error **err);
/* The member as an object or array, its location in *at; *out stays NULL
 * when absent. */
int member_typed(yajl_val obj, const struct umw_jloc *loc, const char *key, bool array,
                 yajl_val *out, struct umw_jloc *at, struct umw_error **err);
/* An object of strings (annotations, sysctl) as key/value pairs. */
int parse_kv_object(yajl_val obj, const struct umw_jloc *loc, struct spec_kv **out, size_t *count,
                    struct umw_error **err);

/* The sections: process (spec_process.c; on failure p is released), hooks
 * (spec_hooks.c), linux (spec_linux.c) and its seccomp (spec_seccomp.c). */
int parse_process(yajl_val obj, const struct umw_jloc *loc, struct spec_process *p,
                  struct umw_error **err);
int parse_hooks(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                struct umw_error **err);
int parse_linux(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                struct umw_error **err);
int parse_seccomp(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                  struct umw_error **err);

#endif
