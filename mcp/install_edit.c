/* What the edits of a file share: a change noted against the record of an
 * earlier install, a line said for each thing done. */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int edit_nomem(struct edit *e)
{
        return umw_fail_sys(e->err, ENOMEM, "%s", e->file);
}

/* c noted: an earlier install's record of the same change keeps what was
 * there first; a change neither made now nor before is none. */
int edit_note(struct edit *e, struct change *c, bool changed)
{
        const struct change *prior = changes_find(e->prior, c);
        if (!prior && !changed) {
                change_free(c);
                return 0;
        }
        if (prior) {
                /* Unchanged now: the earlier change stands as recorded. */
                char *new = changed ? TAKE_PTR(c->new) : NULL;
                change_free(c);
                if (change_make(c, prior->op, prior->file, (const char *const *)prior->path,
                                prior->n, changed ? NULL : prior->new, prior->old) < 0 ||
                    (prior->before && !(c->before = strdup(prior->before)))) {
                        free(new);
                        change_free(c);
                        return edit_nomem(e);
                }
                if (changed) {
                        free(c->new);
                        c->new = new;
                }
        }
        int r = changes_add(e->out, c);
        if (r < 0) {
                change_free(c);
                return edit_nomem(e);
        }
        return 0;
}

void edit_say(struct edit *e, const struct change *c, const char *what)
{
        _cleanup_free_ char *p = change_path(c);
        fprintf(e->log, "%s: %s %s\n", e->file, p ? p : "?", what);
}

int edit_change(struct edit *e, enum change_op op, const char *const *path, size_t n,
                const char *new, const char *old, const char *done)
{
        struct change c;
        if (change_make(&c, op, e->rel, path, n, new, old) < 0)
                return edit_nomem(e);
        if (done && *done)
                edit_say(e, &c, done);
        return edit_note(e, &c, done != NULL);
}
