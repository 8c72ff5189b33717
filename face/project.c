/* A project's sandbox, by name: whose it is, where its workspace is, its
 * ids, its bundle directory and its audit log. */
#include "face/sandbox_int.h"
#include "face/user.h"
#include "common/audit.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The first id of root's range in file (/etc/subuid, /etc/subgid: the ids
 * an administrator set aside for root's containers), else SANDBOX_ROOT_ID.
 * One id: root's sandboxes have one user, and nothing of theirs keeps it
 * on the host (their writes land through idmapped binds). */
static unsigned root_id(const char *file)
{
        _cleanup_fclose_ FILE *f = fopen(file, "re");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        while (f && getline(&line, &cap, f) > 0) {
                unsigned long start = 0, count = 0;
                size_t skip = strncmp(line, "root:", 5) == 0 ? 5
                              : strncmp(line, "0:", 2) == 0  ? 2
                                                             : 0;
                if (skip && sscanf(line + skip, "%lu:%lu", &start, &count) == 2 && count > 0 &&
                    start > 0 && start < UINT32_MAX - 1)
                        return (unsigned)start;
        }
        return SANDBOX_ROOT_ID;
}

int sandbox_identity_get(struct identity *id, struct umw_error **err)
{
        bool root = geteuid() == 0;
        struct face_user who = face_invoking_user();
        id->uid = who.uid;
        id->gid = who.gid;
        id->rootless = !root;
        id->root_uid = root ? root_id("/etc/subuid") : 0;
        id->root_gid = root ? root_id("/etc/subgid") : 0;
        /* The passwd database only where $HOME does not answer: the lookup
         * goes through NSS (nsswitch.conf, nscd's socket) at every start. */
        bool own = id->uid == getuid();
        const char *env_home = getenv("HOME");
        struct passwd *pw = own && env_home && env_home[0] == '/' ? NULL : getpwuid(id->uid);
        const char *home = pw && !own ? pw->pw_dir : env_home;
        if (!home || home[0] != '/')
                home = pw ? pw->pw_dir : NULL;
        if (!home)
                return umw_fail(err, UMW_EXIT_FAILURE, ENOENT, "no home directory for uid %u",
                                id->uid);
        id->home = strdup(home);
        return id->home ? 0 : umw_fail_sys(err, ENOMEM, "home");
}

/* "<name>-<hash>": the project directory's name, made safe for an id, and
 * an FNV-1a hash of its full path so two projects called "src" differ. */
static char *project_id(const char *workspace)
{
        uint64_t h = 0xcbf29ce484222325ULL;
        for (const char *c = workspace; *c; c++)
                h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
        const char *base = strrchr(workspace, '/');
        base = base && base[1] ? base + 1 : "root";
        char name[40];
        size_t n = 0;
        for (; *base && n < sizeof(name) - 1; base++) {
                char c = *base;
                bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '_' || c == '-';
                name[n++] = ok ? c : '_';
        }
        name[n] = '\0';
        char *id = NULL;
        if (asprintf(&id, "%s-%08x", name, (unsigned)(h ^ (h >> 32))) < 0)
                return NULL;
        return id;
}

/* Where the bundle of a sandbox lives while it runs: root's in /run, a
 * user's in their runtime directory. */
int sandbox_bundle_dir(const char *id, char **out, struct umw_error **err)
{
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        char *dir = NULL;
        int n = geteuid() == 0 ? asprintf(&dir, "/run/umwelt/bundles/%s", id)
                : xdg && *xdg  ? asprintf(&dir, "%s/umwelt/bundles/%s", xdg, id)
                               : asprintf(&dir, "/tmp/umwelt-%u/bundles/%s", geteuid(), id);
        if (n < 0)
                return umw_fail_sys(err, ENOMEM, "bundle path");
        int r = umw_mkdir_p(dir, 0700, 0700, err);
        if (r < 0) {
                free(dir);
                return umw_error_prefix(err, "bundle");
        }
        *out = dir;
        return 0;
}

void sandbox_remove_bundle(const char *path, const char *id)
{
        static const char *const files[] = {"config.json",
                                            ".config.json.tmp",
                                            LAST_EXEC_FILE,
                                            EGRESS_POLICY_FILE,
                                            "." EGRESS_POLICY_FILE ".tmp",
                                            GATEWAY_PID_FILE,
                                            "." GATEWAY_PID_FILE ".tmp",
                                            GATEWAY_ERR_FILE,
                                            CONSOLE_SOCKET_FILE};
        _cleanup_free_ char *copy = strdup(path);
        /* Only BUNDLES/ID, as bundle_dir made it: the path comes from a
         * state file. */
        if (!copy || strcmp(basename(copy), id) != 0)
                return;
        _cleanup_close_ int dirfd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dirfd < 0)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(files); i++)
                unlinkat(dirfd, files[i], 0);
        rmdir(path);
}

