#include "runtime/caps.h"
#include "runtime/spec.h"
#include "common/error.h"
#include "common/log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/prctl.h>

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

/* Capabilities the running kernel knows, capped at what a mask holds. A spec
 * written for a newer kernel may name more; those cannot be granted here and
 * are left out, as runc and crun do. */
static cap_value_t caps_known(void)
{
        cap_value_t n = cap_max_bits();
        return n > 64 ? 64 : n;
}

static bool caps_has(uint64_t mask, cap_value_t cap)
{
        return (mask >> cap) & 1;
}

/* "CAP_SYS_ADMIN" for messages, the way the spec spells it. */
static const char *caps_name(cap_value_t cap, char *buf, size_t size)
{
        char *lower = cap_to_name(cap);
        if (!lower) {
                snprintf(buf, size, "capability %d", cap);
                return buf;
        }
        size_t i = 0;
        for (; lower[i] && i + 1 < size; i++)
                buf[i] = (char)(lower[i] >= 'a' && lower[i] <= 'z' ? lower[i] - 32 : lower[i]);
        buf[i] = '\0';
        cap_free(lower);
        return buf;
}

int caps_drop_bounding(const struct spec_caps *caps, struct umw_error **err)
{
        cap_value_t known = caps_known();
        for (cap_value_t cap = 0; cap < known; cap++) {
                if (caps_has(caps->bounding, cap))
                        continue;
                int in_set = cap_get_bound(cap);
                if (in_set < 0)
                        return umw_fail_errno(err, "read the capability bounding set");
                /* Only dropping needs CAP_SETPCAP: one already out is fine. */
                if (in_set == 0)
                        continue;
                if (cap_drop_bound(cap) < 0) {
                        char name[64];
                        return umw_fail_errno(err, "drop %s from the bounding set",
                                              caps_name(cap, name, sizeof(name)));
                }
        }
        return 0;
}

static int caps_fill(cap_t c, cap_flag_t flag, uint64_t mask, struct umw_error **err)
{
        cap_value_t known = caps_known();
        for (cap_value_t cap = 0; cap < known; cap++) {
                if (!caps_has(mask, cap))
                        continue;
                if (cap_set_flag(c, flag, 1, &cap, CAP_SET) < 0)
                        return umw_fail_errno(err, "cap_set_flag");
        }
        return 0;
}

/* The three sets of caps into c, then c onto this process; c is the
 * caller's to free. */
static int caps_fill_and_set(cap_t c, const struct spec_caps *caps, struct umw_error **err)
{
        int r;
        if ((r = caps_fill(c, CAP_EFFECTIVE, caps->effective, err)) < 0 ||
            (r = caps_fill(c, CAP_PERMITTED, caps->permitted, err)) < 0 ||
            (r = caps_fill(c, CAP_INHERITABLE, caps->inheritable, err)) < 0)
                return r;
        if (cap_set_proc(c) < 0)
                return umw_fail_errno(err, "set the process capabilities");
        return 0;
}

static int caps_set_proc(const struct spec_caps *caps, struct umw_error **err)
{
        cap_t c = cap_init();
        if (!c)
                return umw_fail_errno(err, "cap_init");
        int r = caps_fill_and_set(c, caps, err);
        cap_free(c);
        return r;
}

/* The ambient set starts empty (the runtime's own ambient capabilities must
 * not leak into the container), then gets what the spec asks. The kernel
 * only raises an ambient capability that is both permitted and inheritable.
 * One that is not is skipped, as crun and runc do: the result holds fewer
 * privileges than asked, never more, and the default specs of `crun spec`
 * and `runc spec` (ambient set, inheritable empty) keep working. The note
 * goes to the debug log only: the init's stderr is the container's. Any
 * other refusal is an error naming the capability. */
static int caps_set_ambient(const struct spec_caps *caps, struct umw_error **err)
{
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                return umw_fail_errno(err, "clear the ambient capabilities");
        cap_value_t known = caps_known();
        for (cap_value_t cap = 0; cap < known; cap++) {
                if (!caps_has(caps->ambient, cap))
                        continue;
                char name[64];
                if (!caps_has(caps->permitted, cap) || !caps_has(caps->inheritable, cap)) {
                        umw_debug("ambient capability %s skipped: it is not in both the "
                                  "permitted and inheritable sets",
                                  caps_name(cap, name, sizeof(name)));
                        continue;
                }
                if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (unsigned long)cap, 0, 0) < 0)
                        return umw_fail_errno(err, "raise the ambient capability %s",
                                              caps_name(cap, name, sizeof(name)));
        }
        return 0;
}

int caps_apply(const struct spec_caps *caps, struct umw_error **err)
{
        int r = caps_set_proc(caps, err);
        if (r < 0)
                return r;
        return caps_set_ambient(caps, err);
}
