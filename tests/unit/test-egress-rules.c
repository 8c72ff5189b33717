#include "policy/config.h"
#include "policy/egress_rules.h"
#include "common/error.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct egress_rules rules;

static void load(const char *const *allow, const char *const *deny)
{
        struct umw_error *err = NULL;
        int r = egress_rules_parse(allow, deny, &rules, &err);
        cr_assert_eq(r, 0, "%s", err ? err->msg : "");
}

static void unload(void)
{
        egress_rules_free(&rules);
}

/* Decides METHOD (or "-" for unseen) on "host[:port]" with path (NULL for
 * unseen, raw otherwise) and checks the decision and deciding rule. */
static void decides(const char *method, const char *authority, const char *path,
                    enum egress_decision want, const char *want_rule)
{
        struct egress_host h;
        struct egress_request req = {.host = &h};
        struct umw_error *err = NULL;
        char *canon = NULL;
        cr_assert_eq(egress_authority_parse(authority, strlen(authority), 443, &h, &req.port, &err),
                     0, "%s", authority);
        if (path) {
                cr_assert_eq(egress_path_canon(path, strlen(path), &canon, &err), 0, "%s: %s", path,
                             err ? err->msg : "");
                req.path = canon;
        }
        req.method = strcmp(method, "-") == 0 ? NULL : method;
        struct egress_verdict v;
        egress_decide(&rules, &req, &v);
        cr_assert_eq(v.decision, want, "%s %s%s: %s, expected %s", method, authority,
                     path ? path : "", egress_decision_name(v.decision),
                     egress_decision_name(want));
        if (want_rule)
                cr_assert_str_eq(v.rule ? v.rule : "(none)", want_rule, "%s %s%s", method,
                                 authority, path ? path : "");
        else
                cr_assert_null(v.rule, "%s %s: decided by %s", method, authority, v.rule);
        free(canon);
}

static void rule_refused(const char *text, const char *want)
{
        struct egress_rule r;
        struct umw_error *err = NULL;
        cr_assert_lt(egress_rule_parse(text, &r, &err), 0, "'%s' accepted", text);
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
        cr_assert_null(strchr(err->msg, '\n'));
        cr_assert_not_null(strstr(err->msg, want), "'%s': '%s' lacks '%s'", text, err->msg, want);
        umw_error_free(err);
}

Test(egress_rules, bad_rules_are_refused_saying_what_was_expected)
{
        rule_refused("", "expected [METHODS ]HOST");
        rule_refused("/path", "expected [METHODS ]HOST");
        rule_refused("get example.com", "upper-case");
        rule_refused("GET,,HEAD example.com", "upper-case");
        rule_refused(",GET example.com", "upper-case");
        rule_refused("GET  example.com", "space");
        rule_refused("GET example.com extra", "space");
        rule_refused("CONNECT example.com", "CONNECT");
        rule_refused("*example.com", "'*'");
        rule_refused("a.*.example.com", "'*'");
        rule_refused("*.", "'*'");
        rule_refused("*.127.0.0.1", "not an address");
        rule_refused("example.com:0", "1-65535");
        rule_refused("example.com:99999", "1-65535");
        rule_refused("example.com:http", "1-65535");
        rule_refused("user@example.com", "userinfo");
        rule_refused("2001:db8::1", "brackets");
        rule_refused("256.0.0.1", "IPv4");
        rule_refused("example.com/a/../b", "'..'");
        rule_refused("example.com/a//b", "'//'");
        rule_refused("example.com/a%2fb", "%2F");
        rule_refused("example.com/a?x=1", "query");
        rule_refused("example.com/a#x", "'#'");
        rule_refused("example.com/a**", "whole path segment");
        rule_refused("example.com/a%zz", "malformed");
        rule_refused("ex\xc3\xa4mple.com", "ASCII");
        rule_refused("https://example.com/x", "without a scheme");
        rule_refused("GET https://example.com", "without a scheme");
        rule_refused("10.0.0.0/8", "prefixes");
        rule_refused("[2001:db8::]/32", "prefixes");
}

