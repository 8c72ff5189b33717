/* A sandbox's network, before it starts: the ports it publishes, the
 * prerequisites of egress (the gateway binary, the CA and trust bundle, the
 * proxy variables) and the rules file the gateway reads. */
#include "face/sandbox_int.h"
#include "netns/tls_paths.h"
#include "policy/egress_rules.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"
#include "common/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

extern char **environ;

#define PROXY_URL "http://127.0.0.1:3128"
#define NO_PROXY  "localhost,127.0.0.1,::1"

const char *const sandbox_proxy_env[] = {
    "HTTP_PROXY=" PROXY_URL, "HTTPS_PROXY=" PROXY_URL, "ALL_PROXY=" PROXY_URL,
    "NO_PROXY=" NO_PROXY,    "http_proxy=" PROXY_URL,  "https_proxy=" PROXY_URL,
    "all_proxy=" PROXY_URL,  "no_proxy=" NO_PROXY,     NULL};

static int env_add(struct sandbox *s, const char *entry, struct umw_error **err)
{
        size_t n = 0;
        while (s->net.env_set && s->net.env_set[n])
                n++;
        char **more = realloc(s->net.env_set, (n + 2) * sizeof(char *));
        if (!more)
                return umw_fail_sys(err, ENOMEM, "egress environment");
        s->net.env_set = more;
        more[n] = strdup(entry);
        more[n + 1] = NULL;
        return more[n] ? 0 : umw_fail_sys(err, ENOMEM, "egress environment");
}

/* ------------------------------------------------------------ ports */

static int add_port(struct sandbox *s, uint16_t port, const char *origin, struct umw_error **err)
{
        for (size_t i = 0; i < s->net.n_ports; i++)
                if (s->net.ports[i] == port)
                        return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                        "%s %u: the port is published already (by .umwelt.toml "
                                        "[ingress] ports or another --publish)",
                                        origin, port);
        if (s->net.n_ports == INGRESS_PORTS_MAX)
                return umw_fail(err, UMW_EXIT_USAGE, E2BIG,
                                "%s %u: expected at most %d published ports", origin, port,
                                INGRESS_PORTS_MAX);
        s->net.ports[s->net.n_ports++] = port;
        return 0;
}

static int refuse_publish(struct sandbox *s, uint16_t port, struct umw_error **err)
{
        char text[8];
        snprintf(text, sizeof(text), "%u", port);
        int r = umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                         "--publish %u: publishing ports is not allowed by the host floor "
                         "(ingress = false)",
                         port);
        const char *kv[] = {"port", text, "error", (*err)->msg, NULL};
        sandbox_audit(s, "refusal", kv);
        return r;
}

static int collect_ports(struct sandbox *s, const struct sandbox_opts *o, struct umw_error **err)
{
        int r;
        for (size_t i = 0; i < s->view.policy.n_ingress_ports; i++)
                if ((r = add_port(s, s->view.policy.ingress_ports[i], "[ingress] ports", err)) < 0)
                        return r;
        for (size_t i = 0; i < o->n_publish; i++)
                if ((r = s->view.policy.ingress_allowed
                             ? add_port(s, o->publish[i], "--publish", err)
                             : refuse_publish(s, o->publish[i], err)) < 0)
                        return r;
        return 0;
}

/* ------------------------------------------------------------ egress set-up */

/* The directory the gateway fills with the trust files (its --trust-dir,
 * made before it says ready, so umwelt-run never loads OpenSSL), mounted
 * read-only at TLS_TRUST_INSIDE, and the variables that point each TLS
 * stack at its files. */
static int trust_dir_prepare(struct sandbox *s, struct umw_error **err)
{
        _cleanup_close_ int dfd = -1;
        /* The CA's directory made now, so the sandbox is composed with it
         * hidden before the gateway makes the key in it. */
        int r;
        if ((r = umw_state_dir("ca", &s->net.ca_dir, err)) < 0 ||
            (r = umw_mkdir_p(s->net.ca_dir, 0700, 0700, err)) < 0 ||
            (r = umw_state_dir("trust", &s->net.trust_dir, err)) < 0 ||
            (r = tls_trust_dir_open(s->net.trust_dir, &dfd, err)) < 0)
                return r;
        char **env = NULL;
        if ((r = tls_trust_env(NULL, &env, err)) < 0)
                return r;
        for (char **e = env; e && *e; e++)
                if ((r = env_add(s, *e, err)) < 0)
                        break;
        tls_trust_env_free(env);
        return r;
}

/* Without a trust directory a rule with a path or methods cannot be
 * enforced over HTTPS: refused. Rules that need none go on without it. */
