/* Text helpers of the installer: a configuration file is edited as text,
 * one splice at a time, so that every byte it does not touch stays as the
 * user wrote it. */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int text_splice(struct text *t, size_t at, size_t del, const char *ins, size_t inslen)
{
        if (at > t->len || del > t->len - at)
                return -EINVAL;
        size_t len = t->len - del + inslen;
        char *p = malloc(len + 1);
        if (!p)
                return -ENOMEM;
        memcpy(p, t->s, at);
        memcpy(p + at, ins, inslen);
        memcpy(p + at + inslen, t->s + at + del, t->len - at - del);
        p[len] = '\0';
        free(t->s);
        t->s = p;
        t->len = len;
        return 0;
}

int text_set(struct text *t, const char *s, size_t len)
{
        char *p = malloc(len + 1);
        if (!p)
                return -ENOMEM;
        memcpy(p, s, len);
        p[len] = '\0';
        free(t->s);
        t->s = p;
        t->len = len;
        return 0;
}

void text_linecol(const char *s, size_t off, unsigned *line, unsigned *col)
{
        *line = 1;
        *col = 1;
        for (size_t i = 0; i < off && s[i]; i++) {
                if (s[i] == '\n') {
                        (*line)++;
                        *col = 1;
                } else if (((unsigned char)s[i] & 0xc0) != 0x80) {
                        (*col)++; /* columns count characters, not bytes */
                }
        }
}

size_t text_line_start(const char *s, size_t off)
{
        while (off > 0 && s[off - 1] != '\n')
                off--;
        return off;
}

size_t text_line_end(const char *s, size_t len, size_t off)
{
        while (off < len && s[off] != '\n')
                off++;
        return off;
}

bool text_blank(const char *s, size_t from, size_t to)
{
        for (size_t i = from; i < to; i++)
                if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
                        return false;
        return true;
}

char *text_indent_at(const char *s, size_t off)
{
        size_t start = text_line_start(s, off), end = start;
        while (s[end] == ' ' || s[end] == '\t')
                end++;
        return strndup(s + start, end - start);
}

/* The whitespace before the first indented line that holds something:
 * what the file indents one level by. */
char *text_indent_unit(const char *s, size_t len)
{
        for (size_t i = 0; i < len; i = text_line_end(s, len, i) + 1) {
                size_t end = i;
                while (end < len && (s[end] == ' ' || s[end] == '\t'))
                        end++;
                if (end > i && end < len && s[end] != '\n' && s[end] != '\r')
                        return strndup(s + i, end - i);
        }
        return strdup("  ");
}

char *text_dotted(const char *const *parts, size_t n)
{
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%s", i ? "." : "", parts[i]);
        if (fclose(f) == 0)
                return out;
        free(out);
        return NULL;
}

/* JSON's string escapes are TOML's basic string's too: one quoting
 * serves both. */
char *json_quote(const char *s)
{
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (!f)
                return NULL;
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(f, "\\%c", *p);
                else if (*p == '\n')
                        fputs("\\n", f);
                else if (*p == '\t')
                        fputs("\\t", f);
                else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\u%04x", *p);
                else
                        fputc(*p, f);
        }
        fputc('"', f);
        if (fclose(f) == 0)
                return out;
        free(out);
        return NULL;
}

int text_fail_at(struct umw_error **err, const char *file, const char *s, size_t off,
                 const char *what)
{
        unsigned line, col;
        text_linecol(s, off, &line, &col);
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s:%u:%u: %s", file, line, col, what);
}
