/* Egress rules: parsing, path canonicalisation, glob matching and the
 * decision (egress_rules.h). */
#include "policy/egress_rules.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define METHOD_MAX 32 /* longer than any registered HTTP method */

static int rule_fail(struct umw_error **err, const char *what)
{
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s", what);
}

static bool unreserved(unsigned char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_' || c == '~';
}

/* Writes the byte an escape at s stands for into *o: the character itself
 * when unreserved, else the escape with upper-case hex. */
static int unescape(const char *s, size_t left, char **o, struct umw_error **err)
{
        char hex[3] = {left >= 3 ? s[1] : 0, left >= 3 ? s[2] : 0, 0};
        if (!isxdigit((unsigned char)hex[0]) || !isxdigit((unsigned char)hex[1]))
                return rule_fail(err, "a path has a malformed %-escape");
        unsigned char c = (unsigned char)strtoul(hex, NULL, 16);
        if (c == '/' || c == '\\' || c == 0)
                return rule_fail(err, "a path may not escape '/', '\\' or NUL (%2F %5C %00)");
        if (unreserved(c)) {
                *(*o)++ = (char)c;
        } else {
                *o += sprintf(*o, "%%%02X", c);
        }
        return 0;
}

/* Every segment but the last is non-empty, none is "." or "..". */
static int check_segments(const char *path, struct umw_error **err)
{
        const char *seg = path + 1;
        for (;;) {
                const char *slash = strchr(seg, '/');
                size_t n = slash ? (size_t)(slash - seg) : strlen(seg);
                if (n == 0 && slash)
                        return rule_fail(err, "a path may not have an empty segment ('//')");
                if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
                        return rule_fail(err, "a path may not have '.' or '..' segments");
                if (!slash)
                        return 0;
                seg = slash + 1;
        }
}

int egress_path_canon(const char *raw, size_t len, char **out, struct umw_error **err)
{
        if (len == 0 || raw[0] != '/')
                return rule_fail(err, "a path starts with '/'");
        const char *q = memchr(raw, '?', len);
        if (q)
                len = (size_t)(q - raw);
        _cleanup_free_ char *buf = malloc(len + 1);
        if (!buf)
                return umw_fail_sys(err, ENOMEM, "path");
        char *o = buf;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)raw[i];
                if (c <= 0x20 || c >= 0x7f || c == '\\' || c == '#')
                        return rule_fail(err, "a path holds only printable ASCII, without '\\' "
                                              "or '#'");
                if (c != '%') {
                        *o++ = (char)c;
                        continue;
                }
                int r = unescape(raw + i, len - i, &o, err);
                if (r < 0)
                        return r;
                i += 2;
        }
        *o = '\0';
        int r = check_segments(buf, err);
        if (r < 0)
                return r;
        *out = TAKE_PTR(buf);
        return 0;
}

/* The classic backtracking wildcard match, on both levels: characters
 * within a segment ('*' the star) and segments within a path ("**" the
 * star). Linear in practice, since only the last star is ever retried. */
struct glob {
        size_t pn, sn; /* pattern and subject elements */
        bool (*is_star)(const struct glob *g, size_t pi);
        bool (*one)(const struct glob *g, size_t pi, size_t si); /* one element matches */
        const void *p, *s;
};

static bool glob_match(const struct glob *g)
{
        size_t pi = 0, si = 0, star = (size_t)-1, mark = 0;
        while (si < g->sn) {
                if (pi < g->pn && g->is_star(g, pi)) {
                        star = pi++;
                        mark = si;
                } else if (pi < g->pn && g->one(g, pi, si)) {
                        pi++;
                        si++;
                } else if (star != (size_t)-1) {
                        pi = star + 1;
                        si = ++mark;
                } else {
                        return false;
                }
        }
        while (pi < g->pn && g->is_star(g, pi))
                pi++;
        return pi == g->pn;
}

static bool char_is_star(const struct glob *g, size_t pi)
{
        return ((const char *)g->p)[pi] == '*';
}

static bool char_equal(const struct glob *g, size_t pi, size_t si)
{
        return ((const char *)g->p)[pi] == ((const char *)g->s)[si];
}

static bool segment_match(const char *p, size_t pn, const char *s, size_t sn)
{
        struct glob g = {pn, sn, char_is_star, char_equal, p, s};
        return glob_match(&g);
}

struct segments {
        const char *start[256];
        size_t len[256];
        size_t n;
};

