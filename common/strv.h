/* NULL-terminated string lists, as the policy holds them. */
#ifndef UMW_COMMON_STRV_H
#define UMW_COMMON_STRV_H

#include <stdbool.h>

/* Whether s (NULL: never) is one of v's strings (v NULL: an empty list). */
bool umw_strv_contains(const char *const *v, const char *s);

#endif
