/* mcp/install*.c: a harness's configuration edited in place (comments,
 * other servers and settings kept), install twice is install once, and
 * uninstall gives back the file byte for byte; bad files and symlinks are
 * refused with one line. */
#include "mcp/install.h"
#include "mcp/install_int.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SELF "/usr/bin/umwelt-mcp"

static char dir[] = "/tmp/test-mcp-install.XXXXXX";
static char project[sizeof(dir) + 16];

static void setup(void)
{
        cr_assert_not_null(mkdtemp(dir));
        char state[sizeof(dir) + 16];
        snprintf(state, sizeof(state), "%s/state", dir);
        snprintf(project, sizeof(project), "%s/p", dir);
        cr_assert_eq(mkdir(state, 0700), 0);
        cr_assert_eq(mkdir(project, 0755), 0);
        setenv("XDG_STATE_HOME", state, 1);
}

static void teardown(void)
{
        char cmd[sizeof(dir) + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        cr_expect_eq(system(cmd), 0);
}

static char *path_of(const char *rel)
{
        char *p = NULL;
        cr_assert(asprintf(&p, "%s/%s", project, rel) > 0);
        return p;
}

static void put(const char *rel, const char *text)
{
        _cleanup_free_ char *p = path_of(rel);
        char *slash = strrchr(p, '/');
        *slash = '\0';
        mkdir(p, 0755);
        *slash = '/';
        FILE *f = fopen(p, "w");
        cr_assert_not_null(f, "%s", p);
        fputs(text, f);
        fclose(f);
}

/* The file's text, or NULL where it is missing. */
static char *get(const char *rel)
{
        _cleanup_free_ char *p = path_of(rel);
        FILE *f = fopen(p, "r");
        if (!f)
                return NULL;
        char *s = NULL;
        size_t n = 0;
        cr_assert_geq(getdelim(&s, &n, '\0', f), 0);
        fclose(f);
        return s;
}

/* Runs `umwelt-mcp VERB HARNESS --project P [EXTRA]` with stdout and stderr
 * in *out. */
static int run(const char *verb, const char *harness, const char *extra, char **out)
{
        char *argv[] = {(char *)verb, (char *)harness, "--project", project, (char *)extra, NULL};
        int argc = extra ? 5 : 4;
        fflush(stdout);
        fflush(stderr);
        FILE *cap = tmpfile();
        cr_assert_not_null(cap);
        int so = dup(1), se = dup(2);
        dup2(fileno(cap), 1);
        dup2(fileno(cap), 2);
        int rc = mcp_install_main(argc, argv, SELF);
        fflush(stdout);
        fflush(stderr);
        dup2(so, 1);
        dup2(se, 2);
        close(so);
        close(se);
        rewind(cap);
        size_t n = 0;
        *out = NULL;
        if (getdelim(out, &n, '\0', cap) < 0) {
                free(*out);
                *out = strdup("");
        }
        fclose(cap);
        return rc;
}

static void ok(const char *verb, const char *harness, const char *extra)
{
        _cleanup_free_ char *out = NULL;
        int rc = run(verb, harness, extra, &out);
        cr_assert_eq(rc, 0, "%s %s: exit %d: %s", verb, harness, rc, out);
}

/* ---- OpenCode */

static const char opencode_json[] = "{\n"
                                    "  \"$schema\": \"https://opencode.ai/config.json\",\n"
                                    "  // the team's model\n"
                                    "  \"model\": \"anthropic/claude-sonnet-4-5\",\n"
                                    "  \"mcp\": {\n"
                                    "    \"context7\": {\n"
                                    "      \"type\": \"remote\",\n"
                                    "      \"url\": \"https://mcp.context7.com/mcp\", // docs\n"
                                    "    },\n"
                                    "  },\n"
                                    "  \"permission\": {\n"
                                    "    \"bash\": {\"*\": \"ask\", \"git *\": \"allow\"},\n"
                                    "    \"*\": \"allow\",\n"
                                    "    \"webfetch\": \"deny\"\n"
                                    "  }\n"
                                    "}\n";

Test(opencode, edits_in_place_and_uninstall_restores, .init = setup, .fini = teardown)
{
        put("opencode.json", opencode_json);
        ok("install", "opencode", NULL);
        _cleanup_free_ char *once = get("opencode.json");
        cr_expect(strstr(once, "// the team's model\n"), "%s", once);
        cr_expect(strstr(once, "\"url\": \"https://mcp.context7.com/mcp\", // docs\n"), "%s", once);
        cr_expect(strstr(once, "    \"umwelt\": {\n      \"type\": \"local\",\n      \"command\": "
                               "[\"" SELF "\", \"--project\", \""),
                  "%s", once);
        /* Ours after the "*": the last matching rule wins. */
        const char *star = strstr(once, "\"*\": \"allow\"");
        const char *bash = strstr(once, "\"bash\": \"deny\"");
        const char *edit = strstr(once, "\"edit\": \"deny\"");
        cr_assert(star && bash && edit && star < bash && bash < edit, "%s", once);
        cr_expect_null(strstr(once, "git *"), "%s", once);

        ok("install", "opencode", NULL);
        _cleanup_free_ char *twice = get("opencode.json");
        cr_expect_str_eq(twice, once, "install twice is install once");

        ok("uninstall", "opencode", NULL);
        _cleanup_free_ char *back = get("opencode.json");
        cr_expect_str_eq(back, opencode_json);
}

Test(opencode, a_permission_string_is_kept_for_the_rest, .init = setup, .fini = teardown)
{
        static const char text[] = "{\n  \"permission\": \"allow\"\n}\n";
        put("opencode.jsonc", text);
        ok("install", "opencode", NULL);
        _cleanup_free_ char *once = get("opencode.jsonc");
        cr_expect(strstr(once, "\"*\": \"allow\""), "%s", once);
        cr_expect(strstr(once, "\"bash\": \"deny\""), "%s", once);
        _cleanup_free_ char *none = get("opencode.json");
        cr_expect_null(none, "the .jsonc there is the file edited");
        ok("uninstall", "opencode", NULL);
        _cleanup_free_ char *back = get("opencode.jsonc");
        cr_expect_str_eq(back, text);
}

Test(opencode, a_new_file_goes_with_uninstall, .init = setup, .fini = teardown)
{
        ok("install", "opencode", NULL);
        _cleanup_free_ char *made = get("opencode.json");
        cr_assert_not_null(made);
        ok("uninstall", "opencode", NULL);
        _cleanup_free_ char *gone = get("opencode.json");
        cr_expect_null(gone);
}

Test(opencode, rules_that_give_bash_back_are_named, .init = setup, .fini = teardown)
{
        put("opencode.json", "{\n  \"agent\": {\n    \"build\": {\"permission\": {\"bash\": "
                             "\"allow\"}},\n    \"plan\": {\"permission\": {\"edit\": "
                             "\"deny\"}}\n  }\n}\n");
        put(".opencode/opencode.jsonc", "{\"tools\": {\"write\": true}}\n");
        _cleanup_free_ char *out = NULL;
        cr_assert_eq(run("install", "opencode", NULL, &out), 0, "%s", out);
        cr_expect(strstr(out, "/opencode.json:3:38: agent.build.permission.bash overrides "
                              "install's denial"),
                  "%s", out);
        cr_expect(strstr(out, "/.opencode/opencode.jsonc:1:21: tools.write overrides"), "%s", out);
        cr_expect_null(strstr(out, "agent.plan"), "a denial is no note: %s", out);
}

/* ---- Claude Code */

static const char mcp_json[] = "{\n"
                               "    \"mcpServers\": {\n"
                               "        \"github\": {\n"
                               "            \"type\": \"http\",\n"
                               "            \"url\": \"https://api.githubcopilot.com/mcp/\"\n"
                               "        }\n"
                               "    }\n"
                               "}\n";

static const char settings_json[] = "{\n"
                                    "  \"permissions\": {\n"
                                    "    \"allow\": [\"Read\", \"Bash(npm run test:*)\"],\n"
                                    "    \"deny\": [\"Write\", \"Read(./.env)\"]\n"
                                    "  },\n"
                                    "  \"env\": {\"NODE_ENV\": \"test\"}\n"
                                    "}\n";

Test(claude, server_and_deny_rules, .init = setup, .fini = teardown)
{
        put(".mcp.json", mcp_json);
        put(".claude/settings.json", settings_json);
        ok("install", "claude", NULL);
        _cleanup_free_ char *servers = get(".mcp.json");
        cr_expect(strstr(servers, "        \"github\": {\n"), "%s", servers);
        cr_expect(strstr(servers, "        \"umwelt\": {\n            \"type\": \"stdio\",\n"
                                  "            \"command\": \"" SELF "\",\n"
                                  "            \"args\": [\"--project\", \""),
                  "%s", servers);
        _cleanup_free_ char *settings = get(".claude/settings.json");
        cr_expect(strstr(settings, "\"deny\": [\"Write\", \"Read(./.env)\", \"Bash\", \"Edit\"]\n"),
                  "%s", settings);

        ok("install", "claude", NULL);
        _cleanup_free_ char *twice = get(".claude/settings.json");
        cr_expect_str_eq(twice, settings);

        ok("uninstall", "claude", NULL);
        _cleanup_free_ char *s1 = get(".mcp.json"), *s2 = get(".claude/settings.json");
        cr_expect_str_eq(s1, mcp_json);
        /* "Write" was the user's: it stays. */
        cr_expect_str_eq(s2, settings_json);
}

Test(claude, strict_json_refuses_a_comment, .init = setup, .fini = teardown)
{
        put(".mcp.json", "{\n  // no\n  \"mcpServers\": {}\n}\n");
        _cleanup_free_ char *out = NULL;
        cr_expect_eq(run("install", "claude", NULL, &out), UMW_EXIT_CONFIG);
        cr_expect(strstr(out, "umwelt-mcp: "), "%s", out);
        cr_expect(strstr(out, "/.mcp.json:2:3: expected a value, found a comment (not JSON)\n"),
                  "%s", out);
        cr_expect_eq(strchr(out, '\n'), out + strlen(out) - 1, "one line: %s", out);
}

Test(claude, a_value_the_user_changed_is_left, .init = setup, .fini = teardown)
{
        ok("install", "claude", NULL);
        _cleanup_free_ char *s = get(".mcp.json");
        char *cmd = strstr(s, SELF);
        cr_assert_not_null(cmd);
        memcpy(cmd, "/opt/bin/mine-mcp", 17); /* as long as SELF's first 17 bytes */
        put(".mcp.json", s);
        _cleanup_free_ char *out = NULL;
        cr_expect_eq(run("uninstall", "claude", NULL, &out), 0, "%s", out);
        cr_expect(strstr(out, "mcpServers.umwelt left as it is: changed since the install"), "%s",
                  out);
        _cleanup_free_ char *after = get(".mcp.json");
        cr_expect_str_eq(after, s);
}

/* ---- Codex */

static const char config_toml[] = "# Codex, this project.\n"
                                  "model = \"gpt-5.1-codex\"  # the default\n"
                                  "\n"
                                  "[mcp_servers.docs]\n"
                                  "command = \"npx\"\n"
                                  "args = [\n"
                                  "  \"-y\",   # fetch it\n"
                                  "  \"docs-mcp\",\n"
                                  "]\n"
                                  "env = { \"TOKEN\" = \"x\" }\n"
                                  "\n"
                                  "[features]\n"
                                  "shell_tool = true\n"
                                  "\n"
                                  "[projects.\"/srv/other\"]\n"
                                  "trust_level = \"trusted\"\n";

Test(codex, tables_and_keys, .init = setup, .fini = teardown)
{
        put(".codex/config.toml", config_toml);
        ok("install", "codex", NULL);
        _cleanup_free_ char *once = get(".codex/config.toml");
        cr_expect(strstr(once, "model = \"gpt-5.1-codex\"  # the default\n"
                               "sandbox_mode = \"read-only\"\n"),
                  "%s", once);
        cr_expect(strstr(once, "env = { \"TOKEN\" = \"x\" }\n\n[mcp_servers.umwelt]\n"
                               "command = \"" SELF "\"\nargs = [\"--project\", \""),
                  "%s", once);
        cr_expect(strstr(once, "[features]\nshell_tool = false\n"), "%s", once);

        ok("install", "codex", NULL);
        _cleanup_free_ char *twice = get(".codex/config.toml");
        cr_expect_str_eq(twice, once);

        ok("uninstall", "codex", NULL);
        _cleanup_free_ char *back = get(".codex/config.toml");
        cr_expect_str_eq(back, config_toml);
}

Test(codex, a_dotted_table_is_refused_by_line, .init = setup, .fini = teardown)
{
        put(".codex/config.toml", "model = \"o3\"\nfeatures.web_search_request = true\n");
        _cleanup_free_ char *out = NULL;
        cr_expect_eq(run("install", "codex", NULL, &out), UMW_EXIT_CONFIG);
        cr_expect(strstr(out, "config.toml:2:1: 'features' is defined here by a dotted key or an "
                              "inline table"),
                  "%s", out);
}

Test(codex, a_bad_file_is_one_line, .init = setup, .fini = teardown)
{
        put(".codex/config.toml", "[mcp_servers.x]\nargs = [\"a\", \"b\"\n");
        _cleanup_free_ char *out = NULL;
        cr_expect_eq(run("install", "codex", NULL, &out), UMW_EXIT_CONFIG);
        cr_expect(strstr(out, "/.codex/config.toml:3:1: array not closed: expected ']'\n"), "%s",
                  out);
}

/* ---- all */

Test(files, a_symlink_is_refused, .init = setup, .fini = teardown)
{
        put("real.json", "{}\n");
        _cleanup_free_ char *link = path_of(".mcp.json");
        cr_assert_eq(symlink("real.json", link), 0);
        _cleanup_free_ char *out = NULL;
        cr_expect_eq(run("install", "claude", NULL, &out), UMW_EXIT_CONFIG);
        cr_expect(strstr(out, ".mcp.json: a symbolic link; umwelt-mcp install edits only a "
                              "regular file"),
                  "%s", out);
        _cleanup_free_ char *real = get("real.json");
        cr_expect_str_eq(real, "{}\n");
}

Test(files, mode_kept_and_dry_run_writes_nothing, .init = setup, .fini = teardown)
{
        put("opencode.json", opencode_json);
        _cleanup_free_ char *p = path_of("opencode.json");
        cr_assert_eq(chmod(p, 0640), 0);
        _cleanup_free_ char *out = NULL;
        cr_expect_eq(run("install", "opencode", "--dry-run", &out), 0, "%s", out);
        cr_expect(strncmp(out, "--- ", 4) == 0 && strstr(out, "\n+++ ") && strstr(out, "\n@@ -"),
                  "%s", out);
        cr_expect(strstr(out, "\n+    \"umwelt\": {\n"), "%s", out);
        _cleanup_free_ char *same = get("opencode.json");
        cr_expect_str_eq(same, opencode_json);
        _cleanup_free_ char *out2 = NULL;
        cr_expect_eq(run("uninstall", "opencode", NULL, &out2), UMW_EXIT_NOTFOUND,
                     "a dry run records nothing: %s", out2);
        ok("install", "opencode", NULL);
        struct stat st;
        cr_assert_eq(stat(p, &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0640);
}

Test(files, usage_errors, .init = setup, .fini = teardown)
{
        _cleanup_free_ char *out = NULL;
        cr_expect_eq(run("install", "vim", NULL, &out), UMW_EXIT_USAGE);
        cr_expect(strstr(out, "unknown harness 'vim': expected opencode, claude or codex"), "%s",
                  out);
}

/* ---- the readers */

static void json_error(const char *text, bool jsonc, const char *want)
{
        struct jnode root;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(jdoc_parse("f.json", text, strlen(text), jsonc, true, &root, &err), 0, "%s",
                     text);
        cr_expect_str_eq(err->msg, want);
}

Test(jsonc, errors_name_line_and_column)
{
        json_error("{\"a\": 1,}", false, "f.json:1:8: trailing comma (not JSON)");
        json_error("{\n  \"a\": \"x\n}", true, "f.json:2:8: string not closed: expected '\"'");
        json_error("{\"a\": 1, \"a\": 2}", true, "f.json:1:10: duplicate key \"a\"");
        json_error("[1]", true, "f.json:1:1: expected an object ('{') at the top");
        json_error("{\"a\" 1}", true, "f.json:1:6: expected ':' after a member's key");
        json_error("{} x", true, "f.json:1:4: expected the end of the file after the top value");
}

Test(jsonc, accepts_comments_and_trailing_commas)
{
        static const char text[] = "{/* a */ \"a\": [1, 2,], // b\n \"b\": {\"c\": null,},}";
        struct jnode root;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(jdoc_parse("f", text, strlen(text), true, true, &root, &err), 0);
        const char *path[] = {"b", "c"};
        struct jnode *c = jnode_path(&root, path, 2);
        cr_assert_not_null(c);
        cr_expect_eq(c->kind, JK_NULL);
        jnode_free(&root);
}

static void toml_error(const char *text, const char *want)
{
        struct tdoc d;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(tdoc_parse("c.toml", text, strlen(text), &d, &err), 0, "%s", text);
        cr_expect_str_eq(err->msg, want);
}

Test(toml, errors_name_line_and_column)
{
        toml_error("a = 1\nb 2\n", "c.toml:2:3: expected '=' after a key");
        toml_error("[x]\n[x]\n", "c.toml:2:1: table defined twice");
        toml_error("a = 1\na = 2\n", "c.toml:2:1: duplicate key");
        toml_error("a = \"\"\"\nnever closed\n",
                   "c.toml:1:5: string not closed: expected '\"\"\"'");
        toml_error("a = bogus\n", "c.toml:1:5: expected a value (a string, number, boolean, "
                                  "date, array or inline table)");
        toml_error("a = 1 b\n", "c.toml:1:7: expected the end of the line");
}

Test(toml, reads_what_codex_configs_hold)
{
        static const char text[] = "model = 'o3'\n"
                                   "when = 1979-05-27 07:32:00Z\n"
                                   "doc = \"\"\"\n[not a table]\n\"\"\"\n"
                                   "[projects.\"/a b\"]\ntrust_level = \"trusted\"\n"
                                   "[[agents]]\nname = \"x\"\n[[agents]]\nname = \"y\"\n";
        struct tdoc d;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(tdoc_parse("c", text, strlen(text), &d, &err), 0, "%s", err ? err->msg : "");
        const char *proj[] = {"projects", "/a b"};
        cr_expect_geq(tdoc_table(&d, proj, 2), 0);
        const char *nt[] = {"not a table"};
        cr_expect_lt(tdoc_table(&d, nt, 1), 0);
        tdoc_free(&d);
}
