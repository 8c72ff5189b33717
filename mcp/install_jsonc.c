/* A JSON reader that keeps where each value sits: the installer edits the
 * text between those offsets and nothing else, so comments, blank lines and
 * the user's layout survive. JSONC (OpenCode's files) adds // and block
 * comments and trailing commas; strict JSON (Claude Code's, which refuses
 * both) reports them as errors. Duplicate keys are refused: which of two a
 * harness honours is its parser's choice, not ours to guess. */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/utf8.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 64

struct jparse {
        const char *file;
        const char *s;
        size_t len, pos;
        bool jsonc;
        unsigned depth;
        struct umw_error **err;
};

static int fail(struct jparse *p, size_t at, const char *what)
{
        return text_fail_at(p->err, p->file, p->s, at, what);
}

static int skip_comment(struct jparse *p)
{
        size_t at = p->pos;
        if (!p->jsonc)
                return fail(p, at, "expected a value, found a comment (not JSON)");
        if (p->pos + 1 < p->len && p->s[p->pos + 1] == '/') {
                p->pos = text_line_end(p->s, p->len, p->pos);
                return 0;
        }
        if (p->pos + 1 >= p->len || p->s[p->pos + 1] != '*')
                return fail(p, at, "expected a comment after '/'");
        const char *end = strstr(p->s + p->pos + 2, "*/");
        if (!end)
                return fail(p, at, "comment not closed: expected '*/'");
        p->pos = (size_t)(end - p->s) + 2;
        return 0;
}

static int skip_ws(struct jparse *p)
{
        while (p->pos < p->len) {
                char c = p->s[p->pos];
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                        p->pos++;
                } else if (c == '/') {
                        int r = skip_comment(p);
                        if (r < 0)
                                return r;
                } else {
                        break;
                }
        }
        return 0;
}

static void put_utf8(char *out, size_t *n, uint32_t cp)
{
        if (cp < 0x80) {
                out[(*n)++] = (char)cp;
        } else if (cp < 0x800) {
                out[(*n)++] = (char)(0xc0 | cp >> 6);
                out[(*n)++] = (char)(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
                out[(*n)++] = (char)(0xe0 | cp >> 12);
                out[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3f));
                out[(*n)++] = (char)(0x80 | (cp & 0x3f));
        } else {
                out[(*n)++] = (char)(0xf0 | cp >> 18);
                out[(*n)++] = (char)(0x80 | (cp >> 12 & 0x3f));
                out[(*n)++] = (char)(0x80 | (cp >> 6 & 0x3f));
                out[(*n)++] = (char)(0x80 | (cp & 0x3f));
        }
}

static int hex4(struct jparse *p, size_t at, uint32_t *out)
{
        *out = 0;
        for (int i = 0; i < 4; i++) {
                char c = at + (size_t)i < p->len ? p->s[at + (size_t)i] : '\0';
                int v = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
                if (v < 0)
                        return fail(p, at, "expected four hex digits after '\\u'");
                *out = *out << 4 | (uint32_t)v;
        }
        return 0;
}

/* \uXXXX, a surrogate pair taken whole; p->pos is at the 'u'. */
static int unicode_escape(struct jparse *p, uint32_t *cp)
{
        size_t at = p->pos - 1;
        int r = hex4(p, p->pos + 1, cp);
        if (r < 0)
                return r;
        p->pos += 5;
        if (*cp >= 0xdc00 && *cp < 0xe000)
                return fail(p, at, "lone low surrogate in a string");
        if (*cp < 0xd800 || *cp >= 0xdc00)
                return 0;
        uint32_t lo;
        if (p->pos + 1 >= p->len || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u' ||
            hex4(p, p->pos + 2, &lo) < 0 || lo < 0xdc00 || lo >= 0xe000)
                return fail(p, at, "expected a low surrogate after a high one");
        p->pos += 6;
        *cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
        return 0;
}

static int escape(struct jparse *p, char *out, size_t *n)
{
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        char c = p->pos < p->len ? p->s[p->pos] : '\0';
        const char *hit = c ? strchr(from, c) : NULL;
        if (hit) {
                out[(*n)++] = to[hit - from];
                p->pos++;
                return 0;
        }
        if (c != 'u')
                return fail(p, p->pos - 1, "unknown escape in a string");
        uint32_t cp;
        int r = unicode_escape(p, &cp);
        if (r == 0)
                put_utf8(out, n, cp);
        return r;
}