Test(egress_rules, list_errors_name_the_list_and_index)
{
        const char *allow[] = {"example.com", "ok.example.org", "bad host", NULL};
        const char *deny[] = {"fine.example.net", NULL};
        struct umw_error *err = NULL;
        cr_assert_lt(egress_rules_parse(allow, deny, &rules, &err), 0);
        cr_assert_not_null(strstr(err->msg, "egress.allow[2]: "), "%s", err->msg);
        umw_error_free(err);
        err = NULL;
        const char *deny2[] = {"GET x.example:1/a", "*.", NULL};
        cr_assert_lt(egress_rules_parse(NULL, deny2, &rules, &err), 0);
        cr_assert_not_null(strstr(err->msg, "egress.deny[1]: "), "%s", err->msg);
        umw_error_free(err);
        cr_assert_eq(rules.n_allow + rules.n_deny, 0, "nothing kept on failure");
}

Test(egress_rules, parsed_fields)
{
        struct egress_rule r;
        struct umw_error *err = NULL;
        cr_assert_eq(egress_rule_parse("GET,HEAD *.GitHub.com.:8443/repos/%7eme/*", &r, &err), 0,
                     "%s", err ? err->msg : "");
        cr_assert_str_eq(r.text, "GET,HEAD *.GitHub.com.:8443/repos/%7eme/*");
        cr_assert_eq(r.host_kind, EGRESS_RULE_SUFFIX);
        cr_assert_str_eq(r.host.text, "github.com");
        cr_assert_eq(r.port, 8443);
        cr_assert_str_eq(r.methods[0], "GET");
        cr_assert_str_eq(r.methods[1], "HEAD");
        cr_assert_null(r.methods[2]);
        cr_assert_str_eq(r.path, "/repos/~me/*");
        egress_rule_free(&r);
        cr_assert_eq(egress_rule_parse("0x7f.1", &r, &err), 0);
        cr_assert_eq(r.host_kind, EGRESS_RULE_ADDR);
        cr_assert_str_eq(r.host.text, "127.0.0.1");
        cr_assert_eq(r.port, 0);
        cr_assert_null(r.methods);
        cr_assert_null(r.path);
        egress_rule_free(&r);
}

Test(egress_rules, wildcard_means_subdomains_only, .fini = unload)
{
        const char *allow[] = {"*.example.com", NULL};
        load(allow, NULL);
        decides("-", "a.example.com", NULL, EGRESS_ALLOW, "*.example.com");
        decides("-", "A.B.Example.COM.", NULL, EGRESS_ALLOW, "*.example.com");
        decides("-", "example.com", NULL, EGRESS_DENY, NULL);
        decides("-", "evilexample.com", NULL, EGRESS_DENY, NULL);
        decides("-", "a.evilexample.com", NULL, EGRESS_DENY, NULL);
        decides("-", "example.com.evil.net", NULL, EGRESS_DENY, NULL);
        decides("-", "a.example.com.evil.net", NULL, EGRESS_DENY, NULL);
        decides("-", "example.co", NULL, EGRESS_DENY, NULL);
}

Test(egress_rules, exact_name_is_that_name_only, .fini = unload)
{
        const char *allow[] = {"example.com", NULL};
        load(allow, NULL);
        decides("-", "EXAMPLE.com.", NULL, EGRESS_ALLOW, "example.com");
        decides("-", "a.example.com", NULL, EGRESS_DENY, NULL);
        decides("-", "example.com.evil.net", NULL, EGRESS_DENY, NULL);
        decides("-", "evilexample.com", NULL, EGRESS_DENY, NULL);
}

