#include "face/sandbox_int.h"
#include "face/user.h"
#include "netns/tls_paths.h"
#include "policy/compose.h"
#include "policy/config.h"
#include "policy/grants.h"
#include "policy/presets.h"
#include "runtime/init.h"
#include "common/audit.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/paths.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

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

static int identity_get(struct identity *id, struct umw_error **err)
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
        int r = presets_machine_size_read(&m, err);
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
        free(s->who.home);
        free(s->workspace);
        free(s->id);
        free(s->audit_file);
        if (s->bundle && !s->keep_bundle)
                sandbox_remove_bundle(s->bundle, s->container_id);
        free(s->bundle);
        free(s->container_id);
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
        compose_fds_close(&s->fds);
        free(s->gateway_bin);
        for (char **e = s->env_set; e && *e; e++)
                free(*e);
        free(s->env_set);
        free(s->trust_dir);
        free(s->ca_dir);
}

void sandbox_audit(struct sandbox *s, const char *event, const char *const *kv)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (s->audit_fd >= 0 && audit_append(s->audit_fd, event, kv, &err) < 0)
                umw_warn("audit log %s: %s", s->audit_file, err->msg);
}

int sandbox_policy_read(struct sandbox *s, struct umw_error **err)
{
        char project_file[4096];
        snprintf(project_file, sizeof(project_file), "%s/.umwelt.toml", s->workspace);
        struct policy_paths paths = {.project = project_file};
        int r = s->who.home ? 0 : identity_get(&s->who, err);
        if (r == 0)
                r = policy_load(&paths, s->who.home, &s->policy, err);
        s->policy_loaded = r == 0;
        return r;
}

static int load_policy(struct sandbox *s, const struct sandbox_opts *o, struct umw_error **err)
{
        int r = sandbox_policy_read(s, err);
        if (r < 0)
                return r;
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
                sandbox_audit(s, "refusal", kv);
                return r;
        }
        return choose_preset(&s->policy, o->preset, &s->preset, err);
}

void sandbox_jgen_value(yajl_gen g, yajl_val v)
{
        if (YAJL_IS_STRING(v)) {
                umw_jgen_str(g, v->u.string);
        } else if (YAJL_IS_NUMBER(v)) {
                yajl_gen_number(g, v->u.number.r, strlen(v->u.number.r));
        } else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
                yajl_gen_bool(g, YAJL_IS_TRUE(v));
        } else if (YAJL_IS_ARRAY(v)) {
                yajl_gen_array_open(g);
                for (size_t i = 0; i < v->u.array.len; i++)
                        sandbox_jgen_value(g, v->u.array.values[i]);
                yajl_gen_array_close(g);
        } else if (YAJL_IS_OBJECT(v)) {
                yajl_gen_map_open(g);
                for (size_t i = 0; i < v->u.object.len; i++) {
                        umw_jgen_key(g, v->u.object.keys[i]);
                        sandbox_jgen_value(g, v->u.object.values[i]);
                }
                yajl_gen_map_close(g);
        } else {
                yajl_gen_null(g);
        }
}

/* The grants as one JSON array of {"path","mode"}, for the annotation. */
static char *grants_json(const struct grant_list *grants)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return NULL;
        yajl_gen_array_open(g);
        for (size_t i = 0; i < grants->len; i++) {
                yajl_gen_map_open(g);
                umw_jgen_key_str(g, "path", grants->items[i].path);
                umw_jgen_key_str(g, "mode", grants->items[i].mode == GRANT_RW ? "rw" : "ro");
                yajl_gen_map_close(g);
        }
        yajl_gen_array_close(g);
        return umw_jgen_finish(g, NULL);
}

/* The published ports as text: "5173,8080". */
#define PORTS_TEXT_MAX (INGRESS_PORTS_MAX * 6 + 1)

/* The annotations list, status and gc find a sandbox by, as key, value
 * pairs for compose (kv holds 12 and the NULL; ports the published ones). */
