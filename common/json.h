/* JSON in and out, on yajl. Readers check types and report a bad value as one
 * line: "FILE: JSON.PATH: expected WHAT". Strings handed out point into the
 * parsed tree and live as long as it does. */
#ifndef UMW_JSON_H
#define UMW_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

struct umw_error;

/* Where a value sits, for error messages: the file and a JSON path such as
 * ".process.args[2]". Built by the caller as it descends, as a chain of
 * parents that is only rendered when a message needs it: a child points to
 * its parent and to its key, so both must outlive it (keys are literals or
 * the parsed tree's). */
struct umw_jloc {
        const char *file;
        const struct umw_jloc *parent; /* NULL at the root */
        /* Below a parent: the member's key, or NULL for the element at index.
         * At the root: a path rendered as it is, or NULL for ".". */
        const char *key;
        size_t index;
};

/* The longest path a message shows; a longer one is cut. */
#define UMW_JLOC_PATH_MAX 512

void umw_jloc_init(struct umw_jloc *loc, const char *file);
/* A root that stands for the value at path (e.g. ".linux.resources"). */
void umw_jloc_init_at(struct umw_jloc *loc, const char *file, const char *path);
/* Child locations: "<parent>.<key>" and "<parent>[<index>]". */
struct umw_jloc umw_jloc_key(const struct umw_jloc *parent, const char *key);
struct umw_jloc umw_jloc_index(const struct umw_jloc *parent, size_t index);
/* The path of loc in buf ("" at the root); control characters in keys show
 * as '?', so a key from the input cannot break a one-line message. */
const char *umw_jloc_path(const struct umw_jloc *loc, char buf[static UMW_JLOC_PATH_MAX]);

int umw_json_parse(const char *text, const char *file, yajl_val *out, struct umw_error **err);
/* The same tree umw_json_parse gives (same types, number flags, member
 * order, error messages), built in one arena: a few allocations instead of
 * one or more per value and per member. For a large document read at every
 * start (config.json). Freed with umw_json_doc_free only, never with
 * yajl_tree_free, and nothing in it may be freed or replaced on its own. */
int umw_json_parse_doc(const char *text, const char *file, yajl_val *out, struct umw_error **err);
void umw_json_doc_free(yajl_val doc);
/* "FILE: PATH: expected WHAT", classed as bad input. */
int umw_json_expected(const struct umw_jloc *loc, const char *what, struct umw_error **err);

/* The member of an object, or NULL when absent (a JSON null counts as absent). */
yajl_val umw_json_member(yajl_val obj, const char *key);
/* The member's string, or fallback when it is absent or not a string: for
 * documents of our own making (state, annotations), read leniently. */
const char *umw_json_member_str(yajl_val obj, const char *key, const char *fallback);

/* Typed reads of v at loc. */
int umw_json_object(yajl_val v, const struct umw_jloc *loc, struct umw_error **err);
int umw_json_array(yajl_val v, const struct umw_jloc *loc, struct umw_error **err);
int umw_json_string(yajl_val v, const struct umw_jloc *loc, const char **out,
                    struct umw_error **err);
int umw_json_bool(yajl_val v, const struct umw_jloc *loc, bool *out, struct umw_error **err);
int umw_json_int64(yajl_val v, const struct umw_jloc *loc, int64_t min, int64_t max, int64_t *out,
                   struct umw_error **err);
int umw_json_uint64(yajl_val v, const struct umw_jloc *loc, uint64_t *out, struct umw_error **err);
/* An array of strings as a NULL-terminated vector (the vector is malloc'd,
 * the strings are the tree's). */
int umw_json_strv(yajl_val v, const struct umw_jloc *loc, const char ***out, size_t *count,
                  struct umw_error **err);

/* A malloc'd JSON string literal (with quotes) for s. */
char *umw_json_quote(const char *s);

/* Generation: a yajl_gen whose buffer is handed out at the end. */
yajl_gen umw_jgen_new(bool pretty);
void umw_jgen_str(yajl_gen g, const char *s);
void umw_jgen_key_str(yajl_gen g, const char *key, const char *value);
void umw_jgen_key_int(yajl_gen g, const char *key, long long value);
void umw_jgen_key_bool(yajl_gen g, const char *key, bool value);
/* A parsed tree (yajl_tree) written back as it is. */
void umw_jgen_value(yajl_gen g, yajl_val v);
void umw_jgen_key(yajl_gen g, const char *key);
/* Copies the generated text into a malloc'd string and frees g. */
char *umw_jgen_finish(yajl_gen g, size_t *len);

#endif
