/* A request from receipt to answer (relay_int.h): refused at once by what
 * the floor and the user's config never allow, asked of a human
 * otherwise; a grant applied once approved, every step audited with the
 * request's hash. */
#include "face/relay_int.h"
#include "face/remembered.h"
#include "face/sandbox_int.h"
#include "netns/ingress.h"
#include "policy/egress_rules.h"
#include "policy/grants.h"
#include "common/audit.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/sha256.h"
#include "common/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RELAY_NOTES_FILE "notes.jsonl"

static void id_text(uint64_t id, char out[static RELAY_ID_MAX + 1])
{
        snprintf(out, RELAY_ID_MAX + 1, "%llu", (unsigned long long)id);
}

/* SHA-256 of everything the human is shown, so that an approval is bound
 * to exactly that request. */
static void hash_request(struct relay_pending *p, const char *sandbox)
{
        char id[RELAY_ID_MAX + 1], port[8];
        id_text(p->id, id);
        snprintf(port, sizeof(port), "%u", (unsigned)p->q.port);
        const char *parts[] = {"umwelt-relay 1",
                               sandbox,
                               id,
                               relay_kind_name(p->q.kind),
                               p->path,
                               p->q.path,
                               p->q.rw ? "rw" : "ro",
                               p->q.rule,
                               port,
                               p->q.why};
        struct umw_sha256 c;
        umw_sha256_init(&c);
        for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
                umw_sha256_update(&c, parts[i], strlen(parts[i]) + 1);
        /* An action: its name, the values asked, the argv that would run. */
        umw_sha256_update(&c, p->q.action, strlen(p->q.action) + 1);
        for (uint32_t i = 0; i < p->q.n_params; i++) {
                umw_sha256_update(&c, p->q.params[i].name, strlen(p->q.params[i].name) + 1);
                umw_sha256_update(&c, p->q.params[i].value, strlen(p->q.params[i].value) + 1);
        }
        for (char **a = p->argv; a && *a; a++)
                umw_sha256_update(&c, *a, strlen(*a) + 1);
        umw_sha256_hex(&c, p->hash);
}

static void refuse(struct relay_conn *c, uint64_t id, const char *hash, const char *rule,
                   const char *why)
{
        char idt[RELAY_ID_MAX + 1];
        id_text(id, idt);
        const char *kv[] = {"id",   idt,  "hash",  hash, "decision", "refused",
                            "rule", rule, "error", why,  NULL};
        relay_audit(c->sb, "relay-decision", kv);
        relay_answer(c, id, RELAY_REFUSED, why);
}

/* ------------------------------------------------------------ grants */

static bool overlaps(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);
        size_t n = la < lb ? la : lb;
        return strncmp(a, b, n) == 0 && (la == lb || (la < lb ? b[la] : a[lb]) == '/' || n == 1);
}

/* Already in the sandbox's view: its workspace, a grant it holds. */
static const char *held_by(const struct relay_sandbox *sb, const char *path)
{
        if (overlaps(path, sb->workspace))
                return "the workspace is in the sandbox already (a grant may neither lie in it "
                       "nor hold it)";
        for (size_t i = 0; i < sb->n_live; i++)
                if (strcmp(sb->live[i].path, path) == 0)
                        return "granted already";
        return NULL;
}

/* The user's standing rule (relay.allow_rw, or allow_ro for a read-only
 * grant) the resolved path matches, into p->standing. */
static void find_standing(struct relay_pending *p, const struct policy_config *c)
{
        char *const *lists[] = {c->relay_allow_rw,
                                p->q.rw && !p->is_file ? NULL : c->relay_allow_ro};
        for (size_t i = 0; i < 2; i++)
                for (char *const *g = lists[i]; g && *g; g++)
                        if (fnmatch(*g, p->path, FNM_PATHNAME) == 0) {
                                snprintf(p->standing, sizeof(p->standing), "%s", *g);
                                return;
                        }
}

/* The project's policy for the sandbox's workspace, as a start reads it
 * (the floor, the user's config, the project's accepted file). */
