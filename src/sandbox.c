#include "sandbox.h"
#include "policy/compose.h"
#include "policy/config.h"
#include "policy/grants.h"
#include "policy/presets.h"
#include "src/common/audit.h"
#include "src/common/cleanup.h"
#include "src/common/error.h"
#include "src/common/fdio.h"
#include "src/common/json.h"
#include "src/common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* Who the sandbox runs as: the invoking user, or the sudo caller when root
 * came through sudo. Root otherwise stays root, with no capability. */
struct identity {
        uid_t uid;
        gid_t gid;
        char *home;
        bool rootless;
};

static uid_t env_id(const char *name, uid_t fallback)
{
        const char *v = getenv(name);
        char *end = NULL;
        unsigned long n = v && *v ? strtoul(v, &end, 10) : 0;
        return v && *v && end && !*end ? (uid_t)n : fallback;
}

static int identity_get(struct identity *id, struct umw_error **err)
{
        bool root = geteuid() == 0;
        id->uid = root ? env_id("SUDO_UID", 0) : getuid();
        id->gid = root ? (gid_t)env_id("SUDO_GID", 0) : getgid();
        id->rootless = !root;
        struct passwd *pw = getpwuid(id->uid);
        const char *home = pw && id->uid != getuid() ? pw->pw_dir : getenv("HOME");
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

/* Requests from .umwelt.toml, then from --grant PATH[:ro|:rw]. */
static int collect_grants(const struct policy_config *pc, const struct sandbox_opts *o,
                          struct grant_request **out, char ***owned, struct umw_error **err)
{
        size_t n = pc->n_grants + o->n_grants;
        struct grant_request *req = calloc(n + 1, sizeof(*req));
        char **paths = calloc(o->n_grants + 1, sizeof(char *));
        if (!req || !paths) {
                free(req);
                free(paths);
                return umw_fail_sys(err, ENOMEM, "grants");
        }
        if (pc->n_grants)
                memcpy(req, pc->grants, pc->n_grants * sizeof(*req));
        for (size_t i = 0; i < o->n_grants; i++) {
                paths[i] = strdup(o->grants[i]);
                if (!paths[i])
                        break;
                char *colon = strrchr(paths[i], ':');
                const char *mode = "ro";
                if (colon && (strcmp(colon, ":ro") == 0 || strcmp(colon, ":rw") == 0)) {
                        mode = colon[2] == 'w' ? "rw" : "ro";
                        *colon = '\0';
                }
                req[pc->n_grants + i] =
                    (struct grant_request){.path = paths[i], .mode = mode, .origin = "--grant"};
        }
        *out = req;
        *owned = paths;
        return 0;
}

static bool preset_allowed(const struct policy_config *pc, const char *name)
{
        for (char **p = pc->presets_allowed; p && *p; p++)
                if (strcmp(*p, name) == 0)
                        return true;
        return !pc->presets_allowed;
}

static int choose_preset(const struct policy_config *pc, const char *asked, struct preset *out,
                         struct umw_error **err)
{
        const char *name = asked ? asked : pc->preset;
        if (!preset_allowed(pc, name))
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "--preset %s: not among the presets the host floor allows", name);
        struct machine_size m;
        int r = machine_size_read(&m, err);
        return r < 0 ? r : preset_resolve(name, &m, out, err);
}

/* Where the bundle of a sandbox lives while it runs: root's in /run, a
 * user's in their runtime directory. */
static int bundle_dir(const char *id, char **out, struct umw_error **err)
{
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        char *dir = NULL;
        int n = geteuid() == 0 ? asprintf(&dir, "/run/umwelt/bundles/%s", id)
                : xdg && *xdg  ? asprintf(&dir, "%s/umwelt/bundles/%s", xdg, id)
                               : asprintf(&dir, "/tmp/umwelt-%u/bundles/%s", geteuid(), id);
        if (n < 0)
                return umw_fail_sys(err, ENOMEM, "bundle path");
        for (char *p = dir + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                int e = mkdir(dir, 0700) < 0 && errno != EEXIST ? errno : 0;
                *p = '/';
                if (e) {
                        free(dir);
                        return umw_fail_sys(err, e, "create bundle directory");
                }
        }
        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                int e = errno;
                free(dir);
                return umw_fail_sys(err, e, "create bundle directory");
        }
        *out = dir;
        return 0;
}

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
};

static void sandbox_release(struct sandbox *s)
{
        free(s->who.home);
        free(s->workspace);
        free(s->id);
        free(s->container_id);
        free(s->audit_file);
        if (s->bundle) {
                char path[4096];
                snprintf(path, sizeof(path), "%s/config.json", s->bundle);
                unlink(path);
                rmdir(s->bundle);
                free(s->bundle);
        }
        if (s->audit_fd >= 0)
                close(s->audit_fd);
        if (s->policy_loaded)
                policy_config_free(&s->policy);
        grant_list_free(&s->grants);
        free(s->requests);
        if (s->request_paths)
                for (char **p = s->request_paths; *p; p++)
                        free(*p);
        free(s->request_paths);
        free(s->config);
}

static void audit_event(struct sandbox *s, const char *event, const char *const *kv)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (s->audit_fd >= 0 && audit_append(s->audit_fd, event, kv, &err) < 0)
                umw_warn("audit log %s: %s", s->audit_file, err->msg);
}

static int open_audit(struct sandbox *s, struct umw_error **err)
{
        int r = audit_path(s->id, &s->audit_file, err);
        return r < 0 ? r : audit_open(s->audit_file, &s->audit_fd, err);
}