/* A string at p->pos (its opening quote), decoded into *out. */
static int string(struct jparse *p, char **out)
{
        size_t at = p->pos++, end = p->pos;
        /* Decoded, a string is no longer than written. */
        while (end < p->len && p->s[end] != '"' && p->s[end] != '\n')
                end += p->s[end] == '\\' ? 2 : 1;
        _cleanup_free_ char *buf = malloc(end - at + 1);
        if (!buf)
                return umw_fail_sys(p->err, ENOMEM, "%s", p->file);
        size_t n = 0;
        for (;;) {
                if (p->pos >= p->len || p->s[p->pos] == '\n')
                        return fail(p, at, "string not closed: expected '\"'");
                unsigned char c = (unsigned char)p->s[p->pos];
                if (c == '"')
                        break;
                if (c < 0x20)
                        return fail(p, p->pos, "control character in a string");
                if (c == '\\') {
                        p->pos++;
                        int r = escape(p, buf, &n);
                        if (r < 0)
                                return r;
                        continue;
                }
                uint32_t cp;
                size_t u = c < 0x80 ? 1
                                    : umw_utf8_decode((const unsigned char *)p->s + p->pos,
                                                      p->len - p->pos, &cp);
                if (!u)
                        return fail(p, p->pos, "a string that is not UTF-8");
                memcpy(buf + n, p->s + p->pos, u);
                n += u;
                p->pos += u;
        }
        p->pos++;
        buf[n] = '\0';
        *out = TAKE_PTR(buf);
        return 0;
}

static size_t digits(struct jparse *p)
{
        size_t n = 0;
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
                p->pos++;
                n++;
        }
        return n;
}

static int number(struct jparse *p)
{
        size_t at = p->pos;
        if (p->s[p->pos] == '-')
                p->pos++;
        bool zero = p->pos < p->len && p->s[p->pos] == '0';
        size_t n = digits(p);
        if (n == 0 || (zero && n > 1))
                return fail(p, at, "expected a number");
        if (p->pos < p->len && p->s[p->pos] == '.') {
                p->pos++;
                if (digits(p) == 0)
                        return fail(p, at, "expected digits after '.'");
        }
        if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
                p->pos++;
                if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
                        p->pos++;
                if (digits(p) == 0)
                        return fail(p, at, "expected digits in the exponent");
        }
        return 0;
}

static int word(struct jparse *p, const char *w, enum jkind kind, struct jnode *v)
{
        size_t n = strlen(w);
        if (p->len - p->pos < n || memcmp(p->s + p->pos, w, n) != 0)
                return fail(p, p->pos, "expected a value");
        p->pos += n;
        v->kind = kind;
        return 0;
}

static int value(struct jparse *p, struct jnode *v);

static struct jnode *add_item(struct jparse *p, struct jnode *c)
{
        if (c->n == c->cap) {
                size_t cap = c->cap ? 2 * c->cap : 4;
                struct jnode *items = realloc(c->items, cap * sizeof(*items));
                if (!items)
                        return NULL;
                c->items = items;
                c->cap = cap;
        }
        struct jnode *it = &c->items[c->n++];
        *it = (struct jnode){0};
        return it;
}

static int member(struct jparse *p, struct jnode *obj)
{
        if (p->pos >= p->len || p->s[p->pos] != '"')
                return fail(p, p->pos, "expected a member's key (a string)");
        size_t at = p->pos;
        _cleanup_free_ char *key = NULL;
        int r = string(p, &key);
        if (r < 0)
                return r;
        if (jnode_member(obj, key)) {
                char what[160];
                snprintf(what, sizeof(what), "duplicate key \"%.100s\"", key);
                return fail(p, at, what);
        }
        if ((r = skip_ws(p)) < 0)
                return r;
        if (p->pos >= p->len || p->s[p->pos] != ':')
                return fail(p, p->pos, "expected ':' after a member's key");
        p->pos++;
        struct jnode *m = add_item(p, obj);
        if (!m)
                return umw_fail_sys(p->err, ENOMEM, "%s", p->file);
        m->item_start = at;
        m->key = TAKE_PTR(key);
        if ((r = skip_ws(p)) < 0)
                return r;
        return value(p, m);
}

