/* common/linediff.c: what changed between two texts, line by line. */
#include "common/linediff.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void counts(const char *a, const char *b, size_t want_added, size_t want_removed)
{
        size_t added = 99, removed = 99;
        cr_assert_eq(linediff_count(a, strlen(a), b, strlen(b), &added, &removed), 0);
        cr_expect_eq(added, want_added, "'%s' -> '%s': +%zu, expected +%zu", a, b, added,
                     want_added);
        cr_expect_eq(removed, want_removed, "'%s' -> '%s': -%zu, expected -%zu", a, b, removed,
                     want_removed);
}

Test(linediff, counts_edits)
{
        counts("", "", 0, 0);
        counts("a\nb\n", "a\nb\n", 0, 0);
        counts("", "a\nb\n", 2, 0);
        counts("a\nb\n", "", 0, 2);
        counts("a\nb\nc\n", "a\nB\nc\n", 1, 1);
        counts("a\nb\nc\n", "a\nc\n", 0, 1);
        counts("a\nc\n", "x\na\nb\nc\ny\n", 3, 0);
        counts("a\nb\nc\nd\n", "d\nc\nb\na\n", 3, 3);
}

static void collect(char mark, const char *line, size_t len, void *ctx)
{
        fprintf(ctx, "%c%.*s|", mark, (int)len, line);
}

Test(linediff, marks_in_order)
{
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        cr_assert_not_null(f);
        const char *a = "keep\nold\ntail\n", *b = "keep\nnew\ntail\n";
        cr_assert_eq(linediff(a, strlen(a), b, strlen(b), collect, f), 0);
        fclose(f);
        cr_expect_str_eq(out, " keep|-old|+new| tail|");
        free(out);
}

/* A one-line edit in a file far past the table's bound is still exact: the
 * common ends are matched first. */
Test(linediff, small_edit_in_a_large_file)
{
        size_t n = 20000, cap = n * 8 + 16;
        char *a = malloc(cap), *b = malloc(cap);
        size_t la = 0, lb = 0;
        for (size_t i = 0; i < n; i++) {
                la += (size_t)snprintf(a + la, cap - la, "%zu\n", i);
                lb += (size_t)snprintf(b + lb, cap - lb, "%zu\n", i == n / 2 ? 0 : i);
        }
        size_t added, removed;
        cr_assert_eq(linediff_count(a, la, b, lb, &added, &removed), 0);
        cr_expect_eq(added, 1);
        cr_expect_eq(removed, 1);
        free(a);
        free(b);
}
