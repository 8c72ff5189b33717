#include "face/user.h"

#include <stdlib.h>
#include <unistd.h>

/* A decimal id in the variable name, or false. */
static bool env_id(const char *name, unsigned long *out)
{
        const char *v = getenv(name);
        char *end = NULL;
        if (!v || !*v)
                return false;
        *out = strtoul(v, &end, 10);
        return !*end && *out < (unsigned long)(uid_t)-1;
}

struct face_user face_invoking_user(void)
{
        struct face_user w = {.uid = getuid(), .gid = getgid()};
        unsigned long uid = 0, gid = 0;
        if (geteuid() == 0 && env_id("SUDO_UID", &uid) && env_id("SUDO_GID", &gid) && uid != 0)
                w = (struct face_user){.uid = (uid_t)uid, .gid = (gid_t)gid, .sudo = true};
        return w;
}