Test(egress_rules, ports_default_to_80_and_443, .fini = unload)
{
        const char *allow[] = {"example.com", "example.org:8443", NULL};
        load(allow, NULL);
        decides("-", "example.com:443", NULL, EGRESS_ALLOW, "example.com");
        decides("GET", "example.com:80", "/", EGRESS_ALLOW, "example.com");
        decides("-", "example.com:22", NULL, EGRESS_DENY, NULL);
        decides("-", "example.com:8443", NULL, EGRESS_DENY, NULL);
        decides("-", "example.org:8443", NULL, EGRESS_ALLOW, "example.org:8443");
        decides("-", "example.org:443", NULL, EGRESS_DENY, NULL);
}

Test(egress_rules, deny_is_evaluated_before_allow, .fini = unload)
{
        const char *allow[] = {"*.example.com", "secret.example.com", NULL};
        const char *deny[] = {"secret.example.com", NULL};
        load(allow, deny);
        decides("-", "secret.example.com", NULL, EGRESS_DENY, "secret.example.com");
        decides("-", "www.example.com", NULL, EGRESS_ALLOW, "*.example.com");
}

Test(egress_rules, path_globs_and_their_siblings, .fini = unload)
{
        const char *allow[] = {"api.github.com/repos/me/*", "example.com/files/**",
                               "example.org/a/*.tar.gz", "example.net/", NULL};
        load(allow, NULL);
        const char *r = "api.github.com/repos/me/*";
        decides("GET", "api.github.com", "/repos/me/x", EGRESS_ALLOW, r);
        decides("GET", "api.github.com", "/repos/me/x?page=2", EGRESS_ALLOW, r);
        decides("GET", "api.github.com", "/repos/me/", EGRESS_ALLOW, r);
        decides("GET", "api.github.com", "/repos/%6De/x", EGRESS_ALLOW, r);
        decides("GET", "api.github.com", "/repos/me/x/y", EGRESS_DENY, NULL);
        decides("GET", "api.github.com", "/repos/mine/x", EGRESS_DENY, NULL);
        decides("GET", "api.github.com", "/repos/me", EGRESS_DENY, NULL);
        decides("GET", "api.github.com", "/repos/other/x", EGRESS_DENY, NULL);
        decides("GET", "api.github.com", "/", EGRESS_DENY, NULL);
        r = "example.com/files/**";
        decides("GET", "example.com", "/files", EGRESS_ALLOW, r);
        decides("GET", "example.com", "/files/a/b/c", EGRESS_ALLOW, r);
        decides("GET", "example.com", "/filesystem", EGRESS_DENY, NULL);
        decides("GET", "example.com", "/other/files/a", EGRESS_DENY, NULL);
        r = "example.org/a/*.tar.gz";
        decides("GET", "example.org", "/a/x-1.0.tar.gz", EGRESS_ALLOW, r);
        decides("GET", "example.org", "/a/.tar.gz", EGRESS_ALLOW, r);
        decides("GET", "example.org", "/a/x.tar.gz.sig", EGRESS_DENY, NULL);
        decides("GET", "example.org", "/a/b/x.tar.gz", EGRESS_DENY, NULL);
        decides("GET", "example.net", "/", EGRESS_ALLOW, "example.net/");
        decides("GET", "example.net", "/x", EGRESS_DENY, NULL);
}

Test(egress_rules, globstar_in_the_middle, .fini = unload)
{
        const char *allow[] = {"example.com/**/raw/*", NULL};
        load(allow, NULL);
        decides("GET", "example.com", "/raw/x", EGRESS_ALLOW, "example.com/**/raw/*");
        decides("GET", "example.com", "/a/b/raw/x", EGRESS_ALLOW, "example.com/**/raw/*");
        decides("GET", "example.com", "/a/raw/b/raw/x", EGRESS_ALLOW, "example.com/**/raw/*");
        decides("GET", "example.com", "/a/raw", EGRESS_DENY, NULL);
        decides("GET", "example.com", "/a/raw/x/y", EGRESS_DENY, NULL);
}