static void annotations(const struct sandbox *s, bool long_lived, const char *grants,
                        char ports[static PORTS_TEXT_MAX], const char *kv[static 13])
{
        ports[0] = '\0';
        for (size_t i = 0, n = 0; i < s->n_ports; i++)
                n += (size_t)snprintf(ports + n, PORTS_TEXT_MAX - n, "%s%u", i ? "," : "",
                                      s->ports[i]);
        size_t n = 0;
        kv[n++] = ANNOTATION_PROJECT;
        kv[n++] = s->workspace;
        kv[n++] = ANNOTATION_PRESET;
        kv[n++] = s->preset.name;
        kv[n++] = ANNOTATION_GRANTS;
        kv[n++] = grants;
        if (s->egress) {
                kv[n++] = ANNOTATION_EGRESS;
                kv[n++] = "on";
        }
        if (s->n_ports) {
                kv[n++] = ANNOTATION_INGRESS;
                kv[n++] = ports;
        }
        if (long_lived) {
                kv[n++] = INIT_ANNOTATION;
                kv[n++] = "pause";
        }
        kv[n] = NULL;
}

static int write_bundle(struct sandbox *s, struct umw_error **err)
{
        int r = bundle_dir(s->container_id, &s->bundle, err);
        if (r < 0)
                return r;
        _cleanup_close_ int dirfd = open(s->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return umw_fail_errno(err, "open %s", s->bundle);
        return umw_write_file_atomic(dirfd, "config.json", s->config, strlen(s->config), 0600, err);
}

/* A long-lived sandbox's init runs no command (run.umwelt.init=pause): its
 * args are only a name in ps. */
static const char *const pause_args[] = {"umwelt-sandbox-init", NULL};

static int compose(struct sandbox *s, const struct sandbox_opts *o, bool long_lived,
                   struct umw_error **err)
{
        /* umwelt-<project name>: the id without its hash. */
        char hostname[64];
        snprintf(hostname, sizeof(hostname), "umwelt-%.*s", (int)(strrchr(s->id, '-') - s->id),
                 s->id);
        s->terminal = !long_lived && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
        struct compose_bind trust = {.source = s->trust_dir, .destination = TLS_TRUST_INSIDE};
        struct stat st;
        const char *hidden[] = {s->ca_dir && stat(s->ca_dir, &st) == 0 ? s->ca_dir : NULL, NULL};
        _cleanup_free_ char *grants = grants_json(&s->grants);
        if (!grants)
                return umw_fail_sys(err, ENOMEM, "annotations");
        char ports[PORTS_TEXT_MAX];
        const char *kv[13];
        annotations(s, long_lived, grants, ports, kv);
        struct compose_input in = {
            .grants = &s->grants,
            .preset = &s->preset,
            .workspace = s->workspace,
            .rootfs = o->rootfs ? o->rootfs : "/",
            .hostname = hostname,
            .uid = s->who.uid,
            .gid = s->who.gid,
            /* Root's sandbox too: nothing in it holds a capability outside
             * it, over the runtime neither (runtime/exec.c). */
            .user_namespace = true,
            /* Root's builds as 0, mapped to an unprivileged host id: no
             * sandbox holds the host's 0. Its binds are idmapped, so that
             * umwelt-run opens their sources (below directories only the
             * host's root may search too) and root's files there show as
             * the container's 0: root's own sandbox runs as that 0; a sudo
             * caller's, as the caller, mapped to itself. */
            .map_root = !s->who.rootless,
            .root_uid = s->who.root_uid,
            .root_gid = s->who.root_gid,
            .idmap_binds = !s->who.rootless,
            .home = s->who.home,
            .home_missing = access(s->who.home, F_OK) < 0 && errno == ENOENT,
            .env = (const char *const *)environ,
            .env_extra = (const char *const *)s->policy.env,
            .args = long_lived ? pause_args : (const char *const *)o->args,
            .terminal = s->terminal,
            .env_set = (const char *const *)s->env_set,
            .ro_binds = &trust,
            .n_ro_binds = s->trust_dir ? 1 : 0,
            .hidden = hidden,
            .annotations = kv,
            .fds = &s->fds,
        };
        return compose_config(&in, &s->config, err);
}

void sandbox_audit_start(struct sandbox *s, const char *command)
{
        char limits[96];
        snprintf(limits, sizeof(limits), "%llu bytes, %u.%03u cpus, %llu pids",
                 (unsigned long long)s->preset.memory_bytes, s->preset.cpus_milli / 1000,
                 s->preset.cpus_milli % 1000, (unsigned long long)s->preset.pids);
        const char *kv[] = {"id",
                            s->container_id,
                            "workspace",
                            s->workspace,
                            "preset",
                            s->preset.name,
                            "limits",
                            limits,
                            command ? "command" : NULL,
                            command,
                            NULL};
        sandbox_audit(s, "start", kv);
        for (size_t i = 0; i < s->grants.len; i++) {
                const char *g[] = {"path", s->grants.items[i].path, "mode",
                                   s->grants.items[i].mode == GRANT_RW ? "rw" : "ro", NULL};
                sandbox_audit(s, "grant", g);
        }
}

int sandbox_open_audit(struct sandbox *s, struct umw_error **err)
{
        if (s->audit_fd >= 0)
                return 0;
        int r = s->audit_file ? 0 : audit_path(s->id, &s->audit_file, err);
        return r < 0 ? r : audit_open(s->audit_file, &s->audit_fd, err);
}

int sandbox_for_workspace(struct sandbox *s, const char *workspace, struct umw_error **err)
{
        if (!s->workspace && !(s->workspace = strdup(workspace)))
                return umw_fail_sys(err, ENOMEM, "workspace");
        s->id = project_id(s->workspace);
        if (!s->id || asprintf(&s->container_id, "umwelt-%s", s->id) < 0) {
                s->container_id = NULL;
                return umw_fail_sys(err, ENOMEM, "sandbox id");
        }
        return 0;
}

int sandbox_locate(struct sandbox *s, const char *project, struct umw_error **err)
{
        s->workspace = realpath(project ? project : ".", NULL);
        struct stat st;
        if (!s->workspace || stat(s->workspace, &st) < 0 || !S_ISDIR(st.st_mode))
                return umw_fail(err, UMW_EXIT_USAGE, ENOENT, "-p %s: expected a project directory",
                                project ? project : ".");
        return sandbox_for_workspace(s, s->workspace, err);
}

int sandbox_compose(struct sandbox *s, const struct sandbox_opts *o, bool long_lived,
                    struct umw_error **err)
{
        int r = identity_get(&s->who, err);
        if (r == 0)
                r = sandbox_open_audit(s, err);
        if (r == 0)
                r = load_policy(s, o, err);
        if (r == 0)
                r = sandbox_net_prepare(s, o, long_lived, err);
        s->pause_run = !long_lived && s->egress && s->who.rootless;
        if (r == 0)
                r = compose(s, o, long_lived || s->pause_run, err);
        /* A plain one-shot run needs no bundle directory (run_plain). */
        if (r == 0 && (long_lived || s->egress))
                r = write_bundle(s, err);
        if (r == 0 && s->egress)
                r = sandbox_egress_policy_write(s, true, err);
        if (r == 0 && geteuid() == 0 && s->who.uid == 0)
                umw_log(UMW_LOG_WARNING,
                        "running as root: the sandbox holds no capability in any set");
        return r;
}

struct runtime_opts sandbox_runtime(const struct sandbox *s, const struct runtime_opts *rt)
{
        struct runtime_opts out = *rt;
        if (s->who.rootless && s->policy.limits_best_effort) {
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

/* The state directory the runtime makes for id: it gets the runtime's copy
 * of config.json (whose root.path is absolute), so it is the bundle the
 * state reports, and what gc's check of an abandoned create looks at. */
static int state_dir_path(const char *root, const char *id, char **out, struct umw_error **err)
{
        _cleanup_free_ char *cwd = root[0] == '/' ? NULL : get_current_dir_name();
        if (root[0] != '/' && !cwd)
                return umw_fail_errno(err, "state root %s: current directory", root);
        int n = cwd ? asprintf(out, "%s/%s/%s", cwd, root, id) : asprintf(out, "%s/%s", root, id);
        if (n < 0) {
                *out = NULL;
                return umw_fail_sys(err, ENOMEM, "state directory path");
        }
        return 0;
}

/* A one-shot sandbox without egress keeps nothing beside its state: the
 * config reaches the runtime through a memfd (/proc/self/fd/N as --config),
 * and the runtime's state directory serves as its bundle. Where the state
 * root's filesystem is ext4 mounted with discard (/run here), each inode
 * made and removed costs an allocation and a synchronous discard; this saves
 * two (the bundle directory and its config.json). A crash leaves no less to
 * clean: before create nothing at all (a bundle directory was left behind
 * before, which no gc looked for), after it the state directory that
 * delete --force and gc remove. */
static int run_plain(struct sandbox *s, const struct runtime_opts *rt, const struct sandbox_opts *o,
                     int *exit_status, struct umw_error **err)
{
        _cleanup_close_ int fd = memfd_create("config.json", MFD_CLOEXEC);
        if (fd < 0)
                return umw_fail_errno(err, "memfd for config.json");
        int r = umw_write_all(fd, s->config, strlen(s->config));
        if (r < 0)
                return umw_fail_sys(err, -r, "write config.json to its memfd");
        r = state_dir_path(rt->root, s->container_id, &s->bundle, err);
        if (r < 0)
                return r;
        /* The runtime's to remove, with the rest of the state. */
        s->keep_bundle = true;
        char config[32];
        snprintf(config, sizeof(config), "/proc/self/fd/%d", fd);
        /* Messages name what the user knows, not a descriptor gone by then. */
        _cleanup_free_ char *name = NULL;
        if (asprintf(&name, "the sandbox config composed for %s", s->workspace) < 0) {
                name = NULL;
                return umw_fail_sys(err, ENOMEM, "sandbox config name");
        }
        struct create_opts co = {.id = s->container_id,
                                 .bundle = s->bundle,
                                 .config_path = config,
                                 .config_name = name,
                                 .preserve_fds = o->preserve_fds};
        return container_run(rt, &co, exit_status, err);
}

int sandbox_run(const struct runtime_opts *rt, const struct sandbox_opts *o, int *exit_status,
                struct umw_error **err)
{
        struct sandbox s = SANDBOX_INIT;
        int r = sandbox_locate(&s, o->project, err);
        /* One-shot: its own id, so it runs next to the project's long-lived one. */
        free(s.container_id);
        if (r == 0 && asprintf(&s.container_id, "umwelt-%s-run%d", s.id, getpid()) < 0) {
                s.container_id = NULL;
                r = umw_fail_sys(err, ENOMEM, "sandbox id");
        }
        if (r == 0)
                r = sandbox_compose(&s, o, false, err);
        if (r == 0) {
                sandbox_audit_start(&s, o->args[0]);
                struct runtime_opts sandbox_rt = sandbox_runtime(&s, rt);
                r = s.egress ? sandbox_run_gated(&s, &sandbox_rt, o, exit_status, err)
                             : run_plain(&s, &sandbox_rt, o, exit_status, err);
                char status[16];
                snprintf(status, sizeof(status), "%d", r < 0 ? -1 : *exit_status);
                const char *kv[] = {"id", s.container_id, "status", status, NULL};
                sandbox_audit(&s, r < 0 ? "failed" : "stop", kv);
                if (r == 0 && o->json)
                        sandbox_print_exit(s.container_id, *exit_status);
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

int sandbox_not_running(const struct sandbox *s, struct umw_error **err)
{
        return umw_fail(err, UMW_EXIT_STATE, ESRCH,
                        "no sandbox is running for %s: start it with umwelt-run sandbox up -p %s",
                        s->workspace, s->workspace);
}
