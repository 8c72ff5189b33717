/* One function per verb. argv[0] is the verb; each returns the exit status
 * (0, or the container's for run/exec) or a negative error in *err. */
#ifndef UMW_VERBS_H
#define UMW_VERBS_H

#include "src/opts.h"

struct umw_error;

#define VERB(name)                                                                                 \
        int verb_##name(struct global_opts *g, int argc, char **argv, struct umw_error **err)

VERB(create);
VERB(run);
VERB(start);
VERB(kill);
VERB(delete);
VERB(state);
VERB(list);
VERB(ps);
VERB(pause);
VERB(resume);
VERB(update);
VERB(exec);
VERB(features);
VERB(spec);
VERB(sandbox);
VERB(doctor);
VERB(policy);
VERB(deliver);
VERB(request);
VERB(relay);

/* One line per sandbox sub-verb, for umwelt-run --help. */
void verb_sandbox_print_verbs(void);

#endif