Test(egress_rules, methods, .fini = unload)
{
        const char *allow[] = {"GET,HEAD api.github.com/repos/**", "POST uploads.example.com",
                               NULL};
        load(allow, NULL);
        const char *r = "GET,HEAD api.github.com/repos/**";
        decides("GET", "api.github.com", "/repos/x", EGRESS_ALLOW, r);
        decides("HEAD", "api.github.com", "/repos/x", EGRESS_ALLOW, r);
        decides("POST", "api.github.com", "/repos/x", EGRESS_DENY, NULL);
        decides("get", "api.github.com", "/repos/x", EGRESS_DENY, NULL);
        decides("POST", "uploads.example.com", "/anything", EGRESS_ALLOW,
                "POST uploads.example.com");
        decides("PUT", "uploads.example.com", "/anything", EGRESS_DENY, NULL);
}

Test(egress_rules, unseen_method_or_path_asks_for_inspection, .fini = unload)
{
        const char *allow[] = {"GET api.github.com/repos/**", "*.example.com", "example.org", NULL};
        const char *deny[] = {"*.example.com/admin/**", NULL};
        load(allow, deny);
        /* A CONNECT not terminated: neither method nor path is known. */
        decides("-", "api.github.com", NULL, EGRESS_INSPECT, "GET api.github.com/repos/**");
        /* Allowed outright, but a deny rule may match a path. */
        decides("-", "www.example.com", NULL, EGRESS_INSPECT, "*.example.com/admin/**");
        decides("GET", "www.example.com", "/admin/x", EGRESS_DENY, "*.example.com/admin/**");
        decides("GET", "www.example.com", "/x", EGRESS_ALLOW, "*.example.com");
        /* Nothing path-dependent: decided on the tunnel. */
        decides("-", "example.org", NULL, EGRESS_ALLOW, "example.org");
        /* A possible deny with no possible allow is a plain denial. */
        decides("-", "nothing.example.net", NULL, EGRESS_DENY, NULL);
        /* A known method that does not match settles it without the path. */
        decides("POST", "api.github.com", NULL, EGRESS_DENY, NULL);
}

Test(egress_rules, address_rules_match_exactly, .fini = unload)
{
        const char *allow[] = {"203.0.113.7", "[2001:db8::1]:8443", "10.0.0.5:8080", NULL};
        load(allow, NULL);
        decides("-", "203.0.113.7", NULL, EGRESS_ALLOW, "203.0.113.7");
        decides("-", "3405803783", NULL, EGRESS_ALLOW, "203.0.113.7");
        decides("-", "203.0.113.8", NULL, EGRESS_DENY, NULL);
        decides("-", "[::ffff:203.0.113.7]", NULL, EGRESS_DENY, NULL);
        decides("-", "[2001:db8::1]:8443", NULL, EGRESS_ALLOW, "[2001:db8::1]:8443");
        decides("-", "[2001:db8:0::1]:443", NULL, EGRESS_DENY, NULL);
        decides("-", "10.0.0.5:8080", NULL, EGRESS_ALLOW, "10.0.0.5:8080");
}

static void addr_checks(const char *text, uint16_t port, enum egress_decision want,
                        const char *want_rule, enum egress_class want_class)
{
        unsigned char a[16];
        int family = strchr(text, ':') ? AF_INET6 : AF_INET;
        cr_assert_eq(inet_pton(family, text, a), 1);
        struct egress_verdict v;
        egress_addr_check(&rules, family, a, port, &v);
        cr_assert_eq(v.decision, want, "%s port %u: %s", text, port,
                     egress_decision_name(v.decision));
        cr_assert_eq(v.addr_class, want_class, "%s: %s", text, egress_class_name(v.addr_class));
        if (want_rule)
                cr_assert_str_eq(v.rule ? v.rule : "(none)", want_rule);
        else
                cr_assert_null(v.rule);
}