static int load_policy(struct sandbox *s, const struct sandbox_opts *o, struct umw_error **err)
{
        char project_file[4096];
        snprintf(project_file, sizeof(project_file), "%s/.umwelt.toml", s->workspace);
        struct policy_paths paths = {.project = project_file};
        int r = policy_load(&paths, s->who.home, &s->policy, err);
        if (r < 0)
                return r;
        s->policy_loaded = true;
        r = collect_grants(&s->policy, o, &s->requests, &s->request_paths, err);
        if (r < 0)
                return r;
        struct grant_policy gp = {.roots = (const char *const *)s->policy.grant_roots,
                                  .never = (const char *const *)s->policy.never};
        struct grant_refusal refusal = {0};
        r = grants_resolve(&gp, s->requests, s->policy.n_grants + o->n_grants, &s->grants, &refusal,
                           err);
        if (r < 0) {
                const char *kv[] = {"grant", s->requests[refusal.index].path,
                                    "rule",  refusal.rule ? refusal.rule : "",
                                    "error", (*err)->msg,
                                    NULL};
                audit_event(s, "refusal", kv);
                return r;
        }
        return choose_preset(&s->policy, o->preset, &s->preset, err);
}

static int compose(struct sandbox *s, const struct sandbox_opts *o, struct umw_error **err)
{
        /* umwelt-<project name>: the id without its hash. */
        char hostname[64];
        snprintf(hostname, sizeof(hostname), "umwelt-%.*s", (int)(strrchr(s->id, '-') - s->id),
                 s->id);
        struct compose_input in = {
            .grants = &s->grants,
            .preset = &s->preset,
            .workspace = s->workspace,
            .rootfs = o->rootfs ? o->rootfs : "/",
            .hostname = hostname,
            .uid = s->who.uid,
            .gid = s->who.gid,
            .user_namespace = s->who.rootless,
            .home = s->who.home,
            .env = (const char *const *)environ,
            .env_extra = (const char *const *)s->policy.env,
            .args = (const char *const *)o->args,
            .terminal = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO),
        };
        int r = compose_config(&in, &s->config, err);
        if (r < 0)
                return r;
        r = bundle_dir(s->container_id, &s->bundle, err);
        if (r < 0)
                return r;
        _cleanup_close_ int dirfd = open(s->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return umw_fail_errno(err, "open %s", s->bundle);
        return umw_write_file_atomic(dirfd, "config.json", s->config, strlen(s->config), 0600, err);
}

static void audit_start(struct sandbox *s, const char *const *args)
{
        char limits[96];
        snprintf(limits, sizeof(limits), "%llu bytes, %u.%03u cpus, %llu pids",
                 (unsigned long long)s->preset.memory_bytes, s->preset.cpus_milli / 1000,
                 s->preset.cpus_milli % 1000, (unsigned long long)s->preset.pids);
        const char *kv[] = {"id",      s->container_id, "workspace", s->workspace,
                            "command", args[0],         "preset",    s->preset.name,
                            "limits",  limits,          NULL};
        audit_event(s, "start", kv);
        for (size_t i = 0; i < s->grants.len; i++) {
                const char *g[] = {"path", s->grants.items[i].path, "mode",
                                   s->grants.items[i].mode == GRANT_RW ? "rw" : "ro", NULL};
                audit_event(s, "grant", g);
        }
}

static int prepare(struct sandbox *s, const struct sandbox_opts *o, struct umw_error **err)
{
        int r = identity_get(&s->who, err);
        if (r < 0)
                return r;
        s->workspace = realpath(o->project ? o->project : ".", NULL);
        struct stat st;
        if (!s->workspace || stat(s->workspace, &st) < 0 || !S_ISDIR(st.st_mode))
                return umw_fail(err, UMW_EXIT_USAGE, ENOENT, "-p %s: expected a project directory",
                                o->project ? o->project : ".");
        s->id = project_id(s->workspace);
        if (!s->id || asprintf(&s->container_id, "umwelt-%s-run%d", s->id, getpid()) < 0)
                return umw_fail_sys(err, ENOMEM, "sandbox id");
        if ((r = open_audit(s, err)) < 0 || (r = load_policy(s, o, err)) < 0)
                return r;
        return compose(s, o, err);
}

int sandbox_run(const struct runtime_opts *rt, const struct sandbox_opts *o, int *exit_status,
                struct umw_error **err)
{
        struct sandbox s = {.audit_fd = -1};
        int r = prepare(&s, o, err);
        if (r == 0) {
                if (geteuid() == 0 && s.who.uid == 0)
                        umw_log(UMW_LOG_WARNING,
                                "running as root: the sandbox holds no capability in any set");
                audit_start(&s, (const char *const *)o->args);
                struct runtime_opts sandbox_rt = *rt;
                if (s.who.rootless && s.policy.limits_best_effort) {
                        umw_log(UMW_LOG_WARNING, "limits are best-effort (the host floor allows "
                                                 "it): no cgroup is required");
                        sandbox_rt.cgroup_manager = CGROUP_MANAGER_DISABLED;
                }
                struct create_opts co = {
                    .id = s.container_id, .bundle = s.bundle, .preserve_fds = o->preserve_fds};
                r = container_run(&sandbox_rt, &co, exit_status, err);
                char status[16];
                snprintf(status, sizeof(status), "%d", r < 0 ? -1 : *exit_status);
                const char *kv[] = {"id", s.container_id, "status", status, NULL};
                audit_event(&s, r < 0 ? "failed" : "stop", kv);
        }
        sandbox_release(&s);
        return r;
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
        if (r == 0 && text)
                printf("%s\n", text);
        return r;
}
