/* The three policy layers of the sandbox face: the host floor
 * (/etc/umwelt/floor.toml, root-owned), the user's config
 * (~/.config/umwelt/config.toml) and the project's .umwelt.toml. Each may
 * only narrow the one above. Strict: an unknown key or a wrong type is an
 * error "FILE:LINE:COLUMN: ...". Pure but for reading the files. */
#ifndef UMW_POLICY_CONFIG_H
#define UMW_POLICY_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/grants.h"

/* Ports one project may publish (netns/ingress.h's INGRESS_PORTS_MAX). */
#define POLICY_INGRESS_PORTS_MAX 16

struct umw_error;

/* Where the layers are; NULL means the default location (the floor's is
 * fixed; the user's is under home; the project's is DIR/.umwelt.toml). A
 * missing user or project file is an empty layer; a missing floor is the
 * built-in default floor (documented in config.c). */
struct policy_paths {
        const char *floor;
        const char *user;
        const char *project;
        /* Added for grants_default_never(): the XDG state and runtime
         * directories; NULL reads $XDG_STATE_HOME / $XDG_RUNTIME_DIR. */
        const char *state_home;
        const char *runtime_dir;
        /* The project file's bytes as the caller read (and accepted) them,
         * parsed in place of reading project, which then only names them
         * in messages; project_text NULL with project_given: no file. */
        bool project_given;
        const char *project_text;
        size_t project_len;
};

struct policy_config {
        char **grant_roots;     /* effective roots: the user's, each within the floor's */
        char **never;           /* never-granted: the defaults plus the floor's */
        char **presets_allowed; /* by the floor; NULL-terminated, all presets when absent */
        char *preset;        /* the project's, else the user's, else "dev" or the floor's first */
        bool egress_allowed; /* the floor lets projects enable egress */
        bool limits_best_effort; /* the floor lets limits be best-effort where not enforceable */
        struct grant_request *grants; /* the project's [[grant]] tables, origin "FILE:L:C" */
        size_t n_grants;
        char **env; /* extra environment variable names the project passes in */
        /* Added: the project's [egress] table, for the network issue to
         * validate; enabled only where the floor allows egress. */
        bool egress_enabled;
        char **egress_allow; /* raw strings as written, NULL-terminated */
        char **egress_deny;
        bool ingress_allowed;    /* the floor lets projects publish loopback ports */
        uint16_t *ingress_ports; /* the project's [ingress] ports, in file order */
        size_t n_ingress_ports;
        bool workspace_direct; /* [workspace] mode = "direct"; review otherwise */
        /* The user's [delivery]: more names held, more branches protected. */
        char **delivery_hold, **protected_branches;
        /* The user's [relay]: how long a request waits for a human (0:
         * the relay's default), and the standing rules: globs of resolved
         * paths a live grant below is given without asking, read-only or
         * read-write (NULL when none). */
        int relay_timeout_s;
        char **relay_allow_ro, **relay_allow_rw;
        void *owned; /* the parsed trees and strings the fields point into */
};

/* home: the user's home directory (for ~ in the default never-granted list
 * and the user config's location). */
int policy_load(const struct policy_paths *paths, const char *home, struct policy_config *out,
                struct umw_error **err);
void policy_config_free(struct policy_config *c);

#endif
