/* The sandbox's default seccomp profile as runtime/ sees it: parsed from a
 * minimal config.json. For the unit tests that build or cache it. */
#ifndef UMW_TEST_PROFILE_SPEC_H
#define UMW_TEST_PROFILE_SPEC_H

#include "policy/seccomp_profile.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <stdio.h>

static inline struct spec *load_profile(void)
{
        _cleanup_free_ char *profile = seccomp_profile_json();
        cr_assert_not_null(profile, "the table cannot be rendered");
        _cleanup_free_ char *config = NULL;
        cr_assert_geq(asprintf(&config,
                               "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"}, "
                               "\"linux\": {\"seccomp\": %s}}",
                               profile),
                      0);
        struct spec *spec = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        int r = spec_load(config, "profile.json", &spec, &err);
        cr_assert_eq(r, 0, "spec_load: %s", err ? err->msg : "?");
        cr_assert_not_null(spec->seccomp);
        return spec;
}

#endif
