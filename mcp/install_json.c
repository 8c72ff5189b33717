/* Edits of a JSON or JSONC text through the offsets install_jsonc.c found:
 * an item inserted, removed or its value replaced, each a splice, laid out
 * as the file around it is (its indent unit, one item a line or all on
 * one line, a trailing comma kept where the file has one). */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_string(FILE *f, const char *s)
{
        _cleanup_free_ char *q = json_quote(s);
        fputs(q ? q : "\"\"", f);
}

/* How a value is laid out: compact (the canonical form values are compared
 * in), on one line with spaces, or one item a line below indent. */
struct layout {
        bool compact, one_line;
        const char *indent, *unit;
};

static bool scalars_only(const struct jnode *v)
{
        for (size_t i = 0; i < v->n; i++)
                if (v->items[i].kind == JK_OBJECT || v->items[i].kind == JK_ARRAY)
                        return false;
        return true;
}

static void put_indent(FILE *f, const struct layout *l, unsigned depth)
{
        fputs(l->indent, f);
        for (unsigned i = 0; i < depth; i++)
                fputs(l->unit, f);
}

static void put_value(FILE *f, const char *s, const struct jnode *v, const struct layout *l,
                      unsigned depth)
{
        if (v->kind == JK_STRING) {
                put_string(f, v->str);
                return;
        }
        if (v->kind != JK_OBJECT && v->kind != JK_ARRAY) {
                fwrite(s + v->start, 1, v->end - v->start, f);
                return;
        }
        bool obj = v->kind == JK_OBJECT;
        /* Arrays of strings stay on one line: a command reads as one. */
        bool lines = !l->compact && !l->one_line && v->n > 0 && (obj || !scalars_only(v));
        fputc(obj ? '{' : '[', f);
        for (size_t i = 0; i < v->n; i++) {
                if (i > 0)
                        fputs(l->compact || lines ? "," : ", ", f);
                if (lines) {
                        fputc('\n', f);
                        put_indent(f, l, depth + 1);
                }
                if (obj) {
                        put_string(f, v->items[i].key);
                        fputs(l->compact ? ":" : ": ", f);
                }
                put_value(f, s, &v->items[i], l, depth + 1);
        }
        if (lines) {
                fputc('\n', f);
                put_indent(f, l, depth);
        }
        fputc(obj ? '}' : ']', f);
}

static char *render(const char *s, const struct jnode *v, const struct layout *l)
{
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (!f)
                return NULL;
        put_value(f, s, v, l, 0);
        if (fclose(f) == 0)
                return out;
        free(out);
        return NULL;
}

char *json_canon(const char *s, const struct jnode *v)
{
        struct layout l = {.compact = true, .indent = "", .unit = ""};
        return render(s, v, &l);
}

/* value (compact JSON of our making) laid out below indent, or on one line. */
static char *layout_value(const char *value, const char *indent, const char *unit, bool one_line)
{
        struct jnode v;
        _cleanup_error_ struct umw_error *err = NULL;
        if (jdoc_parse("(value)", value, strlen(value), false, false, &v, &err) < 0)
                return NULL;
        struct layout l = {.one_line = one_line, .indent = indent, .unit = unit};
        char *out = render(value, &v, &l);
        jnode_free(&v);
        return out;
}

static bool multi_line(const char *s, const struct jnode *c)
{
        return memchr(s + c->start, '\n', c->end - c->start) != NULL;
}

/* "key": value, or the value alone for an array's element. */
static char *item_text(const char *key, const char *value, const char *indent, const char *unit,
                       bool one_line, bool raw)
{
        _cleanup_free_ char *v = raw ? strdup(value) : layout_value(value, indent, unit, one_line);
        _cleanup_free_ char *k = key ? json_quote(key) : strdup("");
        char *out = NULL;
        if (!v || !k || asprintf(&out, "%s%s%s", k, key ? ": " : "", v) < 0)
                return NULL;
        return out;
}

/* Past the spaces and comments that follow off on its line: where a new
 * line goes, or off itself when something else follows on the line. */
static size_t end_of_line_after(const char *s, size_t len, size_t off)
{
        size_t i = off;
        for (;;) {
                while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
                        i++;
                if (i + 1 < len && s[i] == '/' && s[i + 1] == '/')
                        return text_line_end(s, len, i);
                if (i + 1 < len && s[i] == '/' && s[i + 1] == '*') {
                        const char *e = strstr(s + i + 2, "*/");
                        if (!e || memchr(s + i, '\n', (size_t)(e - s) - i))
                                return off;
                        i = (size_t)(e - s) + 2;
                        continue;
                }
                return i < len && s[i] == '\n' ? i : off;
        }
}

static int splice_str(struct text *t, size_t at, size_t del, const char *ins)
{
        return text_splice(t, at, del, ins, strlen(ins));
}

static int insert_empty(struct text *t, const struct jnode *c, const char *key, const char *value,
                        const char *unit, bool raw)
{
        /* A list of strings starts on one line: ["Bash"]. */
        if (c->kind == JK_ARRAY && c->end == c->start + 2 && value[0] != '{' && value[0] != '[')
                return splice_str(t, c->start + 1, 0, value);
        _cleanup_free_ char *outer = text_indent_at(t->s, c->start);
        _cleanup_free_ char *inner = NULL, *item = NULL, *ins = NULL;
        if (!outer || asprintf(&inner, "%s%s", outer, unit) < 0)
                return -ENOMEM;
        if (!(item = item_text(key, value, inner, unit, false, raw)))
                return -ENOMEM;
        bool open_line = !multi_line(t->s, c);
        if (asprintf(&ins, "\n%s%s%s%s", inner, item, open_line ? "\n" : "",
                     open_line ? outer : "") < 0)
                return -ENOMEM;
        return splice_str(t, c->start + 1, 0, ins);
}

