/* The sandbox face as a library: a project's names, its audit log, and the
 * egress rules file it writes read back by the gateway's own reader. */
#include "face/sandbox_int.h"
#include "netns/gateway_policy.h"
#include "policy/egress_rules.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[PATH_MAX];

static void make_top(void)
{
        snprintf(top, sizeof(top), "/tmp/umwelt-face-XXXXXX");
        cr_assert_not_null(mkdtemp(top));
}

static void remove_top(void)
{
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
        cr_expect_eq(system(cmd), 0);
}

TestSuite(face, .init = make_top, .fini = remove_top);

static char *path_in(const char *rel)
{
        char *p = NULL;
        cr_assert_geq(asprintf(&p, "%s/%s", top, rel), 0);
        return p;
}

static void expect_match(const char *s, const char *pattern)
{
        regex_t re;
        cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
        cr_expect_eq(regexec(&re, s, 0, NULL, 0), 0, "'%s' does not match /%s/", s, pattern);
        regfree(&re);
}

Test(face, locate_names_a_project_by_its_real_path)
{
        _cleanup_free_ char *a = path_in("one/src"), *b = path_in("two/src");
        _cleanup_free_ char *one = path_in("one"), *two = path_in("two"), *link = path_in("l");
        cr_assert_eq(mkdir(one, 0700) | mkdir(a, 0700) | mkdir(two, 0700) | mkdir(b, 0700), 0);
        cr_assert_eq(symlink(a, link), 0);

        struct sandbox s1 = SANDBOX_INIT, s2 = SANDBOX_INIT, s3 = SANDBOX_INIT;
        struct umw_error *err = NULL;
        cr_assert_eq(sandbox_locate(&s1, a, &err), 0);
        cr_assert_eq(sandbox_locate(&s2, b, &err), 0);
        cr_assert_eq(sandbox_locate(&s3, link, &err), 0);
        _cleanup_free_ char *real = realpath(a, NULL);
        cr_expect_str_eq(s1.project.workspace, real);
        expect_match(s1.project.id, "^src-[0-9a-f]{8}$");
        cr_expect_str_neq(s1.project.id, s2.project.id, "two projects called src differ");
        cr_expect_str_eq(s3.project.id, s1.project.id, "a symlink names the project it points at");
        char want[64];
        snprintf(want, sizeof(want), "umwelt-%s", s1.project.id);
        cr_expect_str_eq(s1.project.container_id, want);
        sandbox_release(&s1);
        sandbox_release(&s2);
        sandbox_release(&s3);
}

Test(face, locate_refuses_what_is_not_a_directory)
{
        _cleanup_free_ char *file = path_in("file"), *gone = path_in("gone");
        int fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        cr_assert_geq(fd, 0);
        close(fd);
        const char *bad[] = {file, gone};
        for (size_t i = 0; i < 2; i++) {
                struct sandbox s = SANDBOX_INIT;
                struct umw_error *err = NULL;
                cr_expect_lt(sandbox_locate(&s, bad[i], &err), 0);
                cr_assert_not_null(err);
                cr_expect_eq(err->kind, UMW_EXIT_USAGE);
                cr_expect(strstr(err->msg, "expected a project directory") != NULL, "%s", err->msg);
                umw_error_free(err);
                sandbox_release(&s);
        }
}

Test(face, project_names_are_made_safe)
{
        _cleanup_free_ char *odd = path_in("a b;$(x)");
        cr_assert_eq(mkdir(odd, 0700), 0);
        struct sandbox s = SANDBOX_INIT;
        struct umw_error *err = NULL;
        cr_assert_eq(sandbox_locate(&s, odd, &err), 0);
        expect_match(s.project.id, "^a_b___x_-[0-9a-f]{8}$");
        sandbox_release(&s);
}

