/* Edits of a TOML text at the statements install_toml.c found: a key's
 * value replaced, a key line added at the end of its table or removed, a
 * table added after its kin or removed. What is added is whole lines, so
 * what uninstall takes out leaves the file as it was. */
#include "mcp/install_int.h"
#include "common/cleanup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool bare(const char *k)
{
        if (!*k)
                return false;
        for (; *k; k++)
                if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", *k))
                        return false;
        return true;
}

char *toml_key(const char *const *key, size_t n)
{
        char *parts[8] = {0}, *out = NULL;
        size_t i = 0;
        while (i < n && i < ARRAY_SIZE(parts) &&
               (parts[i] = bare(key[i]) ? strdup(key[i]) : json_quote(key[i])))
                i++;
        if (i == n)
                out = text_dotted((const char *const *)parts, n);
        while (i-- > 0)
                free(parts[i]);
        return out;
}

static int splice_str(struct text *t, size_t at, size_t del, const char *ins)
{
        return text_splice(t, at, del, ins, strlen(ins));
}

/* Where a line goes at offset at: after a newline the line's own text
 * suffices; at the end of a last line without one, a newline first. */
static const char *line_lead(const struct text *t, size_t at)
{
        return at > 0 && t->s[at - 1] != '\n' ? "\n" : "";
}

int toml_replace_value(struct text *t, const struct tstmt *st, const char *value)
{
        return splice_str(t, st->vstart, st->vend - st->vstart, value);
}

int toml_insert_key(struct text *t, const struct tdoc *d, ssize_t table, const char *key,
                    const char *value)
{
        size_t at = tdoc_section_end(d, table);
        if (table < 0 && at == 0 && t->len >= 3 && !memcmp(t->s, "\xef\xbb\xbf", 3))
                at = 3;
        _cleanup_free_ char *line = NULL;
        if (asprintf(&line, "%s%s = %s\n", line_lead(t, at), key, value) < 0)
                return -ENOMEM;
        return splice_str(t, at, 0, line);
}

int toml_remove_stmt(struct text *t, const struct tstmt *st)
{
        return text_splice(t, st->start, st->end - st->start, "", 0);
}

int toml_insert_table(struct text *t, size_t at, const char *header, const char *body)
{
        _cleanup_free_ char *text = NULL;
        /* A blank line parts the new table from what is above it (always
         * one: remove_table takes one away). */
        if (asprintf(&text, "%s%s[%s]\n%s", line_lead(t, at), at ? "\n" : "", header, body) < 0)
                return -ENOMEM;
        return splice_str(t, at, 0, text);
}

int toml_remove_table(struct text *t, const struct tdoc *d, ssize_t table)
{
        size_t a = d->st[table].start, b = tdoc_section_end(d, table);
        /* The blank line insert_table put above it goes too. */
        if (a >= 2 && t->s[a - 1] == '\n' && t->s[a - 2] == '\n')
                a--;
        return text_splice(t, a, b - a, "", 0);
}

char *toml_body(const struct text *t, const struct tdoc *d, ssize_t table)
{
        size_t a = d->st[table].end, b = tdoc_section_end(d, table);
        return strndup(t->s + a, b - a);
}

int toml_replace_body(struct text *t, const struct tdoc *d, ssize_t table, const char *body)
{
        size_t a = d->st[table].end, b = tdoc_section_end(d, table);
        return splice_str(t, a, b - a, body);
}
