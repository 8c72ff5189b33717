#include "policy/host_actions.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <string.h>

static const char *const table =
    "[[action]]\n"
    "name = \"nginx-test\"\n"
    "description = \"check the nginx configuration\"\n"
    "argv = [\"/usr/sbin/nginx\", \"-t\"]\n"
    "timeout = \"10s\"\n"
    "\n"
    "[[action]]\n"
    "name = \"site-check\"\n"
    "argv = [\"/usr/local/bin/check\", \"--site={site}\", \"{site}\", \"{mode}\"]\n"
    "users = [\"alice\"]\n"
    "projects = [\"/home/alice/shop\"]\n"
    "ask = false\n"
    "cwd = \"/srv\"\n"
    "output_limit = 100\n"
    "concurrency = 2\n"
    "timeout = \"250ms\"\n"
    "[action.params]\n"
    "site = [\"shop.conf\", \"blog.conf\", \"a;b $(x) `y`\"]\n"
    "mode = [\"fast\"]\n"
    "[action.env]\n"
    "LANG = \"C\"\n"
    "FOO = \"bar\"\n";

static void parse_ok(const char *text, struct host_actions *t)
{
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(host_actions_parse(text, strlen(text), "h.toml", t, &err), 0, "%s",
                     err ? err->msg : "");
}

static void expect_refused(const char *text, const char *where, const char *what)
{
        struct host_actions t;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(host_actions_parse(text, strlen(text), "h.toml", &t, &err), 0, "%s", text);
        cr_expect_eq(err->kind, UMW_EXIT_CONFIG);
        cr_expect(strstr(err->msg, where) && strstr(err->msg, what), "%s: got '%s'", text,
                  err->msg);
        cr_expect_null(t.items);
}