/* Splits "/a/b/" into "a", "b", ""; false when there are too many. */
static bool split_segments(const char *path, struct segments *s)
{
        const char *seg = path + 1;
        s->n = 0;
        for (;;) {
                if (s->n == sizeof(s->start) / sizeof(s->start[0]))
                        return false;
                const char *slash = strchr(seg, '/');
                s->start[s->n] = seg;
                s->len[s->n++] = slash ? (size_t)(slash - seg) : strlen(seg);
                if (!slash)
                        return true;
                seg = slash + 1;
        }
}

static bool is_globstar(const struct segments *p, size_t i)
{
        return p->len[i] == 2 && p->start[i][0] == '*' && p->start[i][1] == '*';
}

static bool segment_is_star(const struct glob *g, size_t pi)
{
        return is_globstar(g->p, pi);
}

static bool segment_matches(const struct glob *g, size_t pi, size_t si)
{
        const struct segments *p = g->p, *s = g->s;
        return segment_match(p->start[pi], p->len[pi], s->start[si], s->len[si]);
}

/* A path too deep to split never matches. */
static bool path_match(const char *pattern, const char *path)
{
        struct segments p, s;
        if (!split_segments(pattern, &p) || !split_segments(path, &s))
                return false;
        struct glob g = {p.n, s.n, segment_is_star, segment_matches, &p, &s};
        return glob_match(&g);
}

static int methods_parse(const char *s, size_t len, char ***out, struct umw_error **err)
{
        size_t n = 1;
        for (size_t i = 0; i < len; i++)
                n += s[i] == ',';
        char **m = calloc(n + 1, sizeof(*m));
        if (!m)
                return umw_fail_sys(err, ENOMEM, "methods");
        *out = m;
        for (size_t i = 0, start = 0; i <= len; i++) {
                if (i < len && s[i] >= 'A' && s[i] <= 'Z')
                        continue;
                if ((i < len && s[i] != ',') || i == start || i - start > METHOD_MAX)
                        return rule_fail(err, "methods are upper-case names joined by ',' and "
                                              "one space before the host ('GET,HEAD host')");
                if (!(*m++ = strndup(s + start, i - start)))
                        return umw_fail_sys(err, ENOMEM, "methods");
                if (strcmp(m[-1], "CONNECT") == 0)
                        return rule_fail(err, "CONNECT is not a method a rule can name");
                start = i + 1;
        }
        return 0;
}

/* "*.name", "name", an IPv4 address or "[v6]", with an optional ":PORT". */
static int host_parse(const char *s, size_t len, struct egress_rule *r, struct umw_error **err)
{
        static const char wildcard[] = "*.";
        bool suffix = len > 2 && memcmp(s, wildcard, 2) == 0;
        if (suffix) {
                s += 2;
                len -= 2;
        }
        if (memchr(s, '*', len))
                return rule_fail(err, "'*' may only be the whole first label ('*.example.com')");
        const char *close = len && s[0] == '[' ? memchr(s, ']', len) : NULL;
        const char *after = close ? close + 1 : s;
        bool has_port = memchr(after, ':', len - (size_t)(after - s)) != NULL;
        int e = egress_authority_parse(s, len, has_port ? 0 : 80, &r->host, &r->port, err);
        if (!has_port)
                r->port = 0;
        if (e < 0)
                return e;
        if (suffix && r->host.kind != EGRESS_HOST_NAME)
                return rule_fail(err, "'*.' needs a host name after it, not an address");
        r->host_kind = suffix                             ? EGRESS_RULE_SUFFIX
                       : r->host.kind == EGRESS_HOST_ADDR ? EGRESS_RULE_ADDR
                                                          : EGRESS_RULE_NAME;
        return 0;
}

static int path_parse(const char *s, struct egress_rule *r, struct umw_error **err)
{
        if (strchr(s, '?'))
                return rule_fail(err, "a rule matches paths, never a query ('?')");
        int e = egress_path_canon(s, strlen(s), &r->path, err);
        if (e < 0)
                return e;
        struct segments segs;
        if (!split_segments(r->path, &segs))
                return rule_fail(err, "a path pattern has at most 256 segments");
        for (size_t i = 0; i < segs.n; i++)
                if (!is_globstar(&segs, i) && memmem(segs.start[i], segs.len[i], "**", 2))
                        return rule_fail(err, "'**' must be a whole path segment");
        return 0;
}

