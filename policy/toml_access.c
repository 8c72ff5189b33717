/* Reading a parsed TOML document: typed lookups and the unknown-key check,
 * each refusal naming FILE:LINE:COLUMN of the value (or table) at fault. */
#include "policy/toml.h"

#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *toml_printable(const char *s, char out[static 80])
{
        size_t o = 0;
        /* Past the cut, only the rest of a UTF-8 sequence: never half a character. */
        for (; *s && (o < 72 || ((unsigned char)*s & 0xc0) == 0x80); s++) {
                unsigned char c = (unsigned char)*s;
                if (c < 0x20 || c == 0x7f)
                        o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
                else
                        out[o++] = (char)c;
        }
        strcpy(out + o, *s ? "..." : "");
        return out;
}

const char *toml_kind_name(enum toml_kind kind)
{
        switch (kind) {
        case TOML_TABLE:
                return "a table";
        case TOML_ARRAY:
                return "an array";
        case TOML_STRING:
                return "a string";
        case TOML_INTEGER:
                return "an integer";
        case TOML_BOOL:
                return "a boolean";
        }
        return "a value";
}

const struct toml_entry *toml_table_entry(const struct toml_value *t, const char *key)
{
        if (!t || t->kind != TOML_TABLE)
                return NULL;
        for (size_t i = 0; i < t->table.n; i++)
                if (strcmp(t->table.entries[i].key, key) == 0)
                        return &t->table.entries[i];
        return NULL;
}

const struct toml_value *toml_table_get(const struct toml_value *t, const char *key)
{
        const struct toml_entry *e = toml_table_entry(t, key);
        return e ? e->value : NULL;
}

static bool key_allowed(const char *key, const char *const allowed[])
{
        for (size_t i = 0; allowed[i]; i++)
                if (strcmp(key, allowed[i]) == 0)
                        return true;
        return false;
}

/* "a, b, c" for the message that lists what would have been accepted. */
static char *join_keys(const char *const allowed[])
{
        size_t len = 1;
        for (size_t i = 0; allowed[i]; i++)
                len += strlen(allowed[i]) + 2;
        char *s = malloc(len);
        if (!s)
                return NULL;
        s[0] = '\0';
        for (size_t i = 0; allowed[i]; i++) {
                if (i > 0)
                        strcat(s, ", ");
                strcat(s, allowed[i]);
        }
        return s;
}

int toml_check_keys(const struct toml_value *t, const char *const allowed[], const char *file,
                    struct umw_error **err)
{
        if (t->kind != TOML_TABLE)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: expected a table, found %s", file, t->line, t->column,
                                toml_kind_name(t->kind));
        for (size_t i = 0; i < t->table.n; i++) {
                const struct toml_entry *e = &t->table.entries[i];
                if (key_allowed(e->key, allowed))
                        continue;
                _cleanup_free_ char *list = join_keys(allowed);
                char buf[80];
                if (!allowed[0])
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "%s:%u:%u: unknown key '%s': this table takes no keys",
                                        file, e->line, e->column, toml_printable(e->key, buf));
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: unknown key '%s': expected one of %s", file, e->line,
                                e->column, toml_printable(e->key, buf),
                                list ? list : "(out of memory)");
        }
        return 0;
}

int toml_get(const struct toml_value *t, const char *key, enum toml_kind kind, const char *file,
             const struct toml_value **out, struct umw_error **err)
{
        const struct toml_value *v = toml_table_get(t, key);
        if (!v)
                return 0;
        if (v->kind != kind) {
                char buf[80];
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s:%u:%u: '%s': expected %s, found %s", file, v->line, v->column,
                                toml_printable(key, buf), toml_kind_name(kind),
                                toml_kind_name(v->kind));
        }
        *out = v;
        return 1;
}

int toml_get_string(const struct toml_value *t, const char *key, const char *file, const char **out,
                    struct umw_error **err)
{
        const struct toml_value *v = NULL;
        int r = toml_get(t, key, TOML_STRING, file, &v, err);
        if (r > 0)
                *out = v->string;
        return r;
}

int toml_get_integer(const struct toml_value *t, const char *key, const char *file, int64_t *out,
                     struct umw_error **err)
{
        const struct toml_value *v = NULL;
        int r = toml_get(t, key, TOML_INTEGER, file, &v, err);
        if (r > 0)
                *out = v->integer;
        return r;
}

int toml_get_bool(const struct toml_value *t, const char *key, const char *file, bool *out,
                  struct umw_error **err)
{
        const struct toml_value *v = NULL;
        int r = toml_get(t, key, TOML_BOOL, file, &v, err);
        if (r > 0)
                *out = v->boolean;
        return r;
}