Test(host_actions, a_table_reads_with_its_defaults)
{
        struct host_actions t;
        parse_ok(table, &t);
        cr_assert_eq(t.n, 2);
        const struct host_action *a = host_actions_find(&t, "nginx-test");
        cr_assert_not_null(a);
        cr_expect_str_eq(a->argv[0], "/usr/sbin/nginx");
        cr_expect_str_eq(a->argv[1], "-t");
        cr_expect_null(a->argv[2]);
        cr_expect_eq(a->timeout_ms, 10000);
        cr_expect(a->ask, "asked unless ask = false");
        cr_expect_str_eq(a->cwd, "/");
        cr_expect_eq(a->output_limit, HOST_ACTION_OUTPUT_DEF);
        cr_expect_eq(a->concurrency, 1);
        cr_expect_str_eq(a->env[0],
                         "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        cr_expect_str_eq(a->env[1], "LANG=C.UTF-8");
        cr_expect_null(a->env[2]);
        cr_expect(host_action_offered(a, "anyone", "/any/project"));

        const struct host_action *b = host_actions_find(&t, "site-check");
        cr_assert_not_null(b);
        cr_expect_not(b->ask);
        cr_expect_eq(b->timeout_ms, 250);
        cr_expect_eq(b->output_limit, 100);
        cr_expect_eq(b->concurrency, 2);
        cr_expect_str_eq(b->cwd, "/srv");
        cr_expect_str_eq(b->env[0], "LANG=C");
        cr_expect_str_eq(b->env[1], "FOO=bar");
        cr_expect(strncmp(b->env[2], "PATH=", 5) == 0 && !b->env[3], "PATH added, LANG kept");
        cr_expect(host_action_offered(b, "alice", "/home/alice/shop"));
        cr_expect_not(host_action_offered(b, "bob", "/home/alice/shop"));
        cr_expect_not(host_action_offered(b, "alice", "/home/alice/shop/sub"));
        cr_expect_not(host_action_offered(b, NULL, "/home/alice/shop"));
        cr_expect_null(host_actions_find(&t, "nginx"));
        host_actions_free(&t);
}

Test(host_actions, placeholders_take_only_listed_values_literally)
{
        struct host_actions t;
        parse_ok(table, &t);
        const struct host_action *b = host_actions_find(&t, "site-check");
        struct host_action_arg args[] = {{"site", "a;b $(x) `y`"}, {"mode", "fast"}};
        char **argv = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(host_action_argv(b, args, 2, &argv, &err), 0, "%s", err ? err->msg : "");
        cr_expect_str_eq(argv[0], "/usr/local/bin/check");
        cr_expect_str_eq(argv[1], "--site=a;b $(x) `y`");
        cr_expect_str_eq(argv[2], "a;b $(x) `y`");
        cr_expect_str_eq(argv[3], "fast");
        cr_expect_null(argv[4]);
        host_action_argv_free(argv);
        host_actions_free(&t);
}

Test(host_actions, arguments_outside_the_lists_are_refused)
{
        struct host_actions t;
        parse_ok(table, &t);
        const struct host_action *b = host_actions_find(&t, "site-check");
        const struct {
                struct host_action_arg args[3];
                size_t n;
                const char *what;
        } cases[] = {
            {{{"site", "shop.conf"}}, 1, "'mode' is required"},
            {{{"site", "shop.conf "}, {"mode", "fast"}}, 2, "not one of its values"},
            {{{"site", "shop.conf\n"}, {"mode", "fast"}}, 2, "not one of its values"},
            {{{"site", "Shop.conf"}, {"mode", "fast"}}, 2, "not one of its values"},
            {{{"site", "shop.conf"}, {"mode", "fast"}, {"site", "blog.conf"}}, 3, "given twice"},
            {{{"site", "shop.conf"}, {"mode", "fast"}, {"cmd", "x"}}, 3, "no parameter 'cmd'"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char **argv = NULL;
                struct umw_error *err = NULL;
                cr_expect_lt(host_action_argv(b, cases[i].args, cases[i].n, &argv, &err), 0);
                cr_expect_null(argv);
                cr_expect(err && strstr(err->msg, cases[i].what), "case %zu: %s", i,
                          err ? err->msg : "no error");
                umw_error_free(err);
        }
        host_actions_free(&t);
}

Test(host_actions, bad_tables_are_refused_where_they_go_wrong)
{
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"nginx\"]\n", "h.toml:3:8",
                       "absolute path");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\", 1]\n", "h.toml:3:15",
                       "expected a string");
        expect_refused("[[action]]\nname = \"a\"\nargv = [1]\n", "h.toml:3:9", "expected strings");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\", \"{site}\"]\n", "h.toml:3:8",
                       "not a parameter declared");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\", \"{site\"]\n[action.params]\n"
                       "site = [\"s\"]\n",
                       "h.toml:3:8", "not a parameter declared");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/{x}\"]\n", "h.toml:3:8",
                       "no placeholder");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\"]\n[[action]]\nname = \"a\"\n"
                       "argv = [\"/y\"]\n",
                       "h.toml:5:8", "defined twice");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\"]\nshell = true\n", "h.toml:4:1",
                       "shell");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\"]\n[action.params]\nsite = \"s\"\n",
                       "h.toml:5:8", "expected");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\"]\n[action.params]\nsite = []\n",
                       "h.toml:5:8", "1 to 64 strings");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\"]\ntimeout = \"10\"\n",
                       "h.toml:4:11", "duration");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\"]\ntimeout = \"61m\"\n",
                       "h.toml:4:11", "duration");
        expect_refused("[[action]]\nname = \"A b\"\nargv = [\"/x\"]\n", "h.toml:2:8",
                       "[a-z0-9._-]");
        expect_refused("[[action]]\nargv = [\"/x\"]\n", "h.toml:1:1", "expected a 'name'");
        expect_refused("[[action]]\nname = \"a\"\n", "h.toml:1:1", "expected an 'argv'");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\"]\noutput_limit = 40000\n",
                       "h.toml:4:16", "0 to 32768");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\"]\nprojects = [\"shop\"]\n",
                       "h.toml:4:12", "absolute path");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\"]\n[action.env]\n1X = \"v\"\n",
                       "h.toml:5:6", "variable name");
        expect_refused("[action]\nname = \"a\"\n", "h.toml:1:1", "expected an array");
        expect_refused("action = [1]\n", "h.toml:1:10", "[[action]]");
        expect_refused("[[action]]\nname = \"a\"\nargv = [\"/x\"\n", "h.toml", "array");
}

Test(host_actions, an_empty_file_is_no_action)
{
        struct host_actions t;
        parse_ok("# nothing offered\n", &t);
        cr_expect_eq(t.n, 0);
        host_actions_free(&t);
}
