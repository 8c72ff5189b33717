/* A harness's wishes of a JSON or JSONC file (a member set, a deny rule
 * among others), applied to its text one at a time, each noted as a change
 * with what was there; and a record's changes undone. The text is parsed
 * again after every edit: files are small, and offsets never go stale. */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse(struct edit *e, struct jnode *root)
{
        return jdoc_parse(e->file, e->t->s, e->t->len, e->jsonc, true, root, e->err);
}

static int expected(struct edit *e, const struct jnode *v, const char *const *path, size_t n,
                    const char *what)
{
        _cleanup_free_ char *dotted = text_dotted(path, n), *msg = NULL;
        if (!dotted || asprintf(&msg, "'%s': expected %s", dotted, what) < 0)
                return edit_nomem(e);
        return text_fail_at(e->err, e->file, e->t->s, v->start, msg);
}

/* The containers above path[n-1] made where missing (the last an array
 * where last_array), each noted. */
static int containers(struct edit *e, const char *const *path, size_t n, bool last_array)
{
        for (size_t i = 0; i + 1 < n; i++) {
                struct jnode root;
                int r = parse(e, &root);
                if (r < 0)
                        return r;
                bool array = last_array && i + 2 == n;
                struct jnode *parent = jnode_path(&root, path, i);
                struct jnode *v = jnode_member(parent, path[i]);
                if (v && v->kind != (array ? JK_ARRAY : JK_OBJECT))
                        r = expected(e, v, path, i + 1, array ? "an array" : "an object");
                else if (!v)
                        r = json_insert(e->t, parent, parent->n, path[i], array ? "[]" : "{}",
                                        false);
                bool made = !v && r == 0;
                jnode_free(&root);
                if (r < 0)
                        return r == -ENOMEM ? edit_nomem(e) : r;
                r = edit_change(e, array ? CH_ARRAY : CH_OBJECT, path, i + 1, NULL, NULL,
                                made ? "" : NULL);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int text_of(struct edit *e, const struct jnode *v, char **out)
{
        *out = strndup(e->t->s + v->start, v->end - v->start);
        return *out ? 0 : edit_nomem(e);
}

static int append_member(struct edit *e, const struct step *st)
{
        struct jnode root;
        int r = parse(e, &root);
        if (r < 0)
                return r;
        struct jnode *obj = jnode_path(&root, st->path, st->n - 1);
        r = json_insert(e->t, obj, obj->n, st->path[st->n - 1], st->value, false);
        jnode_free(&root);
        return r == -ENOMEM ? edit_nomem(e) : r;
}

/* Whether a member after idx has a wildcard key ("*", "b?sh"): one that
 * may match what idx's key names. */
static bool wildcard_after(const struct jnode *obj, size_t idx)
{
        for (size_t i = idx + 1; i < obj->n; i++)
                if (strpbrk(obj->items[i].key, "*?"))
                        return true;
        return false;
}

/* The member at path set to value; where last, moved after every wildcard
 * key of its object (OpenCode's permission rules: the last that matches
 * wins). */
static int set_member(struct edit *e, const struct step *st, bool last)
{
        struct jnode root;
        int r = parse(e, &root);
        if (r < 0)
                return r;
        struct jnode *obj = jnode_path(&root, st->path, st->n - 1);
        struct jnode *m = jnode_member(obj, st->path[st->n - 1]);
        size_t idx = m ? (size_t)(m - obj->items) : obj->n;
        _cleanup_free_ char *canon = m ? json_canon(e->t->s, m) : NULL;
        _cleanup_free_ char *old = NULL, *before = NULL;
        bool same = canon && strcmp(canon, st->value) == 0;
        bool moved = last && m && wildcard_after(obj, idx);
        if ((m && !canon) || (m && (r = text_of(e, m, &old)) < 0) ||
            (moved && !(before = strdup(obj->items[idx + 1].key)))) {
                jnode_free(&root);
                return r < 0 ? r : edit_nomem(e);
        }
        if (m && !same && !moved)
                r = json_replace(e->t, m, st->value);
        else if (moved)
                r = json_remove(e->t, obj, idx);
        jnode_free(&root);
        if (r < 0)
                return r == -ENOMEM ? edit_nomem(e) : r;
        /* A new member, or one moved: appended to its object. */
        if ((!m || moved) && (r = append_member(e, st)) < 0)
                return r;
        struct change c;
        if (change_make(&c, CH_MEMBER, e->rel, st->path, st->n, st->value, old) < 0)
                return edit_nomem(e);
        c.before = TAKE_PTR(before);
        bool changed = !same || moved;
        if (changed)
                edit_say(e, &c,
                         !m      ? "added"
                         : moved ? "set, and moved after the wildcards"
                                 : "set");
        return edit_note(e, &c, changed);
}

/* A string at path becomes {"*": it}: OpenCode's one action for all
 * permissions, kept for all but the ones set after it. */
static int objectify(struct edit *e, const struct step *st)
{
        struct jnode root;
        int r = parse(e, &root);
        if (r < 0)
                return r;
        struct jnode *v = jnode_path(&root, st->path, st->n);
        if (!v || v->kind != JK_STRING) {
                jnode_free(&root);
                /* Kept where an earlier install made it. */
                return edit_change(e, CH_MEMBER, st->path, st->n, NULL, NULL, NULL);
        }
        _cleanup_free_ char *old = NULL, *q = json_quote(v->str), *obj = NULL;
        if ((r = text_of(e, v, &old)) < 0 || !q || asprintf(&obj, "{\"*\":%s}", q) < 0) {
                jnode_free(&root);
                return r < 0 ? r : edit_nomem(e);
        }
        r = json_replace(e->t, v, obj);
        jnode_free(&root);
        if (r < 0)
                return edit_nomem(e);
        return edit_change(e, CH_MEMBER, st->path, st->n, obj, old,
                           "made an object, its action kept as \"*\"");
}

static ssize_t find_element(const struct jnode *arr, const char *value)
{
        for (size_t i = 0; arr && i < arr->n; i++)
                if (arr->items[i].kind == JK_STRING && strcmp(arr->items[i].str, value) == 0)
                        return (ssize_t)i;
        return -1;
}

static int add_element(struct edit *e, const struct step *st)
{
        struct jnode root;
        int r = parse(e, &root);
        if (r < 0)
                return r;
        struct jnode *arr = jnode_path(&root, st->path, st->n);
        bool present = find_element(arr, st->value) >= 0;
        _cleanup_free_ char *q = json_quote(st->value);
        r = !q ? -ENOMEM : present ? 0 : json_insert(e->t, arr, arr->n, NULL, q, false);
        jnode_free(&root);
        if (r < 0)
                return edit_nomem(e);
        _cleanup_free_ char *what = NULL;
        if (asprintf(&what, "gained %s", q) < 0)
                return edit_nomem(e);
        return edit_change(e, CH_ELEMENT, st->path, st->n, st->value, NULL, present ? NULL : what);
}

int step_apply_json(struct edit *e, const struct step *st)
{
        /* An element's array is the last container made. */
        bool element = st->op == ST_ELEMENT;
        int r = containers(e, st->path, element ? st->n + 1 : st->n, element);
        if (r < 0)
                return r;
        if (element)
                return add_element(e, st);
        if (st->op == ST_OBJECTIFY)
                return objectify(e, st);
        return set_member(e, st, st->op == ST_MEMBER_LAST);
}
