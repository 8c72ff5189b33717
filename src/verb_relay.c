/* request (inside a sandbox) and relay (the host's human side): the
 * relay's clients (face/relay_client.h). */
#include "src/verbs.h"
#include "face/relay_client.h"
#include "policy/egress_rules.h"
#include "common/error.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_JSON = 256, OPT_RW, OPT_WHY, OPT_REMEMBER, OPT_PARAM };

struct request_args {
        bool json, rw;
        const char *why;
        const char *params[RELAY_PARAMS_MAX]; /* --param NAME=VALUE */
        size_t n_params;
};

static int parse_request(int argc, char **argv, struct request_args *a, struct umw_error **err)
{
        static const struct option longopts[] = {
            {"json", no_argument, NULL, OPT_JSON},
            {"rw", no_argument, NULL, OPT_RW},
            {"why", required_argument, NULL, OPT_WHY},
            {"param", required_argument, NULL, OPT_PARAM},
            {0},
        };
        /* Options after the arguments too: a fresh, permuting scan of what
         * follows the kind (optind 0 starts getopt over). */
        optind = 0;
        opterr = 0;
        int c;
        while ((c = getopt_long(argc - 1, argv + 1, "", longopts, NULL)) != -1) {
                if (c == OPT_JSON)
                        a->json = true;
                else if (c == OPT_RW)
                        a->rw = true;
                else if (c == OPT_WHY)
                        a->why = optarg;
                else if (c == OPT_PARAM && a->n_params < RELAY_PARAMS_MAX)
                        a->params[a->n_params++] = optarg;
                else if (c == OPT_PARAM)
                        return opts_usage_error(err, "request", "--param: at most %d",
                                                RELAY_PARAMS_MAX);
                else
                        return opts_usage_error(err, "request", "unknown option '%s'",
                                                argv[optind]);
        }
        return 0;
}

/* Copies s into a member of max + 1 bytes; longer is a usage error. */
static int put(char *dst, size_t max, const char *s, const char *what, struct umw_error **err)
{
        if (strlen(s) > max)
                return opts_usage_error(err, "request", "%s: at most %zu bytes", what, max);
        memcpy(dst, s, strlen(s) + 1);
        return 0;
}

/* PORT: decimal 1..65535, nothing else. */
static int port_of(const char *s, uint32_t *port, struct umw_error **err)
{
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (s[0] < '0' || s[0] > '9' || *end || errno || v < 1 || v > 65535)
                return opts_usage_error(err, "request",
                                        "ingress: expected a port from 1 to 65535, "
                                        "found '%s'",
                                        s);
        *port = (uint32_t)v;
        return 0;
}

/* RULE: one egress rule as [egress] allow holds them (umwelt.toml(5)). */
static int rule_of(const char *s, char rule[static RELAY_RULE_MAX + 1], struct umw_error **err)
{
        struct egress_rule parsed;
        int r = put(rule, RELAY_RULE_MAX, s, "RULE", err);
        if (r < 0)
                return r;
        if (egress_rule_parse(s, &parsed, err) < 0) {
                (*err)->kind = UMW_EXIT_USAGE;
                return umw_error_prefix(err, "request: egress");
        }
        egress_rule_free(&parsed);
        return 0;
}

/* ACTION and its --param NAME=VALUE list. */
static int action_of(const char *name, const struct request_args *a, struct relay_request *q,
                     struct umw_error **err)
{
        int r = put(q->action, RELAY_ACTION_MAX, name, "ACTION", err);
        for (size_t i = 0; r >= 0 && i < a->n_params; i++) {
                const char *eq = strchr(a->params[i], '=');
                if (!eq || eq == a->params[i] || (size_t)(eq - a->params[i]) > RELAY_PARAM_NAME_MAX)
                        return opts_usage_error(err, "request",
                                                "--param: expected NAME=VALUE, "
                                                "found '%s'",
                                                a->params[i]);
                memcpy(q->params[i].name, a->params[i], (size_t)(eq - a->params[i]));
                r = put(q->params[i].value, RELAY_PARAM_MAX, eq + 1, "--param's VALUE", err);
                q->n_params++;
        }
        return r;
}

