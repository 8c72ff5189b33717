/* What install cannot switch off for OpenCode, said after it: OpenCode
 * appends an agent's permission rules after the top level's, and reads
 * .opencode/opencode.json(c) after the project's root file, and the last
 * rule that matches wins. So a rule there that allows bash or edit (or a
 * wildcard that matches them) gives the host's tools back: each is named by
 * its line, for the user to change. Install edits neither: an agent's
 * rules are the user's design, and a second file is theirs too. */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct notes {
        const char *file;
        const char *s;
        FILE *out;
};

static void note(const struct notes *n, const struct jnode *v, const char *path, const char *key)
{
        unsigned line, col;
        text_linecol(n->s, v->start, &line, &col);
        fprintf(n->out,
                "note: %s:%u:%u: %s%s%s overrides install's denial (OpenCode applies it "
                "later): the host's bash, edit or write come back; change it by hand\n",
                n->file, line, col, path, key ? "." : "", key ? key : "");
}

static bool denies(const struct jnode *v)
{
        return v->kind == JK_STRING && strcmp(v->str, "deny") == 0;
}

/* A permission rule key that names bash or edit, or may match them. */
static bool reaches(const char *key)
{
        return !strcmp(key, "bash") || !strcmp(key, "edit") || strpbrk(key, "*?");
}

static void check_permission(const struct notes *n, const struct jnode *perm, const char *path)
{
        if (!perm)
                return;
        if (perm->kind == JK_STRING && !denies(perm))
                note(n, perm, path, NULL);
        for (size_t i = 0; perm->kind == JK_OBJECT && i < perm->n; i++)
                if (reaches(perm->items[i].key) && !denies(&perm->items[i]))
                        note(n, &perm->items[i], path, perm->items[i].key);
}

static void check_tools(const struct notes *n, const struct jnode *tools, const char *path)
{
        static const char *const names[] = {"bash", "edit", "write", "patch"};
        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                const struct jnode *t = jnode_member(tools, names[i]);
                if (t && t->kind == JK_BOOL && n->s[t->start] == 't')
                        note(n, t, path, names[i]);
        }
}

static void check_agents(const struct notes *n, const struct jnode *agents)
{
        for (size_t i = 0; agents && agents->kind == JK_OBJECT && i < agents->n; i++) {
                const struct jnode *a = &agents->items[i];
                _cleanup_free_ char *perm = NULL, *tools = NULL;
                if (asprintf(&perm, "agent.%s.permission", a->key) < 0 ||
                    asprintf(&tools, "agent.%s.tools", a->key) < 0)
                        return;
                check_permission(n, jnode_member(a, "permission"), perm);
                check_tools(n, jnode_member(a, "tools"), tools);
        }
}

/* The notes for text (file's), where it parses; top: also its top-level
 * rules (a file read after the one install edited). */
static void check_text(const char *file, const struct text *t, bool top, FILE *out)
{
        struct jnode root;
        _cleanup_error_ struct umw_error *err = NULL;
        if (jdoc_parse(file, t->s, t->len, true, true, &root, &err) < 0) {
                fprintf(out, "note: %s\n", err->msg);
                return;
        }
        struct notes n = {.file = file, .s = t->s, .out = out};
        if (top) {
                check_permission(&n, jnode_member(&root, "permission"), "permission");
                check_tools(&n, jnode_member(&root, "tools"), "tools");
        }
        check_agents(&n, jnode_member(&root, "agent"));
        jnode_free(&root);
}

/* Checks the file dir/name of the project, where it exists. */
static int check_file(const struct cfile *f, const char *dir, const char *name, FILE *out,
                      struct umw_error **err)
{
        struct cfile o = {.projfd = f->projfd, .project = f->project, .dir = dir, .name = name};
        if (asprintf(&o.path, "%s/%s%s%s", f->project, dir ? dir : "", dir ? "/" : "", name) < 0)
                return umw_fail_sys(err, ENOMEM, "%s", f->project);
        _cleanup_error_ struct umw_error *rerr = NULL;
        if (cfile_read(&o, &rerr) < 0)
                fprintf(out, "note: %s\n", rerr->msg);
        else if (o.exists)
                check_text(o.path, &o.orig, true, out);
        cfile_free(&o);
        return 0;
}

int notes_opencode(const struct cfile *f, FILE *out, struct umw_error **err)
{
        check_text(f->path, &f->text, false, out);
        int r = 0;
        /* OpenCode reads the root's opencode.jsonc and merges opencode.json
         * into it: the other one's rules stand among ours. */
        if (!strcmp(f->name, "opencode.json"))
                r = check_file(f, NULL, "opencode.jsonc", out, err);
        if (r < 0 || (r = check_file(f, ".opencode", "opencode.json", out, err)) < 0)
                return r;
        return check_file(f, ".opencode", "opencode.jsonc", out, err);
}
