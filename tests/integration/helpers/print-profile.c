/* print-profile: prints the sandbox's default seccomp profile, the OCI
 * linux.seccomp object policy/ renders, so a shell test can put it into a
 * bundle's config.json. */
#include "policy/seccomp_profile.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
        char *json = seccomp_profile_json();
        if (!json) {
                fprintf(stderr, "print-profile: cannot render the seccomp profile\n");
                return 1;
        }
        int r = puts(json) < 0 || fflush(stdout) != 0;
        free(json);
        return r;
}
