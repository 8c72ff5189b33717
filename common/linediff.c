/* The common lines at both ends are matched first, so a small edit in a
 * large file costs a table of the lines between them only. */
#include "common/linediff.h"
#include "common/cleanup.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct line {
        const char *p;
        size_t len;
};

struct lines {
        struct line *v;
        size_t n;
};

static int split(const char *text, size_t len, struct lines *out)
{
        *out = (struct lines){0};
        size_t cap = 1;
        for (size_t i = 0; i < len; i++)
                cap += text[i] == '\n';
        out->v = calloc(cap, sizeof(*out->v));
        if (!out->v)
                return -ENOMEM;
        for (size_t start = 0; start < len;) {
                const char *nl = memchr(text + start, '\n', len - start);
                size_t end = nl ? (size_t)(nl - text) : len;
                out->v[out->n++] = (struct line){text + start, end - start};
                start = end + 1;
        }
        return 0;
}

static bool same(const struct line *a, const struct line *b)
{
        return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

/* The lines a[lo..ahi) and b[lo..bhi) between the common ends. */
struct middle {
        size_t lo, ahi, bhi;
};

/* The common subsequence's lengths from the end of the middle:
 * t[(i - lo) * w + (j - lo)] for a[i..ahi) and b[j..bhi); NULL when too
 * large (or out of memory: the diff is then the bounded one). */
static uint32_t *lcs_table(const struct lines *a, const struct lines *b, const struct middle *m)
{
        size_t h = m->ahi - m->lo + 1, w = m->bhi - m->lo + 1;
        if (h * w > LINEDIFF_CELLS_MAX)
                return NULL;
        uint32_t *t = calloc(h * w, sizeof(*t));
        if (!t)
                return NULL;
        for (size_t i = h - 1; i-- > 0;)
                for (size_t j = w - 1; j-- > 0;) {
                        uint32_t down = t[(i + 1) * w + j], right = t[i * w + j + 1];
                        t[i * w + j] = same(&a->v[m->lo + i], &b->v[m->lo + j])
                                           ? t[(i + 1) * w + j + 1] + 1
                                       : down >= right ? down
                                                       : right;
                }
        return t;
}

static void walk(const struct lines *a, const struct lines *b, const struct middle *m,
                 const uint32_t *t, linediff_fn fn, void *ctx)
{
        size_t i = m->lo, j = m->lo, w = m->bhi - m->lo + 1;
        for (size_t k = 0; k < m->lo; k++)
                fn(' ', a->v[k].p, a->v[k].len, ctx);
        while (t && i < m->ahi && j < m->bhi) {
                const uint32_t *row = t + (i - m->lo) * w + (j - m->lo);
                if (same(&a->v[i], &b->v[j])) {
                        fn(' ', a->v[i].p, a->v[i].len, ctx);
                        i++, j++;
                } else if (row[w] >= row[1]) {
                        fn('-', a->v[i].p, a->v[i].len, ctx);
                        i++;
                } else {
                        fn('+', b->v[j].p, b->v[j].len, ctx);
                        j++;
                }
        }
        for (; i < m->ahi; i++)
                fn('-', a->v[i].p, a->v[i].len, ctx);
        for (; j < m->bhi; j++)
                fn('+', b->v[j].p, b->v[j].len, ctx);
        for (size_t k = m->ahi; k < a->n; k++)
                fn(' ', a->v[k].p, a->v[k].len, ctx);
}

int linediff(const char *a, size_t alen, const char *b, size_t blen, linediff_fn fn, void *ctx)
{
        struct lines la, lb;
        int r = split(a ? a : "", alen, &la);
        if (r < 0)
                return r;
        if ((r = split(b ? b : "", blen, &lb)) < 0) {
                free(la.v);
                return r;
        }
        struct middle m = {0, la.n, lb.n};
        while (m.lo < m.ahi && m.lo < m.bhi && same(&la.v[m.lo], &lb.v[m.lo]))
                m.lo++;
        while (m.ahi > m.lo && m.bhi > m.lo && same(&la.v[m.ahi - 1], &lb.v[m.bhi - 1]))
                m.ahi--, m.bhi--;
        _cleanup_free_ uint32_t *t = lcs_table(&la, &lb, &m);
        walk(&la, &lb, &m, t, fn, ctx);
        free(la.v);
        free(lb.v);
        return 0;
}

struct counts {
        size_t added, removed;
};

static void count(char mark, const char *line, size_t len, void *ctx)
{
        struct counts *c = ctx;
        (void)line, (void)len;
        c->added += mark == '+';
        c->removed += mark == '-';
}

int linediff_count(const char *a, size_t alen, const char *b, size_t blen, size_t *added,
                   size_t *removed)
{
        struct counts c = {0, 0};
        int r = linediff(a, alen, b, blen, count, &c);
        *added = c.added;
        *removed = c.removed;
        return r;
}