static int element(struct jparse *p, struct jnode *arr)
{
        struct jnode *e = add_item(p, arr);
        if (!e)
                return umw_fail_sys(p->err, ENOMEM, "%s", p->file);
        e->item_start = p->pos;
        return value(p, e);
}

/* The items of an object or array up to close; p->pos is past the opener. */
static int items(struct jparse *p, struct jnode *c, char close)
{
        int (*item)(struct jparse *, struct jnode *) = close == '}' ? member : element;
        int r;
        if ((r = skip_ws(p)) < 0)
                return r;
        while (p->pos < p->len && p->s[p->pos] != close) {
                if ((r = item(p, c)) < 0 || (r = skip_ws(p)) < 0)
                        return r;
                if (p->pos >= p->len || p->s[p->pos] != ',')
                        break;
                c->items[c->n - 1].comma = true;
                c->items[c->n - 1].comma_at = p->pos++;
                if ((r = skip_ws(p)) < 0)
                        return r;
                if (p->pos < p->len && p->s[p->pos] == close && !p->jsonc)
                        return fail(p, c->items[c->n - 1].comma_at, "trailing comma (not JSON)");
        }
        if (p->pos >= p->len || p->s[p->pos] != close)
                return fail(p, p->pos,
                            close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        p->pos++;
        return 0;
}

static int value(struct jparse *p, struct jnode *v)
{
        if (p->pos >= p->len)
                return fail(p, p->pos, "expected a value, found the end of the file");
        v->start = p->pos;
        char c = p->s[p->pos];
        int r;
        if (c == '{' || c == '[') {
                if (++p->depth > JSON_MAX_DEPTH)
                        return fail(p, p->pos, "nested too deep");
                v->kind = c == '{' ? JK_OBJECT : JK_ARRAY;
                p->pos++;
                r = items(p, v, c == '{' ? '}' : ']');
                p->depth--;
        } else if (c == '"') {
                v->kind = JK_STRING;
                r = string(p, &v->str);
        } else if (c == '-' || (c >= '0' && c <= '9')) {
                v->kind = JK_NUMBER;
                r = number(p);
        } else if (c == 't' || c == 'f') {
                r = word(p, c == 't' ? "true" : "false", JK_BOOL, v);
        } else {
                r = word(p, "null", JK_NULL, v);
        }
        v->end = p->pos;
        return r;
}

static int top(struct jparse *p, struct jnode *root, bool object)
{
        int r;
        if (p->len >= 3 && memcmp(p->s, "\xef\xbb\xbf", 3) == 0)
                p->pos = 3; /* a byte order mark, kept as it is */
        if ((r = skip_ws(p)) < 0)
                return r;
        if (object && (p->pos >= p->len || p->s[p->pos] != '{'))
                return fail(p, p->pos, "expected an object ('{') at the top");
        if ((r = value(p, root)) < 0 || (r = skip_ws(p)) < 0)
                return r;
        if (p->pos < p->len)
                return fail(p, p->pos, "expected the end of the file after the top value");
        return 0;
}

int jdoc_parse(const char *file, const char *s, size_t len, bool jsonc, bool object,
               struct jnode *root, struct umw_error **err)
{
        struct jparse p = {.file = file, .s = s, .len = len, .jsonc = jsonc, .err = err};
        *root = (struct jnode){0};
        if (strlen(s) != len)
                return fail(&p, strlen(s), "a NUL byte in the file");
        int r = top(&p, root, object);
        if (r < 0)
                jnode_free(root);
        return r;
}

void jnode_free(struct jnode *v)
{
        for (size_t i = 0; i < v->n; i++)
                jnode_free(&v->items[i]);
        free(v->items);
        free(v->key);
        free(v->str);
        *v = (struct jnode){0};
}

struct jnode *jnode_member(const struct jnode *obj, const char *key)
{
        if (!obj || obj->kind != JK_OBJECT)
                return NULL;
        for (size_t i = 0; i < obj->n; i++)
                if (strcmp(obj->items[i].key, key) == 0)
                        return &obj->items[i];
        return NULL;
}

struct jnode *jnode_path(struct jnode *root, const char *const *path, size_t n)
{
        struct jnode *v = root;
        for (size_t i = 0; v && i < n; i++)
                v = jnode_member(v, path[i]);
        return v;
}
