/* Path containment and resolution for the policy's decisions: one place,
 * because a grant, a grant root and the never-list are only as strong as
 * the comparison between them. Paths are absolute and compared by
 * component, so /home/a does not contain /home/ab. */
#ifndef UMW_POLICY_PATHS_H
#define UMW_POLICY_PATHS_H

#include <stdbool.h>

/* true when path is base or lies below it. */
bool path_within(const char *path, const char *base);
/* true when path lies below base and is not base. */
bool path_strictly_below(const char *path, const char *base);

/* Lexical clean-up of an absolute path (malloc'd, NULL out of memory): no
 * empty, "." or ".." components; ".." at / stays at /. */
char *path_clean(const char *path);

/* realpath() of the longest prefix of clean (a path_clean() result) that
 * resolves, followed by the rest as written (malloc'd, NULL out of memory):
 * a path that does not exist yet still has a place. A prefix that cannot
 * be resolved (missing, or not searchable by us) cannot be reached by a
 * grant's realpath either. */
char *path_resolve_prefix(const char *clean);

#endif