static int workspace_policy(struct sandbox *s, const char *workspace, struct umw_error **err)
{
        s->keep_bundle = true;
        int r = sandbox_for_workspace(s, workspace, err);
        return r < 0 ? r : sandbox_policy_read(s, err);
}

/* The grant checked exactly as at a start: the floor's and user's grant
 * roots and never-granted paths, symlinks resolved first; the user's
 * standing rules and timeout read on the way. */
static int resolve_grant(struct relay_pending *p, const char *workspace, const char **rule,
                         struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        *rule = "policy";
        int r = workspace_policy(&s, workspace, err);
        if (r < 0)
                return r;
        struct grant_policy gp = {.roots = (const char *const *)s.view.policy.grant_roots,
                                  .never = (const char *const *)s.view.policy.never};
        struct grant_request req = {
            .path = p->q.path, .mode = p->q.rw ? "rw" : "ro", .origin = "request"};
        struct grant_list gl = {0};
        struct grant_refusal refusal = {0};
        if ((r = grants_resolve(&gp, &req, 1, &gl, &refusal, err)) < 0) {
                *rule = refusal.rule ? refusal.rule : "policy";
                return r;
        }
        snprintf(p->path, sizeof(p->path), "%s", gl.items[0].path);
        p->is_file = gl.items[0].is_file;
        grant_list_free(&gl);
        struct stat st;
        if (lstat(p->path, &st) < 0)
                return umw_fail_errno(err, "grant %s", p->path);
        p->dev = st.st_dev;
        p->ino = st.st_ino;
        find_standing(p, &s.view.policy);
        p->timeout_s = s.view.policy.relay_timeout_s;
        return 0;
}

static int apply_grant(struct relay_sandbox *sb, const struct relay_pending *p,
                       struct umw_error **err)
{
        if (sb->n_live >= RELAY_GRANTS_MAX)
                return umw_fail(err, UMW_EXIT_STATE, EBUSY, "%d live grants at most",
                                RELAY_GRANTS_MAX);
        struct relay_target t = {.pidfd = -1};
        int r = relay_sandbox_target(sb, &t, err);
        if (r < 0)
                return r;
        struct relay_live *more = realloc(sb->live, (sb->n_live + 1) * sizeof(*more));
        if (!more)
                return umw_fail_sys(err, ENOMEM, "grant");
        sb->live = more;
        struct relay_live *l = &sb->live[sb->n_live];
        bool rw = p->q.rw && !p->is_file;
        struct relay_source src = {
            .path = p->path, .is_file = p->is_file, .rw = rw, .dev = p->dev, .ino = p->ino};
        r = relay_mount_grant(&t, &src, &l->mnt_id, err);
        umw_close_fdp(&t.pidfd);
        if (r < 0)
                return r;
        snprintf(l->path, sizeof(l->path), "%s", p->path);
        snprintf(l->hash, sizeof(l->hash), "%s", p->hash);
        l->rw = rw;
        l->is_file = p->is_file;
        sb->n_live++;
        return 0;
}

/* The live grants on disk; a failure is a warning (the mount is there). */
static void keep_record(const struct relay_sandbox *sb)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (relay_live_save(sb, &err) < 0)
                umw_log(UMW_LOG_WARNING, "sandbox %s: %s", sb->id, err->msg);
}

/* The grant applied and its lines in the audit log, whatever the outcome. */
static int grant_audited(struct relay_sandbox *sb, const struct relay_pending *p,
                         struct umw_error **err)
{
        char idt[RELAY_ID_MAX + 1], mnt[24];
        id_text(p->id, idt);
        /* Written before the attach: a relay killed after it leaves a
         * mount the log names (its child dies before, with it). */
        const char *mode = p->q.rw && !p->is_file ? "rw" : "ro";
        const char *intent[] = {"id", idt, "hash", p->hash, "path", p->path, "mode", mode, NULL};
        relay_audit(sb, "relay-grant", intent);
        int r = apply_grant(sb, p, err);
        if (r < 0) {
                const char *kv[] = {"id", idt, "hash", p->hash, "error", (*err)->msg, NULL};
                relay_audit(sb, "relay-grant-failed", kv);
                return r;
        }
        const struct relay_live *l = &sb->live[sb->n_live - 1];
        snprintf(mnt, sizeof(mnt), "%llu", (unsigned long long)l->mnt_id);
        const char *kv[] = {"id", idt, "hash", p->hash, "path", p->path, "mount_id", mnt, NULL};
        relay_audit(sb, "relay-granted", kv);
        keep_record(sb);
        return 0;
}

