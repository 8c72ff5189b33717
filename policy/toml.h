/* A strict reader for the TOML subset umwelt's policy files use: comments,
 * bare and quoted keys, [table] and [[array of tables]] headers with a single
 * name, [parent.table] headers of two keys whose parent is defined before
 * (a table in [parent], or in the last [[parent]]), strings (basic and
 * literal, one line), decimal integers, booleans and arrays whose items
 * share one kind. Everything else TOML has (dotted keys, longer dotted
 * headers, floats, dates, inline tables, multi-line strings,
 * hex/octal/binary integers) is refused by name, as is any duplicate key or
 * redefined table: "FILE:LINE:COLUMN: what was expected", class
 * UMW_EXIT_CONFIG. Lines and columns count from 1, columns in characters. */
#ifndef UMW_POLICY_TOML_H
#define UMW_POLICY_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct umw_error;

#define TOML_MAX_FILE_SIZE  (1 << 20)
#define TOML_MAX_DEPTH      32   /* arrays nested in arrays */
#define TOML_MAX_TABLE_KEYS 1024 /* keeps duplicate checks cheap on hostile files */

enum toml_kind {
        TOML_TABLE,
        TOML_ARRAY,
        TOML_STRING,
        TOML_INTEGER,
        TOML_BOOL,
};

struct toml_value;

struct toml_entry {
        char *key;
        unsigned line, column; /* of the key (or of the header that made a table) */
        struct toml_value *value;
};

/* A parsed value; read the member its kind names. Strings never hold a NUL
 * byte, so they are exact C strings. */
struct toml_value {
        enum toml_kind kind;
        unsigned line, column; /* where the value, or a table's header, starts */
        union {
                struct {
                        struct toml_entry *entries; /* in file order */
                        size_t n;
                } table;
                struct {
                        struct toml_value **items;
                        size_t n;
                } array;
                char *string;
                int64_t integer;
                bool boolean;
        };
        size_t cap;          /* allocated entries or items */
        bool is_table_array; /* an array made by [[name]] headers */
};

/* Parses len bytes of text; file names it in messages. *out is the root
 * table, freed with toml_free. */
int toml_parse(const char *text, size_t len, const char *file, struct toml_value **out,
               struct umw_error **err);
/* Reads fd (a regular file of at most TOML_MAX_FILE_SIZE bytes) and parses it. */
int toml_parse_fd(int fd, const char *file, struct toml_value **out, struct umw_error **err);
int toml_parse_file(const char *path, struct toml_value **out, struct umw_error **err);
void toml_free(struct toml_value *v);

static inline void toml_freep(struct toml_value **v)
{
        toml_free(*v);
        *v = NULL;
}
#define _cleanup_toml_ __attribute__((cleanup(toml_freep)))

/* "a string", "an integer", ... for messages. */
const char *toml_kind_name(enum toml_kind kind);
/* A key or string fit for a one-line message, in out: control bytes as
 * \xNN, cut at a length no message needs to exceed. */
const char *toml_printable(const char *s, char out[static 80]);

/* The entry or value under key in table t; NULL when absent or t is not a table. */
const struct toml_entry *toml_table_entry(const struct toml_value *t, const char *key);
const struct toml_value *toml_table_get(const struct toml_value *t, const char *key);

/* Unknown keys are errors everywhere in umwelt's policy: the first key of t
 * not in allowed (NULL-terminated) is reported at its line and column. */
int toml_check_keys(const struct toml_value *t, const char *const allowed[], const char *file,
                    struct umw_error **err);

/* Optional typed members of table t: 0 when key is absent (*out untouched),
 * 1 when present, or an error "FILE:LINE:COL: 'key': expected KIND, found
 * KIND" when it has another kind. */
int toml_get(const struct toml_value *t, const char *key, enum toml_kind kind, const char *file,
             const struct toml_value **out, struct umw_error **err);
int toml_get_string(const struct toml_value *t, const char *key, const char *file, const char **out,
                    struct umw_error **err);
int toml_get_integer(const struct toml_value *t, const char *key, const char *file, int64_t *out,
                     struct umw_error **err);
int toml_get_bool(const struct toml_value *t, const char *key, const char *file, bool *out,
                  struct umw_error **err);

#endif
