/* compose: policy -> the OCI config.json of a sandbox. The closed default
 * (DESIGN.md "Data flow", issue 4 "The closed default") with the grants and
 * preset on top. Pure: it returns a document; the runtime builds it. */
#ifndef UMW_POLICY_COMPOSE_H
#define UMW_POLICY_COMPOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct grant_list;
struct preset;
struct umw_error;

/* A host directory bound read-only at destination (nosuid, nodev, noexec). */
struct compose_bind {
        const char *source;
        const char *destination;
        /* Not idmapped even where binds are: nothing in it is owned by
         * anyone the sandbox acts as (a socket anyone who reaches may use),
         * and an idmapped mount costs its making and its teardown. */
        bool plain;
};

/* The fds compose opened for the binds it writes: each bind's source is
 * /proc/self/fd/N of one of them, so the runtime mounts the very inode that
 * was checked, not whatever a name points at by then. The caller keeps them
 * open until the container is created (the init inherits them across its
 * clone) and closes them with compose_fds_close. */
struct compose_fds {
        int *fd;
        size_t n;
};

void compose_fds_close(struct compose_fds *f);

/* Below the agent's repository: the mount point of the host's objects,
 * which its objects/info/alternates names. */
#define AGENT_REPO_OBJECTS "host-objects"

struct compose_input {
        const struct grant_list *grants; /* resolved, parents first */
        const struct preset *preset;     /* resolved and capped */
        const char *workspace;           /* absolute, resolved project directory */
        /* Review mode: the directory holding upper/ and work/, the layer
         * the workspace's overlay writes to (the project below it,
         * read-only); NULL: the workspace is bound in place. */
        const char *layer;
        /* Review mode: the agent's own repository (face/agent_repo.h),
         * bound at the workspace's .git, the host's .git/objects read-only
         * at its AGENT_REPO_OBJECTS; NULL: none. */
        const char *agent_repo;
        const char *rootfs;   /* "/" for the embedded default, or --rootfs DIR */
        const char *hostname; /* "umwelt-<project>" */
        uid_t uid;            /* identity inside: the invoking user's */
        gid_t gid;
        bool user_namespace; /* map uid/gid to themselves */
        /* And 0 to root_uid/root_gid, never the host's 0 (root's runtime
         * builds the container as its 0); a uid of 0 maps only there. */
        bool map_root;
        uid_t root_uid;
        gid_t root_gid;
        /* Every bind idmapped with the container's user namespace (root's
         * sandboxes): the runtime opens the sources, the host's 0 shows as
         * the container's 0 there and what is written keeps its host
         * owner. */
        bool idmap_binds;
        const char *home; /* $HOME inside: a fresh tmpfs there */
        /* The home does not exist on the host (a passwd entry's
         * /nonexistent): on the host's root, outside the directories the
         * sandbox covers, there is nothing to hide and no mount point can
         * be made, so HOME names it as on the host, unmounted. */
        bool home_missing;
        const char *const *env;       /* the caller's environment (NULL-terminated) */
        const char *const *env_extra; /* names the project passes in (NULL-terminated) */
        const char *const *args;      /* the command (NULL-terminated, non-empty) */
        bool terminal;
        /* "NAME=VALUE" set by the sandbox itself (egress: the proxy and trust
         * variables), replacing a caller's variable of the same name. */
        const char *const *env_set;
        const struct compose_bind *ro_binds; /* n_ro_binds, mounted after the workspace */
        size_t n_ro_binds;
        /* Host directories the sandbox must never see (the umwelt CA's key),
         * each a masked path (an empty read-only tmpfs after every mount). */
        const char *const *hidden;
        /* More annotations, as NULL-terminated key, value pairs, after the
         * runtime's network wall (what the sandbox face finds a sandbox by). */
        const char *const *annotations;
        struct compose_fds *fds; /* out: the binds' sources (above) */
};

/* A malloc'd config.json, compact: the runtime parses it at every start. */
int compose_config(const struct compose_input *in, char **json, struct umw_error **err);
/* Whether the caller's variable NAME=VALUE may enter a sandbox: PATH, TERM,
 * LANG, LC_*, HOME, USER, SHELL and the project's extras, never a
 * credential (SSH_AUTH_SOCK, *_TOKEN, *_KEY, AWS_*, ...). */
bool compose_env_allowed(const char *entry, const char *const *extra);
/* The path of a pathname socket in a line of /proc/net/unix (its newline
 * cut off in place), or NULL: the header, an unnamed or abstract socket,
 * or a path bound relative to its binder's directory. */
const char *compose_unix_socket_path(char *line);

#endif
