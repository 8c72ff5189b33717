/* What the sandbox verbs share (src/sandbox.c): a project located on disk,
 * its policy composed into a bundle, its audit log. Internal to src/. */
#ifndef UMW_SANDBOX_INT_H
#define UMW_SANDBOX_INT_H

#include <stdbool.h>
#include <sys/types.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "sandbox.h"
#include "policy/config.h"
#include "policy/grants.h"
#include "policy/presets.h"

/* The annotations a sandbox's config carries (kept in the runtime's state,
 * so list, status and gc find sandboxes among all containers). */
#define ANNOTATION_PROJECT "run.umwelt.project" /* the workspace */
#define ANNOTATION_PRESET  "run.umwelt.preset"
#define ANNOTATION_GRANTS  "run.umwelt.grants" /* a JSON array of {"path","mode"} */

/* A file in a long-lived sandbox's bundle whose mtime is the last exec (or
 * the up), for gc --idle. */
#define LAST_EXEC_FILE "last-exec"

/* Who the sandbox runs as: the invoking user, or the sudo caller when root
 * came through sudo. Root otherwise stays root, with no capability. */
struct identity {
        uid_t uid;
        gid_t gid;
        char *home;
        bool rootless;
};

struct sandbox {
        struct identity who;
        char *workspace, *id, *container_id, *bundle, *audit_file;
        int audit_fd;
        struct policy_config policy;
        bool policy_loaded;
        struct grant_list grants;
        struct grant_request *requests;
        char **request_paths;
        struct preset preset;
        char *config;
        bool keep_bundle; /* up: the bundle lives as long as the sandbox */
};

#define SANDBOX_INIT                                                                               \
        {                                                                                          \
                .audit_fd = -1                                                                     \
        }

/* The project at project (NULL: "."), which must be a directory: its
 * workspace, project id and the long-lived container id
 * "umwelt-<project id>". */
int sandbox_locate(struct sandbox *s, const char *project, struct umw_error **err);
/* Same for a workspace path as recorded (gc: it may be gone by now). */
int sandbox_for_workspace(struct sandbox *s, const char *workspace, struct umw_error **err);
/* Opens the project's audit log (once): verbs that act open it before they
 * act and fail when they cannot; status and list never create one. */
int sandbox_open_audit(struct sandbox *s, struct umw_error **err);
/* Policy layers, grants and preset for o, composed into s->bundle/config.json
 * with the sandbox's annotations (the audit log opened first); long_lived adds
 * run.umwelt.init=pause and takes no command. Refusals are audited. */
int sandbox_compose(struct sandbox *s, const struct sandbox_opts *o, bool long_lived,
                    struct umw_error **err);
/* The runtime options a sandbox is built with: without the cgroup manager
 * where the floor allows best-effort limits for an unprivileged user. */
struct runtime_opts sandbox_runtime(const struct sandbox *s, const struct runtime_opts *rt);
/* Frees s; its bundle is removed unless keep_bundle. */
void sandbox_release(struct sandbox *s);

/* One audit line (a failure to write it is a warning). */
void sandbox_audit(struct sandbox *s, const char *event, const char *const *kv);
/* The "start" line and a "grant" line per grant; command NULL for up. */
void sandbox_audit_start(struct sandbox *s, const char *command);

/* {"id":ID,"exit_status":N} on stdout: run and exec with --json, after the
 * command's own output. */
void sandbox_print_exit(const char *id, int status);
/* Removes a bundle directory umwelt made for container id (the files it
 * puts there, then the directory); anything else at path is left alone. */
void sandbox_remove_bundle(const char *path, const char *id);
/* Writes v (any JSON value) into g. */
void sandbox_jgen_value(yajl_gen g, yajl_val v);

#endif
