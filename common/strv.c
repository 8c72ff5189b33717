#include "common/strv.h"

#include <stddef.h>
#include <string.h>

bool umw_strv_contains(const char *const *v, const char *s)
{
        for (size_t i = 0; s && v && v[i]; i++)
                if (strcmp(v[i], s) == 0)
                        return true;
        return false;
}