/* What a request is about, for its audit line: the path, the rule, the
 * action (a port is the caller's default). */
static void subject(const struct relay_pending *p, const char **key, const char **value)
{
        if (p->q.kind == RELAY_GRANT)
                *key = "path", *value = p->path;
        else if (p->q.kind == RELAY_EGRESS)
                *key = "rule", *value = p->q.rule;
        else if (p->q.kind == RELAY_ACTION)
                *key = "action", *value = p->q.action;
}

/* The request's line: what it asks, and how it was decided (rule: the
 * standing rule that allowed it, or NULL when a human is asked). */
static void audit_request(struct relay_sandbox *sb, const struct relay_pending *p, const char *rule)
{
        char id[RELAY_ID_MAX + 1], port[8];
        id_text(p->id, id);
        snprintf(port, sizeof(port), "%u", (unsigned)p->q.port);
        const char *key = "port", *value = port;
        subject(p, &key, &value);
        const char *kv[] = {"id", id, "hash", p->hash, "kind", relay_kind_name(p->q.kind), key,
                            value, "mode", p->q.rw && !p->is_file ? "rw" : "ro", "why", p->q.why,
                            "decision", rule ? "allowed" : "asked",
                            /* asked: the line ends here */
                            rule ? "by" : NULL, "rule", "rule", rule, NULL};
        relay_audit(sb, "relay-request", kv);
}

/* Granted without asking: the user's standing rule allows it. */
static void grant_standing(struct relay_conn *c, struct relay_pending *p)
{
        _cleanup_error_ struct umw_error *err = NULL;
        audit_request(c->sb, p, p->standing);
        int r = grant_audited(c->sb, p, &err);
        relay_answer(c, p->id, r < 0 ? RELAY_ERROR : RELAY_GRANTED,
                     r < 0 ? err->msg : "allowed by a standing rule of the user's");
        relay_pending_free(p);
}

static void ask(struct relay *R, struct relay_conn *c, struct relay_pending *p)
{
        _cleanup_error_ struct umw_error *err = NULL;
        clock_gettime(CLOCK_MONOTONIC, &p->deadline);
        p->deadline.tv_sec += p->timeout_s ? p->timeout_s : R->o->timeout_s;
        if (relay_pending_add(R, c, p, &err) < 0) {
                refuse(c, p->id, p->hash, "limit", err->msg);
                relay_pending_free(p);
                return;
        }
        audit_request(c->sb, p, NULL);
        relay_answer(c, p->id, RELAY_PENDING, "waiting for a human: umwelt-run relay watch");
        relay_announce(R, p);
}

/* A request given its id (NULL, answered, when out of memory). */
static struct relay_pending *new_pending(struct relay *R, struct relay_conn *c,
                                         const struct relay_request *q)
{
        struct relay_pending *p = calloc(1, sizeof(*p));
        if (!p) {
                relay_answer(c, 0, RELAY_ERROR, "out of memory");
                return NULL;
        }
        p->id = R->next_id++;
        p->q = *q;
        return p;
}

static void decide_grant(struct relay *R, struct relay_conn *c, const struct relay_request *q)
{
        struct relay_pending *p = new_pending(R, c, q);
        if (!p)
                return;
        _cleanup_error_ struct umw_error *err = NULL;
        const char *rule = NULL, *held = NULL;
        if (resolve_grant(p, c->sb->workspace, &rule, &err) < 0 ||
            (held = held_by(c->sb, p->path))) {
                hash_request(p, c->sb->id);
                refuse(c, p->id, p->hash, held ? "held" : rule, held ? held : err->msg);
                relay_pending_free(p);
                return;
        }
        hash_request(p, c->sb->id);
        if (p->standing[0])
                grant_standing(c, p);
        else
                ask(R, c, p);
}

/* ------------------------------------------------------------ ingress */

