/* The strict TOML reader: one pass over the text, recursion bounded by
 * TOML_MAX_DEPTH, every refusal at the line and column where it starts. */
#include "policy/toml.h"

#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

struct parser {
        const char *p, *end;
        unsigned line, col;
        const char *file;
        struct toml_value *root, *current;
        struct umw_error **err;
};

struct pos {
        unsigned line, col;
};

static struct pos here(const struct parser *ps)
{
        return (struct pos){ps->line, ps->col};
}

static int fail_at(struct parser *ps, struct pos at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(struct parser *ps, struct pos at, const char *fmt, ...)
{
        char *what = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&what, fmt, ap);
        va_end(ap);
        if (n < 0)
                return umw_fail(ps->err, UMW_EXIT_CONFIG, ENOMEM, "%s: out of memory", ps->file);
        int r = umw_fail(ps->err, UMW_EXIT_CONFIG, EINVAL, "%s:%u:%u: %s", ps->file, at.line,
                         at.col, what);
        free(what);
        return r;
}

static bool at_end(const struct parser *ps)
{
        return ps->p >= ps->end;
}

static int peek(const struct parser *ps)
{
        return at_end(ps) ? -1 : (unsigned char)*ps->p;
}

static int peek_at(const struct parser *ps, size_t ahead)
{
        return (size_t)(ps->end - ps->p) > ahead ? (unsigned char)ps->p[ahead] : -1;
}

/* Columns count characters: UTF-8 continuation bytes do not move them. */
static void advance(struct parser *ps)
{
        unsigned char c = (unsigned char)*ps->p++;
        if (c == '\n') {
                ps->line++;
                ps->col = 1;
        } else if ((c & 0xc0) != 0x80) {
                ps->col++;
        }
}

static bool is_control(int c)
{
        return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f;
}

static bool is_bare_key_char(int c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
}

/* What stands at the parser, for "found ..." in messages. */
static const char *describe(const struct parser *ps, char out[static 24])
{
        int c = peek(ps);
        if (c < 0)
                return "the end of the file";
        if (c == '\n')
                return "the end of the line";
        if (c == '\r')
                return "a carriage return";
        if (c < 0x20 || c >= 0x7f)
                snprintf(out, 24, "byte 0x%02x", (unsigned)c);
        else
                snprintf(out, 24, "'%c'", c);
        return out;
}

/* Length of the valid UTF-8 sequence at s, 0 when it is not one (overlong
 * forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_sequence_length(const unsigned char *s, size_t avail)
{
        unsigned char c = s[0];
        size_t len;
        uint32_t cp, min;
        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf) {
                len = 2, cp = c & 0x1f, min = 0x80;
        } else if ((c & 0xf0) == 0xe0) {
                len = 3, cp = c & 0x0f, min = 0x800;
        } else if (c >= 0xf0 && c <= 0xf4) {
                len = 4, cp = c & 0x07, min = 0x10000;
        } else {
                return 0;
        }
        if (avail < len)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = cp << 6 | (s[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return len;
}

/* The whole text must be UTF-8 before any of it is read as TOML. */
static int check_utf8(struct parser *ps)
{
        while (!at_end(ps)) {
                size_t n =
                    utf8_sequence_length((const unsigned char *)ps->p, (size_t)(ps->end - ps->p));
                if (n == 0)
                        return fail_at(ps, here(ps), "invalid UTF-8 (byte 0x%02x)",
                                       (unsigned char)*ps->p);
                while (n-- > 0)
                        advance(ps);
        }
        return 0;
}

static size_t utf8_encode(uint32_t cp, char *out)
{
        if (cp < 0x80) {
                out[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char)(0xc0 | cp >> 6);
                out[1] = (char)(0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char)(0xe0 | cp >> 12);
                out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
                out[2] = (char)(0x80 | (cp & 0x3f));
                return 3;
        }
        out[0] = (char)(0xf0 | cp >> 18);
        out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[3] = (char)(0x80 | (cp & 0x3f));
        return 4;
}

