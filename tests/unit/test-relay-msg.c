/* The relay's wire format (face/relay_msg.h): each request kind formats to
 * a line that parses back to the same record; every malformed, unbounded
 * or unprintable line is refused with one line that names the member;
 * the monitor's check refuses records the parser could not have made;
 * answers and control messages are read to their rules. */
#include "face/relay_msg.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HASH "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* A malloc'd line from a format, for lines with long or odd members. */
static char *vline_of(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static char *vline_of(const char *fmt, va_list ap)
{
        char *s = NULL;
        cr_assert_geq(vasprintf(&s, fmt, ap), 0);
        return s;
}

static char *line_of(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *line_of(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *s = vline_of(fmt, ap);
        va_end(ap);
        return s;
}

static char *repeat(char c, size_t n)
{
        char *s = malloc(n + 1);
        cr_assert_not_null(s);
        memset(s, c, n);
        s[n] = '\0';
        return s;
}

/* The error's one line, checked for what every refusal must be. */
static void one_line(int r, int want, struct umw_error *err, const char *line, const char *msg)
{
        cr_assert_eq(r, want, "%s: got %d", line, r);
        cr_assert_not_null(err, "%s", line);
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG, "%s", line);
        cr_assert_null(strchr(err->msg, '\n'), "%s", err->msg);
        if (msg)
                cr_assert_str_eq(err->msg, msg, "%s", line);
}

static struct relay_request parsed(const char *line)
{
        struct relay_request q;
        struct umw_error *err = NULL;
        cr_assert_eq(relay_request_parse(line, strlen(line), &q, &err), 0, "%s: %s", line,
                     err ? err->msg : "");
        cr_assert_eq(relay_request_check(&q, &err), 0, "%s: %s", line, err ? err->msg : "");
        return q;
}

/* Refused with msg (NULL: any message). */
static void refused_n(const char *line, size_t len, int want, const char *msg)
{
        struct relay_request q;
        struct umw_error *err = NULL;
        int r = relay_request_parse(line, len, &q, &err);
        one_line(r, want, err, line, msg);
        umw_error_free(err);
}

static void refused(const char *line, const char *msg)
{
        refused_n(line, strlen(line), -EINVAL, msg);
}

/* The line fmt makes (one member filled in) refused with msg, or parsed. */
static void refused_as(const char *msg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refused_as(const char *msg, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *line = vline_of(fmt, ap);
        va_end(ap);
        refused(line, msg);
        free(line);
}

static void parsed_as(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void parsed_as(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char *line = vline_of(fmt, ap);
        va_end(ap);
        parsed(line);
        free(line);
}

#define REVOKE_PATH "{\"v\":1,\"kind\":\"revoke\",\"path\":\"%s\"}"
#define EGRESS_WHY  "{\"v\":1,\"kind\":\"egress\",\"rule\":\"a\",\"why\":\"%s\"}"
#define EGRESS_RULE "{\"v\":1,\"kind\":\"egress\",\"rule\":\"%s\",\"why\":\"w\"}"

static void unsupported(const char *line, const char *msg)
{
        refused_n(line, strlen(line), -EPROTONOSUPPORT, msg);
}

static void round_trip(const struct relay_request *q, const char *want)
{
        struct umw_error *err = NULL;
        char *line = NULL;
        size_t len = 0;
        cr_assert_eq(relay_request_format(q, &line, &len, &err), 0, "%s", err ? err->msg : "");
        cr_assert_eq(len, strlen(line));
        cr_assert_eq(line[len - 1], '\n');
        if (want)
                cr_assert_str_eq(line, want);
        struct relay_request back;
        cr_assert_eq(relay_request_parse(line, len - 1, &back, &err), 0, "%s: %s", line,
                     err ? err->msg : "");
        cr_assert_eq(memcmp(&back, q, sizeof(back)), 0, "%s", line);
        free(line);
}

Test(relay_msg, round_trip_each_kind)
{
        const struct {
                const char *in, *out;
        } lines[] = {
            {"{\"v\":1,\"kind\":\"grant\",\"path\":\"/srv/data\",\"why\":\"read the data\"}",
             "{\"v\":1,\"kind\":\"grant\",\"path\":\"/srv/data\",\"mode\":\"ro\","
             "\"why\":\"read the data\"}\n"},
            {"{\"why\":\"build\",\"mode\":\"rw\",\"path\":\"/\",\"kind\":\"grant\",\"v\":1}",
             "{\"v\":1,\"kind\":\"grant\",\"path\":\"/\",\"mode\":\"rw\",\"why\":\"build\"}\n"},
            {"{\"v\":1,\"kind\":\"revoke\",\"path\":\"/srv/data\"}",
             "{\"v\":1,\"kind\":\"revoke\",\"path\":\"/srv/data\"}\n"},
            {"{\"v\":1,\"kind\":\"revoke\",\"path\":\"/srv/d\\u00e9j\\u00e0\",\"why\":\"done\"}",
             "{\"v\":1,\"kind\":\"revoke\",\"path\":\"/srv/"
             "d\xc3\xa9j\xc3\xa0\",\"why\":\"done\"}\n"},
            {"{\"v\":1,\"kind\":\"egress\",\"rule\":\"pypi.org:443/simple/*\",\"why\":\"pip\"}",
             "{\"v\":1,\"kind\":\"egress\",\"rule\":\"pypi.org:443/simple/*\",\"why\":\"pip\"}\n"},
            {"{\"v\":1,\"kind\":\"ingress\",\"port\":8080,\"why\":\"a \\\"dev\\\" server\"}",
             "{\"v\":1,\"kind\":\"ingress\",\"port\":8080,\"why\":\"a \\\"dev\\\" server\"}\n"},
            {"{\"v\":1,\"kind\":\"note\",\"text\":\"tests pass \xe2\x9c\x93\"}",
             "{\"v\":1,\"kind\":\"note\",\"text\":\"tests pass \xe2\x9c\x93\"}\n"},
            {" { \"v\" : 1 , \"kind\" : \"status\" } ", "{\"v\":1,\"kind\":\"status\"}\n"},
        };
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
                struct relay_request q = parsed(lines[i].in);
                round_trip(&q, lines[i].out);
        }
}

Test(relay_msg, parse_fills_the_record)
{
        struct relay_request q = parsed("{\"v\":1,\"kind\":\"grant\",\"path\":\"/a/b\","
                                        "\"mode\":\"rw\",\"why\":\"w\"}");
        cr_assert_eq(q.kind, RELAY_GRANT);
        cr_assert_eq(q.rw, 1);
        cr_assert_str_eq(q.path, "/a/b");
        cr_assert_str_eq(q.why, "w");
        q = parsed("{\"v\":1,\"kind\":\"ingress\",\"port\":65535,\"why\":\"w\"}");
        cr_assert_eq(q.kind, RELAY_INGRESS);
        cr_assert_eq(q.port, 65535);
        q = parsed("{\"v\":1,\"kind\":\"ingress\",\"port\":1,\"why\":\"w\"}");
        cr_assert_eq(q.port, 1);
}

Test(relay_msg, round_trip_at_the_bounds)
{
        struct relay_request q = {.kind = RELAY_GRANT, .rw = 1};
        q.path[0] = '/';
        memset(q.path + 1, 'p', RELAY_PATH_MAX - 1);
        memset(q.why, '"', RELAY_WHY_MAX); /* each escaped: the line grows */
        round_trip(&q, NULL);
        struct relay_request e = {.kind = RELAY_EGRESS};
        memset(e.rule, '\\', RELAY_RULE_MAX);
        memcpy(e.why, "\xf4\x8f\xbf\xbf", 4); /* U+10FFFF */
        round_trip(&e, NULL);
        struct relay_request n = {.kind = RELAY_NOTE};
        for (size_t i = 0; i + 2 <= RELAY_NOTE_MAX; i += 2)
                memcpy(n.text + i, "\xc2\xa0", 2); /* U+00A0: the first after C1 */
        round_trip(&n, NULL);
}

Test(relay_msg, refuses_what_is_not_an_object)
{
        refused("[]", "request: .: expected an object");
        refused("1", "request: .: expected an object");
        refused("\"grant\"", "request: .: expected an object");
        refused("null", "request: .: expected an object");
        refused("", NULL);
        refused("{", NULL);
        refused("{\"v\":1,\"kind\":\"status\"} {}", NULL);
        refused("{\"v\":1,\"kind\":\"status\",}", NULL);
}

Test(relay_msg, refuses_a_bad_version)
{
        const char *want = "request: .v: expected the protocol version, an integer";
        refused("{\"kind\":\"status\"}", want);
        refused("{\"v\":\"1\",\"kind\":\"status\"}", want);
        refused("{\"v\":1.0,\"kind\":\"status\"}", want);
        refused("{\"v\":1e0,\"kind\":\"status\"}", want);
        refused("{\"v\":true,\"kind\":\"status\"}", want);
        refused("{\"v\":null,\"kind\":\"status\"}", want);
        unsupported("{\"v\":2,\"kind\":\"status\"}",
                    "request: unsupported protocol version 2 (this relay speaks 1)");
        unsupported("{\"v\":-9223372036854775807,\"kind\":\"status\"}",
                    "request: unsupported protocol version -9223372036854775807 (this relay "
                    "speaks 1)");
        refused("{\"v\":9223372036854775808,\"kind\":\"status\"}", want);
        /* checked before the members, which a later version may change */
        unsupported("{\"v\":0,\"kind\":\"fly\",\"x\":1}",
                    "request: unsupported protocol version 0 (this relay speaks 1)");
}

Test(relay_msg, refuses_an_unknown_kind)
{
        const char *want =
            "request: .kind: expected one of grant, revoke, egress, ingress, note, status, action, "
            "actions";
        refused("{\"v\":1}", want);
        refused("{\"v\":1,\"kind\":\"fly\"}", want);
        refused("{\"v\":1,\"kind\":\"Grant\"}", want);
        refused("{\"v\":1,\"kind\":\"\"}", want);
        refused("{\"v\":1,\"kind\":1}", want);
        refused("{\"v\":1,\"kind\":[\"grant\"]}", want);
}

Test(relay_msg, refuses_a_member_the_kind_does_not_take)
{
        refused("{\"v\":1,\"kind\":\"grant\",\"path\":\"/a\",\"why\":\"w\",\"port\":80}",
                "request: .port: not a member of a grant request");
        refused("{\"v\":1,\"kind\":\"status\",\"why\":\"w\"}",
                "request: .why: not a member of a status request");
        refused("{\"v\":1,\"kind\":\"note\",\"text\":\"t\",\"why\":\"w\"}",
                "request: .why: not a member of a note request");
        refused("{\"v\":1,\"kind\":\"egress\",\"rule\":\"a\",\"why\":\"w\",\"mode\":\"ro\"}",
                "request: .mode: not a member of an egress request");
        refused("{\"v\":1,\"kind\":\"status\",\"id\":\"1\"}",
                "request: .id: not a member of a status request");
        /* a name is shown without its control or non-ASCII bytes */
        refused("{\"v\":1,\"kind\":\"status\",\"a\\u001b[2Jb\\nc\":1}",
                "request: .a?[2Jb?c: not a member of a status request");
        refused("{\"v\":1,\"kind\":\"status\",\"\\u0085\xc3\xa9\":1}",
                "request: .????: not a member of a status request");
}

Test(relay_msg, refuses_a_missing_member)
{
        refused("{\"v\":1,\"kind\":\"grant\",\"path\":\"/a\"}",
                "request: .why: required in a grant request");
        refused("{\"v\":1,\"kind\":\"grant\",\"why\":\"w\"}",
                "request: .path: required in a grant request");
        refused("{\"v\":1,\"kind\":\"revoke\",\"why\":\"w\"}",
                "request: .path: required in a revoke request");
        refused("{\"v\":1,\"kind\":\"egress\",\"why\":\"w\"}",
                "request: .rule: required in an egress request");
        refused("{\"v\":1,\"kind\":\"ingress\",\"why\":\"w\"}",
                "request: .port: required in an ingress request");
        refused("{\"v\":1,\"kind\":\"ingress\",\"port\":22}",
                "request: .why: required in an ingress request");
        refused("{\"v\":1,\"kind\":\"note\"}", "request: .text: required in a note request");
}

static void refused_path(const char *path, const char *msg)
{
        refused_as(msg, REVOKE_PATH, path);
}

Test(relay_msg, refuses_a_bad_path)
{
        const char *bounds = "request: .path: expected an absolute path of at most 4095 bytes";
        const char *clean = "request: .path: expected a clean absolute path (no \".\" or \"..\" "
                            "component, no \"//\", no trailing \"/\")";
        const char *text = "request: .path: expected a path in UTF-8 without control characters";
        refused_path("", bounds);
        refused_path("srv/data", bounds);
        refused_path("./srv", bounds);
        refused_path("~/x", bounds);
        char *p = repeat('a', RELAY_PATH_MAX + 1);
        p[0] = '/';
        refused_path(p, bounds);
        p[RELAY_PATH_MAX] = '\0';
        parsed_as(REVOKE_PATH, p);
        free(p);
        const char *unclean[] = {"/a/./b", "/a/../b", "/a//b", "//",    "/a/",
                                 "/.",     "/..",     "/a/.",  "/a/..", "/./"};
        for (size_t i = 0; i < sizeof(unclean) / sizeof(unclean[0]); i++)
                refused_path(unclean[i], clean);
        parsed("{\"v\":1,\"kind\":\"revoke\",\"path\":\"/a/.b/..c/...\"}");
        const char *controls[] = {"/a\\u001bb", "/a\\nb",     "/a\\tb",        "/a\\u007fb",
                                  "/a\\u0085b", "/a\\u009fb", "/\xed\xb0\x80", "/\xc0\xaf"};
        for (size_t i = 0; i < sizeof(controls) / sizeof(controls[0]); i++)
                refused_path(controls[i], text);
        refused("{\"v\":1,\"kind\":\"revoke\",\"path\":[\"/a\"]}",
                "request: .path: expected a string");
        refused("{\"v\":1,\"kind\":\"revoke\",\"path\":null}", "request: .path: expected a string");
}

static void refused_why(const char *why, const char *msg)
{
        refused_as(msg, EGRESS_WHY, why);
}

Test(relay_msg, refuses_a_bad_why_or_text)
{
        const char *bounds = "request: .why: expected text of 1 to 1024 bytes";
        const char *text = "request: .why: expected text in UTF-8 without control characters";
        refused_why("", bounds);
        char *w = repeat('w', RELAY_WHY_MAX + 1);
        refused_why(w, bounds);
        w[RELAY_WHY_MAX] = '\0';
        parsed_as(EGRESS_WHY, w);
        free(w);
        const char *controls[] = {"\\u001b[31m",
                                  "a\\nb",
                                  "a\\rb",
                                  "a\\tb",
                                  "\\u007f",
                                  "\\u0085",
                                  "\xc2\x9b"
                                  "2J",
                                  "\\u0001"};
        for (size_t i = 0; i < sizeof(controls) / sizeof(controls[0]); i++)
                refused_why(controls[i], text);
        refused("{\"v\":1,\"kind\":\"egress\",\"rule\":\"a\",\"why\":5}",
                "request: .why: expected a string");
        refused("{\"v\":1,\"kind\":\"note\",\"text\":\"\"}",
                "request: .text: expected text of 1 to 4096 bytes");
        refused("{\"v\":1,\"kind\":\"note\",\"text\":\"a\\u001bb\"}",
                "request: .text: expected text in UTF-8 without control characters");
        refused("{\"v\":1,\"kind\":\"note\",\"text\":\"a\\u0085\"}",
                "request: .text: expected text in UTF-8 without control characters");
        char *t = repeat('t', RELAY_NOTE_MAX + 1);
        refused_as("request: .text: expected text of 1 to 4096 bytes",
                   "{\"v\":1,\"kind\":\"note\",\"text\":\"%s\"}", t);
        free(t);
}

Test(relay_msg, refuses_a_bad_mode)
{
        const char *want = "request: .mode: expected \"ro\" or \"rw\"";
        const char *modes[] = {"\"RW\"", "\"w\"", "\"\"", "1", "true", "null", "[\"rw\"]"};
        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
                refused_as(want,
                           "{\"v\":1,\"kind\":\"grant\",\"path\":\"/a\",\"mode\":%s,\"why\":\"w\"}",
                           modes[i]);
}

Test(relay_msg, refuses_a_bad_port)
{
        const char *want = "request: .port: expected an integer from 1 to 65535";
        const char *ports[] = {
            "0", "65536", "-1", "80.0", "8e1", "\"80\"", "true", "null", "99999999999999999999999"};
        for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
                refused_as(want, "{\"v\":1,\"kind\":\"ingress\",\"port\":%s,\"why\":\"w\"}",
                           ports[i]);
}

Test(relay_msg, refuses_a_bad_rule)
{
        const char *want = "request: .rule: expected an egress rule of 1 to 512 printable ASCII "
                           "characters, no space";
        const char *rules[] = {"", "a b", "a\\tb", "a\\u0001b", "a\\u007f", "caf\xc3\xa9.fr"};
        for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
                refused_as(want, EGRESS_RULE, rules[i]);
        char *r = repeat('r', RELAY_RULE_MAX + 1);
        refused_as(want, EGRESS_RULE, r);
        free(r);
}

/* yajl's tree keeps every member: which one a reader would see must not
 * matter, so none is given twice. */
Test(relay_msg, refuses_a_member_given_twice)
{
        refused("{\"v\":1,\"v\":1,\"kind\":\"status\"}", "request: .v: given twice");
        refused("{\"v\":1,\"kind\":\"status\",\"kind\":\"grant\"}", "request: .kind: given twice");
        refused("{\"v\":1,\"kind\":\"grant\",\"path\":\"/a\",\"why\":\"a\",\"path\":\"/b\"}",
                "request: .path: given twice");
        refused("{\"v\":1,\"kind\":\"note\",\"text\":\"a\",\"text\":\"a\"}",
                "request: .text: given twice");
}

Test(relay_msg, refuses_a_line_too_long)
{
        const char *head = "{\"v\":1,\"kind\":\"status\"}";
        char *line = repeat(' ', RELAY_LINE_MAX);
        memcpy(line, head, strlen(head));
        refused_n(line, RELAY_LINE_MAX, -EINVAL, "request: longer than 65536 bytes");
        struct relay_request q;
        struct umw_error *err = NULL;
        cr_assert_eq(relay_request_parse(line, RELAY_LINE_MAX - 1, &q, &err), 0);
        cr_assert_eq(q.kind, RELAY_STATUS);
        free(line);
}

/* A NUL would end what yajl reads, \u0000 a string in its tree, and it
 * would read half a surrogate pair as some other character. */
Test(relay_msg, refuses_a_nul)
{
        refused_n("{\"v\":1,\"kind\":\"status\"}\0{", 25, -EINVAL, "request: a NUL byte");
        refused("{\"v\":1,\"kind\":\"note\",\"text\":\"a\\u0000b\"}", "request: a \\u0000 escape");
        refused("{\"v\":1,\"kind\":\"status\",\"x\\u0000\":1}", "request: a \\u0000 escape");
        parsed("{\"v\":1,\"kind\":\"note\",\"text\":\"a\\\\u0000b\"}");
        const char *half = "request: a \\u escape of half a surrogate pair";
        refused("{\"v\":1,\"kind\":\"note\",\"text\":\"\\ud800x\"}", half);
        refused("{\"v\":1,\"kind\":\"note\",\"text\":\"\\ud800\\u0041\"}", half);
        refused("{\"v\":1,\"kind\":\"note\",\"text\":\"\\udc00\"}", half);
        refused("{\"v\":1,\"kind\":\"note\",\"text\":\"\\ud800\"}", half);
        refused("{\"v\":1,\"kind\":\"note\",\"text\":\"\\udbff\\udbff\"}", half);
        struct relay_request q =
            parsed("{\"v\":1,\"kind\":\"note\",\"text\":\"\\uD83D\\ude00\\\\ud800\"}");
        cr_assert_str_eq(q.text, "\xf0\x9f\x98\x80\\ud800");
}

Test(relay_msg, a_refusal_leaves_an_empty_record)
{
        struct relay_request q, zero;
        memset(&zero, 0, sizeof(zero));
        struct umw_error *err = NULL;
        const char *line = "{\"v\":1,\"kind\":\"grant\",\"path\":\"/a\",\"why\":\"a\",\"mode\":1}";
        cr_assert_lt(relay_request_parse(line, strlen(line), &q, &err), 0);
        cr_assert_eq(memcmp(&q, &zero, sizeof(q)), 0);
        snprintf(q.text, sizeof(q.text), "%s", err->msg);
        umw_error_free(err);
        err = NULL;
        cr_assert_eq(relay_request_check(&q, &err), 0, "%s", err ? err->msg : "");
}

/* ------------------------------------------------------------ records */

static void record_refused(const struct relay_request *q, const char *msg)
{
        struct umw_error *err = NULL;
        int r = relay_request_check(q, &err);
        one_line(r, -EINVAL, err, msg ? msg : "", msg);
        umw_error_free(err);
        char *line = NULL;
        size_t len = 0;
        err = NULL;
        cr_assert_eq(relay_request_format(q, &line, &len, &err), -EINVAL);
        cr_assert_null(line);
        umw_error_free(err);
}

Test(relay_msg, check_refuses_a_kind_out_of_range)
{
        struct relay_request q = {.kind = RELAY_ACTIONS + 1};
        record_refused(&q, "request record: .kind: expected a kind from 0 to 8");
        q.kind = UINT32_MAX;
        record_refused(&q, "request record: .kind: expected a kind from 0 to 8");
}

Test(relay_msg, check_refuses_an_unterminated_string)
{
        struct relay_request q = {.kind = RELAY_GRANT};
        memset(q.path, 'a', sizeof(q.path));
        q.path[0] = '/';
        memcpy(q.why, "w", 2);
        record_refused(&q, "request record: .path: not terminated inside its 4096 bytes");
        struct relay_request s = {.kind = RELAY_STATUS};
        memset(s.text, 't', sizeof(s.text));
        record_refused(&s, "request record: .text: not terminated inside its 4097 bytes");
        struct relay_request e = {.kind = RELAY_EGRESS};
        memset(e.rule, 'r', sizeof(e.rule));
        memcpy(e.why, "w", 2);
        record_refused(&e, "request record: .rule: not terminated inside its 513 bytes");
}

Test(relay_msg, check_refuses_a_member_the_kind_does_not_take)
{
        struct relay_request q = {.kind = RELAY_STATUS};
        memcpy(q.why, "w", 2);
        record_refused(&q, "request record: .why: set, but a status request does not take it");
        struct relay_request n = {.kind = RELAY_NOTE, .port = 80};
        memcpy(n.text, "t", 2);
        record_refused(&n, "request record: .port: expected 0");
        struct relay_request e = {.kind = RELAY_EGRESS, .rw = 1};
        memcpy(e.rule, "r", 2);
        memcpy(e.why, "w", 2);
        record_refused(&e, "request record: .rw: expected 0");
        struct relay_request r = {.kind = RELAY_REVOKE};
        memcpy(r.path, "/a", 3);
        memcpy(r.rule, "x", 2);
        record_refused(&r, "request record: .rule: set, but a revoke request does not take it");
        struct relay_request b = {.kind = RELAY_BAD};
        memcpy(b.text, "bad", 4);
        memcpy(b.path, "/a", 3);
        record_refused(&b, "request record: .path: set, but a refused request does not take it");
}

Test(relay_msg, check_refuses_members_out_of_bounds)
{
        struct relay_request g = {.kind = RELAY_GRANT, .rw = 2};
        memcpy(g.path, "/a", 3);
        memcpy(g.why, "w", 2);
        record_refused(&g, "request record: .rw: expected 0 or 1");
        g.rw = 0;
        memcpy(g.path, "/a/../b", 8);
        record_refused(&g, NULL);
        memcpy(g.path, "/a", 3);
        g.why[0] = '\0';
        record_refused(&g, "request record: .why: expected text of 1 to 1024 bytes");
        memcpy(g.why, "a\x1b", 3);
        record_refused(&g, "request record: .why: expected text in UTF-8 without control "
                           "characters");
        struct relay_request i = {.kind = RELAY_INGRESS};
        memcpy(i.why, "w", 2);
        record_refused(&i, "request record: .port: expected a port from 1 to 65535");
        i.port = 65536;
        record_refused(&i, "request record: .port: expected a port from 1 to 65535");
        struct relay_request e = {.kind = RELAY_EGRESS};
        memcpy(e.rule, "a b", 4);
        memcpy(e.why, "w", 2);
        record_refused(&e, NULL);
        struct relay_request n = {.kind = RELAY_NOTE};
        record_refused(&n, "request record: .text: expected text of 1 to 4096 bytes");
        struct relay_request v = {.kind = RELAY_REVOKE};
        memcpy(v.path, "/\xc0\xaf", 4); /* an overlong '/' */
        record_refused(&v, NULL);
}

Test(relay_msg, check_takes_a_refusal_of_one_line)
{
        struct relay_request b = {.kind = RELAY_BAD};
        struct umw_error *err = NULL;
        record_refused(&b, "request record: .text: expected text of 1 to 4096 bytes");
        memcpy(b.text, "request: bad\nline", 18);
        record_refused(&b, NULL);
        memcpy(b.text, "request: .v: expected", 22);
        cr_assert_eq(relay_request_check(&b, &err), 0);
        char *line = NULL;
        size_t len = 0;
        cr_assert_eq(relay_request_format(&b, &line, &len, &err), -EINVAL);
        cr_assert_str_eq(err->msg, "request: a refused request has no line");
        umw_error_free(err);
}

Test(relay_msg, check_takes_a_revoke_without_why)
{
        struct relay_request r = {.kind = RELAY_REVOKE};
        struct umw_error *err = NULL;
        memcpy(r.path, "/a", 3);
        cr_assert_eq(relay_request_check(&r, &err), 0);
        round_trip(&r, "{\"v\":1,\"kind\":\"revoke\",\"path\":\"/a\"}\n");
}

Test(relay_msg, names)
{
        cr_assert_str_eq(relay_kind_name(RELAY_GRANT), "grant");
        cr_assert_str_eq(relay_kind_name(RELAY_STATUS), "status");
        cr_assert_null(relay_kind_name(RELAY_BAD));
        cr_assert_null(relay_kind_name((enum relay_kind)(RELAY_ACTIONS + 1)));
        cr_assert_str_eq(relay_status_name(RELAY_PENDING), "pending");
        cr_assert_str_eq(relay_status_name(RELAY_REFUSED), "refused");
        cr_assert_str_eq(relay_status_name(RELAY_ERROR), "error");
        cr_assert_null(relay_status_name((enum relay_status)(RELAY_ERROR + 1)));
}

/* ------------------------------------------------------------ answers */

static struct relay_answer answer(const char *line)
{
        struct relay_answer a;
        struct umw_error *err = NULL;
        cr_assert_eq(relay_answer_parse(line, strlen(line), &a, &err), 0, "%s: %s", line,
                     err ? err->msg : "");
        return a;
}

static void answer_refused(const char *line, int want, const char *msg)
{
        struct relay_answer a;
        struct umw_error *err = NULL;
        int r = relay_answer_parse(line, strlen(line), &a, &err);
        one_line(r, want, err, line, msg);
        umw_error_free(err);
}

Test(relay_msg, answers)
{
        struct relay_answer a = answer("{\"v\":1,\"id\":\"7\",\"status\":\"pending\"}");
        cr_assert_eq(a.status, RELAY_PENDING);
        cr_assert_str_eq(a.id, "7");
        cr_assert_str_eq(a.reason, "");
        a = answer("{\"v\":1,\"id\":\"18446744073709551615\",\"status\":\"granted\","
                   "\"reason\":\"ok\\nby \\u001b alice\"}");
        cr_assert_eq(a.status, RELAY_GRANTED);
        cr_assert_str_eq(a.id, "18446744073709551615");
        cr_assert_str_eq(a.reason, "ok\nby \x1b alice");
        a = answer("{\"v\":1,\"status\":\"ok\",\"grants\":[{\"path\":\"/a\"}],\"egress\":[],"
                   "\"ports\":[8080],\"grants\":null}");
        cr_assert_eq(a.status, RELAY_OK);
        cr_assert_str_eq(a.id, "");
        a = answer("{\"v\":1,\"status\":\"error\",\"reason\":\"\"}");
        cr_assert_eq(a.status, RELAY_ERROR);
        const char *names[] = {"pending", "ok", "granted", "denied", "timeout", "refused", "error"};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                char *line = line_of("{\"v\":1,\"status\":\"%s\"}", names[i]);
                cr_assert_eq(answer(line).status, (enum relay_status)i);
                free(line);
        }
}

Test(relay_msg, bad_answers)
{
        answer_refused("[]", -EINVAL, "answer: .: expected an object");
        answer_refused("{\"status\":\"ok\"}", -EINVAL,
                       "answer: .v: expected the protocol version, an integer");
        answer_refused("{\"v\":3,\"status\":\"ok\"}", -EPROTONOSUPPORT,
                       "answer: unsupported protocol version 3 (this relay speaks 1)");
        const char *status =
            "answer: .status: expected one of pending, ok, granted, denied, timeout, refused, "
            "error";
        answer_refused("{\"v\":1}", -EINVAL, status);
        answer_refused("{\"v\":1,\"status\":\"maybe\"}", -EINVAL, status);
        answer_refused("{\"v\":1,\"status\":0}", -EINVAL, status);
        const char *id = "answer: .id: expected a request id of 1 to 20 decimal digits";
        answer_refused("{\"v\":1,\"status\":\"ok\",\"id\":\"\"}", -EINVAL, id);
        answer_refused("{\"v\":1,\"status\":\"ok\",\"id\":\"7a\"}", -EINVAL, id);
        answer_refused("{\"v\":1,\"status\":\"ok\",\"id\":\"-7\"}", -EINVAL, id);
        answer_refused("{\"v\":1,\"status\":\"ok\",\"id\":\"123456789012345678901\"}", -EINVAL, id);
        answer_refused("{\"v\":1,\"status\":\"ok\",\"id\":7}", -EINVAL,
                       "answer: .id: expected a string");
        const char *reason = "answer: .reason: expected text in UTF-8 of at most 1024 bytes";
        answer_refused("{\"v\":1,\"status\":\"ok\",\"reason\":\"\xed\xa0\x80\"}", -EINVAL, reason);
        char *r = repeat('r', RELAY_WHY_MAX + 1);
        char *line = line_of("{\"v\":1,\"status\":\"denied\",\"reason\":\"%s\"}", r);
        answer_refused(line, -EINVAL, reason);
        free(line);
        free(r);
        answer_refused("{\"v\":1,\"status\":\"ok\",\"status\":\"denied\"}", -EINVAL,
                       "answer: .status: given twice");
}

/* ------------------------------------------------------------ control */

static struct relay_control control(const char *line)
{
        struct relay_control c;
        struct umw_error *err = NULL;
        cr_assert_eq(relay_control_parse(line, strlen(line), &c, &err), 0, "%s: %s", line,
                     err ? err->msg : "");
        return c;
}

static void control_refused(const char *line, const char *msg)
{
        struct relay_control c;
        struct umw_error *err = NULL;
        int r = relay_control_parse(line, strlen(line), &c, &err);
        one_line(r, -EINVAL, err, line, msg);
        umw_error_free(err);
}

Test(relay_msg, control_messages)
{
        cr_assert_eq(control("{\"v\":1,\"op\":\"pending\"}").op, RELAY_OP_PENDING);
        cr_assert_eq(control("{\"v\":1,\"op\":\"watch\"}").op, RELAY_OP_WATCH);
        cr_assert_eq(control("{\"v\":1,\"op\":\"adopt\"}").op, RELAY_OP_ADOPT);
        struct relay_control c =
            control("{\"v\":1,\"op\":\"approve\",\"id\":\"7\",\"hash\":\"" HASH "\"}");
        cr_assert_eq(c.op, RELAY_OP_APPROVE);
        cr_assert_str_eq(c.id, "7");
        cr_assert_str_eq(c.hash, HASH);
        cr_assert_not(c.remember);
        c = control("{\"v\":1,\"op\":\"approve\",\"id\":\"007\",\"hash\":\"" HASH
                    "\",\"remember\":true}");
        cr_assert(c.remember);
        cr_assert_str_eq(c.id, "007");
        c = control("{\"v\":1,\"op\":\"deny\",\"id\":\"12\"}");
        cr_assert_eq(c.op, RELAY_OP_DENY);
        cr_assert_str_eq(c.why, "");
        c = control("{\"v\":1,\"op\":\"deny\",\"id\":\"12\",\"why\":\"not today\"}");
        cr_assert_str_eq(c.why, "not today");
}

Test(relay_msg, bad_control_messages)
{
        control_refused("{\"v\":1,\"op\":\"approve\",\"id\":\"7\"}",
                        "control: .hash: required in an approve message");
        control_refused("{\"v\":1,\"op\":\"approve\",\"hash\":\"" HASH "\"}",
                        "control: .id: required in an approve message");
        control_refused("{\"v\":1,\"op\":\"deny\"}", "control: .id: required in a deny message");
        const char *hash = "control: .hash: expected 64 lowercase hexadecimal digits";
        const char *hashes[] = {"0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
                                "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",
                                "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0",
                                "g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                                ""};
        for (size_t i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++) {
                char *line =
                    line_of("{\"v\":1,\"op\":\"approve\",\"id\":\"7\",\"hash\":\"%s\"}", hashes[i]);
                control_refused(line, hash);
                free(line);
        }
        const char *id = "control: .id: expected a request id of 1 to 20 decimal digits";
        const char *ids[] = {"", "7a", " 7", "+7", "1.5", "123456789012345678901", "\\u0661"};
        for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
                char *line = line_of("{\"v\":1,\"op\":\"deny\",\"id\":\"%s\"}", ids[i]);
                control_refused(line, id);
                free(line);
        }
        control_refused("{\"v\":1,\"op\":\"deny\",\"id\":\"1\",\"hash\":\"" HASH "\"}",
                        "control: .hash: not a member of a deny message");
        control_refused("{\"v\":1,\"op\":\"pending\",\"id\":\"1\"}",
                        "control: .id: not a member of a pending message");
        control_refused("{\"v\":1,\"op\":\"adopt\",\"x\":1}",
                        "control: .x: not a member of an adopt message");
        control_refused("{\"v\":1,\"op\":\"approve\",\"id\":\"7\",\"hash\":\"" HASH
                        "\",\"remember\":\"yes\"}",
                        "control: .remember: expected true or false");
        control_refused("{\"v\":1,\"op\":\"deny\",\"id\":\"7\",\"why\":\"a\\u009bb\"}",
                        "control: .why: expected text in UTF-8 without control characters");
        control_refused("{\"v\":1,\"op\":\"deny\",\"id\":\"7\",\"why\":\"\"}",
                        "control: .why: expected text of 1 to 1024 bytes");
        control_refused(
            "{\"v\":1,\"op\":\"grant\"}",
            "control: .op: expected one of pending, watch, adopt, approve, deny, actions");
        control_refused("{\"v\":1,\"op\":\"deny\",\"id\":\"1\",\"id\":\"2\"}",
                        "control: .id: given twice");
        struct relay_control c;
        struct umw_error *err = NULL;
        cr_assert_eq(relay_control_parse("{\"v\":2,\"op\":\"watch\"}", 20, &c, &err),
                     -EPROTONOSUPPORT);
        umw_error_free(err);
}

Test(relay_msg, an_action_with_its_parameters)
{
        struct relay_request q = parsed("{\"v\":1,\"kind\":\"action\",\"name\":\"site-check\","
                                        "\"params\":{\"site\":\"a;b $(x)\",\"mode\":\"fast\"},"
                                        "\"why\":\"check\"}");
        cr_expect_eq(q.kind, RELAY_ACTION);
        cr_expect_str_eq(q.action, "site-check");
        cr_assert_eq(q.n_params, 2);
        cr_expect_str_eq(q.params[0].name, "site");
        cr_expect_str_eq(q.params[0].value, "a;b $(x)");
        cr_expect_str_eq(q.params[1].name, "mode");
        q = parsed("{\"v\":1,\"kind\":\"actions\"}");
        cr_expect_eq(q.kind, RELAY_ACTIONS);
}

Test(relay_msg, refuses_bad_action_requests)
{
#define ACTION "{\"v\":1,\"kind\":\"action\",\"why\":\"w\","
        const char *name = "request: .name: expected an action name of 1 to 64 of [a-z0-9._-]";
        refused(ACTION "\"name\":\"Nginx\"}", name);
        refused(ACTION "\"name\":\"-x\"}", name);
        refused(ACTION "\"params\":{}}", "request: .name: required in an action request");
        refused(ACTION "\"name\":\"a\",\"params\":[]}", "request: .params: expected an object");
        refused(ACTION "\"name\":\"a\",\"params\":{\"S\":\"v\"}}",
                "request: .params.S: expected a parameter name of 1 to 32 of [a-z0-9_]");
        refused(ACTION "\"name\":\"a\",\"params\":{\"s\":1}}",
                "request: .params.s: expected a string");
        refused(ACTION "\"name\":\"a\",\"params\":{\"s\":\"a\\nb\"}}",
                "request: .params.s: expected text in UTF-8 without control characters");
        refused(ACTION "\"name\":\"a\",\"params\":{\"s\":\"a\",\"s\":\"b\"}}",
                "request: .params: a parameter given twice");
        refused(ACTION "\"name\":\"a\",\"params\":{\"a\":\"1\",\"b\":\"1\",\"c\":\"1\",\"d\":\"1\","
                       "\"e\":\"1\",\"f\":\"1\",\"g\":\"1\",\"h\":\"1\",\"i\":\"1\"}}",
                "request: .params: expected at most 8 parameters");
        refused("{\"v\":1,\"kind\":\"note\",\"text\":\"t\",\"params\":{}}",
                "request: .params: not a member of a note request");
#undef ACTION
}

Test(relay_msg, check_refuses_parameters_out_of_place)
{
        struct relay_request q = {.kind = RELAY_NOTE, .n_params = 1};
        snprintf(q.text, sizeof(q.text), "t");
        snprintf(q.params[0].name, sizeof(q.params[0].name), "a");
        snprintf(q.params[0].value, sizeof(q.params[0].value), "v");
        record_refused(&q, "request record: .params: expected at most 8 parameters, for an "
                           "action only");
        q = (struct relay_request){.kind = RELAY_ACTION, .n_params = 2};
        snprintf(q.action, sizeof(q.action), "a");
        snprintf(q.why, sizeof(q.why), "w");
        for (int i = 0; i < 2; i++) {
                snprintf(q.params[i].name, sizeof(q.params[i].name), "same");
                snprintf(q.params[i].value, sizeof(q.params[i].value), "v");
        }
        record_refused(&q, "request record: .params: a parameter given twice");
        memset(q.params[1].value, 'x', sizeof(q.params[1].value));
        record_refused(&q, "request record: .params: parameter 1 is not terminated");
}