/* What a request a human is always asked must pass first (the project's
 * policy c as a start reads it); *rule names what refused it. */
typedef int (*check_fn)(const struct relay_pending *p, const struct relay_sandbox *sb,
                        const struct policy_config *c, const char **rule, struct umw_error **err);

/* A port or an egress rule: refused without asking by check, else asked. */
static void decide_asked(struct relay *R, struct relay_conn *c, const struct relay_request *q,
                         check_fn check)
{
        struct relay_pending *p = new_pending(R, c, q);
        if (!p)
                return;
        hash_request(p, c->sb->id);
        _cleanup_error_ struct umw_error *err = NULL;
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        const char *rule = "policy";
        if (workspace_policy(&s, c->sb->workspace, &err) < 0 ||
            check(p, c->sb, &s.view.policy, &rule, &err) < 0) {
                refuse(c, p->id, p->hash, rule, err->msg);
                relay_pending_free(p);
                return;
        }
        p->timeout_s = s.view.policy.relay_timeout_s;
        ask(R, c, p);
}

/* A port is published live as at a start: only where the floor lets
 * projects publish; never one the project's [ingress] or this relay
 * publishes already (--publish's the forwarder refuses: in use). Always asked
 * (no standing rule opens a port). */
static int check_ingress(const struct relay_pending *p, const struct relay_sandbox *sb,
                         const struct policy_config *c, const char **rule, struct umw_error **err)
{
        *rule = "floor";
        if (!c->ingress_allowed)
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "the floor lets no project publish a port (ingress = false)");
        *rule = "held";
        for (size_t i = 0; i < c->n_ingress_ports; i++)
                if (c->ingress_ports[i] == p->q.port)
                        return umw_fail(err, UMW_EXIT_STATE, EEXIST,
                                        "port %u is published at every start ([ingress] ports)",
                                        (unsigned)p->q.port);
        for (size_t i = 0; i < sb->n_ports; i++)
                if (sb->ports[i] == p->q.port)
                        return umw_fail(err, UMW_EXIT_STATE, EEXIST, "port %u is published already",
                                        (unsigned)p->q.port);
        *rule = "limit";
        if (sb->n_ports >= RELAY_PORTS_MAX)
                return umw_fail(err, UMW_EXIT_STATE, EBUSY, "%d live ports at most",
                                RELAY_PORTS_MAX);
        return 0;
}

/* The forwarder started (netns/ingress.h: it ends with the sandbox's
 * init; the relay reaps it) and the lines in the audit log. */
static int publish_audited(struct relay_sandbox *sb, const struct relay_pending *p,
                           struct umw_error **err)
{
        char idt[RELAY_ID_MAX + 1], port[8];
        id_text(p->id, idt);
        snprintf(port, sizeof(port), "%u", (unsigned)p->q.port);
        struct relay_target t = {.pidfd = -1};
        uint16_t one = (uint16_t)p->q.port;
        pid_t forwarder;
        int r = relay_sandbox_target(sb, &t, err);
        if (r >= 0) {
                struct ingress_request req = {.sandbox_pid = t.pid,
                                              .ports = &one,
                                              .n_ports = 1,
                                              .sandbox_id = sb->id,
                                              .audit_fd = sb->audit_fd};
                r = ingress_start(&req, &forwarder, err);
                umw_close_fdp(&t.pidfd);
        }
        if (r < 0) {
                const char *kv[] = {"id", idt, "hash", p->hash, "error", (*err)->msg, NULL};
                relay_audit(sb, "relay-ingress-failed", kv);
                return r;
        }
        sb->ports[sb->n_ports++] = one;
        const char *kv[] = {"id", idt, "hash", p->hash, "port", port, NULL};
        relay_audit(sb, "relay-ingress", kv);
        _cleanup_error_ struct umw_error *kept = NULL;
        if (relay_ports_save(sb, &kept) < 0) /* the forwarder is there: a warning */
                umw_log(UMW_LOG_WARNING, "sandbox %s: %s", sb->id, kept->msg);
        return 0;
}

/* ------------------------------------------------------------ egress */

/* The sandbox trusts the umwelt CA: its trust directory is mounted over
 * the door (door/tls, made at its start only where egress had a CA). */
