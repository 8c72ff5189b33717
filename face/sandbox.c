/* What a sandbox is made of: the policy layers, the grants and the preset
 * for the options asked, composed into the OCI config with the annotations
 * status and gc find it by. */
#include "face/sandbox_int.h"
#include "face/agent_repo.h"
#include "face/layer.h"
#include "face/relay.h"
#include "face/remembered.h"
#include "policy/host_actions.h"
#include "policy/paths.h"
#include "netns/tls_paths.h"
#include "runtime/init.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* Requests from .umwelt.toml, then from --grant PATH[:ro|:rw]. */
/* "PATH[:ro|:rw]" of --grant into a request (path is the caller's copy). */
static struct grant_request flag_grant(char *path)
{
        char *colon = strrchr(path, ':');
        const char *mode = "ro";
        if (colon && (strcmp(colon, ":ro") == 0 || strcmp(colon, ":rw") == 0)) {
                mode = colon[2] == 'w' ? "rw" : "ro";
                *colon = '\0';
        }
        return (struct grant_request){.path = path, .mode = mode, .origin = "--grant"};
}

/* The grants a start asks for: the project's [[grant]] tables, those a
 * human approved with --remember (face/remembered.h), and --grant. */
static int collect_grants(const struct policy_config *pc, const struct sandbox_opts *o,
                          const char *project_id, struct grant_request **out, size_t *count,
                          char ***owned, struct umw_error **err)
{
        struct remembered rem;
        int r = remembered_read(project_id, &rem, err);
        if (r < 0)
                return r;
        size_t n_own = rem.n + o->n_grants, k = pc->n_grants;
        struct grant_request *req = calloc(pc->n_grants + n_own + 1, sizeof(*req));
        char **paths = calloc(n_own + 1, sizeof(char *));
        if (!req || !paths) {
                free(req);
                free(paths);
                remembered_free(&rem);
                return umw_fail_sys(err, ENOMEM, "grants");
        }
        if (pc->n_grants)
                memcpy(req, pc->grants, pc->n_grants * sizeof(*req));
        for (size_t i = 0; i < n_own; i++) {
                bool from_rem = i < rem.n;
                paths[i] = strdup(from_rem ? rem.path[i] : o->grants[i - rem.n]);
                if (!paths[i])
                        break;
                req[k++] = from_rem ? (struct grant_request){.path = paths[i],
                                                             .mode = rem.rw[i] ? "rw" : "ro",
                                                             .origin = "remembered (relay "
                                                                       "approve --remember)"}
                                    : flag_grant(paths[i]);
        }
        remembered_free(&rem);
        *out = req;
        *count = k;
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

static int load_policy(struct sandbox *s, const struct sandbox_opts *o, struct umw_error **err)
{
        int r = sandbox_policy_read(s, err);
        if (r < 0)
                return r;
        size_t n_requests = 0;
        r = collect_grants(&s->view.policy, o, s->project.id, &s->view.requests, &n_requests,
                           &s->view.request_paths, err);
        if (r < 0)
                return r;
        struct grant_policy gp = {.roots = (const char *const *)s->view.policy.grant_roots,
                                  .never = (const char *const *)s->view.policy.never};
        struct grant_refusal refusal = {0};
        r = grants_resolve(&gp, s->view.requests, n_requests, &s->view.grants, &refusal, err);
        if (r < 0) {
                const char *kv[] = {"grant", s->view.requests[refusal.index].path,
                                    "rule",  refusal.rule ? refusal.rule : "",
                                    "error", (*err)->msg,
                                    NULL};
                sandbox_audit(s, "refusal", kv);
                return r;
        }
        return choose_preset(&s->view.policy, o->preset, &s->view.preset, err);
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
        for (size_t i = 0, n = 0; i < s->net.n_ports; i++)
                n += (size_t)snprintf(ports + n, PORTS_TEXT_MAX - n, "%s%u", i ? "," : "",
                                      s->net.ports[i]);
        size_t n = 0;
        kv[n++] = ANNOTATION_PROJECT;
        kv[n++] = s->project.workspace;
        kv[n++] = ANNOTATION_PRESET;
        kv[n++] = s->view.preset.name;
        kv[n++] = ANNOTATION_GRANTS;
        kv[n++] = grants;
        if (s->net.egress) {
                kv[n++] = ANNOTATION_EGRESS;
                kv[n++] = "on";
        }
        if (s->net.n_ports) {
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
        int r = sandbox_bundle_dir(s->project.container_id, &s->bundle, err);
        if (r < 0)
                return r;
        _cleanup_close_ int dirfd = open(s->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return umw_fail_errno(err, "open %s", s->bundle);
        return umw_write_file_atomic(dirfd, "config.json", s->config, strlen(s->config), 0600, err);
}

/* One sandbox at a time on a layer: held until this process ends. */
int sandbox_layer_lock(struct sandbox *s, int layer_fd, struct umw_error **err)
{
        s->layer_lock = openat(layer_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (s->layer_lock < 0)
                return umw_fail_errno(err, "review mode's layer: lock");
        if (flock(s->layer_lock, LOCK_EX | LOCK_NB) == 0)
                return 0;
        if (errno != EWOULDBLOCK)
                return umw_fail_errno(err, "review mode's layer: lock");
        return umw_fail(err, UMW_EXIT_STATE, EBUSY,
                        "review mode: another sandbox of %s runs on its layer now: wait for it, "
                        "or use --workspace direct",
                        s->project.workspace);
}

/* The layer's upper/ and work/, made 0700 where missing (a layer left
 * undelivered is continued), outside the workspace. */
static int layer_dirs(const struct sandbox *s, const char *layer, struct umw_error **err)
{
        const char *const subdirs[] = {"upper", "work"};
        int r;
        for (size_t i = 0; i < 2; i++) {
                _cleanup_free_ char *dir = NULL;
                if (asprintf(&dir, "%s/%s", layer, subdirs[i]) < 0)
                        return umw_fail_sys(err, ENOMEM, "layer");
                if ((r = umw_mkdir_p(dir, 0700, 0700, err)) < 0)
                        return umw_error_prefix(err, "review mode's layer");
        }
        /* overlayfs refuses an upper inside its lower; say why first. */
        _cleanup_free_ char *real = realpath(layer, NULL);
        if (!real)
                return umw_fail_errno(err, "review mode's layer %s", layer);
        if (path_within(real, s->project.workspace))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "review mode: the workspace %s holds umwelt's state directory, "
                                "where its layer is (%s): use --workspace direct, or a project "
                                "directory below it",
                                s->project.workspace, real);
        return 0;
}

/* The merged root takes upper's mode, the workspace's as on the host, and
 * belongs to whom the sandbox runs as (root's sudo caller). */
static int layer_top(const struct sandbox *s, int ws_fd, int layer_fd, struct umw_error **err)
{
        struct stat ws;
        const struct identity *who = &s->project.who;
        _cleanup_close_ int upper = umw_open_beneath(layer_fd, "upper", O_RDONLY | O_DIRECTORY);
        if (fstat(ws_fd, &ws) < 0)
                return umw_fail_errno(err, "workspace %s", s->project.workspace);
        if (upper < 0 || fchmod(upper, ws.st_mode & 07777) < 0 ||
            fchown(upper, who->uid, who->gid) < 0)
                return umw_fail_sys(err, upper < 0 ? -upper : errno, "review mode's layer: upper");
        return 0;
}

/* Review mode's layer, locked for this sandbox, and the agent's repository
 * in it where the workspace is a repository (*agent: its path, else NULL). */
static int review_layer(struct sandbox *s, char **layer, char **agent, struct umw_error **err)
{
        int r;
        if ((r = sandbox_layer_dir(s, layer, err)) < 0 || (r = layer_dirs(s, *layer, err)) < 0)
                return r;
        _cleanup_close_ int ws_fd = open(s->project.workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int layer_fd =
            open(*layer, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (ws_fd < 0 || layer_fd < 0)
                return umw_fail_errno(err, "open %s", ws_fd < 0 ? s->project.workspace : *layer);
        const struct identity *who = &s->project.who;
        bool present;
        if ((r = sandbox_layer_lock(s, layer_fd, err)) < 0 ||
            (r = layer_top(s, ws_fd, layer_fd, err)) < 0 ||
            (r = agent_repo_prepare(ws_fd, layer_fd, who->uid, who->gid, &present, err)) < 0)
                return r;
        if (present && asprintf(agent, "%s/%s", *layer, AGENT_REPO_DIR) < 0) {
                *agent = NULL;
                return umw_fail_sys(err, ENOMEM, "layer");
        }
        return 0;
}

/* A long-lived sandbox's init runs no command (run.umwelt.init=pause): its
 * args are only a name in ps. */
static const char *const pause_args[] = {"umwelt-sandbox-init", NULL};

static int compose(struct sandbox *s, const struct sandbox_opts *o, bool long_lived,
                   struct umw_error **err)
{
        /* umwelt-<project name>: the id without its hash. */
        char hostname[64];
        snprintf(hostname, sizeof(hostname), "umwelt-%.*s",
                 (int)(strrchr(s->project.id, '-') - s->project.id), s->project.id);
        s->terminal = !long_lived && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
        struct compose_bind binds[2];
        size_t n_binds = 0;
        /* The door first: the trust directory's mount point is in it. */
        if (s->relay_door)
                binds[n_binds++] = (struct compose_bind){s->relay_door, RELAY_DOOR_INSIDE, true};
        if (s->net.trust_dir)
                binds[n_binds++] = (struct compose_bind){s->net.trust_dir, TLS_TRUST_INSIDE, false};
        /* umwelt's state directory is hidden in every sandbox: the CA's
         * key, the audit logs, the policies accepted. Outside the home it
         * would show through the read-only root, and in a workspace or a rw
         * grant (a project at $HOME) the agent could rewrite them. No home
         * to find it by: then there is none. */
        _cleanup_error_ struct umw_error *no_home = NULL;
        _cleanup_free_ char *state = NULL;
        struct stat st;
        umw_state_dir(NULL, &state, &no_home);
        /* And root's policy directory, the table of host actions in it:
         * what the host would run is none of the agent's business (`relay
         * actions` lists what it may ask for). The directory, not the
         * file: an editor that renames a new file over the old takes a
         * mount on the old one away in every namespace. */
        const char *hidden[3] = {0};
        size_t n_hidden = 0;
        if (state && stat(state, &st) == 0)
                hidden[n_hidden++] = state;
        if (stat(HOST_ACTIONS_DIR, &st) == 0)
                hidden[n_hidden++] = HOST_ACTIONS_DIR;
        _cleanup_free_ char *grants = grants_json(&s->view.grants);
        if (!grants)
                return umw_fail_sys(err, ENOMEM, "annotations");
        char ports[PORTS_TEXT_MAX];
        const char *kv[13];
        annotations(s, long_lived, grants, ports, kv);
        _cleanup_free_ char *layer = NULL, *agent = NULL;
        s->view.review = o->workspace == WORKSPACE_POLICY ? !s->view.policy.workspace_direct
                                                          : o->workspace == WORKSPACE_REVIEW;
        int r = s->view.review ? review_layer(s, &layer, &agent, err) : 0;
        if (r < 0)
                return r;
        struct compose_input in = {
            .layer = layer,
            .agent_repo = agent,
            .grants = &s->view.grants,
            .preset = &s->view.preset,
            .workspace = s->project.workspace,
            .rootfs = o->rootfs ? o->rootfs : "/",
            .hostname = hostname,
            .uid = s->project.who.uid,
            .gid = s->project.who.gid,
            /* Root's sandbox too: nothing in it holds a capability outside
             * it, over the runtime neither (runtime/exec.c). */
            .user_namespace = true,
            /* Root's builds as 0, mapped to an unprivileged host id: no
             * sandbox holds the host's 0. Its binds are idmapped, so that
             * umwelt-run opens their sources (below directories only the
             * host's root may search too) and root's files there show as
             * the container's 0: root's own sandbox runs as that 0; a sudo
             * caller's, as the caller, mapped to itself. */
            .map_root = !s->project.who.rootless,
            .root_uid = s->project.who.root_uid,
            .root_gid = s->project.who.root_gid,
            .idmap_binds = !s->project.who.rootless,
            .home = s->project.who.home,
            .home_missing = access(s->project.who.home, F_OK) < 0 && errno == ENOENT,
            .env = (const char *const *)environ,
            .env_extra = (const char *const *)s->view.policy.env,
            .args = long_lived ? pause_args : (const char *const *)o->args,
            .terminal = s->terminal,
            .env_set = (const char *const *)s->net.env_set,
            .ro_binds = binds,
            .n_ro_binds = n_binds,
            .hidden = hidden,
            .annotations = kv,
            .fds = &s->fds,
        };
        return compose_config(&in, &s->config, err);
}

int sandbox_compose(struct sandbox *s, const struct sandbox_opts *o, bool long_lived,
                    struct umw_error **err)
{
        int r;
        if ((r = sandbox_identity_get(&s->project.who, err)) < 0 ||
            (r = sandbox_open_audit(s, err)) < 0 || (r = load_policy(s, o, err)) < 0 ||
            (r = sandbox_net_prepare(s, o, long_lived, err)) < 0)
                return r;
        if (s->state_root && (r = sandbox_relay_prepare(s, s->state_root, err)) < 0)
                return r;
        s->pause_run = !long_lived && s->net.egress && s->project.who.rootless;
        /* A plain one-shot run needs no bundle directory (run_plain). */
        if ((r = compose(s, o, long_lived || s->pause_run, err)) < 0 ||
            ((long_lived || s->net.egress) && (r = write_bundle(s, err)) < 0) ||
            (s->net.egress && (r = sandbox_egress_policy_write(s, true, false, err)) < 0))
                return r;
        if (geteuid() == 0 && s->project.who.uid == 0)
                umw_log(UMW_LOG_WARNING,
                        "running as root: the sandbox holds no capability in any set");
        sandbox_relay_await(s); /* last: compose's work overlapped the relay's bind */
        return 0;
}
