/* policy diff: the project's policy file against the copy last accepted,
 * line by line (a longest common subsequence: the files are at most
 * TOML_MAX_FILE_SIZE, and past DIFF_CELLS_MAX pairs of lines the whole old
 * file is shown removed and the new one added). The file is the agent's
 * text shown on the user's terminal: every byte that could steer the
 * terminal (C0 and C1 controls, DEL, bytes that are not UTF-8) is printed
 * as \xNN, so no line can hide another. */
#include "face/project_policy.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/utf8.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIFF_CELLS_MAX (4u << 20)

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

static void put_line(FILE *out, char mark, const struct line *l)
{
        const unsigned char *p = (const unsigned char *)l->p;
        fputc(mark, out);
        for (size_t i = 0; i < l->len;) {
                uint32_t cp = 0;
                size_t u = p[i] >= 0x80 ? umw_utf8_decode(p + i, l->len - i, &cp) : 0;
                if (u && cp >= 0xa0) { /* not a C1 control */
                        fwrite(p + i, 1, u, out);
                        i += u;
                } else if (p[i] < 0x20 && p[i] != '\t') {
                        fprintf(out, "\\x%02x", p[i++]);
                } else if (p[i] >= 0x7f) {
                        fprintf(out, "\\x%02x", p[i++]);
                } else {
                        fputc(p[i++], out);
                }
        }
        fputc('\n', out);
}

static bool same(const struct line *a, const struct line *b)
{
        return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

/* The common subsequence's lengths from the end: lcs[i * (m + 1) + j] for
 * a[i..] and b[j..]. */
static uint32_t *lcs_table(const struct lines *a, const struct lines *b)
{
        size_t w = b->n + 1;
        uint32_t *t = calloc((a->n + 1) * w, sizeof(*t));
        if (!t)
                return NULL;
        for (size_t i = a->n; i-- > 0;)
                for (size_t j = b->n; j-- > 0;) {
                        uint32_t down = t[(i + 1) * w + j], right = t[i * w + j + 1];
                        t[i * w + j] = same(&a->v[i], &b->v[j]) ? t[(i + 1) * w + j + 1] + 1
                                       : down >= right          ? down
                                                                : right;
                }
        return t;
}

static void put_diff(FILE *out, const struct lines *a, const struct lines *b, const uint32_t *t)
{
        size_t i = 0, j = 0, w = b->n + 1;
        while (t && i < a->n && j < b->n) {
                if (same(&a->v[i], &b->v[j])) {
                        put_line(out, ' ', &a->v[i++]);
                        j++;
                } else if (t[(i + 1) * w + j] >= t[i * w + j + 1]) {
                        put_line(out, '-', &a->v[i++]);
                } else {
                        put_line(out, '+', &b->v[j++]);
                }
        }
        while (i < a->n)
                put_line(out, '-', &a->v[i++]);
        while (j < b->n)
                put_line(out, '+', &b->v[j++]);
}

int project_policy_diff(const struct project_policy *p, FILE *out, struct umw_error **err)
{
        struct lines a, b;
        int r = split(p->accepted ? p->accepted : "", p->accepted_len, &a);
        if (r == 0 && (r = split(p->text ? p->text : "", p->len, &b)) < 0)
                free(a.v);
        if (r < 0)
                return umw_fail_sys(err, -r, "policy diff");
        bool small = (a.n + 1) * (b.n + 1) <= DIFF_CELLS_MAX;
        _cleanup_free_ uint32_t *t = small ? lcs_table(&a, &b) : NULL;
        fprintf(out, "--- %s\n+++ %s\n",
                p->has_accepted ? "accepted" : "accepted: none (never accepted)",
                p->present ? p->file : "(no file)");
        put_diff(out, &a, &b, t);
        bool a_nl = p->accepted_len && p->accepted[p->accepted_len - 1] == '\n';
        bool b_nl = p->len && p->text[p->len - 1] == '\n';
        if (a.n && b.n && a_nl != b_nl)
                fprintf(out, "(the %s file's last line has no newline)\n",
                        a_nl ? "new" : "accepted");
        free(a.v);
        free(b.v);
        return 0;
}
