/* A TOML reader for editing (Codex's config.toml): the file as a list of
 * statements, each header and each key = value with its offsets, so that
 * an edit splices lines in or out and leaves every other byte, comment and
 * blank line as it was. It reads all of TOML's syntax (multi-line strings,
 * arrays over lines, inline tables, quoted and dotted keys) to find where
 * statements begin and end; a value's insides are checked for their syntax,
 * not their meaning. A bad byte is one line: "FILE:LINE:COL: expected". */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOML_EDIT_MAX_DEPTH 64

struct tparse {
        const char *file;
        const char *s;
        size_t len, pos;
        unsigned depth;
        struct umw_error **err;
};

static int fail(struct tparse *p, size_t at, const char *what)
{
        return text_fail_at(p->err, p->file, p->s, at, what);
}

static char peek(const struct tparse *p, size_t ahead)
{
        return p->pos + ahead < p->len ? p->s[p->pos + ahead] : '\0';
}

static bool starts(const struct tparse *p, const char *w)
{
        return p->len - p->pos >= strlen(w) && memcmp(p->s + p->pos, w, strlen(w)) == 0;
}

static void skip_spaces(struct tparse *p)
{
        while (peek(p, 0) == ' ' || peek(p, 0) == '\t')
                p->pos++;
}

/* Spaces, newlines and comments, as an array's insides allow. */
static void skip_blank(struct tparse *p)
{
        for (;;) {
                skip_spaces(p);
                if (peek(p, 0) == '#')
                        p->pos = text_line_end(p->s, p->len, p->pos);
                if (peek(p, 0) == '\r' && peek(p, 1) == '\n')
                        p->pos++;
                if (peek(p, 0) != '\n')
                        return;
                p->pos++;
        }
}

static bool bare_char(char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
}

/* A one-line string (quote " or '), decoded where out is not NULL; only
 * the escapes a key needs are decoded, the rest kept as written. */
static int line_string(struct tparse *p, char quote, char **out)
{
        size_t at = p->pos++;
        _cleanup_free_ char *buf = out ? malloc(p->len - at + 1) : NULL;
        if (out && !buf)
                return umw_fail_sys(p->err, ENOMEM, "%s", p->file);
        size_t n = 0;
        for (;;) {
                char c = peek(p, 0);
                if (c == '\0' || c == '\n')
                        return fail(p, at,
                                    quote == '"' ? "string not closed: expected '\"'"
                                                 : "string not closed: expected \"'\"");
                p->pos++;
                if (c == quote)
                        break;
                if (c == '\\' && quote == '"') {
                        c = peek(p, 0);
                        if (!c || c == '\n')
                                return fail(p, p->pos - 1, "expected an escape after '\\'");
                        p->pos++;
                        c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
                }
                if (buf)
                        buf[n++] = c;
        }
        if (out) {
                buf[n] = '\0';
                *out = TAKE_PTR(buf);
        }
        return 0;
}

static int multi_string(struct tparse *p, const char *delim)
{
        size_t at = p->pos;
        p->pos += 3;
        while (!starts(p, delim)) {
                if (p->pos >= p->len)
                        return fail(p, at,
                                    delim[0] == '"' ? "string not closed: expected '\"\"\"'"
                                                    : "string not closed: expected \"'''\"");
                if (delim[0] == '"' && peek(p, 0) == '\\')
                        p->pos++;
                p->pos++;
        }
        p->pos += 3;
        for (int extra = 0; extra < 2 && peek(p, 0) == delim[0]; extra++)
                p->pos++; /* a closing quote or two inside, before the delimiter */
        return 0;
}

static int key_part(struct tparse *p, char **out)
{
        char c = peek(p, 0);
        if (c == '"' || c == '\'')
                return line_string(p, c, out);
        size_t at = p->pos;
        while (bare_char(peek(p, 0)))
                p->pos++;
        if (p->pos == at)
                return fail(p, at, "expected a key");
        *out = strndup(p->s + at, p->pos - at);
        return *out ? 0 : umw_fail_sys(p->err, ENOMEM, "%s", p->file);
}

static void free_key(char **key, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(key[i]);
        free(key);
}

/* A dotted key into *key (n parts). */
static int key_path(struct tparse *p, char ***key, size_t *n)
{
        *key = NULL;
        *n = 0;
        for (;;) {
                char **k = realloc(*key, (*n + 1) * sizeof(**key));
                if (!k)
                        return umw_fail_sys(p->err, ENOMEM, "%s", p->file);
                *key = k;
                int r = key_part(p, &k[*n]);
                if (r < 0)
                        return r;
                (*n)++;
                skip_spaces(p);
                if (peek(p, 0) != '.')
                        return 0;
                p->pos++;
                skip_spaces(p);
        }
}

static int value(struct tparse *p);