static bool trusts_ca(const struct relay_sandbox *sb)
{
        struct stat st;
        return fstatat(sb->dir, "door/" RELAY_TRUST_POINT, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISDIR(st.st_mode);
}

static int check_rule(const char *text, const struct relay_sandbox *sb, struct umw_error **err)
{
        struct egress_rule rule;
        if (egress_rule_parse(text, &rule, err) < 0)
                return umw_error_prefix(err, "egress rule '%s'", text);
        egress_rule_free(&rule);
        const char *one[] = {text, NULL};
        if (egress_rules_need_termination(one, NULL) && !trusts_ca(sb))
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "egress rule '%s': a path or methods need TLS terminated with the "
                                "umwelt CA, which this sandbox does not trust (it started "
                                "without egress); ask for the host alone, or enable egress in "
                                ".umwelt.toml and start it again",
                                text);
        return 0;
}

/* An egress rule is opened live as a start would: only where the floor
 * lets projects have egress, parsed as [egress] allow's are, never one
 * open already. Always asked (no standing rule opens a way out). */
static int check_egress(const struct relay_pending *p, const struct relay_sandbox *sb,
                        const struct policy_config *c, const char **rule, struct umw_error **err)
{
        *rule = "floor";
        if (!c->egress_allowed)
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "the floor lets no project have egress (egress = false)");
        *rule = "rule";
        int r = check_rule(p->q.rule, sb, err);
        if (r < 0)
                return r;
        *rule = "held";
        if (umw_strv_contains((const char *const *)sb->egress, p->q.rule) ||
            (sb->gated && c->egress_enabled &&
             umw_strv_contains((const char *const *)c->egress_allow, p->q.rule)))
                return umw_fail(err, UMW_EXIT_STATE, EEXIST, "egress rule '%s' is open already",
                                p->q.rule);
        *rule = "limit";
        if (sb->n_egress >= SANDBOX_LIVE_EGRESS_MAX)
                return umw_fail(err, UMW_EXIT_STATE, EBUSY, "%d live egress rules at most",
                                SANDBOX_LIVE_EGRESS_MAX);
        return 0;
}

/* The sandbox's gateway given its rules with the live ones: the one it
 * started with (in its bundle), or the relay's own, started at the first
 * rule in the relay's directory of the sandbox. */
static int gateway_rules(struct relay_sandbox *sb, pid_t init, pid_t *started,
                         struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        int r;
        /* The audit log's place names the egress log the gateway writes. */
        if ((r = workspace_policy(&s, sb->workspace, err)) < 0 ||
            (r = sandbox_open_audit(&s, err)) < 0)
                return r;
        free(s.project.container_id);
        if (!(s.project.container_id = strdup(sb->id)) ||
            (sb->gated && !(s.bundle = strdup(sb->bundle))))
                return umw_fail_sys(err, ENOMEM, "egress");
        if (!sb->gated && (r = sandbox_relay_sandbox_dir(sb->id, &s.bundle, err)) < 0)
                return r;
        return sandbox_egress_live(&s, init, !sb->gated, started, err);
}

/* The rule kept, then given to the gateway; taken back when that fails. */
static int open_rule(struct relay_sandbox *sb, const char *rule, pid_t *started,
                     struct umw_error **err)
{
        struct relay_target t = {.pidfd = -1};
        int r = relay_sandbox_target(sb, &t, err);
        if (r < 0)
                return r;
        char **more = realloc(sb->egress, (sb->n_egress + 2) * sizeof(*more));
        if (!more || !(more[sb->n_egress] = strdup(rule))) {
                sb->egress = more ? more : sb->egress;
                umw_close_fdp(&t.pidfd);
                return umw_fail_sys(err, ENOMEM, "egress");
        }
        sb->egress = more;
        more[++sb->n_egress] = NULL;
        if ((r = relay_egress_save(sb, err)) >= 0)
                r = gateway_rules(sb, t.pid, started, err);
        umw_close_fdp(&t.pidfd);
        if (r < 0) {
                free(sb->egress[--sb->n_egress]);
                sb->egress[sb->n_egress] = NULL;
                _cleanup_error_ struct umw_error *kept = NULL;
                if (relay_egress_save(sb, &kept) < 0)
                        umw_log(UMW_LOG_WARNING, "sandbox %s: %s", sb->id, kept->msg);
        }
        return r;
}

