/* A line diff of two texts (a longest common subsequence of their lines),
 * for showing and counting what changed. Bounded: past LINEDIFF_CELLS_MAX
 * pairs of lines, every line of a is removed and every line of b added. */
#ifndef UMW_LINEDIFF_H
#define UMW_LINEDIFF_H

#include <stddef.h>

#define LINEDIFF_CELLS_MAX (4u << 20)

/* mark is ' ' (both), '-' (a only) or '+' (b only); line is without its
 * newline. */
typedef void (*linediff_fn)(char mark, const char *line, size_t len, void *ctx);

/* Calls fn for each line in order; -ENOMEM or 0. */
int linediff(const char *a, size_t alen, const char *b, size_t blen, linediff_fn fn, void *ctx);

/* Lines b adds and removes from a. */
int linediff_count(const char *a, size_t alen, const char *b, size_t blen, size_t *added,
                   size_t *removed);

#endif