static int array(struct tparse *p)
{
        p->pos++;
        for (;;) {
                skip_blank(p);
                if (peek(p, 0) == ']')
                        break;
                int r = value(p);
                if (r < 0)
                        return r;
                skip_blank(p);
                if (peek(p, 0) == ',') {
                        p->pos++;
                        continue;
                }
                if (peek(p, 0) != ']')
                        return fail(p, p->pos,
                                    p->pos < p->len ? "expected ',' or ']'"
                                                    : "array not closed: expected ']'");
                break;
        }
        p->pos++;
        return 0;
}

static int keyval(struct tparse *p, struct tstmt *st);

static int inline_table(struct tparse *p)
{
        p->pos++;
        skip_blank(p);
        while (peek(p, 0) != '}') {
                struct tstmt kv = {0};
                int r = keyval(p, &kv);
                free_key(kv.key, kv.nkey);
                if (r < 0)
                        return r;
                skip_blank(p);
                if (peek(p, 0) == ',') {
                        p->pos++;
                        skip_blank(p);
                } else if (peek(p, 0) != '}') {
                        return fail(p, p->pos, "expected ',' or '}'");
                }
        }
        p->pos++;
        return 0;
}

static bool scalar_char(char c)
{
        return bare_char(c) || c == '+' || c == '.' || c == ':';
}

/* A number, boolean or date: checked for its characters only. */
static int scalar(struct tparse *p)
{
        size_t at = p->pos;
        while (scalar_char(peek(p, 0)) ||
               /* a date and a time may be parted by one space */
               (peek(p, 0) == ' ' && p->pos - at == 10 && peek(p, 1) >= '0' && peek(p, 1) <= '9'))
                p->pos++;
        size_t n = p->pos - at;
        const char *w = p->s + at;
        bool word = (n == 4 && !memcmp(w, "true", 4)) || (n == 5 && !memcmp(w, "false", 5));
        bool number = n > 0 && ((w[0] >= '0' && w[0] <= '9') || w[0] == '+' || w[0] == '-');
        bool special = (n == 3 && (!memcmp(w, "inf", 3) || !memcmp(w, "nan", 3)));
        if (!word && !number && !special)
                return fail(p, at,
                            "expected a value (a string, number, boolean, date, array "
                            "or inline table)");
        return 0;
}

static int value(struct tparse *p)
{
        if (++p->depth > TOML_EDIT_MAX_DEPTH)
                return fail(p, p->pos, "nested too deep");
        int r;
        if (starts(p, "\"\"\"") || starts(p, "'''"))
                r = multi_string(p, starts(p, "'''") ? "'''" : "\"\"\"");
        else if (peek(p, 0) == '"' || peek(p, 0) == '\'')
                r = line_string(p, peek(p, 0), NULL);
        else if (peek(p, 0) == '[')
                r = array(p);
        else if (peek(p, 0) == '{')
                r = inline_table(p);
        else
                r = scalar(p);
        p->depth--;
        return r;
}

static int end_of_line(struct tparse *p)
{
        skip_spaces(p);
        if (peek(p, 0) == '#')
                p->pos = text_line_end(p->s, p->len, p->pos);
        if (peek(p, 0) == '\r' && peek(p, 1) == '\n')
                p->pos++;
        if (p->pos < p->len && peek(p, 0) != '\n')
                return fail(p, p->pos, "expected the end of the line");
        if (p->pos < p->len)
                p->pos++;
        return 0;
}

static struct tstmt *add_stmt(struct tdoc *d)
{
        if (d->n == d->cap) {
                size_t cap = d->cap ? 2 * d->cap : 16;
                struct tstmt *st = realloc(d->st, cap * sizeof(*st));
                if (!st)
                        return NULL;
                d->st = st;
                d->cap = cap;
        }
        struct tstmt *s = &d->st[d->n++];
        *s = (struct tstmt){0};
        return s;
}

static int header(struct tparse *p, struct tstmt *st)
{
        st->kind = peek(p, 1) == '[' ? TS_ARRAY_TABLE : TS_TABLE;
        p->pos += st->kind == TS_ARRAY_TABLE ? 2 : 1;
        skip_spaces(p);
        int r = key_path(p, &st->key, &st->nkey);
        if (r < 0)
                return r;
        if (peek(p, 0) != ']' || (st->kind == TS_ARRAY_TABLE && peek(p, 1) != ']'))
                return fail(p, p->pos,
                            st->kind == TS_ARRAY_TABLE ? "expected ']]'" : "expected ']'");
        p->pos += st->kind == TS_ARRAY_TABLE ? 2 : 1;
        return 0;
}

static int keyval(struct tparse *p, struct tstmt *st)
{
        st->kind = TS_KEYVAL;
        int r = key_path(p, &st->key, &st->nkey);
        if (r < 0)
                return r;
        if (peek(p, 0) != '=')
                return fail(p, p->pos, "expected '=' after a key");
        p->pos++;
        skip_spaces(p);
        st->vstart = p->pos;
        if ((r = value(p)) < 0)
                return r;
        st->vend = p->pos;
        return 0;
}