static int trust_prepare(struct sandbox *s, struct umw_error **err)
{
        if (trust_dir_prepare(s, err) == 0)
                return 0;
        free(s->net.trust_dir);
        s->net.trust_dir = NULL;
        if (egress_rules_need_termination((const char *const *)s->view.policy.egress_allow,
                                          (const char *const *)s->view.policy.egress_deny))
                return umw_error_prefix(err, "egress: a rule with a path or methods needs the "
                                             "umwelt CA, which is not usable");
        umw_warn("egress: no umwelt CA in the sandbox (%s); its rules need none", (*err)->msg);
        umw_error_freep(err);
        return 0;
}

static int egress_prepare(struct sandbox *s, struct umw_error **err)
{
        int r;
        if ((r = sandbox_gateway_locate(s, err)) < 0 || (r = trust_prepare(s, err)) < 0)
                return r;
        for (const char *const *e = sandbox_proxy_env; *e; e++)
                if ((r = env_add(s, *e, err)) < 0)
                        return r;
        s->net.egress = true;
        return 0;
}

int sandbox_net_prepare(struct sandbox *s, const struct sandbox_opts *o, bool long_lived,
                        struct umw_error **err)
{
        int r;
        if ((long_lived && (r = collect_ports(s, o, err)) < 0) ||
            (s->view.policy.egress_enabled && (r = egress_prepare(s, err)) < 0))
                return r;
        return 0;
}

/* ------------------------------------------------------------ the rules file */

static void toml_string(FILE *f, const char *s)
{
        fputc('"', f);
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (c == '"' || c == '\\')
                        fprintf(f, "\\%c", c);
                else if (c < 0x20 || c == 0x7f)
                        fprintf(f, "\\u%04x", c);
                else
                        fputc(c, f);
        }
        fputc('"', f);
}

/* KEY = [the strings of a, then of b] (either may be NULL). */
static void toml_list(FILE *f, const char *key, char *const *a, char *const *b)
{
        char *const *lists[] = {a, b};
        size_t n = 0;
        fprintf(f, "%s = [", key);
        for (size_t l = 0; l < ARRAY_SIZE(lists); l++)
                for (char *const *v = lists[l]; v && *v; v++) {
                        fputs(n++ ? ", " : "", f);
                        toml_string(f, *v);
                }
        fputs("]\n", f);
}

static void strv_freep(char ***v)
{
        grants_strv_free(*v);
}

int sandbox_egress_policy_write(const struct sandbox *s, bool allow, bool live,
                                struct umw_error **err)
{
        __attribute__((cleanup(strv_freep))) char **opened_live = NULL;
        int r;
        if (live && allow && s->view.policy.egress_allowed &&
            (r = sandbox_relay_egress(s->project.container_id, &opened_live, err)) < 0)
                return r;
        bool project = allow && s->view.policy.egress_enabled, opened = project || opened_live;
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f)
                return umw_fail_errno(err, "egress rules");
        fprintf(f,
                "# The egress rules of sandbox %s, as the host floor bounds them, and those "
                "the relay opened live: written by umwelt-run for its gateway.\n[egress]\n"
                "enabled = %s\n",
                s->project.container_id, opened ? "true" : "false");
        toml_list(f, "allow", project ? s->view.policy.egress_allow : NULL, opened_live);
        toml_list(f, "deny", opened ? s->view.policy.egress_deny : NULL, NULL);
        bool bad = ferror(f);
        if (fclose(f) != 0 || bad) {
                free(text);
                return umw_fail_sys(err, ENOMEM, "egress rules");
        }
        _cleanup_free_ char *owned = text;
        _cleanup_close_ int dirfd = open(s->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return umw_fail_errno(err, "open %s", s->bundle);
        return umw_write_file_atomic(dirfd, EGRESS_POLICY_FILE, text, len, 0600, err);
}

/* ------------------------------------------------------------ start */

static char *join(char *const *v)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        for (size_t i = 0; f && v && v[i]; i++)
                fprintf(f, "%s%s", i ? ", " : "", v[i]);
        if (f)
                fclose(f);
        return text;
}

void sandbox_audit_rules(struct sandbox *s, const char *event, const char *gateway,
                         const char *error)
{
        _cleanup_free_ char *allow = s->view.loaded ? join(s->view.policy.egress_allow) : NULL;
        _cleanup_free_ char *deny = s->view.loaded ? join(s->view.policy.egress_deny) : NULL;
        const char *kv[] = {"id",
                            s->project.container_id,
                            "gateway",
                            gateway,
                            "allow",
                            allow ? allow : "",
                            "deny",
                            deny ? deny : "",
                            error ? "error" : NULL,
                            error,
                            NULL};
        sandbox_audit(s, event, kv);
}
