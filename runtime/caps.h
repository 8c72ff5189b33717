/* Capabilities through libcap: names, the bounding set, and the final sets. */
#ifndef UMW_CAPS_H
#define UMW_CAPS_H

#include <stdint.h>

struct spec_caps;
struct umw_error;

/* "CAP_SYS_ADMIN" (or "SYS_ADMIN") -> its number; -EINVAL if unknown. */
int caps_from_name(const char *name, int *cap);
/* Drops every capability not in caps->bounding from the bounding set. Needs
 * CAP_SETPCAP, so it runs before the user switch. */
int caps_drop_bounding(const struct spec_caps *caps, struct umw_error **err);
/* After the user switch (with PR_SET_KEEPCAPS): effective, permitted,
 * inheritable, then the ambient set. */
int caps_apply(const struct spec_caps *caps, struct umw_error **err);

#endif