static int rule_parse(const char *text, struct egress_rule *r, struct umw_error **err)
{
        if (!(r->text = strdup(text)))
                return umw_fail_sys(err, ENOMEM, "rule");
        const char *hostport = text;
        const char *space = strchr(text, ' ');
        if (space) {
                int e = methods_parse(text, (size_t)(space - text), &r->methods, err);
                if (e < 0)
                        return e;
                hostport = space + 1;
        }
        if (strstr(hostport, "://"))
                return rule_fail(err, "a rule is [METHODS ]HOST[:PORT][/PATH], without a scheme");
        const char *slash = strchr(hostport, '/');
        size_t len = slash ? (size_t)(slash - hostport) : strlen(hostport);
        if (len == 0)
                return rule_fail(err, "expected [METHODS ]HOST[:PORT][/PATH]");
        int e = host_parse(hostport, len, r, err);
        if (e < 0 || !slash)
                return e;
        /* "10.0.0.0/8" would otherwise be one address with the path "/8". */
        if (r->host_kind == EGRESS_RULE_ADDR && strspn(slash + 1, "0123456789") > 0 &&
            slash[1 + strspn(slash + 1, "0123456789")] == '\0')
                return rule_fail(err, "an address rule names one address: prefixes (/N) are "
                                      "not supported");
        return path_parse(slash, r, err);
}

int egress_rule_parse(const char *text, struct egress_rule *out, struct umw_error **err)
{
        struct egress_rule r = {0};
        int e = rule_parse(text, &r, err);
        if (e < 0) {
                egress_rule_free(&r);
                return e;
        }
        *out = r;
        return 0;
}

void egress_rule_free(struct egress_rule *r)
{
        free(r->text);
        for (char **m = r->methods; m && *m; m++)
                free(*m);
        free(r->methods);
        free(r->path);
        memset(r, 0, sizeof(*r));
}

static int list_parse(const char *const *list, const char *name, struct egress_rule **out,
                      size_t *n, struct umw_error **err)
{
        size_t count = 0;
        while (list && list[count])
                count++;
        if (count == 0)
                return 0;
        if (!(*out = calloc(count, sizeof(**out))))
                return umw_fail_sys(err, ENOMEM, "egress.%s", name);
        for (; *n < count; ++*n) {
                int e = egress_rule_parse(list[*n], &(*out)[*n], err);
                if (e < 0)
                        return umw_error_prefix(err, "egress.%s[%zu]", name, *n);
        }
        return 0;
}

int egress_rules_parse(const char *const *allow, const char *const *deny, struct egress_rules *out,
                       struct umw_error **err)
{
        struct egress_rules r = {0};
        int e = list_parse(deny, "deny", &r.deny, &r.n_deny, err);
        if (e == 0)
                e = list_parse(allow, "allow", &r.allow, &r.n_allow, err);
        if (e < 0) {
                egress_rules_free(&r);
                return e;
        }
        *out = r;
        return 0;
}

void egress_rules_free(struct egress_rules *rules)
{
        for (size_t i = 0; i < rules->n_deny; i++)
                egress_rule_free(&rules->deny[i]);
        for (size_t i = 0; i < rules->n_allow; i++)
                egress_rule_free(&rules->allow[i]);
        free(rules->deny);
        free(rules->allow);
        memset(rules, 0, sizeof(*rules));
}

static bool host_matches(const struct egress_rule *r, const struct egress_host *h)
{
        if (r->host_kind != EGRESS_RULE_SUFFIX)
                return egress_host_equal(&r->host, h);
        if (h->kind != EGRESS_HOST_NAME)
                return false;
        size_t hn = strlen(h->text), sn = strlen(r->host.text);
        return hn > sn + 1 && h->text[hn - sn - 1] == '.' &&
               strcmp(h->text + hn - sn, r->host.text) == 0;
}

static bool port_matches(const struct egress_rule *r, uint16_t port)
{
        return r->port ? port == r->port : port == 80 || port == 443;
}

static bool method_listed(char *const *methods, const char *method)
{
        for (; *methods; methods++)
                if (strcmp(*methods, method) == 0)
                        return true;
        return false;
}

enum match {
        MATCH_NO,
        MATCH_YES,
        MATCH_MAYBE, /* host and port match; the method or path it needs is unknown */
};

static enum match rule_match(const struct egress_rule *r, const struct egress_request *req)
{
        if (!host_matches(r, req->host) || !port_matches(r, req->port))
                return MATCH_NO;
        bool unknown = false;
        if (r->methods && !req->method)
                unknown = true;
        else if (r->methods && !method_listed(r->methods, req->method))
                return MATCH_NO;
        if (r->path && !req->path)
                unknown = true;
        else if (r->path && !path_match(r->path, req->path))
                return MATCH_NO;
        return unknown ? MATCH_MAYBE : MATCH_YES;
}

