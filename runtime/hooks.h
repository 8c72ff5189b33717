/* OCI hooks: each one a fixed argv (no shell), the container state JSON on
 * its stdin, killed when its timeout passes, the runtime's environment when
 * it names none (only PATH for the container's side). A failing hook fails
 * the step it belongs to, naming the hook. */
#ifndef UMW_HOOKS_H
#define UMW_HOOKS_H

#include "runtime/spec.h"

#include <stddef.h>

struct umw_error;

/* Runs the hooks of kind in order; stops at the first failure. Messages
 * name the stage by its config.json key ("createRuntime"). */
int hooks_run(const struct spec_hooks *hooks, enum spec_hook_kind kind, const char *state_json,
              size_t state_len, struct umw_error **err);

/* As hooks_run, but every hook runs: each failure is a warning line (the
 * poststop hooks, when the container is gone whatever they say). */
void hooks_run_all(const struct spec_hooks *hooks, enum spec_hook_kind kind, const char *state_json,
                   size_t state_len);

#endif