static int egress_audited(struct relay_sandbox *sb, const struct relay_pending *p,
                          struct umw_error **err)
{
        char idt[RELAY_ID_MAX + 1], gw[32] = "reloaded";
        id_text(p->id, idt);
        pid_t started = 0;
        int r = open_rule(sb, p->q.rule, &started, err);
        if (r < 0) {
                const char *kv[] = {"id", idt, "hash", p->hash, "error", (*err)->msg, NULL};
                relay_audit(sb, "relay-egress-failed", kv);
                return r;
        }
        if (started)
                snprintf(gw, sizeof(gw), "started %d", (int)started);
        const char *kv[] = {"id", idt, "hash", p->hash, "rule", p->q.rule, "gateway", gw, NULL};
        relay_audit(sb, "relay-egress", kv);
        return 0;
}

/* ------------------------------------------------------------ actions */

#define BY_TABLE "ask = false in " HOST_ACTIONS_FILE

/* Run at once where the table says ask = false, asked otherwise; refused
 * without asking when the table, the user, the project or the values do
 * not allow it. */
static void decide_action(struct relay *R, struct relay_conn *c, const struct relay_request *q)
{
        struct relay_pending *p = new_pending(R, c, q);
        if (!p)
                return;
        _cleanup_error_ struct umw_error *err = NULL;
        __attribute__((cleanup(host_actions_free))) struct host_actions t = {0};
        const struct host_action *a = NULL;
        const char *rule = NULL;
        int r = relay_action_resolve(R, p, c->sb, &t, &a, &rule, &err);
        hash_request(p, c->sb->id);
        if (r < 0) {
                refuse(c, p->id, p->hash, rule, err->msg);
                relay_pending_free(p);
                return;
        }
        if (a->ask) {
                _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
                if (workspace_policy(&s, c->sb->workspace, &err) == 0)
                        p->timeout_s = s.view.policy.relay_timeout_s;
                ask(R, c, p);
                return;
        }
        audit_request(c->sb, p, BY_TABLE);
        if (relay_action_start(R, c, p, a, "table", &err) < 0)
                relay_answer(c, p->id, RELAY_ERROR, err->msg);
        relay_pending_free(p);
}

/* Approved: the table read again, and run only if what would run is what
 * the human was shown (the request's hash covers the argv). */
static int run_approved(struct relay *R, struct relay_pending *p, struct umw_error **err)
{
        struct relay_conn *c = p->conn;
        __attribute__((cleanup(host_actions_free))) struct host_actions t = {0};
        const struct host_action *a = NULL;
        const char *rule = NULL;
        char shown[RELAY_HASH_HEX + 1];
        memcpy(shown, p->hash, sizeof(shown));
        host_action_argv_free(p->argv);
        p->argv = NULL;
        int r = relay_action_resolve(R, p, c->sb, &t, &a, &rule, err);
        if (r >= 0)
                hash_request(p, c->sb->id);
        if (r >= 0 && strcmp(shown, p->hash) != 0)
                r = umw_fail(err, UMW_EXIT_STATE, ESTALE,
                             "the host actions table changed since the request was shown: "
                             "nothing ran");
        if (r < 0) {
                char idt[RELAY_ID_MAX + 1];
                id_text(p->id, idt);
                const char *kv[] = {"id", idt, "hash", shown, "error", (*err)->msg, NULL};
                relay_audit(c->sb, "relay-action-failed", kv);
                relay_pending_drop(R, p, RELAY_ERROR, (*err)->msg);
                return r;
        }
        relay_pending_remove(R, p);
        if ((r = relay_action_start(R, c, p, a, "human", err)) < 0) {
                relay_answer(c, p->id, RELAY_ERROR, (*err)->msg);
                relay_conn_pause(R, c, false);
        }
        relay_pending_free(p);
        return r;
}

static struct relay_live *live_at(struct relay_sandbox *sb, const char *path)
{
        for (size_t i = 0; i < sb->n_live; i++)
                if (strcmp(sb->live[i].path, path) == 0)
                        return &sb->live[i];
        return NULL;
}