/* The request the arguments say, checked as the relay will check it. */
static int build(const char *kind, const char *arg, const struct request_args *a,
                 struct relay_request *q, struct umw_error **err)
{
        bool takes_arg = strcmp(kind, "status") != 0;
        if (takes_arg != (arg != NULL))
                return opts_usage_error(err, "request", "%s: expected %s", kind,
                                        takes_arg ? "one argument" : "no argument");
        int r = 0;
        if (strcmp(kind, "grant") == 0) {
                q->kind = RELAY_GRANT;
                q->rw = a->rw;
                if (!a->why)
                        return opts_usage_error(err, "request", "grant: expected --why TEXT");
        } else if (strcmp(kind, "ingress") == 0) {
                q->kind = RELAY_INGRESS;
                if (!a->why)
                        return opts_usage_error(err, "request", "ingress: expected --why TEXT");
                r = port_of(arg, &q->port, err);
        } else if (strcmp(kind, "egress") == 0) {
                q->kind = RELAY_EGRESS;
                if (!a->why)
                        return opts_usage_error(err, "request", "egress: expected --why TEXT");
                r = rule_of(arg, q->rule, err);
        } else if (strcmp(kind, "action") == 0) {
                q->kind = RELAY_ACTION;
                if (!a->why)
                        return opts_usage_error(err, "request", "action: expected --why TEXT");
                r = action_of(arg, a, q, err);
        } else if (strcmp(kind, "revoke") == 0) {
                q->kind = RELAY_REVOKE;
        } else if (strcmp(kind, "note") == 0) {
                q->kind = RELAY_NOTE;
                r = put(q->text, RELAY_NOTE_MAX, arg, "note", err);
        } else if (strcmp(kind, "status") == 0) {
                q->kind = RELAY_STATUS;
        } else {
                return opts_usage_error(err, "request",
                                        "expected grant, egress, ingress, action, revoke, "
                                        "note or status, found '%s'",
                                        kind);
        }
        if (r >= 0 && (q->kind == RELAY_GRANT || q->kind == RELAY_REVOKE))
                r = put(q->path, RELAY_PATH_MAX, arg, "PATH", err);
        if (r >= 0 && a->n_params && q->kind != RELAY_ACTION)
                return opts_usage_error(err, "request", "--param: for an action only");
        if (r >= 0 && a->why && q->kind != RELAY_NOTE && q->kind != RELAY_STATUS)
                r = put(q->why, RELAY_WHY_MAX, a->why, "--why", err);
        if (r >= 0 && (r = relay_request_check(q, err)) < 0)
                (*err)->kind = UMW_EXIT_USAGE;
        return r;
}

/* request KIND [ARG] [options]: options anywhere after the kind. */
VERB(request)
{
        (void)g;
        static struct relay_request q;
        struct request_args a = {0};
        if (argc < 2 || argv[1][0] == '-')
                return opts_usage_error(err, "request",
                                        "expected grant, egress, ingress, action, revoke, "
                                        "note or status");
        int r = parse_request(argc, argv, &a, err);
        if (r < 0)
                return r;
        int first = optind + 1; /* in argv */
        if (argc - first > 1)
                return opts_usage_error(err, "request", "unexpected '%s'", argv[first + 1]);
        memset(&q, 0, sizeof(q));
        if ((r = build(argv[1], first < argc ? argv[first] : NULL, &a, &q, err)) < 0)
                return r;
        return relay_request_send(&q, a.json, err);
}

/* relay pending [--json] | approve ID [--remember] | deny ID [--why TEXT] | watch |
 * actions [--json] */
VERB(relay)
{
        (void)g;
        static const struct option longopts[] = {
            {"json", no_argument, NULL, OPT_JSON},
            {"why", required_argument, NULL, OPT_WHY},
            {"remember", no_argument, NULL, OPT_REMEMBER},
            {0},
        };
        const char *sub = argc > 1 ? argv[1] : "", *why = NULL;
        bool json = false, remember = false;
        optind = 0; /* a fresh, permuting scan after the sub-verb */
        opterr = 0;
        int c, r;
        while ((c = getopt_long(argc - 1, argv + 1, "", longopts, NULL)) != -1) {
                if (c == OPT_JSON && (strcmp(sub, "pending") == 0 || strcmp(sub, "actions") == 0))
                        json = true;
                else if (c == OPT_WHY && strcmp(sub, "deny") == 0)
                        why = optarg;
                else if (c == OPT_REMEMBER && strcmp(sub, "approve") == 0)
                        remember = true;
                else
                        return opts_usage_error(err, "relay", "unknown option '%s'", argv[optind]);
        }
        int first = optind + 1; /* in argv */
        bool with_id = strcmp(sub, "approve") == 0 || strcmp(sub, "deny") == 0;
        if ((r = opts_expect_args("relay", argc, argv, first, with_id, with_id, err)) < 0)
                return r;
        if (strcmp(sub, "pending") == 0)
                return relay_pending(json, err);
        if (strcmp(sub, "approve") == 0)
                return relay_approve_id(argv[first], remember, err);
        if (strcmp(sub, "deny") == 0)
                return relay_deny_id(argv[first], why, err);
        if (strcmp(sub, "watch") == 0)
                return relay_watch(stdin, err);
        if (strcmp(sub, "actions") == 0)
                return relay_actions(json, err);
        return opts_usage_error(
            err, "relay", "expected pending, approve, deny, watch or actions, found '%s'", sub);
}
