#include "caps.h"

#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>

int caps_from_name(const char *name, int *cap)
{
        cap_value_t v;
        /* libcap wants the name in lower case with the prefix; the spec
         * writes "CAP_SYS_ADMIN". */
        char buf[64];
        const char *bare = strncasecmp(name, "CAP_", 4) == 0 ? name + 4 : name;
        if (strlen(bare) + 5 > sizeof(buf))
                return -EINVAL;
        strcpy(buf, "cap_");
        for (size_t i = 0; bare[i]; i++)
                buf[4 + i] = (char)(bare[i] >= 'A' && bare[i] <= 'Z' ? bare[i] + 32 : bare[i]);
        buf[4 + strlen(bare)] = '\0';
        if (cap_from_name(buf, &v) < 0 || v < 0 || v > CAP_LAST_CAP)
                return -EINVAL;
        /* cap_from_name also takes numbers; the spec only names. */
        if (bare[0] >= '0' && bare[0] <= '9')
                return -EINVAL;
        *cap = v;
        return 0;
}
