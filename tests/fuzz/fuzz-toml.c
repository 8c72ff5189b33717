/* libFuzzer harness for the strict TOML reader: any bytes must parse into a
 * tree that can be walked and freed, or fail with a one-line error, never
 * crash, overflow the stack or leak. */
#include "policy/toml.h"
#include "common/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const some_keys[] = {"path", "mode", "preset", NULL};

/* Touches every node (so ASan sees every byte of it) and runs the lookups
 * and schema helpers the policy code will run on each table. */
static size_t walk(const struct toml_value *v)
{
        size_t n = 1;
        switch (v->kind) {
        case TOML_TABLE:
                for (size_t i = 0; i < v->table.n; i++) {
                        const struct toml_entry *e = &v->table.entries[i];
                        if (toml_table_get(v, e->key) != e->value)
                                abort();
                        n += strlen(e->key) + walk(e->value);
                }
                struct umw_error *err = NULL;
                const char *s = NULL;
                if (toml_check_keys(v, some_keys, "fuzz.toml", &err) < 0 && !strchr(err->msg, ':'))
                        abort();
                umw_error_free(err);
                err = NULL;
                toml_get_string(v, "path", "fuzz.toml", &s, &err);
                umw_error_free(err);
                break;
        case TOML_ARRAY:
                for (size_t i = 0; i < v->array.n; i++) {
                        if (v->array.items[i]->kind != v->array.items[0]->kind)
                                abort();
                        n += walk(v->array.items[i]);
                }
                break;
        case TOML_STRING:
                n += strlen(v->string);
                break;
        case TOML_INTEGER:
        case TOML_BOOL:
                break;
        }
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct toml_value *root = NULL;
        struct umw_error *err = NULL;
        if (toml_parse((const char *)data, size, "fuzz.toml", &root, &err) == 0) {
                if (err || walk(root) == 0)
                        abort();
                toml_free(root);
        } else if (!err || root || strchr(err->msg, '\n')) {
                abort();
        }
        umw_error_free(err);
        return 0;
}