static void skip_space(struct parser *ps)
{
        while (peek(ps) == ' ' || peek(ps) == '\t')
                advance(ps);
}

static int skip_comment(struct parser *ps)
{
        if (peek(ps) != '#')
                return 0;
        while (!at_end(ps) && peek(ps) != '\n') {
                if (is_control(peek(ps)) && !(peek(ps) == '\r' && peek_at(ps, 1) == '\n'))
                        return fail_at(ps, here(ps), "control character 0x%02x in a comment",
                                       (unsigned)peek(ps));
                advance(ps);
        }
        return 0;
}

static bool at_newline(const struct parser *ps)
{
        return peek(ps) == '\n' || (peek(ps) == '\r' && peek_at(ps, 1) == '\n');
}

static void skip_newline(struct parser *ps)
{
        if (peek(ps) == '\r')
                advance(ps);
        advance(ps);
}

/* The rest of a line after a key/value pair or a header: blanks, a comment. */
static int expect_line_end(struct parser *ps, const char *after)
{
        skip_space(ps);
        int r = skip_comment(ps);
        if (r < 0)
                return r;
        if (at_end(ps))
                return 0;
        if (at_newline(ps)) {
                skip_newline(ps);
                return 0;
        }
        char buf[24];
        return fail_at(ps, here(ps), "expected the end of the line after %s, found %s", after,
                       describe(ps, buf));
}

/* Blanks, comments and newlines, as allowed between array items. */
static int skip_blank_lines(struct parser *ps)
{
        for (;;) {
                skip_space(ps);
                int r = skip_comment(ps);
                if (r < 0)
                        return r;
                if (!at_newline(ps))
                        return 0;
                skip_newline(ps);
        }
}

static struct toml_value *value_new(enum toml_kind kind, struct pos at)
{
        struct toml_value *v = calloc(1, sizeof(*v));
        if (v) {
                v->kind = kind;
                v->line = at.line;
                v->column = at.col;
        }
        return v;
}

static int oom(struct parser *ps)
{
        return umw_fail(ps->err, UMW_EXIT_CONFIG, ENOMEM, "%s: out of memory", ps->file);
}

static int grow(void **array, size_t *cap, size_t need, size_t size)
{
        if (need <= *cap)
                return 0;
        size_t bigger = *cap ? *cap * 2 : 4;
        void *p = reallocarray(*array, bigger, size);
        if (!p)
                return -ENOMEM;
        *array = p;
        *cap = bigger;
        return 0;
}