static bool same_key(const struct tstmt *a, const struct tstmt *b)
{
        if (a->nkey != b->nkey)
                return false;
        for (size_t i = 0; i < a->nkey; i++)
                if (strcmp(a->key[i], b->key[i]) != 0)
                        return false;
        return true;
}

/* A table defined twice, or a key twice in one table, is refused. */
static int check_unique(struct tparse *p, const struct tdoc *d)
{
        const struct tstmt *st = &d->st[d->n - 1];
        for (size_t i = d->n - 1; i-- > 0;) {
                const struct tstmt *o = &d->st[i];
                if (st->kind == TS_KEYVAL && o->kind != TS_KEYVAL)
                        break; /* the start of st's table */
                if (st->kind != TS_ARRAY_TABLE && o->kind == st->kind && same_key(o, st))
                        return fail(p, st->key_at,
                                    st->kind == TS_TABLE ? "table defined twice" : "duplicate key");
        }
        return 0;
}

static int statement(struct tparse *p, struct tdoc *d)
{
        struct tstmt *st = add_stmt(d);
        if (!st)
                return umw_fail_sys(p->err, ENOMEM, "%s", p->file);
        st->start = p->pos;
        skip_spaces(p);
        st->key_at = p->pos;
        int r = peek(p, 0) == '[' ? header(p, st) : keyval(p, st);
        if (r < 0 || (r = end_of_line(p)) < 0)
                return r;
        st->end = p->pos;
        return check_unique(p, d);
}

static int parse(struct tparse *p, struct tdoc *d)
{
        if (starts(p, "\xef\xbb\xbf"))
                p->pos = 3;
        while (p->pos < p->len) {
                size_t line = p->pos;
                skip_spaces(p);
                char c = peek(p, 0);
                if (c == '#' || c == '\n' || c == '\r') {
                        int r = end_of_line(p);
                        if (r < 0)
                                return r;
                        continue;
                }
                p->pos = line;
                int r = statement(p, d);
                if (r < 0)
                        return r;
        }
        return 0;
}

int tdoc_parse(const char *file, const char *s, size_t len, struct tdoc *d, struct umw_error **err)
{
        struct tparse p = {.file = file, .s = s, .len = len, .err = err};
        *d = (struct tdoc){0};
        if (strlen(s) != len)
                return fail(&p, strlen(s), "a NUL byte in the file");
        int r = parse(&p, d);
        if (r < 0)
                tdoc_free(d);
        return r;
}

void tdoc_free(struct tdoc *d)
{
        for (size_t i = 0; i < d->n; i++)
                free_key(d->st[i].key, d->st[i].nkey);
        free(d->st);
        *d = (struct tdoc){0};
}

static bool key_is(const struct tstmt *st, const char *const *key, size_t n)
{
        if (st->nkey != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (strcmp(st->key[i], key[i]) != 0)
                        return false;
        return true;
}

ssize_t tdoc_table(const struct tdoc *d, const char *const *path, size_t n)
{
        for (size_t i = 0; i < d->n; i++)
                if (d->st[i].kind == TS_TABLE && key_is(&d->st[i], path, n))
                        return (ssize_t)i;
        return -1;
}

/* The statements of table (-1: the root) are those after its header up to
 * the next header. */
static size_t section_first(ssize_t table)
{
        return table < 0 ? 0 : (size_t)table + 1;
}

ssize_t tdoc_key(const struct tdoc *d, ssize_t table, const char *const *key, size_t n)
{
        for (size_t i = section_first(table); i < d->n && d->st[i].kind == TS_KEYVAL; i++)
                if (key_is(&d->st[i], key, n))
                        return (ssize_t)i;
        return -1;
}

ssize_t tdoc_key_prefix(const struct tdoc *d, ssize_t table, const char *first)
{
        for (size_t i = section_first(table); i < d->n && d->st[i].kind == TS_KEYVAL; i++)
                if (strcmp(d->st[i].key[0], first) == 0)
                        return (ssize_t)i;
        return -1;
}

size_t tdoc_section_end(const struct tdoc *d, ssize_t table)
{
        size_t end = table < 0 ? 0 : d->st[table].end;
        for (size_t i = section_first(table); i < d->n && d->st[i].kind == TS_KEYVAL; i++)
                end = d->st[i].end;
        return end;
}

ssize_t tdoc_last_table_under(const struct tdoc *d, const char *first)
{
        ssize_t last = -1;
        for (size_t i = 0; i < d->n; i++)
                if (d->st[i].kind != TS_KEYVAL && strcmp(d->st[i].key[0], first) == 0)
                        last = (ssize_t)i;
        return last;
}
