/* --dry-run's output: what an edit would change, as a unified diff (three
 * lines of context, @@ hunks) that patch(1) could apply, from
 * common/linediff.h's lines. A configuration file may hold what an agent
 * wrote, so each line is printed terminal-safe. */
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/linediff.h"
#include "common/utf8.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CONTEXT 3

struct dline {
        char mark;
        const char *s;
        size_t len;
};

struct dlines {
        struct dline *v;
        size_t n, cap;
        bool nomem;
};

static void collect(char mark, const char *line, size_t len, void *ctx)
{
        struct dlines *d = ctx;
        if (d->n == d->cap) {
                size_t cap = d->cap ? 2 * d->cap : 64;
                struct dline *v = realloc(d->v, cap * sizeof(*v));
                if (!v) {
                        d->nomem = true;
                        return;
                }
                d->v = v;
                d->cap = cap;
        }
        d->v[d->n++] = (struct dline){mark, line, len};
}

/* The end of the hunk that starts at the change at i: past the last change
 * closer than two contexts to the one before it, plus a context. */
static size_t hunk_end(const struct dlines *d, size_t i)
{
        size_t last = i;
        for (size_t j = i; j < d->n && j <= last + 2 * CONTEXT + 1; j++)
                if (d->v[j].mark != ' ')
                        last = j;
        return last + CONTEXT + 1 < d->n ? last + CONTEXT + 1 : d->n;
}

static void print_hunk(FILE *out, const struct dlines *d, size_t from, size_t to, size_t a_line,
                       size_t b_line)
{
        size_t na = 0, nb = 0;
        for (size_t j = from; j < to; j++) {
                na += d->v[j].mark != '+';
                nb += d->v[j].mark != '-';
        }
        fprintf(out, "@@ -%zu,%zu +%zu,%zu @@\n", na ? a_line : a_line - 1, na,
                nb ? b_line : b_line - 1, nb);
        for (size_t j = from; j < to; j++) {
                fputc(d->v[j].mark, out);
                umw_put_printable(out, d->v[j].s, d->v[j].len, true);
                fputc('\n', out);
        }
}

static void print_hunks(FILE *out, const struct dlines *d)
{
        size_t a = 1, b = 1; /* the line numbers of d->v[i] */
        for (size_t i = 0; i < d->n;) {
                if (d->v[i].mark == ' ') {
                        a++, b++, i++;
                        continue;
                }
                size_t from = i > CONTEXT ? i - CONTEXT : 0, to = hunk_end(d, i);
                print_hunk(out, d, from, to, a - (i - from), b - (i - from));
                for (; i < to; i++) {
                        a += d->v[i].mark != '+';
                        b += d->v[i].mark != '-';
                }
        }
}

int diff_print(FILE *out, const char *name_a, const struct text *a, const char *name_b,
               const struct text *b)
{
        struct dlines d = {0};
        int r = linediff(a->s ? a->s : "", a->len, b->s ? b->s : "", b->len, collect, &d);
        if (r == 0 && d.nomem)
                r = -ENOMEM;
        if (r == 0) {
                fprintf(out, "--- %s\n+++ %s\n", name_a, name_b);
                print_hunks(out, &d);
        }
        free(d.v);
        return r;
}