/* The first rule of the list that matches surely, and the first that may. */
static void list_match(const struct egress_rule *rules, size_t n, const struct egress_request *req,
                       const struct egress_rule **yes, const struct egress_rule **maybe)
{
        *yes = *maybe = NULL;
        for (size_t i = 0; i < n && !*yes; i++) {
                enum match m = rule_match(&rules[i], req);
                if (m == MATCH_YES)
                        *yes = &rules[i];
                else if (m == MATCH_MAYBE && !*maybe)
                        *maybe = &rules[i];
        }
}

static void verdict_set(struct egress_verdict *v, enum egress_decision d,
                        const struct egress_rule *r)
{
        v->decision = d;
        v->rule = r ? r->text : NULL;
}

void egress_decide(const struct egress_rules *rules, const struct egress_request *req,
                   struct egress_verdict *v)
{
        const struct egress_rule *deny_yes, *deny_maybe, *allow_yes, *allow_maybe;
        v->addr_class = EGRESS_CLASS_PUBLIC;
        list_match(rules->deny, rules->n_deny, req, &deny_yes, &deny_maybe);
        if (deny_yes)
                return verdict_set(v, EGRESS_DENY, deny_yes);
        list_match(rules->allow, rules->n_allow, req, &allow_yes, &allow_maybe);
        if (allow_yes && !deny_maybe)
                return verdict_set(v, EGRESS_ALLOW, allow_yes);
        if (allow_yes || allow_maybe)
                return verdict_set(v, EGRESS_INSPECT, deny_maybe ? deny_maybe : allow_maybe);
        verdict_set(v, EGRESS_DENY, NULL);
}

/* An address rule that names exactly this address and port; with
 * any_request, only one without methods or path. */
static const struct egress_rule *addr_rule(const struct egress_rule *rules, size_t n,
                                           const struct egress_host *h, uint16_t port,
                                           bool any_request)
{
        for (size_t i = 0; i < n; i++)
                if (rules[i].host_kind == EGRESS_RULE_ADDR &&
                    egress_host_equal(&rules[i].host, h) && port_matches(&rules[i], port) &&
                    (!any_request || (!rules[i].methods && !rules[i].path)))
                        return &rules[i];
        return NULL;
}

void egress_addr_check(const struct egress_rules *rules, int family, const void *addr,
                       uint16_t port, struct egress_verdict *v)
{
        struct egress_host h = {.kind = EGRESS_HOST_ADDR, .family = family};
        v->addr_class = egress_addr_class(family, addr);
        if (family != AF_INET && family != AF_INET6)
                return verdict_set(v, EGRESS_DENY, NULL);
        memcpy(h.addr, addr, family == AF_INET ? 4 : 16);
        const struct egress_rule *r = addr_rule(rules->deny, rules->n_deny, &h, port, true);
        if (r)
                return verdict_set(v, EGRESS_DENY, r);
        if (v->addr_class == EGRESS_CLASS_PUBLIC)
                return verdict_set(v, EGRESS_ALLOW, NULL);
        r = addr_rule(rules->allow, rules->n_allow, &h, port, false);
        verdict_set(v, r ? EGRESS_ALLOW : EGRESS_DENY, r);
}

const char *egress_decision_name(enum egress_decision d)
{
        switch (d) {
        case EGRESS_ALLOW:
                return "allow";
        case EGRESS_INSPECT:
                return "inspect";
        case EGRESS_DENY:
                break;
        }
        return "deny";
}

int egress_rule_suggest(const struct egress_request *req, char *buf, size_t size)
{
        char host[EGRESS_HOST_TEXT_SIZE + 2], port[8] = "";
        if (egress_host_format(req->host, host, sizeof(host)) < 0)
                return -ERANGE;
        if (req->port != 80 && req->port != 443)
                snprintf(port, sizeof(port), ":%u", (unsigned)req->port);
        int n = snprintf(buf, size, "%s%s%s", host, port, req->path ? req->path : "");
        return n < 0 || (size_t)n >= size ? -ERANGE : n;
}

bool egress_rules_need_termination(const char *const *allow, const char *const *deny)
{
        struct egress_rules rules;
        _cleanup_error_ struct umw_error *ignored = NULL;
        if (egress_rules_parse(allow, deny, &rules, &ignored) < 0)
                return true;
        bool need = false;
        for (size_t i = 0; i < rules.n_allow; i++)
                need |= rules.allow[i].path || rules.allow[i].methods;
        for (size_t i = 0; i < rules.n_deny; i++)
                need |= rules.deny[i].path || rules.deny[i].methods;
        egress_rules_free(&rules);
        return need;
}
