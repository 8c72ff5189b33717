/* Uninstall's half of install_step.c: each recorded change of a JSON file
 * undone, but only where the file still holds what install wrote; what the
 * user changed since is theirs and is left, with a line saying so. */
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

static struct jnode *parent_of(struct jnode *root, const struct change *c)
{
        return jnode_path(root, (const char *const *)c->path, c->n - 1);
}

static size_t index_of(const struct jnode *obj, const struct jnode *m)
{
        return (size_t)(m - obj->items);
}

static int undo_container(struct edit *e, struct jnode *root, const struct change *c)
{
        struct jnode *obj = parent_of(root, c);
        struct jnode *v = jnode_member(obj, c->path[c->n - 1]);
        if (!v)
                return 0;
        if (v->n > 0) {
                edit_say(e, c, "left: it holds more than umwelt-mcp put there");
                return 0;
        }
        edit_say(e, c, "removed");
        return json_remove(e->t, obj, index_of(obj, v));
}

/* The old member put back: before the key it preceded, where that is
 * still there, else last. */
static int restore_moved(struct edit *e, const struct change *c)
{
        struct jnode root;
        int r = parse(e, &root);
        if (r < 0)
                return r;
        struct jnode *obj = parent_of(&root, c);
        struct jnode *next = jnode_member(obj, c->before);
        size_t at = next ? index_of(obj, next) : obj->n;
        r = json_insert(e->t, obj, at, c->path[c->n - 1], c->old, true);
        jnode_free(&root);
        return r;
}

static int undo_member(struct edit *e, struct jnode *root, const struct change *c)
{
        int r;
        struct jnode *obj = parent_of(root, c);
        struct jnode *m = jnode_member(obj, c->path[c->n - 1]);
        if (!m)
                return 0;
        _cleanup_free_ char *canon = json_canon(e->t->s, m);
        if (!canon)
                return -ENOMEM;
        if (!c->new || strcmp(canon, c->new) != 0) {
                edit_say(e, c, "left as it is: changed since the install");
                return 0;
        }
        edit_say(e, c, c->old ? "restored" : "removed");
        if (c->old && !c->before)
                return json_replace_text(e->t, m, c->old);
        r = json_remove(e->t, obj, index_of(obj, m));
        /* 1: removed, and the old member is to go back where it was. */
        return r < 0 ? r : c->old ? 1 : 0;
}

static int undo_element(struct edit *e, struct jnode *root, const struct change *c)
{
        struct jnode *arr = jnode_path(root, (const char *const *)c->path, c->n);
        for (size_t i = 0; arr && arr->kind == JK_ARRAY && i < arr->n; i++) {
                if (arr->items[i].kind != JK_STRING || strcmp(arr->items[i].str, c->new) != 0)
                        continue;
                _cleanup_free_ char *q = json_quote(c->new), *what = NULL;
                if (!q || asprintf(&what, "lost %s", q) < 0)
                        return -ENOMEM;
                edit_say(e, c, what);
                return json_remove(e->t, arr, i);
        }
        return 0;
}

int change_undo_json(struct edit *e, const struct change *c)
{
        if (c->n == 0)
                return 0;
        struct jnode root;
        int r = parse(e, &root);
        if (r < 0)
                return r;
        if (c->op == CH_OBJECT || c->op == CH_ARRAY)
                r = undo_container(e, &root, c);
        else if (c->op == CH_MEMBER)
                r = undo_member(e, &root, c);
        else if (c->op == CH_ELEMENT)
                r = undo_element(e, &root, c);
        jnode_free(&root);
        if (r < 0)
                return r == -ENOMEM ? edit_nomem(e) : r;
        return r == 1 ? restore_moved(e, c) : 0;
}

bool text_is_empty_config(const struct text *t, bool toml)
{
        size_t a = strspn(t->s, " \t\r\n");
        if (toml)
                return a == t->len;
        /* "{}" and spaces alone: not even a comment of the user's. */
        return t->len - a >= 2 && !strncmp(t->s + a, "{}", 2) &&
               strspn(t->s + a + 2, " \t\r\n") == t->len - a - 2;
}