Test(egress_rules, dialled_addresses_must_be_public_or_named, .fini = unload)
{
        const char *allow[] = {"*.example.com", "10.0.0.5:8080", "GET 192.168.1.9/x", NULL};
        const char *deny[] = {"8.8.4.4", "GET 1.1.1.1/x", NULL};
        load(allow, deny);
        addr_checks("8.8.8.8", 443, EGRESS_ALLOW, NULL, EGRESS_CLASS_PUBLIC);
        addr_checks("8.8.4.4", 443, EGRESS_DENY, "8.8.4.4", EGRESS_CLASS_PUBLIC);
        addr_checks("8.8.4.4", 22, EGRESS_ALLOW, NULL, EGRESS_CLASS_PUBLIC);
        addr_checks("1.1.1.1", 80, EGRESS_ALLOW, NULL, EGRESS_CLASS_PUBLIC);
        addr_checks("127.0.0.1", 443, EGRESS_DENY, NULL, EGRESS_CLASS_LOOPBACK);
        addr_checks("169.254.169.254", 80, EGRESS_DENY, NULL, EGRESS_CLASS_LINK_LOCAL);
        addr_checks("100.100.100.200", 80, EGRESS_DENY, NULL, EGRESS_CLASS_CGNAT);
        addr_checks("::ffff:10.0.0.5", 8080, EGRESS_DENY, NULL, EGRESS_CLASS_PRIVATE);
        addr_checks("fd00:ec2::254", 80, EGRESS_DENY, NULL, EGRESS_CLASS_ULA);
        addr_checks("10.0.0.5", 8080, EGRESS_ALLOW, "10.0.0.5:8080", EGRESS_CLASS_PRIVATE);
        addr_checks("10.0.0.5", 443, EGRESS_DENY, NULL, EGRESS_CLASS_PRIVATE);
        addr_checks("10.0.0.6", 8080, EGRESS_DENY, NULL, EGRESS_CLASS_PRIVATE);
        addr_checks("192.168.1.9", 80, EGRESS_ALLOW, "GET 192.168.1.9/x", EGRESS_CLASS_PRIVATE);
        struct egress_verdict v;
        egress_addr_check(&rules, AF_UNIX, "x", 80, &v);
        cr_assert_eq(v.decision, EGRESS_DENY);
}

Test(egress_rules, empty_rules_deny_everything, .fini = unload)
{
        load(NULL, NULL);
        decides("GET", "example.com", "/", EGRESS_DENY, NULL);
        decides("-", "8.8.8.8", NULL, EGRESS_DENY, NULL);
}

static void path_is(const char *raw, const char *want)
{
        char *out = NULL;
        struct umw_error *err = NULL;
        cr_assert_eq(egress_path_canon(raw, strlen(raw), &out, &err), 0, "%s: %s", raw,
                     err ? err->msg : "");
        cr_assert_str_eq(out, want);
        free(out);
}

static void path_refused(const char *raw, const char *want)
{
        char *out = NULL;
        struct umw_error *err = NULL;
        cr_assert_eq(egress_path_canon(raw, strlen(raw), &out, &err), -EINVAL, "%s", raw);
        cr_assert_null(out);
        cr_assert_not_null(strstr(err->msg, want), "%s: '%s' lacks '%s'", raw, err->msg, want);
        umw_error_free(err);
}