static int hex_value(int c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* \uXXXX or \UXXXXXXXX, the parser on the 'u' or 'U'. */
static int parse_unicode_escape(struct parser *ps, struct pos at, char *out, size_t *outlen)
{
        size_t digits = peek(ps) == 'u' ? 4 : 8;
        advance(ps);
        uint32_t cp = 0;
        for (size_t i = 0; i < digits; i++) {
                int h = hex_value(peek(ps));
                if (h < 0)
                        return fail_at(ps, at, "bad escape: \\%c needs %zu hexadecimal digits",
                                       digits == 4 ? 'u' : 'U', digits);
                cp = cp << 4 | (uint32_t)h;
                advance(ps);
        }
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return fail_at(ps, at, "bad escape: U+%04X is not a Unicode scalar value",
                               (unsigned)cp);
        if (cp == 0)
                return fail_at(ps, at, "bad escape: a string may not contain NUL");
        *outlen = utf8_encode(cp, out);
        return 0;
}

static int parse_escape(struct parser *ps, char *out, size_t *outlen)
{
        struct pos at = here(ps);
        advance(ps); /* the backslash */
        static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
        int c = peek(ps);
        const char *hit = c > 0 ? strchr(from, c) : NULL;
        if (hit) {
                advance(ps);
                out[0] = to[hit - from];
                *outlen = 1;
                return 0;
        }
        if (c == 'u' || c == 'U')
                return parse_unicode_escape(ps, at, out, outlen);
        char buf[24];
        return fail_at(ps, at,
                       "bad escape: '\\' followed by %s (expected one of \\b \\t \\n "
                       "\\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX)",
                       describe(ps, buf));
}

/* Where the string opened at ps ends on its line, or NULL: decoding never
 * makes a string longer than its source, so this bounds the buffer. */
static const char *string_close(const struct parser *ps, char quote)
{
        for (const char *s = ps->p + 1; s < ps->end && *s != '\n'; s++) {
                if (*s == quote)
                        return s;
                if (quote == '"' && *s == '\\' && s + 1 < ps->end && s[1] != '\n')
                        s++;
        }
        return NULL;
}

/* A one-line basic ("...") or literal ('...') string, the parser on the quote. */
static int parse_string(struct parser *ps, char **out)
{
        struct pos at = here(ps);
        char quote = *ps->p;
        if (peek_at(ps, 1) == quote && peek_at(ps, 2) == quote)
                return fail_at(ps, at, "multi-line strings are not supported");
        const char *close = string_close(ps, quote);
        if (!close)
                return fail_at(ps, at, "unterminated string: expected a closing %c on this line",
                               quote);
        _cleanup_free_ char *s = malloc((size_t)(close - ps->p));
        if (!s)
                return oom(ps);
        size_t n = 0;
        advance(ps);
        while (ps->p < close) {
                int c = peek(ps);
                if (is_control(c))
                        return fail_at(ps, here(ps),
                                       "control character 0x%02x in a string (write it as an "
                                       "escape)",
                                       (unsigned)c);
                if (c == '\\' && quote == '"') {
                        size_t len = 0;
                        int r = parse_escape(ps, s + n, &len);
                        if (r < 0)
                                return r;
                        n += len;
                        continue;
                }
                s[n++] = (char)c;
                advance(ps);
        }
        advance(ps); /* the closing quote */
        s[n] = '\0';
        *out = TAKE_PTR(s);
        return 0;
}

static int parse_key(struct parser *ps, char **out)
{
        int c = peek(ps);
        if (c == '"' || c == '\'')
                return parse_string(ps, out);
        const char *start = ps->p;
        while (is_bare_key_char(peek(ps)))
                advance(ps);
        if (ps->p == start) {
                char buf[24];
                return fail_at(ps, here(ps), "expected a key, found %s", describe(ps, buf));
        }
        *out = strndup(start, (size_t)(ps->p - start));
        return *out ? 0 : oom(ps);
}

/* A dot after a key: TOML would read a dotted key, this reader does not. */
static int refuse_dotted(struct parser *ps, const char *what)
{
        skip_space(ps);
        if (peek(ps) != '.')
                return 0;
        return fail_at(ps, here(ps), "%s are not supported: write a [table] header instead", what);
}

static bool is_digit(int c)
{
        return c >= '0' && c <= '9';
}

/* What a number-like value that is no integer turns out to be, judged by
 * what follows its digits, the parser after any sign. */
static int refuse_number(struct parser *ps, struct pos at, bool sign)
{
        const char *s = ps->p;
        while (s < ps->end && (is_digit(*s) || *s == '_'))
                s++;
        int c = s < ps->end ? (unsigned char)*s : -1;
        size_t ndigits = (size_t)(s - ps->p);
        bool inf_or_nan = ndigits == 0 && (c == 'i' || c == 'n');
        if (c == '.' || c == 'e' || c == 'E' || inf_or_nan)
                return fail_at(ps, at, "floats are not supported: expected an integer");
        if ((c == '-' && !sign && ndigits == 4) || (c == ':' && !sign && ndigits == 2))
                return fail_at(ps, at, "dates and times are not supported");
        return 0;
}

/* Decimal, optional sign, '_' only between digits, no leading zero. */
static int parse_integer(struct parser *ps, int64_t *out)
{
        struct pos at = here(ps);
        bool negative = peek(ps) == '-', sign = negative || peek(ps) == '+';
        if (sign)
                advance(ps);
        int r = refuse_number(ps, at, sign);
        if (r < 0)
                return r;
        if (peek(ps) == '0' &&
            (peek_at(ps, 1) == 'x' || peek_at(ps, 1) == 'o' || peek_at(ps, 1) == 'b'))
                return fail_at(ps, at,
                               "hexadecimal, octal and binary integers are not "
                               "supported: write it in decimal");
        if (!is_digit(peek(ps)))
                return fail_at(ps, at, "bad integer: expected a digit after the sign");
        if (peek(ps) == '0' && (is_digit(peek_at(ps, 1)) || peek_at(ps, 1) == '_'))
                return fail_at(ps, at, "bad integer: leading zeros are not allowed");
        uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, v = 0;
        while (is_digit(peek(ps)) || peek(ps) == '_') {
                if (peek(ps) == '_' && !is_digit(peek_at(ps, 1)))
                        return fail_at(ps, here(ps),
                                       "bad integer: '_' must stand between two digits");
                if (peek(ps) != '_') {
                        unsigned d = (unsigned)(peek(ps) - '0');
                        if (v > (limit - d) / 10)
                                return fail_at(ps, at, "bad integer: out of the 64-bit range");
                        v = v * 10 + d;
                }
                advance(ps);
        }
        *out = negative ? (int64_t)(0 - v) : (int64_t)v;
        return 0;
}

static int parse_word(struct parser *ps, struct toml_value *v)
{
        struct pos at = here(ps);
        const char *start = ps->p;
        while (is_bare_key_char(peek(ps)))
                advance(ps);
        size_t n = (size_t)(ps->p - start);
        if ((n == 4 && memcmp(start, "true", 4) == 0) ||
            (n == 5 && memcmp(start, "false", 5) == 0)) {
                v->boolean = n == 4;
                return 0;
        }
        if ((n == 3 && memcmp(start, "inf", 3) == 0) || (n == 3 && memcmp(start, "nan", 3) == 0))
                return fail_at(ps, at, "floats are not supported: expected an integer");
        return fail_at(ps, at,
                       "expected a value (a quoted string, an integer, true, false or an "
                       "array), found a bare word");
}

static int parse_value(struct parser *ps, unsigned depth, struct toml_value **out);

static int array_push(struct parser *ps, struct toml_value *a, struct toml_value *item)
{
        if (grow((void **)&a->array.items, &a->cap, a->array.n + 1, sizeof(*a->array.items)) < 0)
                return oom(ps);
        a->array.items[a->array.n++] = item;
        return 0;
}

static int parse_array_item(struct parser *ps, unsigned depth, struct toml_value *a)
{
        struct toml_value *item = NULL;
        int r = parse_value(ps, depth, &item);
        if (r < 0)
                return r;
        if (a->array.n > 0 && item->kind != a->array.items[0]->kind) {
                r = fail_at(ps, (struct pos){item->line, item->column},
                            "mixed types in an array: expected %s like the first item, found %s",
                            toml_kind_name(a->array.items[0]->kind), toml_kind_name(item->kind));
                toml_free(item);
                return r;
        }
        r = array_push(ps, a, item);
        if (r < 0)
                toml_free(item);
        return r;
}

/* [ item, item, ] across lines, the parser on the '['. */
static int parse_array(struct parser *ps, unsigned depth, struct toml_value *a)
{
        struct pos open = here(ps);
        advance(ps);
        for (;;) {
                int r = skip_blank_lines(ps);
                if (r < 0)
                        return r;
                if (at_end(ps))
                        return fail_at(ps, open, "unterminated array: expected ']'");
                if (peek(ps) == ']')
                        break;
                r = parse_array_item(ps, depth, a);
                if (r < 0)
                        return r;
                r = skip_blank_lines(ps);
                if (r < 0)
                        return r;
                if (peek(ps) == ',') {
                        advance(ps);
                        continue;
                }
                if (at_end(ps))
                        return fail_at(ps, open, "unterminated array: expected ']'");
                if (peek(ps) != ']') {
                        char buf[24];
                        return fail_at(ps, here(ps), "expected ',' or ']' in an array, found %s",
                                       describe(ps, buf));
                }
        }
        advance(ps);
        return 0;
}

static int parse_value_into(struct parser *ps, unsigned depth, struct toml_value *v)
{
        int c = peek(ps);
        switch (v->kind) {
        case TOML_STRING:
                return parse_string(ps, &v->string);
        case TOML_INTEGER:
                return parse_integer(ps, &v->integer);
        case TOML_BOOL:
                return parse_word(ps, v);
        case TOML_ARRAY:
                if (depth >= TOML_MAX_DEPTH)
                        return fail_at(ps, here(ps), "arrays nested deeper than %d",
                                       TOML_MAX_DEPTH);
                return parse_array(ps, depth + 1, v);
        case TOML_TABLE:
                break;
        }
        if (c == '{')
                return fail_at(ps, here(ps),
                               "inline tables are not supported: write a [table] header instead");
        char buf[24];
        return fail_at(ps, here(ps),
                       "expected a value (a quoted string, an integer, true, false or an array), "
                       "found %s",
                       describe(ps, buf));
}

/* The kind a value starting with c would have; TOML_TABLE for none. */
static enum toml_kind kind_of(int c)
{
        if (c == '"' || c == '\'')
                return TOML_STRING;
        if (is_digit(c) || c == '+' || c == '-')
                return TOML_INTEGER;
        if (c == '[')
                return TOML_ARRAY;
        if (c >= 'a' && c <= 'z')
                return TOML_BOOL;
        return TOML_TABLE;
}

static int parse_value(struct parser *ps, unsigned depth, struct toml_value **out)
{
        _cleanup_toml_ struct toml_value *v = value_new(kind_of(peek(ps)), here(ps));
        if (!v)
                return oom(ps);
        int r = parse_value_into(ps, depth, v);
        if (r < 0)
                return r;
        *out = TAKE_PTR(v);
        return 0;
}

static int table_add(struct parser *ps, struct toml_value *t, char *key, struct pos at,
                     struct toml_value *v)
{
        if (t->table.n >= TOML_MAX_TABLE_KEYS)
                return fail_at(ps, at, "more than %d keys in one table", TOML_MAX_TABLE_KEYS);
        if (grow((void **)&t->table.entries, &t->cap, t->table.n + 1, sizeof(*t->table.entries)) <
            0)
                return oom(ps);
        t->table.entries[t->table.n++] = (struct toml_entry){key, at.line, at.col, v};
        return 0;
}

static int refuse_duplicate(struct parser *ps, const struct toml_value *t, const char *key,
                            struct pos at)
{
        const struct toml_entry *e = toml_table_entry(t, key);
        if (!e)
                return 0;
        char buf[80];
        return fail_at(ps, at, "duplicate key '%s' (first defined at %u:%u)",
                       toml_printable(key, buf), e->line, e->column);
}

/* key = value, the parser on the key. */
static int parse_key_value(struct parser *ps)
{
        struct pos at = here(ps);
        _cleanup_free_ char *key = NULL;
        int r;
        if ((r = parse_key(ps, &key)) < 0 || (r = refuse_dotted(ps, "dotted keys")) < 0 ||
            (r = refuse_duplicate(ps, ps->current, key, at)) < 0)
                return r;
        if (peek(ps) != '=') {
                char buf[24], kbuf[80];
                return fail_at(ps, here(ps), "expected '=' after the key '%s', found %s",
                               toml_printable(key, kbuf), describe(ps, buf));
        }
        advance(ps);
        skip_space(ps);
        _cleanup_toml_ struct toml_value *v = NULL;
        if ((r = parse_value(ps, 0, &v)) < 0 || (r = table_add(ps, ps->current, key, at, v)) < 0)
                return r;
        TAKE_PTR(key);
        TAKE_PTR(v);
        return expect_line_end(ps, "the value");
}

/* The name of a [name], [parent.name] or [[name]] header and its closing
 * bracket(s); *parent NULL for a single key. */
static int parse_header_name(struct parser *ps, bool array, char **parent, char **out)
{
        skip_space(ps);
        _cleanup_free_ char *name = NULL;
        int r = parse_key(ps, &name);
        if (r < 0)
                return r;
        skip_space(ps);
        if (!array && peek(ps) == '.') {
                advance(ps);
                skip_space(ps);
                *parent = TAKE_PTR(name);
                if ((r = parse_key(ps, &name)) < 0)
                        return r;
        }
        if ((r = refuse_dotted(ps, array ? "dotted table names" : "table names of three keys")) < 0)
                return r;
        if (peek(ps) != ']' || (array && peek_at(ps, 1) != ']')) {
                char buf[24];
                return fail_at(ps, here(ps), "expected '%s' to close the table header, found %s",
                               array ? "]]" : "]", describe(ps, buf));
        }
        advance(ps);
        if (array)
                advance(ps);
        *out = TAKE_PTR(name);
        return 0;
}

/* The table a [parent.name] header opens in: [parent]'s, or the last
 * [[parent]]'s. */
static int parent_table(struct parser *ps, const char *parent, const char *name, struct pos at,
                        struct toml_value **out)
{
        const struct toml_entry *e = toml_table_entry(ps->root, parent);
        struct toml_value *v = e ? e->value : NULL;
        if (v && v->is_table_array && v->array.n > 0)
                v = v->array.items[v->array.n - 1];
        if (v && v->kind == TOML_TABLE) {
                *out = v;
                return 0;
        }
        char pbuf[80], nbuf[80];
        return fail_at(ps, at, "table '%s.%s': expected a [%s] or [[%s]] header before it",
                       toml_printable(parent, pbuf), toml_printable(name, nbuf), pbuf, pbuf);
}

static int open_table(struct parser *ps, struct toml_value *in, char **name, struct pos at)
{
        const struct toml_entry *e = toml_table_entry(in, *name);
        char buf[80];
        if (e && e->value->kind == TOML_TABLE)
                return fail_at(ps, at, "table '%s' is defined twice (first at %u:%u)",
                               toml_printable(*name, buf), e->line, e->column);
        if (e)
                return fail_at(ps, at, "table '%s' redefines the key defined at %u:%u",
                               toml_printable(*name, buf), e->line, e->column);
        _cleanup_toml_ struct toml_value *t = value_new(TOML_TABLE, at);
        if (!t)
                return oom(ps);
        int r = table_add(ps, in, *name, at, t);
        if (r < 0)
                return r;
        *name = NULL;
        ps->current = TAKE_PTR(t);
        return 0;
}

static int open_array_table(struct parser *ps, char **name, struct pos at)
{
        const struct toml_entry *e = toml_table_entry(ps->root, *name);
        struct toml_value *a = e ? e->value : NULL;
        if (a && !a->is_table_array) {
                char buf[80];
                return fail_at(
                    ps, at, "array of tables '%s' redefines the key defined at %u:%u as %s",
                    toml_printable(*name, buf), e->line, e->column, toml_kind_name(a->kind));
        }
        _cleanup_toml_ struct toml_value *t = value_new(TOML_TABLE, at);
        if (!t)
                return oom(ps);
        if (!a) {
                _cleanup_toml_ struct toml_value *fresh = value_new(TOML_ARRAY, at);
                if (!fresh)
                        return oom(ps);
                fresh->is_table_array = true;
                int r = table_add(ps, ps->root, *name, at, fresh);
                if (r < 0)
                        return r;
                *name = NULL;
                a = TAKE_PTR(fresh);
        }
        int r = array_push(ps, a, t);
        if (r < 0)
                return r;
        ps->current = TAKE_PTR(t);
        return 0;
}

/* [name], [parent.name] or [[name]], the parser on the first '['. Policy
 * files are at most three levels deep: [parent.name] opens a table in
 * [parent], or in the last [[parent]] (a host action's [action.params]). */
static int parse_header(struct parser *ps)
{
        struct pos at = here(ps);
        bool array = peek_at(ps, 1) == '[';
        advance(ps);
        if (array)
                advance(ps);
        _cleanup_free_ char *parent = NULL, *name = NULL;
        struct toml_value *in = ps->root;
        int r = parse_header_name(ps, array, &parent, &name);
        if (r < 0 || (parent && (r = parent_table(ps, parent, name, at, &in)) < 0))
                return r;
        r = array ? open_array_table(ps, &name, at) : open_table(ps, in, &name, at);
        if (r < 0)
                return r;
        return expect_line_end(ps, "the table header");
}

static int parse_document(struct parser *ps)
{
        for (;;) {
                skip_space(ps);
                if (at_end(ps))
                        return 0;
                int c = peek(ps), r;
                if (c == '#' || at_newline(ps))
                        r = expect_line_end(ps, "the comment");
                else if (c == '[')
                        r = parse_header(ps);
                else if (is_bare_key_char(c) || c == '"' || c == '\'')
                        r = parse_key_value(ps);
                else {
                        char buf[24];
                        r = fail_at(ps, here(ps),
                                    "expected a key, a [table] header or a comment, found %s",
                                    describe(ps, buf));
                }
                if (r < 0)
                        return r;
        }
}

int toml_parse(const char *text, size_t len, const char *file, struct toml_value **out,
               struct umw_error **err)
{
        struct parser ps = {
            .p = text, .end = text + len, .line = 1, .col = 1, .file = file, .err = err};
        int r = check_utf8(&ps);
        if (r < 0)
                return r;
        _cleanup_toml_ struct toml_value *root = value_new(TOML_TABLE, (struct pos){1, 1});
        if (!root)
                return oom(&ps);
        ps = (struct parser){.p = text,
                             .end = text + len,
                             .line = 1,
                             .col = 1,
                             .file = file,
                             .root = root,
                             .current = root,
                             .err = err};
        r = parse_document(&ps);
        if (r < 0)
                return r;
        *out = TAKE_PTR(root);
        return 0;
}

int toml_parse_fd(int fd, const char *file, struct toml_value **out, struct umw_error **err)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return umw_fail_errno(err, "stat %s", file);
        if (!S_ISREG(st.st_mode))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: not a regular file", file);
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = umw_read_fd(fd, file, TOML_MAX_FILE_SIZE, &text, &len, err);
        if (r < 0)
                return r;
        return toml_parse(text, len, file, out, err);
}

int toml_parse_file(const char *path, struct toml_value **out, struct umw_error **err)
{
        /* O_NONBLOCK: a FIFO planted under the name must not hang the open. */
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return umw_fail_errno(err, "open %s", path);
        return toml_parse_fd(fd, path, out, err);
}

void toml_free(struct toml_value *v)
{
        if (!v)
                return;
        switch (v->kind) {
        case TOML_TABLE:
                for (size_t i = 0; i < v->table.n; i++) {
                        free(v->table.entries[i].key);
                        toml_free(v->table.entries[i].value);
                }
                free(v->table.entries);
                break;
        case TOML_ARRAY:
                for (size_t i = 0; i < v->array.n; i++)
                        toml_free(v->array.items[i]);
                free(v->array.items);
                break;
        case TOML_STRING:
                free(v->string);
                break;
        case TOML_INTEGER:
        case TOML_BOOL:
                break;
        }
        free(v);
}