void sandbox_release(struct sandbox *s)
{
        free(s->project.who.home);
        free(s->project.workspace);
        free(s->project.id);
        free(s->project.audit_file);
        if (s->bundle && !s->keep_bundle)
                sandbox_remove_bundle(s->bundle, s->project.container_id);
        if (s->relay_door && !s->relay_keep)
                sandbox_relay_remove(s->project.container_id);
        free(s->relay_door);
        free(s->bundle);
        free(s->project.container_id);
        if (s->project.audit_fd >= 0)
                close(s->project.audit_fd);
        if (s->view.loaded)
                policy_config_free(&s->view.policy);
        grant_list_free(&s->view.grants);
        free(s->view.requests);
        if (s->view.request_paths)
                for (char **p = s->view.request_paths; *p; p++)
                        free(*p);
        free(s->view.request_paths);
        free(s->config);
        compose_fds_close(&s->fds);
        umw_close_fdp(&s->layer_lock);
        free(s->net.gateway_bin);
        for (char **e = s->net.env_set; e && *e; e++)
                free(*e);
        free(s->net.env_set);
        free(s->net.trust_dir);
        free(s->net.ca_dir);
}

void sandbox_audit(struct sandbox *s, const char *event, const char *const *kv)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (s->project.audit_fd >= 0 && audit_append(s->project.audit_fd, event, kv, &err) < 0)
                umw_warn("audit log %s: %s", s->project.audit_file, err->msg);
}

void sandbox_audit_start(struct sandbox *s, const char *command)
{
        char limits[96];
        snprintf(limits, sizeof(limits), "%llu bytes, %u.%03u cpus, %llu pids",
                 (unsigned long long)s->view.preset.memory_bytes, s->view.preset.cpus_milli / 1000,
                 s->view.preset.cpus_milli % 1000, (unsigned long long)s->view.preset.pids);
        const char *kv[] = {"id",
                            s->project.container_id,
                            "workspace",
                            s->project.workspace,
                            "preset",
                            s->view.preset.name,
                            "limits",
                            limits,
                            "workspace_mode",
                            s->view.review ? "review" : "direct",
                            command ? "command" : NULL,
                            command,
                            NULL};
        sandbox_audit(s, "start", kv);
        for (size_t i = 0; i < s->view.grants.len; i++) {
                const char *g[] = {"path", s->view.grants.items[i].path, "mode",
                                   s->view.grants.items[i].mode == GRANT_RW ? "rw" : "ro", NULL};
                sandbox_audit(s, "grant", g);
        }
}

int sandbox_open_audit(struct sandbox *s, struct umw_error **err)
{
        if (s->project.audit_fd >= 0)
                return 0;
        int r = s->project.audit_file ? 0 : audit_path(s->project.id, &s->project.audit_file, err);
        return r < 0 ? r : audit_open(s->project.audit_file, &s->project.audit_fd, err);
}

int sandbox_for_workspace(struct sandbox *s, const char *workspace, struct umw_error **err)
{
        if (!s->project.workspace && !(s->project.workspace = strdup(workspace)))
                return umw_fail_sys(err, ENOMEM, "workspace");
        s->project.id = project_id(s->project.workspace);
        if (!s->project.id || asprintf(&s->project.container_id, "umwelt-%s", s->project.id) < 0) {
                s->project.container_id = NULL;
                return umw_fail_sys(err, ENOMEM, "sandbox id");
        }
        return 0;
}

int sandbox_locate(struct sandbox *s, const char *project, struct umw_error **err)
{
        s->project.workspace = realpath(project ? project : ".", NULL);
        struct stat st;
        if (!s->project.workspace || stat(s->project.workspace, &st) < 0 || !S_ISDIR(st.st_mode))
                return umw_fail(err, UMW_EXIT_USAGE, ENOENT, "-p %s: expected a project directory",
                                project ? project : ".");
        return sandbox_for_workspace(s, s->project.workspace, err);
}

int sandbox_relay_socket(const char *project, char **out, char **workspace, struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        _cleanup_free_ char *dir = NULL;
        int r = sandbox_locate(&s, project, err);
        if (r < 0 || (r = sandbox_relay_sandbox_dir(s.project.container_id, &dir, err)) < 0)
                return r;
        if (asprintf(out, "%s/door/relay.sock", dir) < 0) {
                *out = NULL;
                return umw_fail_sys(err, ENOMEM, "relay socket");
        }
        *workspace = TAKE_PTR(s.project.workspace);
        return 0;
}