Test(face, audit_log_lands_in_the_state_directory)
{
        _cleanup_free_ char *ws = path_in("ws"), *state = path_in("state");
        cr_assert_eq(mkdir(ws, 0700), 0);
        cr_assert_eq(setenv("XDG_STATE_HOME", state, 1), 0);
        struct sandbox s = SANDBOX_INIT;
        struct umw_error *err = NULL;
        cr_assert_eq(sandbox_locate(&s, ws, &err), 0);
        cr_assert_eq(sandbox_open_audit(&s, &err), 0, "%s", err ? err->msg : "");
        const char *kv[] = {"id", s.project.container_id, NULL};
        sandbox_audit(&s, "unit", kv);
        char want[PATH_MAX];
        snprintf(want, sizeof(want), "%s/umwelt/%s/audit.jsonl", state, s.project.id);
        cr_expect_str_eq(s.project.audit_file, want);
        _cleanup_free_ char *text = NULL;
        cr_assert_eq(umw_read_file_at(AT_FDCWD, want, 1 << 16, &text, NULL, &err), 0);
        cr_expect(strstr(text, "\"event\":\"unit\"") != NULL, "%s", text);
        cr_expect(strstr(text, s.project.container_id) != NULL, "%s", text);
        _cleanup_free_ char *egress = sandbox_egress_log(&s);
        snprintf(want, sizeof(want), "%s/umwelt/%s/egress.jsonl", state, s.project.id);
        cr_expect_str_eq(egress, want, "the egress log sits beside the audit log");
        struct stat st;
        snprintf(want, sizeof(want), "%s/umwelt/%s", state, s.project.id);
        cr_assert_eq(stat(want, &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0700, "the project's state directory is private");
        sandbox_release(&s);
}

Test(face, not_running_says_how_to_start)
{
        struct sandbox s = SANDBOX_INIT;
        s.project.workspace = strdup("/w");
        struct umw_error *err = NULL;
        cr_expect_lt(sandbox_not_running(&s, &err), 0);
        cr_expect_eq(err->kind, UMW_EXIT_STATE);
        cr_expect_str_eq(err->msg, "no sandbox is running for /w: start it with umwelt-run "
                                   "sandbox up -p /w");
        umw_error_free(err);
        sandbox_release(&s);
}

/* What the face writes for the gateway, read by the gateway's own reader. */
static void write_and_load(bool allow, struct egress_rules *rules)
{
        char *allow_list[] = {"example.com", "api.example.org/repos/**", NULL};
        char *deny_list[] = {"bad.example.com", NULL};
        struct sandbox s = SANDBOX_INIT;
        s.bundle = strdup(top);
        s.keep_bundle = true;
        s.project.container_id = strdup("umwelt-unit");
        s.view.policy.egress_allow = allow_list;
        s.view.policy.egress_deny = deny_list;
        s.view.policy.egress_allowed = s.view.policy.egress_enabled = true;
        struct umw_error *err = NULL;
        cr_assert_eq(sandbox_egress_policy_write(&s, allow, false, &err), 0, "%s",
                     err ? err->msg : "");
        s.view.policy.egress_allow = s.view.policy.egress_deny = NULL;
        sandbox_release(&s);

        _cleanup_free_ char *file = path_in(EGRESS_POLICY_FILE);
        struct stat st;
        cr_assert_eq(stat(file, &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0600);
        const char *files[] = {file};
        cr_assert_eq(gateway_policy_load(files, 1, rules, &err), 0, "%s", err ? err->msg : "");
}

Test(face, egress_rules_file_is_what_the_gateway_reads)
{
        struct egress_rules rules;
        write_and_load(true, &rules);
        cr_assert_eq(rules.n_allow, 2);
        cr_expect_str_eq(rules.allow[0].text, "example.com");
        cr_expect_str_eq(rules.allow[1].text, "api.example.org/repos/**");
        cr_assert_eq(rules.n_deny, 1);
        cr_expect_str_eq(rules.deny[0].text, "bad.example.com");
        egress_rules_free(&rules);
}

Test(face, egress_closed_writes_no_rule)
{
        struct egress_rules rules;
        write_and_load(false, &rules);
        cr_expect_eq(rules.n_allow, 0);
        cr_expect_eq(rules.n_deny, 0);
        egress_rules_free(&rules);
}

/* The relay's record of live egress rules, as the face reads it back for
 * every writer of a gateway's rules. */
static int read_record(const char *text, char ***rules, struct umw_error **err)
{
        _cleanup_close_ int dir = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dir, 0);
        if (text)
                cr_assert_eq(
                    umw_write_file_atomic(dir, RELAY_EGRESS_FILE, text, strlen(text), 0600, err),
                    0);
        return sandbox_relay_egress_at(dir, rules, err);
}

Test(face, live_egress_record_reads_back_rule_by_rule)
{
        char **rules = NULL;
        struct umw_error *err = NULL;
        cr_assert_eq(read_record("pypi.org\nfiles.pythonhosted.org:443\n", &rules, &err), 0, "%s",
                     err ? err->msg : "");
        cr_assert_not_null(rules);
        cr_expect_str_eq(rules[0], "pypi.org");
        cr_expect_str_eq(rules[1], "files.pythonhosted.org:443");
        cr_expect_null(rules[2]);
        grants_strv_free(rules);
}

Test(face, live_egress_record_absent_is_no_rule)
{
        char **rules = (char **)1;
        struct umw_error *err = NULL;
        cr_assert_eq(read_record(NULL, &rules, &err), 0, "%s", err ? err->msg : "");
        cr_expect_null(rules);
}

Test(face, live_egress_record_with_a_bad_line_is_an_error)
{
        const char *bad[] = {"pypi.org\nhttp://x\n", "10.0.0.0/8\n"};
        for (size_t i = 0; i < 2; i++) {
                char **rules = NULL;
                struct umw_error *err = NULL;
                cr_expect_lt(read_record(bad[i], &rules, &err), 0, "%s", bad[i]);
                cr_expect_null(rules);
                cr_expect(err && strstr(err->msg, "is not a rule"), "%s", err ? err->msg : "");
                umw_error_free(err);
        }
}

Test(face, live_egress_record_is_bounded)
{
        char text[SANDBOX_LIVE_EGRESS_MAX * 16 + 32] = "";
        for (int i = 0; i <= SANDBOX_LIVE_EGRESS_MAX; i++)
                snprintf(text + strlen(text), 16, "h%d.example\n", i);
        char **rules = NULL;
        struct umw_error *err = NULL;
        cr_expect_lt(read_record(text, &rules, &err), 0);
        cr_expect(err && strstr(err->msg, "at most"), "%s", err ? err->msg : "");
        umw_error_free(err);
}
