/* The sandbox face: one closed sandbox per project. It never builds a
 * container itself: policy/ turns the layers, grants and preset into an OCI
 * config.json, and the runtime's own create/start/run builds it, exactly as
 * for podman (DESIGN.md, "Data flow"). Every start, grant, refusal and stop
 * goes to the project's audit log. */
#ifndef UMW_SANDBOX_H
#define UMW_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/container.h"

struct umw_error;

struct sandbox_opts {
        const char *project; /* -p DIR; NULL: the current directory */
        const char *preset;  /* --preset; NULL: the policy's */
        const char **grants; /* --grant PATH[:ro|:rw], n_grants of them */
        size_t n_grants;
        const char *rootfs; /* --rootfs; NULL: the host's / read-only */
        char **args;        /* the command, NULL-terminated */
        int preserve_fds;   /* fds 3..3+N-1 pass to the command (doctor --deep) */
};

/* sandbox run: build, run the command, tear down; *exit_status is the
 * command's. */
int sandbox_run(const struct runtime_opts *rt, const struct sandbox_opts *o, int *exit_status,
                struct umw_error **err);

/* sandbox log: the project's audit log, as text (a line per event) or as
 * one JSON array of the events. */
int sandbox_log(const char *project, bool json, struct umw_error **err);

#endif