/* Narrowing needs nobody's word: a live grant the relay made is detached. */
static void decide_revoke(struct relay_conn *c, const struct relay_request *q,
                          const struct relay_target *t)
{
        struct relay_sandbox *sb = c->sb;
        struct relay_live *l = live_at(sb, q->path);
        if (!l) {
                relay_answer(c, 0, RELAY_REFUSED, "no live grant at that path");
                return;
        }
        _cleanup_error_ struct umw_error *err = NULL;
        if (relay_mount_revoke(t, l->path, l->mnt_id, &err) < 0) {
                const char *kv[] = {"path", l->path, "error", err->msg, NULL};
                relay_audit(sb, "relay-revoke", kv);
                relay_answer(c, 0, RELAY_ERROR, err->msg);
                return;
        }
        const char *kv[] = {"path", l->path, "hash", l->hash, NULL};
        relay_audit(sb, "relay-revoke", kv);
        *l = sb->live[--sb->n_live];
        keep_record(sb);
        relay_answer(c, 0, RELAY_OK, NULL);
}

/* STATE/umwelt/notes.jsonl: every project's notes in one place, for the
 * human who reads what the agents said without opening each audit log. */
static int central_note(struct relay *R, const struct relay_sandbox *sb, const char *text,
                        struct umw_error **err)
{
        if (R->notes_fd < 0) {
                _cleanup_free_ char *path = NULL;
                int r = umw_state_dir(RELAY_NOTES_FILE, &path, err);
                if (r < 0 || (r = audit_open(path, &R->notes_fd, err)) < 0)
                        return r;
        }
        const char *kv[] = {"sandbox", sb->id, "workspace", sb->workspace, "text", text, NULL};
        return audit_append(R->notes_fd, "relay-note", kv, err);
}

/* A note needs no decision: the project's audit log and the central one. */
static void decide_note(struct relay *R, struct relay_conn *c, const struct relay_request *q)
{
        const char *kv[] = {"text", q->text, NULL};
        relay_audit(c->sb, "relay-note", kv);
        _cleanup_error_ struct umw_error *err = NULL;
        if (central_note(R, c->sb, q->text, &err) < 0)
                umw_warn("notes log: %s", err->msg);
        relay_answer(c, 0, RELAY_OK, NULL);
}

/* What the sandbox holds now that the relay gave it. */
static void answer_status(struct relay_conn *c)
{
        yajl_gen g = relay_answer_open(NULL, RELAY_OK);
        if (!g)
                return;
        umw_jgen_key(g, "grants");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < c->sb->n_live; i++) {
                yajl_gen_map_open(g);
                umw_jgen_key_str(g, "path", c->sb->live[i].path);
                umw_jgen_key_str(g, "mode", c->sb->live[i].rw ? "rw" : "ro");
                yajl_gen_map_close(g);
        }
        yajl_gen_array_close(g);
        umw_jgen_key(g, "egress");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < c->sb->n_egress; i++)
                umw_jgen_str(g, c->sb->egress[i]);
        yajl_gen_array_close(g);
        umw_jgen_key(g, "ports");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < c->sb->n_ports; i++)
                yajl_gen_integer(g, c->sb->ports[i]);
        yajl_gen_array_close(g);
        yajl_gen_map_close(g);
        size_t len;
        _cleanup_free_ char *line = relay_line(g, &len);
        relay_send(c->fd, line, len);
}

