// The egress rules of a project's [egress] table and the decision the
// gateway asks for on every request. Pure: no lookups, no system calls.
// (Line comments here: the globs below hold the two characters that would
// end a block comment's opening.)
//
// A rule is one string:   [METHODS ]HOST[:PORT][PATH]
//   METHODS  upper-case HTTP methods joined by ',' and followed by one space:
//            "GET,HEAD api.github.com/repos/*". Absent: any method. CONNECT
//            is not a method a rule can name (the tunnel is what is decided).
//   HOST     "example.com" (that name only), "*.example.com" (its subdomains
//            at any depth, never example.com itself), an IPv4 address in any
//            inet_aton form, or "[2001:db8::1]". Canonicalised as
//            egress_host_canon() does; no scheme. An address rule matches
//            exactly that address ("10.0.0.0/8" is refused) and is the only
//            way to allow a request to, or a dialled address in, a class
//            other than public.
//   PORT     ":1"-":65535". Absent: 80 and 443.
//   PATH     starts with '/': a glob over the canonical path (see
//            egress_path_canon; the query is never matched). Segment by
//            segment: '*' matches any run of characters within one segment
//            (never a '/'); a whole segment "**" matches zero or more
//            segments. "/repos/me/*" matches /repos/me/x but not
//            /repos/me/x/y nor /repos/mine; "/repos/me/**" matches /repos/me
//            and everything below it. Absent: any path.
// A rule with METHODS or PATH can only be decided on a request the gateway
// sees, so for HTTPS it makes the gateway terminate TLS.
//
// The deny list is evaluated first, then the allow list; a sure match in the
// deny list denies, else a sure match in the allow list allows (unless a
// deny rule might match once the request is seen: EGRESS_INSPECT); nothing
// matching is a denial. The verdict names the first such rule of its list.
#ifndef UMW_POLICY_EGRESS_RULES_H
#define UMW_POLICY_EGRESS_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/egress_host.h"

struct umw_error;

enum egress_rule_host {
        EGRESS_RULE_NAME,   /* host.text exactly */
        EGRESS_RULE_SUFFIX, /* a subdomain of host.text */
        EGRESS_RULE_ADDR,   /* host.family and host.addr exactly */
};

struct egress_rule {
        char *text; /* as written: what log lines and 403 bodies name */
        enum egress_rule_host host_kind;
        struct egress_host host;
        uint16_t port;  /* 0: 80 and 443 */
        char **methods; /* NULL-terminated; NULL: any method */
        char *path;     /* canonical glob; NULL: any path */
};

struct egress_rules {
        struct egress_rule *deny;
        size_t n_deny;
        struct egress_rule *allow;
        size_t n_allow;
};

/* Parses one rule. On failure the message says what was expected, without a
 * prefix: the caller names where the rule came from. */
int egress_rule_parse(const char *text, struct egress_rule *out, struct umw_error **err);
void egress_rule_free(struct egress_rule *r);

/* allow and deny: NULL-terminated string lists, each may be NULL (empty).
 * Errors are "egress.allow[2]: ..." or "egress.deny[0]: ..." (0-based, as
 * the TOML array is written); callers prefix the file. */
int egress_rules_parse(const char *const *allow, const char *const *deny, struct egress_rules *out,
                       struct umw_error **err);
void egress_rules_free(struct egress_rules *rules);

/* Canonicalises a request target's path (origin form, "/a/b?q"): the query
 * is dropped; percent-escapes of unreserved characters (A-Z a-z 0-9 - . _ ~)
 * are decoded and the others' hex upper-cased. Refused as ambiguous rather
 * than guessed: anything but printable ASCII, '\\', '#', an escaped '/', '\\'
 * or NUL (%2F %5C %00), a malformed escape, "." or ".." segments (also when
 * escaped) and empty segments ("//"; a trailing "/" is kept). *out is
 * malloc'ed. */
int egress_path_canon(const char *raw, size_t len, char **out, struct umw_error **err);

struct egress_request {
        const struct egress_host *host; /* canonical (egress_host_canon) */
        uint16_t port;
        const char *method; /* NULL when not seen (a CONNECT not terminated) */
        const char *path;   /* canonical (egress_path_canon); NULL when not seen */
};

enum egress_decision {
        EGRESS_DENY,
        EGRESS_ALLOW,
        /* Host and port could be allowed, but a rule that may decide needs
         * the method or the path: terminate TLS (or read the request) and
         * decide again on each request with both set. Never returned when
         * method and path are both given. */
        EGRESS_INSPECT,
};

struct egress_verdict {
        enum egress_decision decision;
        /* The text of the rule that decided (points into the rules, valid
         * until they are freed); NULL: nothing matched, the default denial
         * (or, from egress_addr_check, a public address with no rule). */
        const char *rule;
        enum egress_class addr_class; /* egress_addr_check only */
};

void egress_decide(const struct egress_rules *rules, const struct egress_request *req,
                   struct egress_verdict *v);

/* The check on each address the gateway is about to dial (after its own
 * lookup, before connect; the address it then connects to is exactly this
 * one). Denied when a deny address rule without methods or path names it
 * and the port; else allowed when its class is public; else allowed only
 * when an allow address rule names exactly that address and port (its
 * methods and path are egress_decide's to check). v->addr_class is always
 * set; v->rule names the deciding rule, NULL for a public address or the
 * default denial. */
void egress_addr_check(const struct egress_rules *rules, int family, const void *addr,
                       uint16_t port, struct egress_verdict *v);

/* "deny", "allow", "inspect". */
const char *egress_decision_name(enum egress_decision d);

/* The rule to request for a denied request, for the 403 body: the host
 * (bracketed IPv6), ":PORT" unless 80 or 443, and the path when known
 * ("api.github.com/repos/me/x"). Returns the length, or -ERANGE when it does
 * not fit. */
int egress_rule_suggest(const struct egress_request *req, char *buf, size_t size);

/* Whether a rule can only be decided on the request itself (a path or
 * methods): over HTTPS the gateway then terminates TLS with the umwelt CA.
 * Rules that do not parse count as needing it (the stricter answer). */
bool egress_rules_need_termination(const char *const *allow, const char *const *deny);

#endif
