/* Delivery: what the agent changed in a project's layer (review mode)
 * brought to the host, by umwelt-deliver, the one program that links
 * libgit2 (umwelt-run execs it: a start does not pay for the library).
 * review lists each change in its bucket (policy/delivery_rules.h), apply
 * commits the apply bucket and the held files named to a working branch
 * of the host's repository, in its object database only, sync writes the
 * same set into the host's tree. */
#ifndef UMW_DELIVER_H
#define UMW_DELIVER_H

#include <stdbool.h>
#include <stddef.h>

struct umw_error;
struct runtime_opts;

struct deliver_opts {
        const struct runtime_opts *rt; /* where the runtime's state is (sync, is it up?) */
        const char *project;           /* -p, NULL: "." */
        bool json;                     /* --json */
        const char *branch;            /* apply --branch */
        const char *message;           /* apply -m, NULL: a summary */
        const char **include;          /* --include PATH..., held files to deliver too */
        size_t n_include;
        const char *since; /* review --since start|last|N, NULL: last */
};

/* Each change of the layer with its bucket and reason; a change the
 * deliveries up to --since delivered as it is now is left out; a conflict
 * (the host's file is no longer the baseline's) is held and shown merged.
 * No layer is UMW_EXIT_NOTFOUND. */
int deliver_review(const struct deliver_opts *o, struct umw_error **err);
/* One commit on refs/heads/BRANCH (from the baseline commit, or its tip
 * when it exists) holding the apply bucket and the included held files;
 * numbered in STATE/umwelt/ID/deliveries/N.json and audited. A protected
 * or invalid branch, an include not held, no identity is UMW_EXIT_CONFIG;
 * no repository, no layer UMW_EXIT_NOTFOUND. */
int deliver_apply(const struct deliver_opts *o, struct umw_error **err);
/* The same set written into the host's tree instead, by fd; refused
 * (UMW_EXIT_STATE) while the sandbox runs: overlayfs leaves a lower
 * directory changed under a mounted overlay undefined. */
int deliver_sync(const struct deliver_opts *o, struct umw_error **err);

#endif