Test(egress_rules, path_canonical_form)
{
        path_is("/", "/");
        path_is("/a/b?c=d/../e", "/a/b");
        path_is("/%7Euser/%41%62c", "/~user/Abc");
        path_is("/a%20b%3a", "/a%20b%3A");
        path_is("/a/", "/a/");
        path_is("/*", "/*");
        path_refused("", "starts with '/'");
        path_refused("*", "starts with '/'");
        path_refused("http://x/", "starts with '/'");
        path_refused("/a/../b", "'..'");
        path_refused("/a/%2e%2E/b", "'..'");
        path_refused("/a/./b", "'.'");
        path_refused("/..", "'..'");
        path_refused("/a//b", "'//'");
        path_refused("//a", "'//'");
        path_refused("/a%2fb", "%2F");
        path_refused("/a%5Cb", "%2F");
        path_refused("/a%00b", "NUL");
        path_refused("/a\\b", "'\\'");
        path_refused("/a b", "printable ASCII");
        path_refused("/a\rb", "printable ASCII");
        path_refused("/\xc3\xa4", "printable ASCII");
        path_refused("/a%", "malformed");
        path_refused("/a%4", "malformed");
        path_refused("/a%g0", "malformed");
        path_refused("/a#frag", "'#'");
}

Test(egress_rules, suggestions_name_the_rule_to_request)
{
        struct egress_host h;
        struct umw_error *err = NULL;
        char buf[300];
        cr_assert_eq(egress_host_canon("API.github.com", 14, &h, &err), 0);
        struct egress_request req = {.host = &h, .port = 443, .path = "/repos/me/x"};
        cr_assert_eq(egress_rule_suggest(&req, buf, sizeof(buf)), 25);
        cr_assert_str_eq(buf, "api.github.com/repos/me/x");
        cr_assert_eq(egress_host_canon("[::1]", 5, &h, &err), 0);
        req.port = 8443;
        req.path = NULL;
        cr_assert_gt(egress_rule_suggest(&req, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "[::1]:8443");
        cr_assert_eq(egress_rule_suggest(&req, buf, 5), -ERANGE);
}

/* A project file whose egress rules are loaded by policy_load(); returns its
 * error message (NULL when it loads). */
static char *project_load(const char *text, char *file, size_t size)
{
        char dir[] = "/tmp/test-egress-rules-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        snprintf(file, size, "%s/project.toml", dir);
        FILE *f = fopen(file, "we");
        cr_assert_not_null(f);
        cr_assert_geq(fputs(text, f), 0);
        cr_assert_eq(fclose(f), 0);
        struct policy_paths paths = {.floor = "/nonexistent/floor.toml",
                                     .user = "/nonexistent/user.toml",
                                     .project = file,
                                     .state_home = dir,
                                     .runtime_dir = dir};
        struct policy_config c = {0};
        struct umw_error *err = NULL;
        char *msg = NULL;
        if (policy_load(&paths, dir, &c, &err) < 0) {
                cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
                msg = strdup(err->msg);
        } else {
                policy_config_free(&c);
        }
        umw_error_free(err);
        cr_assert_eq(unlink(file), 0);
        cr_assert_eq(rmdir(dir), 0);
        return msg;
}

Test(egress_rules, project_rules_are_checked_at_load_naming_line_and_column)
{
        char file[64], want[256];
        char *msg = project_load("[egress]\nallow = [\"example.com\", \"*.github.com/x\"]\n"
                                 "deny = [\"ok.example.com\",\n  \"user@evil.example\"]\n",
                                 file, sizeof(file));
        snprintf(want, sizeof(want),
                 "%s:4:3: egress.deny[1]: an authority may not carry userinfo ('@')", file);
        cr_assert_not_null(msg);
        cr_assert_str_eq(msg, want);
        free(msg);
        msg = project_load("[egress]\nallow = [\"GET,HEAD api.github.com/repos/**\", "
                           "\"example.com:0\"]\n",
                           file, sizeof(file));
        snprintf(want, sizeof(want), "%s:2:46: egress.allow[1]: a port is 1-65535 in decimal",
                 file);
        cr_assert_not_null(msg);
        cr_assert_str_eq(msg, want);
        free(msg);
        msg = project_load("[egress]\nallow = [\"GET,HEAD api.github.com/repos/**\"]\n", file,
                           sizeof(file));
        cr_assert_null(msg, "%s", msg);
}
