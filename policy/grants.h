/* Grants: which host paths a project's sandbox gets beyond its workspace,
 * decided from the grant roots and never-granted paths of the floor and user
 * layers. Pure: the only system calls are realpath() and stat(). */
#ifndef UMW_POLICY_GRANTS_H
#define UMW_POLICY_GRANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct umw_error;

enum grant_mode { GRANT_RO, GRANT_RW };

/* Both lists NULL-terminated absolute paths. A path in either that does not
 * exist (yet) is taken as its longest existing prefix, resolved, plus the
 * rest as written: a never-granted ~/.aws protects before it is created. */
struct grant_policy {
        const char *const *roots; /* every grant must resolve inside one */
        const char *const *never; /* nothing inside, equal to, or containing one */
};

struct grant_request {
        const char *path;   /* absolute, as the user wrote it */
        const char *mode;   /* "ro" or "rw"; NULL means "ro" */
        const char *origin; /* for messages, e.g. ".umwelt.toml:7:1" or "--grant"; may be NULL */
};

struct grant {
        char *path;            /* realpath of the request: where it is mounted, inside as outside */
        const char *requested; /* the request's path */
        enum grant_mode mode;
        bool is_file;   /* a regular file: always read-only */
        bool forced_ro; /* asked "rw" for a file, given "ro" */
        ssize_t parent; /* index of the nearest grant containing this one, or -1 */
};

/* Sorted by path, so every grant comes after the grants that contain it:
 * mounting in this order makes a nested grant's mode hold for exactly its
 * subtree. */
struct grant_list {
        struct grant *items;
        size_t len;
};

/* Which request was refused and by which rule, for the audit log. rule is
 * one of "mode", "relative", "missing", "type", "never-granted",
 * "outside-roots", "duplicate". */
struct grant_refusal {
        size_t index;
        const char *rule;
};

/* Resolves every request or refuses the lot: the first refusal is an error
 * of kind UMW_EXIT_CONFIG naming the grant and the rule, with *refusal (when
 * not NULL) filled in. A request is refused when its mode is neither "ro" nor
 * "rw", its path is not absolute, does not exist, or is neither a directory
 * nor a regular file; when its resolved path is, contains or lies inside a
 * never-granted path (also through a hard link or another mount of one);
 * when it lies outside every grant root; or when it resolves to the same
 * path as an earlier request. Bad policy lists (relative paths) are errors
 * too. */
int grants_resolve(const struct grant_policy *policy, const struct grant_request *requests,
                   size_t n, struct grant_list *out, struct grant_refusal *refusal,
                   struct umw_error **err);
void grant_list_free(struct grant_list *list);

/* The never-granted paths every floor starts from: the user's credentials
 * (~/.ssh, ~/.gnupg, ~/.aws), umwelt's own configuration, state (the audit
 * logs) and sockets, and the container engines' sockets. home is $HOME,
 * state_home the XDG state directory, runtime_dir $XDG_RUNTIME_DIR (NULL
 * when unset). A malloc'd NULL-terminated vector of malloc'd strings. */
int grants_default_never(const char *home, const char *state_home, const char *runtime_dir,
                         char ***out, struct umw_error **err);
void grants_strv_free(char **strv);

#endif