void relay_decide(struct relay *R, struct relay_conn *c, const struct relay_request *q)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct relay_target t = {.pidfd = -1};
        /* First: a sandbox that is not running is not heard, and the
         * project's audit log is open from here on. */
        if (relay_sandbox_target(c->sb, &t, &err) < 0) {
                relay_answer(c, 0, RELAY_REFUSED, err->msg);
                return;
        }
        if (q->kind == RELAY_BAD) {
                const char *kv[] = {"error", q->text, NULL};
                relay_audit(c->sb, "relay-bad-request", kv);
                relay_answer(c, 0, RELAY_ERROR, q->text);
                umw_close_fdp(&t.pidfd);
                return;
        }
        switch ((enum relay_kind)q->kind) {
        case RELAY_GRANT:
                decide_grant(R, c, q);
                break;
        case RELAY_REVOKE:
                decide_revoke(c, q, &t);
                break;
        case RELAY_NOTE:
                decide_note(R, c, q);
                break;
        case RELAY_STATUS:
                answer_status(c);
                break;
        case RELAY_INGRESS:
                decide_asked(R, c, q, check_ingress);
                break;
        case RELAY_EGRESS:
                decide_asked(R, c, q, check_egress);
                break;
        case RELAY_ACTION:
                decide_action(R, c, q);
                break;
        case RELAY_ACTIONS:
                relay_actions_list(c->fd, c->sb->workspace);
                break;
        case RELAY_BAD:
                break;
        }
        umw_close_fdp(&t.pidfd);
}

/* ------------------------------------------------------------ the human's word */

static struct relay_pending *find_shown(struct relay *R, uint64_t id, const char *hash,
                                        struct umw_error **err)
{
        struct relay_pending *p = relay_pending_find(R, id);
        if (!p) {
                umw_fail(err, UMW_EXIT_NOTFOUND, ENOENT, "no request %llu is pending",
                         (unsigned long long)id);
                return NULL;
        }
        if (hash && strcmp(hash, p->hash) != 0) {
                umw_fail(err, UMW_EXIT_STATE, ESTALE,
                         "request %llu is not the request shown (its hash differs)",
                         (unsigned long long)id);
                return NULL;
        }
        return p;
}

/* The approved grant kept for the project's next start. */
static int remember(const struct relay_sandbox *sb, const struct relay_pending *p,
                    struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        s.keep_bundle = true;
        int r = sandbox_for_workspace(&s, sb->workspace, err);
        return r < 0 ? r : remembered_add(s.project.id, p->path, p->q.rw && !p->is_file, err);
}

int relay_approve(struct relay *R, uint64_t id, const char *hash, bool remembered,
                  struct umw_error **err)
{
        struct relay_pending *p = find_shown(R, id, hash, err);
        if (!p)
                return -ENOENT;
        bool grant = p->q.kind == RELAY_GRANT;
        if (remembered && !grant)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "--remember keeps grants; a port or an egress rule is for this "
                                "run only");
        char idt[RELAY_ID_MAX + 1];
        id_text(id, idt);
        const char *decided[] = {"id",       idt,  "hash",  p->hash,      "decision",
                                 "approved", "by", "human", "remembered", remembered ? "yes" : "no",
                                 NULL};
        relay_audit(p->conn->sb, "relay-decision", decided);
        if (p->q.kind == RELAY_ACTION)
                return run_approved(R, p, err);
        int r = remembered ? remember(p->conn->sb, p, err) : 0;
        if (r >= 0)
                r = grant                       ? grant_audited(p->conn->sb, p, err)
                    : p->q.kind == RELAY_EGRESS ? egress_audited(p->conn->sb, p, err)
                                                : publish_audited(p->conn->sb, p, err);
        /* Processes started before have no proxy variables: say where the door is. */
        const char *said = p->q.kind == RELAY_EGRESS
                               ? "open through the gateway: HTTPS_PROXY=http://127.0.0.1:3128 "
                                 "(set in later sandbox execs)"
                               : NULL;
        relay_pending_drop(R, p, r < 0 ? RELAY_ERROR : RELAY_GRANTED, r < 0 ? (*err)->msg : said);
        return r;
}

int relay_deny(struct relay *R, uint64_t id, const char *why, struct umw_error **err)
{
        struct relay_pending *p = find_shown(R, id, NULL, err);
        if (!p)
                return -ENOENT;
        char idt[RELAY_ID_MAX + 1];
        id_text(id, idt);
        const char *kv[] = {"id",     idt,  "hash",  p->hash, "decision",
                            "denied", "by", "human", "why",   why && *why ? why : "",
                            NULL};
        relay_audit(p->conn->sb, "relay-decision", kv);
        relay_pending_drop(R, p, RELAY_DENIED, why && *why ? why : "denied");
        return 0;
}