int sandbox_audit_open(const char *project, int *fd, struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        int r = sandbox_locate(&s, project, err);
        if (r < 0 || (r = sandbox_open_audit(&s, err)) < 0)
                return r;
        *fd = TAKE_FD(s.project.audit_fd);
        return 0;
}

struct runtime_opts sandbox_runtime(const struct sandbox *s, const struct runtime_opts *rt)
{
        struct runtime_opts out = *rt;
        if (s->project.who.rootless && s->view.policy.limits_best_effort) {
                umw_log(UMW_LOG_WARNING,
                        "limits are best-effort (the host floor allows it): no cgroup is required");
                out.cgroup_manager = CGROUP_MANAGER_DISABLED;
        }
        return out;
}

/* {"id":..., "exit_status":N}: what run and exec print with --json after
 * the command's own output. */
void sandbox_print_exit(const char *id, int status)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return;
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "id", id);
        umw_jgen_key_int(g, "exit_status", status);
        yajl_gen_map_close(g);
        _cleanup_free_ char *text = umw_jgen_finish(g, NULL);
        if (text)
                printf("%s\n", text);
}

static int print_event_text(yajl_val line, size_t lineno, void *ctx, struct umw_error **err)
{
        for (size_t i = 0; i < line->u.object.len; i++) {
                yajl_val v = line->u.object.values[i];
                const char *key = line->u.object.keys[i];
                const char *text = YAJL_IS_STRING(v) ? v->u.string : "";
                if (strcmp(key, "time") == 0 || strcmp(key, "event") == 0)
                        printf("%s%s", i ? " " : "", text);
                else
                        printf(" %s=%s", key, text);
        }
        putchar('\n');
        return 0;
}

static int gen_event(yajl_val line, size_t lineno, void *ctx, struct umw_error **err)
{
        yajl_gen g = ctx;
        yajl_gen_map_open(g);
        for (size_t i = 0; i < line->u.object.len; i++) {
                yajl_val v = line->u.object.values[i];
                umw_jgen_key_str(g, line->u.object.keys[i], YAJL_IS_STRING(v) ? v->u.string : "");
        }
        yajl_gen_map_close(g);
        return 0;
}

int sandbox_log(const char *project, bool json, struct umw_error **err)
{
        _cleanup_free_ char *workspace = realpath(project ? project : ".", NULL);
        if (!workspace)
                return umw_fail(err, UMW_EXIT_USAGE, ENOENT, "-p %s: expected a project directory",
                                project ? project : ".");
        _cleanup_free_ char *id = project_id(workspace);
        _cleanup_free_ char *path = NULL;
        int r = id ? audit_path(id, &path, err) : umw_fail_sys(err, ENOMEM, "project id");
        if (r < 0)
                return r;
        if (access(path, F_OK) < 0)
                return umw_fail(err, UMW_EXIT_NOTFOUND, ENOENT,
                                "no audit log for %s: no sandbox ran there yet (%s)", workspace,
                                path);
        if (!json)
                return audit_read(path, print_event_text, NULL, err);
        yajl_gen g = umw_jgen_new(true);
        if (!g)
                return umw_fail_sys(err, ENOMEM, "log");
        yajl_gen_array_open(g);
        r = audit_read(path, gen_event, g, err);
        yajl_gen_array_close(g);
        _cleanup_free_ char *text = umw_jgen_finish(g, NULL);
        if (r < 0)
                return r;
        if (text)
                printf("%s\n", text);
        return 0;
}

char *sandbox_egress_log(const struct sandbox *s)
{
        const char *slash = s->project.audit_file ? strrchr(s->project.audit_file, '/') : NULL;
        char *path = NULL;
        if (!slash || asprintf(&path, "%.*s/egress.jsonl", (int)(slash - s->project.audit_file),
                               s->project.audit_file) < 0)
                return NULL;
        return path;
}

int sandbox_layer_dir(const struct sandbox *s, char **out, struct umw_error **err)
{
        _cleanup_free_ char *dir = NULL;
        int r = umw_state_dir(s->project.id, &dir, err);
        if (r < 0)
                return r;
        if (asprintf(out, "%s/layer", dir) < 0) {
                *out = NULL;
                return umw_fail_sys(err, ENOMEM, "layer path");
        }
        return 0;
}

int sandbox_not_running(const struct sandbox *s, struct umw_error **err)
{
        return umw_fail(err, UMW_EXIT_STATE, ESRCH,
                        "no sandbox is running for %s: start it with umwelt-run sandbox up -p %s",
                        s->project.workspace, s->project.workspace);
}