static int insert_last(struct text *t, const struct jnode *c, const char *key, const char *value,
                       const char *unit, bool raw)
{
        const struct jnode *last = &c->items[c->n - 1];
        bool lines = multi_line(t->s, c);
        _cleanup_free_ char *indent = text_indent_at(t->s, last->item_start);
        _cleanup_free_ char *item = NULL, *ins = NULL;
        if (!indent || !(item = item_text(key, value, indent, unit, !lines, raw)))
                return -ENOMEM;
        size_t after = last->comma ? last->comma_at + 1 : last->end;
        size_t at = lines ? end_of_line_after(t->s, t->len, after) : after;
        bool newline = lines && at < t->len && t->s[at] == '\n';
        if (asprintf(&ins, "%s%s%s%s%s", last->comma || newline ? "" : ",", newline ? "\n" : " ",
                     newline ? indent : "", item, last->comma ? "," : "") < 0)
                return -ENOMEM;
        int r = splice_str(t, at, 0, ins);
        if (r < 0 || !newline || last->comma)
                return r;
        return splice_str(t, last->end, 0, ","); /* before at: its offset still holds */
}

static int insert_before(struct text *t, const struct jnode *c, size_t idx, const char *key,
                         const char *value, const char *unit, bool raw)
{
        const struct jnode *next = &c->items[idx];
        size_t line = text_line_start(t->s, next->item_start);
        bool own_line = text_blank(t->s, line, next->item_start) && multi_line(t->s, c);
        _cleanup_free_ char *indent = text_indent_at(t->s, next->item_start);
        _cleanup_free_ char *item = NULL, *ins = NULL;
        if (!indent || !(item = item_text(key, value, indent, unit, !own_line, raw)))
                return -ENOMEM;
        if (asprintf(&ins, "%s,%s%s", item, own_line ? "\n" : " ", own_line ? indent : "") < 0)
                return -ENOMEM;
        return splice_str(t, next->item_start, 0, ins);
}

int json_insert(struct text *t, const struct jnode *c, size_t before, const char *key,
                const char *value, bool raw)
{
        _cleanup_free_ char *unit = text_indent_unit(t->s, t->len);
        if (!unit)
                return -ENOMEM;
        if (c->n == 0)
                return insert_empty(t, c, key, value, unit, raw);
        if (before >= c->n)
                return insert_last(t, c, key, value, unit, raw);
        return insert_before(t, c, before, key, value, unit, raw);
}

int json_replace(struct text *t, const struct jnode *item, const char *value)
{
        _cleanup_free_ char *unit = text_indent_unit(t->s, t->len);
        _cleanup_free_ char *indent = text_indent_at(t->s, item->item_start);
        if (!unit || !indent)
                return -ENOMEM;
        bool one_line =
            !memchr(t->s + item->item_start, '\n', item->end - item->item_start) &&
            !text_blank(t->s, text_line_start(t->s, item->item_start), item->item_start);
        _cleanup_free_ char *v = layout_value(value, indent, unit, one_line);
        if (!v)
                return -ENOMEM;
        return splice_str(t, item->start, item->end - item->start, v);
}

int json_replace_text(struct text *t, const struct jnode *item, const char *raw)
{
        return splice_str(t, item->start, item->end - item->start, raw);
}

/* [a, b) widened to whole lines where nothing else is on them, else over
 * the spaces that follow on the line. */
static void widen(const char *s, size_t len, size_t *a, size_t *b)
{
        size_t ls = text_line_start(s, *a), le = text_line_end(s, len, *b);
        if (text_blank(s, ls, *a) && text_blank(s, *b, le)) {
                *a = ls;
                *b = le < len ? le + 1 : le;
                return;
        }
        while (*b < len && (s[*b] == ' ' || s[*b] == '\t'))
                (*b)++;
}

/* An object or array left with nothing but spaces inside goes back to {}:
 * what a file that had an empty one before the install held. */
static int collapse(struct text *t, size_t open)
{
        size_t i = open + 1;
        while (i < t->len &&
               (t->s[i] == ' ' || t->s[i] == '\t' || t->s[i] == '\n' || t->s[i] == '\r'))
                i++;
        if (i >= t->len || (t->s[i] != '}' && t->s[i] != ']') || i == open + 1)
                return 0;
        return text_splice(t, open + 1, i - open - 1, "", 0);
}

int json_remove(struct text *t, const struct jnode *c, size_t idx)
{
        const struct jnode *it = &c->items[idx];
        size_t a = it->item_start, b = it->comma ? it->comma_at + 1 : it->end;
        widen(t->s, t->len, &a, &b);
        /* The last item goes with the comma before it, and with the spaces
         * between on one line, but not with comments between. */
        bool comma = idx > 0 && !it->comma;
        size_t at = comma ? c->items[idx - 1].comma_at : 0;
        if (comma && text_blank(t->s, at + 1, a)) {
                a = at;
                comma = false;
        }
        int r = text_splice(t, a, b - a, "", 0);
        if (r < 0 || (comma && (r = text_splice(t, at, 1, "", 0)) < 0))
                return r;
        return c->n == 1 ? collapse(t, c->start) : 0;
}
