/* A harness's wishes of a TOML file (Codex's config.toml): a key set in a
 * table, a table holding exactly some key lines; each applied to the text
 * and noted as a change with what was there, and undone from the record.
 * Only [table] headers are edited: a table the file defines by a dotted key
 * or an inline table is refused by line, to be made a [table] by hand. */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse(struct edit *e, struct tdoc *d)
{
        return tdoc_parse(e->file, e->t->s, e->t->len, d, e->err);
}

/* A table made by a dotted key or an inline table, not a header. */
static int not_a_header(struct edit *e, const struct tdoc *d, ssize_t st, const char *table)
{
        char what[200];
        snprintf(what, sizeof(what),
                 "'%.80s' is defined here by a dotted key or an inline table; umwelt-mcp "
                 "install edits a [%.80s] table only",
                 d->st[st].key[0], table);
        return text_fail_at(e->err, e->file, e->t->s, d->st[st].key_at, what);
}

/* The header [path] (n parts): found, or made at the end of the file. */
static int table(struct edit *e, const char *const *path, size_t n)
{
        struct tdoc d;
        int r = parse(e, &d);
        if (r < 0)
                return r;
        bool made = false;
        ssize_t conflict = tdoc_key_prefix(&d, -1, path[0]);
        _cleanup_free_ char *name = toml_key(path, n);
        if (tdoc_table(&d, path, n) >= 0)
                r = 0;
        else if (conflict >= 0)
                r = not_a_header(e, &d, conflict, path[0]);
        else if (!name)
                r = -ENOMEM;
        else if ((r = toml_insert_table(e->t, e->t->len, name, "")) == 0)
                made = true;
        tdoc_free(&d);
        if (r < 0)
                return r == -ENOMEM ? edit_nomem(e) : r;
        return edit_change(e, CH_TABLE, path, n, NULL, NULL, made ? "" : NULL);
}

/* What is said of a value set: nothing where it was so already. */
static const char *done(bool same, const char *old)
{
        return same ? NULL : old ? "set" : "added";
}

static int set_key(struct edit *e, const struct step *st)
{
        int r = st->n > 1 ? table(e, st->path, st->n - 1) : 0;
        struct tdoc d;
        if (r < 0 || (r = parse(e, &d)) < 0)
                return r;
        ssize_t t = st->n > 1 ? tdoc_table(&d, st->path, st->n - 1) : -1;
        ssize_t k = tdoc_key(&d, t, &st->path[st->n - 1], 1);
        const struct tstmt *ks = k >= 0 ? &d.st[k] : NULL;
        _cleanup_free_ char *old = ks ? strndup(e->t->s + ks->vstart, ks->vend - ks->vstart) : NULL;
        _cleanup_free_ char *key = toml_key(&st->path[st->n - 1], 1);
        bool same = old && strcmp(old, st->value) == 0;
        if ((ks && !old) || !key)
                r = -ENOMEM;
        else if (!ks)
                r = toml_insert_key(e->t, &d, t, key, st->value);
        else if (!same)
                r = toml_replace_value(e->t, ks, st->value);
        tdoc_free(&d);
        if (r < 0)
                return r == -ENOMEM ? edit_nomem(e) : r;
        return edit_change(e, CH_TOML_KEY, st->path, st->n, st->value, old, done(same, old));
}

/* [path] holds exactly st->value's lines; a new one goes after the last
 * table of its kin ([mcp_servers.*]), else at the end. */
static int set_table(struct edit *e, const struct step *st)
{
        struct tdoc d;
        int r = parse(e, &d);
        if (r < 0)
                return r;
        ssize_t t = tdoc_table(&d, st->path, st->n);
        ssize_t parent = tdoc_table(&d, st->path, st->n - 1);
        ssize_t conflict = tdoc_key_prefix(&d, -1, st->path[0]);
        ssize_t in_parent = parent >= 0 ? tdoc_key_prefix(&d, parent, st->path[st->n - 1]) : -1;
        _cleanup_free_ char *old = t >= 0 ? toml_body(e->t, &d, t) : NULL;
        _cleanup_free_ char *name = toml_key(st->path, st->n);
        bool same = old && strcmp(old, st->value) == 0;
        if (t < 0 && (conflict >= 0 || in_parent >= 0)) {
                r = not_a_header(e, &d, conflict >= 0 ? conflict : in_parent, st->path[0]);
        } else if ((t >= 0 && !old) || !name) {
                r = -ENOMEM;
        } else if (t >= 0) {
                r = same ? 0 : toml_replace_body(e->t, &d, t, st->value);
        } else {
                ssize_t kin = tdoc_last_table_under(&d, st->path[0]);
                size_t at = kin >= 0 ? tdoc_section_end(&d, kin) : e->t->len;
                r = toml_insert_table(e->t, at, name, st->value);
        }
        tdoc_free(&d);
        if (r < 0)
                return r == -ENOMEM ? edit_nomem(e) : r;
        return edit_change(e, CH_TOML_BODY, st->path, st->n, st->value, old, done(same, old));
}

int step_apply_toml(struct edit *e, const struct step *st)
{
        return st->op == ST_TOML_TABLE ? set_table(e, st) : set_key(e, st);
}

static int undo_key(struct edit *e, const struct tdoc *d, const struct change *c)
{
        ssize_t t = c->n > 1 ? tdoc_table(d, (const char *const *)c->path, c->n - 1) : -1;
        ssize_t k =
            c->n > 1 && t < 0 ? -1 : tdoc_key(d, t, (const char *const *)&c->path[c->n - 1], 1);
        if (k < 0)
                return 0;
        const struct tstmt *ks = &d->st[k];
        if (!c->new || ks->vend - ks->vstart != strlen(c->new) ||
            memcmp(e->t->s + ks->vstart, c->new, strlen(c->new)) != 0) {
                edit_say(e, c, "left as it is: changed since the install");
                return 0;
        }
        edit_say(e, c, c->old ? "restored" : "removed");
        return c->old ? toml_replace_value(e->t, ks, c->old) : toml_remove_stmt(e->t, ks);
}

static int undo_table(struct edit *e, const struct tdoc *d, const struct change *c)
{
        ssize_t t = tdoc_table(d, (const char *const *)c->path, c->n);
        if (t < 0)
                return 0;
        _cleanup_free_ char *body = toml_body(e->t, d, t);
        if (!body)
                return -ENOMEM;
        const char *want = c->op == CH_TABLE ? "" : c->new;
        if (!want || strcmp(body, want) != 0) {
                edit_say(e, c,
                         c->op == CH_TABLE ? "left: it holds more than umwelt-mcp put there"
                                           : "left as it is: changed since the install");
                return 0;
        }
        edit_say(e, c, c->old ? "restored" : "removed");
        return c->old ? toml_replace_body(e->t, d, t, c->old) : toml_remove_table(e->t, d, t);
}

int change_undo_toml(struct edit *e, const struct change *c)
{
        if (c->n == 0)
                return 0;
        struct tdoc d;
        int r = parse(e, &d);
        if (r < 0)
                return r;
        if (c->op == CH_TOML_KEY)
                r = undo_key(e, &d, c);
        else if (c->op == CH_TOML_BODY || c->op == CH_TABLE)
                r = undo_table(e, &d, c);
        tdoc_free(&d);
        return r == -ENOMEM ? edit_nomem(e) : r;
}
