/* The policy layers: every key of the floor, user and project files, strict
 * refusals at their line and column, the floor's ownership rules, and each
 * layer narrowing the one above. Tests that need a root-owned floor file
 * skip when not run as root. */
#include "policy/config.h"
#include "policy/presets.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* T, a fresh temp directory, holds home/, roots/{a,b}/, outside/, the
 * links roots/escape -> outside and roots/inside -> roots/a, and the
 * files etc/floor.toml (etc/ made by need_root()), user.toml and
 * project.toml when a test writes them. */
static char T[PATH_MAX];
static struct policy_paths paths;
static char floor_path[PATH_MAX + 16], user_path[PATH_MAX + 16], project_path[PATH_MAX + 16];
static char state_path[PATH_MAX + 16], run_path[PATH_MAX + 16], home[PATH_MAX + 16];

static char *at(const char *rel)
{
        static char bufs[8][PATH_MAX + 64];
        static unsigned next;
        char *b = bufs[next++ % 8];
        snprintf(b, sizeof(bufs[0]), "%s/%s", T, rel);
        return b;
}

static void setup(void)
{
        char tmpl[] = "/tmp/test-policy-config-XXXXXX";
        cr_assert_not_null(mkdtemp(tmpl));
        cr_assert_not_null(realpath(tmpl, T));
        const char *dirs[] = {"home", "roots", "roots/a", "roots/b", "outside", "state", "run"};
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
                cr_assert_eq(mkdir(at(dirs[i]), 0755), 0, "mkdir %s", dirs[i]);
        cr_assert_eq(symlink(at("outside"), at("roots/escape")), 0);
        cr_assert_eq(symlink(at("roots/a"), at("roots/inside")), 0);
        snprintf(floor_path, sizeof(floor_path), "%s/etc/floor.toml", T);
        snprintf(user_path, sizeof(user_path), "%s/user.toml", T);
        snprintf(project_path, sizeof(project_path), "%s/project.toml", T);
        snprintf(state_path, sizeof(state_path), "%s/state", T);
        snprintf(run_path, sizeof(run_path), "%s/run", T);
        snprintf(home, sizeof(home), "%s/home", T);
        paths = (struct policy_paths){floor_path, user_path, project_path, state_path, run_path};
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
        return remove(path);
}

static void teardown(void)
{
        nftw(T, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(policy_config, .init = setup, .fini = teardown);

/* Writes text to path with mode; the placeholder @ stands for T. */
static void write_mode(const char *path, mode_t mode, const char *text)
{
        FILE *f = fopen(path, "we");
        cr_assert_not_null(f, "create %s", path);
        for (const char *p = text; *p; p++)
                if (*p == '@')
                        fputs(T, f);
                else
                        fputc(*p, f);
        cr_assert_eq(fclose(f), 0);
        cr_assert_eq(chmod(path, mode), 0);
}

static void write_file(const char *path, const char *text)
{
        write_mode(path, 0644, text);
}

static void need_root(void)
{
        if (geteuid() == 0) {
                cr_assert_eq(mkdir(at("etc"), 0755), 0);
                return;
        }
        teardown(); /* a skipped test does not reach .fini */
        cr_skip_test("a floor file must be owned by root (CI runs as root)");
}

static void load_ok(struct policy_config *c)
{
        _cleanup_error_ struct umw_error *err = NULL;
        int r = policy_load(&paths, home, c, &err);
        cr_assert_eq(r, 0, "policy_load: %s", err ? err->msg : "?");
}

/* The error message of a load that must fail with kind UMW_EXIT_CONFIG,
 * after "@" in want is replaced with T. */
static void load_fails(const char *want)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct policy_config c = {0};
        int r = policy_load(&paths, home, &c, &err);
        cr_assert_lt(r, 0, "policy_load accepted, expected: %s", want);
        cr_assert_not_null(err);
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG, "kind %d: %s", err->kind, err->msg);
        char expect[1024] = "";
        for (const char *p = want; *p; p++)
                if (*p == '@')
                        strcat(expect, T);
                else
                        strncat(expect, p, 1);
        cr_assert_not_null(strstr(err->msg, expect), "message '%s' lacks '%s'", err->msg, expect);
        cr_assert_null(c.preset);
}

static void assert_strv(char **v, const char *const *want)
{
        cr_assert_not_null(v);
        size_t i = 0;
        for (; want[i]; i++) {
                cr_assert_not_null(v[i], "missing [%zu] %s", i, want[i]);
                char expect[PATH_MAX + 64];
                snprintf(expect, sizeof(expect), "%s", want[i]);
                if (want[i][0] == '@')
                        snprintf(expect, sizeof(expect), "%s%s", T, want[i] + 1);
                cr_assert_str_eq(v[i], expect);
        }
        cr_assert_null(v[i], "extra [%zu] %s", i, v[i]);
}

static bool strv_has(char **v, const char *s)
{
        for (size_t i = 0; v && v[i]; i++)
                if (strcmp(v[i], s) == 0)
                        return true;
        return false;
}

Test(policy_config, no_files_is_the_built_in_floor)
{
        struct policy_config c = {0};
        load_ok(&c);
        assert_strv(c.grant_roots,
                    (const char *const[]){"@/home", "/srv", "/opt", "/mnt", "/media", NULL});
        assert_strv(c.presets_allowed, preset_names());
        cr_assert_str_eq(c.preset, "dev");
        cr_assert(c.egress_allowed, "allowed, and off until a project enables it");
        cr_assert_not(c.limits_best_effort);
        cr_assert_eq(c.n_grants, 0);
        cr_assert_null(c.grants);
        cr_assert_null(c.env);
        cr_assert_not(c.egress_enabled);
        cr_assert(strv_has(c.never, at("home/.ssh")));
        cr_assert(strv_has(c.never, at("home/.config/umwelt")));
        cr_assert(strv_has(c.never, at("state/umwelt")));
        cr_assert(strv_has(c.never, run_path));
        cr_assert(strv_has(c.never, "/etc/umwelt"));
        policy_config_free(&c);
        cr_assert_null(c.never);
        policy_config_free(&c); /* twice is harmless */
}

Test(policy_config, default_locations)
{
        /* The user's file is under home; the project's in the working directory. */
        paths = (struct policy_paths){.floor = floor_path, .state_home = state_path};
        cr_assert_eq(mkdir(at("home/.config"), 0755), 0);
        cr_assert_eq(mkdir(at("home/.config/umwelt"), 0755), 0);
        write_file(at("home/.config/umwelt/config.toml"), "preset = \"build\"\n");
        cr_assert_eq(mkdir(at("proj"), 0755), 0);
        write_file(at("proj/.umwelt.toml"), "env = [\"FOO\"]\n");
        _cleanup_free_ char *cwd = getcwd(NULL, 0);
        cr_assert_eq(chdir(at("proj")), 0);
        struct policy_config c = {0};
        load_ok(&c);
        cr_assert_eq(chdir(cwd), 0);
        cr_assert_str_eq(c.preset, "build");
        assert_strv(c.env, (const char *const[]){"FOO", NULL});
        policy_config_free(&c);
}

Test(policy_config, home_must_be_absolute)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct policy_config c = {0};
        cr_assert_lt(policy_load(&paths, "home", &c, &err), 0);
        cr_assert_not_null(strstr(err->msg, "HOME"));
}

Test(policy_config, floor_every_key)
{
        need_root();
        write_file(floor_path, "# the host's floor\n"
                               "grant_roots = [\"@/roots/a\", \"@/roots/b\"]\n"
                               "never_grant = [\"/srv/secret\", \"@/roots/a/keys\"]\n"
                               "presets = [\"review\", \"build\"]\n"
                               "egress = true\n"
                               "limits_best_effort = true\n");
        struct policy_config c = {0};
        load_ok(&c);
        assert_strv(c.grant_roots, (const char *const[]){"@/roots/a", "@/roots/b", NULL});
        assert_strv(c.presets_allowed, (const char *const[]){"review", "build", NULL});
        cr_assert(strv_has(c.never, "/srv/secret"));
        cr_assert(strv_has(c.never, at("roots/a/keys")));
        cr_assert(strv_has(c.never, at("home/.ssh")), "the defaults stay");
        cr_assert(c.egress_allowed);
        cr_assert(c.limits_best_effort);
        /* "dev" is not allowed: the floor's first preset is the default. */
        cr_assert_str_eq(c.preset, "review");
        policy_config_free(&c);
}

Test(policy_config, floor_keys_left_out_take_the_built_in_values)
{
        need_root();
        write_file(floor_path, "egress = false\n");
        struct policy_config c = {0};
        load_ok(&c);
        assert_strv(c.grant_roots,
                    (const char *const[]){"@/home", "/srv", "/opt", "/mnt", "/media", NULL});
        assert_strv(c.presets_allowed, preset_names());
        cr_assert_str_eq(c.preset, "dev");
        policy_config_free(&c);
}

Test(policy_config, floor_empty_grant_roots_allow_no_user_root)
{
        need_root();
        write_file(floor_path, "grant_roots = []\n");
        struct policy_config c = {0};
        load_ok(&c);
        assert_strv(c.grant_roots, (const char *const[]){NULL});
        policy_config_free(&c);
        write_file(user_path, "grant_roots = [\"@/home\"]\n");
        load_fails("user.toml:1:16: grant root '@/home' (resolved '@/home') is outside the grant "
                   "roots of @/etc/floor.toml (none)");
}

Test(policy_config, floor_unknown_key)
{
        need_root();
        write_file(floor_path, "egress = false\n\n  grant_root = []\n");
        load_fails("@/etc/floor.toml:3:3: unknown key 'grant_root': expected one of grant_roots, "
                   "never_grant, presets, egress, limits_best_effort");
}

Test(policy_config, floor_wrong_types)
{
        need_root();
        write_file(floor_path, "egress = \"yes\"\n");
        load_fails("@/etc/floor.toml:1:10: 'egress': expected a boolean, found a string");
        write_file(floor_path, "limits_best_effort = 1\n");
        load_fails(
            "@/etc/floor.toml:1:22: 'limits_best_effort': expected a boolean, found an integer");
        write_file(floor_path, "grant_roots = \"/srv\"\n");
        load_fails("@/etc/floor.toml:1:15: 'grant_roots': expected an array, found a string");
        write_file(floor_path, "never_grant = [1, 2]\n");
        load_fails("@/etc/floor.toml:1:16: 'never_grant': expected an array of strings, found an "
                   "integer");
        write_file(floor_path, "grant_roots = [\"/srv\", \"srv\"]\n");
        load_fails("@/etc/floor.toml:1:24: 'grant_roots': expected an absolute path, found 'srv'");
        write_file(floor_path, "grant_roots = [\"/srv/../etc\"]\n");
        load_fails("@/etc/floor.toml:1:16: 'grant_roots': expected a path without '..'");
        write_file(floor_path, "never_grant = [\"~/.netrc\"]\n");
        load_fails(
            "@/etc/floor.toml:1:16: 'never_grant': expected an absolute path, found '~/.netrc'");
        write_file(floor_path, "presets = [\"dev\", \"huge\"]\n");
        load_fails(
            "@/etc/floor.toml:1:19: 'presets': expected one of review, dev, build, auto, found "
            "'huge'");
        write_file(floor_path, "presets = []\n");
        load_fails("@/etc/floor.toml:1:11: 'presets': expected at least one preset");
        write_file(floor_path, "[egress]\n");
        load_fails("@/etc/floor.toml:1:1: 'egress': expected a boolean, found a table");
}

Test(policy_config, floor_bad_toml)
{
        need_root();
        write_file(floor_path, "egress = false\negress = true\n");
        load_fails("@/etc/floor.toml:2:1:");
}

Test(policy_config, floor_owned_by_another_user_is_refused)
{
        need_root();
        write_file(floor_path, "egress = true\n");
        cr_assert_eq(chown(floor_path, 1234, 0), 0);
        load_fails("@/etc/floor.toml: owned by uid 1234, not root: refusing the floor");
}

Test(policy_config, floor_with_another_group_is_accepted)
{
        need_root();
        write_file(floor_path, "egress = true\n");
        cr_assert_eq(chown(floor_path, 0, 1234), 0);
        struct policy_config c = {0};
        load_ok(&c);
        cr_assert(c.egress_allowed);
        policy_config_free(&c);
}

Test(policy_config, floor_writable_by_others_is_refused)
{
        need_root();
        write_mode(floor_path, 0646, "egress = true\n");
        load_fails("@/etc/floor.toml: writable by others (mode 0646): refusing the floor");
}

Test(policy_config, floor_writable_by_its_group_is_refused)
{
        need_root();
        write_mode(floor_path, 0664, "egress = true\n");
        load_fails("@/etc/floor.toml: writable by its group (mode 0664): refusing the floor");
}

Test(policy_config, floor_directory_owned_by_another_user_is_refused)
{
        /* Whoever owns the directory can delete the floor: refused even
         * while the file is missing. */
        need_root();
        cr_assert_eq(chown(at("etc"), 1234, 0), 0);
        load_fails("@/etc: the floor's directory is owned by uid 1234, not root: refusing the "
                   "floor");
        write_file(floor_path, "egress = true\n");
        load_fails("@/etc: the floor's directory is owned by uid 1234");
}

Test(policy_config, floor_directory_writable_by_others_is_refused_unless_sticky)
{
        need_root();
        write_file(floor_path, "egress = true\n");
        cr_assert_eq(chmod(at("etc"), 0777), 0);
        load_fails("@/etc: the floor's directory is writable by others (mode 0777): refusing "
                   "the floor");
        cr_assert_eq(chmod(at("etc"), 0775), 0);
        load_fails("@/etc: the floor's directory is writable by its group (mode 0775)");
        cr_assert_eq(chmod(at("etc"), 01777), 0);
        struct policy_config c = {0};
        load_ok(&c);
        cr_assert(c.egress_allowed);
        policy_config_free(&c);
}

Test(policy_config, floor_without_its_directory_is_the_built_in_floor)
{
        char floor[PATH_MAX + 32];
        snprintf(floor, sizeof(floor), "%s/no-such-dir/floor.toml", T);
        paths.floor = floor;
        struct policy_config c = {0};
        load_ok(&c);
        assert_strv(c.grant_roots,
                    (const char *const[]){"@/home", "/srv", "/opt", "/mnt", "/media", NULL});
        policy_config_free(&c);
        write_file(project_path, "[egress]\nenabled = true\n");
        load_ok(&c);
        cr_assert(c.egress_enabled, "the built-in floor lets a project enable egress");
        policy_config_free(&c);
}

Test(policy_config, floor_symlink_is_refused)
{
        need_root();
        write_file(at("real-floor.toml"), "egress = true\n");
        cr_assert_eq(symlink(at("real-floor.toml"), floor_path), 0);
        load_fails("@/etc/floor.toml: is a symbolic link");
}

Test(policy_config, floor_not_a_regular_file_is_refused)
{
        need_root();
        cr_assert_eq(mkfifo(floor_path, 0600), 0);
        load_fails("@/etc/floor.toml: not a regular file");
}

Test(policy_config, user_every_key)
{
        cr_assert_eq(mkdir(at("home/src"), 0755), 0);
        cr_assert_eq(symlink(at("home/src"), at("home/link")), 0);
        write_file(user_path, "grant_roots = [\"@/home/src\", \"@/home/link/\", \"@/home\"]\n"
                              "preset = \"auto\"\n");
        struct policy_config c = {0};
        load_ok(&c);
        /* Kept resolved: what was checked is what later grants are held to. */
        assert_strv(c.grant_roots,
                    (const char *const[]){"@/home/src", "@/home/src", "@/home", NULL});
        cr_assert_str_eq(c.preset, "auto");
        policy_config_free(&c);
}

Test(policy_config, user_empty_roots_and_no_preset)
{
        write_file(user_path, "grant_roots = []\n");
        struct policy_config c = {0};
        load_ok(&c);
        assert_strv(c.grant_roots, (const char *const[]){NULL});
        cr_assert_str_eq(c.preset, "dev");
        policy_config_free(&c);
}

Test(policy_config, user_root_outside_the_floor_is_refused)
{
        write_file(user_path, "grant_roots = [\n  \"@/home\",\n  \"@/outside\",\n]\n");
        load_fails(
            "@/user.toml:3:3: grant root '@/outside' (resolved '@/outside') is outside "
            "the grant roots of the built-in floor (@/etc/floor.toml is absent) (@/home, /srv");
}

Test(policy_config, user_root_escaping_through_a_symlink_is_refused)
{
        need_root();
        write_file(floor_path, "grant_roots = [\"@/roots\"]\n");
        write_file(user_path, "grant_roots = [\"@/roots/inside\"]\n");
        struct policy_config c = {0};
        load_ok(&c);
        assert_strv(c.grant_roots, (const char *const[]){"@/roots/a", NULL});
        policy_config_free(&c);
        write_file(user_path, "grant_roots = [\"@/roots/a\",\n\"@/roots/escape\"]\n");
        load_fails("@/user.toml:2:1: grant root '@/roots/escape' (resolved '@/outside') is "
                   "outside the grant roots of @/etc/floor.toml (@/roots)");
}

Test(policy_config, floor_root_through_a_symlink_holds_its_target)
{
        /* A floor root that is a link covers where it leads, not its name. */
        need_root();
        write_file(floor_path, "grant_roots = [\"@/roots/escape\", \"@/roots/not-yet/there\"]\n");
        write_file(user_path, "grant_roots = [\"@/outside\"]\n");
        struct policy_config c = {0};
        load_ok(&c);
        assert_strv(c.grant_roots, (const char *const[]){"@/outside", NULL});
        policy_config_free(&c);
        write_file(user_path, "grant_roots = [\"@/roots\"]\n");
        load_fails("@/user.toml:1:16: grant root '@/roots' (resolved '@/roots') is outside");
}

Test(policy_config, user_root_bad_paths)
{
        write_file(user_path, "grant_roots = [\"@/home/missing\"]\n");
        load_fails("@/user.toml:1:16: grant root '@/home/missing': No such file or directory");
        write_file(user_path, "grant_roots = [\"@/home/../outside\"]\n");
        load_fails("@/user.toml:1:16: 'grant_roots': expected a path without '..'");
        write_file(user_path, "grant_roots = [\"home\"]\n");
        load_fails("@/user.toml:1:16: 'grant_roots': expected an absolute path, found 'home'");
        write_file(user_path, "grant_roots = [true]\n");
        load_fails("@/user.toml:1:16: 'grant_roots': expected an array of strings, found a "
                   "boolean");
}

Test(policy_config, user_unknown_key_and_wrong_type)
{
        write_file(user_path, "preset = \"dev\"\n[grant]\npath = \"/srv\"\n");
        load_fails("@/user.toml:2:1: unknown key 'grant': expected one of grant_roots, preset, "
                   "workspace, delivery, relay");
        write_file(user_path, "\npreset = 3\n");
        load_fails("@/user.toml:2:10: 'preset': expected a string, found an integer");
        write_file(user_path, "preset = \"fast\"\n");
        load_fails("@/user.toml:1:10: 'preset': expected one of review, dev, build, auto, found "
                   "'fast'");
}

Test(policy_config, workspace_mode_review_by_default_direct_only_by_the_user)
{
        struct policy_config c = {0};
        load_ok(&c);
        cr_assert_not(c.workspace_direct, "review is the default");
        policy_config_free(&c);
        write_file(user_path, "[workspace]\nmode = \"direct\"\n");
        write_file(project_path, "[workspace]\nmode = \"direct\"\n");
        c = (struct policy_config){0};
        load_ok(&c);
        cr_assert(c.workspace_direct, "the user's direct, the project agreeing");
        policy_config_free(&c);
        write_file(project_path, "[workspace]\nmode = \"review\"\n");
        c = (struct policy_config){0};
        load_ok(&c);
        cr_assert_not(c.workspace_direct, "a project may narrow direct to review");
        policy_config_free(&c);
        write_file(user_path, "");
        write_file(project_path, "\n[workspace]\nmode = \"direct\"\n");
        load_fails("@/project.toml:3:8: workspace.mode: a project may not widen review mode to "
                   "direct (only @/user.toml or --workspace direct may)");
        write_file(project_path, "[workspace]\nmode = \"overlay\"\n");
        load_fails("@/project.toml:2:8: workspace.mode: expected \"review\" or \"direct\", found "
                   "\"overlay\"");
        write_file(user_path, "[workspace]\nmode = true\n");
        load_fails("@/user.toml:2:8: 'mode': expected a string, found a boolean");
        write_file(user_path, "[workspace]\nmodes = \"direct\"\n");
        load_fails("@/user.toml:2:1: unknown key 'modes': expected one of mode");
}

Test(policy_config, user_delivery_hold_and_protected_branches)
{
        write_file(user_path,
                   "[delivery]\nhold = [\"Makefile\", \"scripts/deploy\"]\nprotected_branches = "
                   "[\"release\"]\n");
        struct policy_config c = {0};
        load_ok(&c);
        assert_strv(c.delivery_hold, (const char *const[]){"Makefile", "scripts/deploy", NULL});
        assert_strv(c.protected_branches, (const char *const[]){"release", NULL});
        policy_config_free(&c);
        write_file(user_path, "[delivery]\nhold = [\"ok\", \"/etc\"]\n");
        load_fails("@/user.toml:2:15: delivery.hold[1]: expected a relative name without control "
                   "characters, found \"/etc\"");
        write_file(user_path, "[delivery]\nprotected_branches = [\"a\\tb\"]\n");
        load_fails("@/user.toml:2:23: delivery.protected_branches[0]: expected a relative name");
        write_file(user_path, "[delivery]\nholds = []\n");
        load_fails(
            "@/user.toml:2:1: unknown key 'holds': expected one of hold, protected_branches");
        write_file(project_path, "[delivery]\nhold = []\n");
        write_file(user_path, "");
        load_fails("@/project.toml:1:1: unknown key 'delivery'");
}

Test(policy_config, user_relay_timeout_and_standing_rules)
{
        write_file(user_path, "[relay]\ntimeout = 30\nallow_ro = [\"/srv/data/*\"]\n"
                              "allow_rw = [\"/srv/out\"]\n");
        struct policy_config c = {0};
        load_ok(&c);
        cr_assert_eq(c.relay_timeout_s, 30);
        assert_strv(c.relay_allow_ro, (const char *const[]){"/srv/data/*", NULL});
        assert_strv(c.relay_allow_rw, (const char *const[]){"/srv/out", NULL});
        policy_config_free(&c);
        write_file(user_path, "[relay]\ntimeout = 0\n");
        load_fails("@/user.toml:2:11: relay.timeout: expected 1 to 3600 seconds");
        write_file(user_path, "[relay]\nallow_ro = [\"data/*\"]\n");
        load_fails("@/user.toml:2:13: 'allow_ro': expected an absolute path, found 'data/*'");
        write_file(user_path, "[relay]\nallow_rw = [\"/srv/../etc\"]\n");
        load_fails("@/user.toml:2:13: 'allow_rw': expected a path without '..'");
        write_file(user_path, "[relay]\nask = false\n");
        load_fails("@/user.toml:2:1: unknown key 'ask': expected one of timeout, allow_ro, "
                   "allow_rw");
        /* The agent writes the project's file: no standing rule there. */
        write_file(user_path, "");
        write_file(project_path, "[relay]\nallow_rw = [\"/\"]\n");
        load_fails("@/project.toml:1:1: unknown key 'relay'");
}

Test(policy_config, user_preset_must_be_allowed_by_the_floor)
{
        need_root();
        write_file(floor_path, "presets = [\"review\", \"dev\"]\n");
        write_file(user_path, "preset = \"review\"\n");
        struct policy_config c = {0};
        load_ok(&c);
        cr_assert_str_eq(c.preset, "review");
        policy_config_free(&c);
        write_file(user_path, "preset = \"build\"\n");
        load_fails("@/user.toml:1:10: preset 'build' is not allowed by @/etc/floor.toml (allowed: "
                   "review, dev)");
}

Test(policy_config, project_every_key)
{
        write_file(project_path, "preset = \"review\"\n"
                                 "env = [\"CARGO_HOME\", \"_x1\"]\n"
                                 "\n"
                                 "[[grant]]\n"
                                 "path = \"/srv/data\"\n"
                                 "mode = \"rw\"\n"
                                 "\n"
                                 "  [[grant]]\n"
                                 "path = \"@/home/ref\"\n"
                                 "\n"
                                 "[egress]\n"
                                 "enabled = false\n"
                                 "allow = [\"crates.io\", \"GET x.example/y\"]\n"
                                 "deny = []\n");
        struct policy_config c = {0};
        load_ok(&c);
        cr_assert_str_eq(c.preset, "review");
        assert_strv(c.env, (const char *const[]){"CARGO_HOME", "_x1", NULL});
        cr_assert_eq(c.n_grants, 2);
        cr_assert_str_eq(c.grants[0].path, "/srv/data");
        cr_assert_str_eq(c.grants[0].mode, "rw");
        char origin[PATH_MAX + 64];
        snprintf(origin, sizeof(origin), "%s:4:1", project_path);
        cr_assert_str_eq(c.grants[0].origin, origin);
        cr_assert_str_eq(c.grants[1].path, at("home/ref"));
        cr_assert_str_eq(c.grants[1].mode, "ro", "the default mode");
        snprintf(origin, sizeof(origin), "%s:8:3", project_path);
        cr_assert_str_eq(c.grants[1].origin, origin);
        cr_assert_not(c.egress_enabled);
        assert_strv(c.egress_allow, (const char *const[]){"crates.io", "GET x.example/y", NULL});
        assert_strv(c.egress_deny, (const char *const[]){NULL});
        policy_config_free(&c);
}

Test(policy_config, project_egress_under_the_built_in_floor)
{
        write_file(project_path, "[egress]\nenabled = true\n");
        struct policy_config c = {0};
        load_ok(&c);
        cr_assert(c.egress_enabled);
        policy_config_free(&c);
}

Test(policy_config, project_egress_where_the_floor_allows_it)
{
        need_root();
        write_file(floor_path, "egress = true\n");
        write_file(project_path, "[egress]\nenabled = true\ndeny = [\"10.0.0.8\"]\n");
        struct policy_config c = {0};
        load_ok(&c);
        cr_assert(c.egress_enabled);
        cr_assert_null(c.egress_allow);
        assert_strv(c.egress_deny, (const char *const[]){"10.0.0.8", NULL});
        policy_config_free(&c);
        write_file(floor_path, "egress = false\n");
        load_fails(
            "@/project.toml:2:11: egress.enabled: egress is not allowed by @/etc/floor.toml");
}

Test(policy_config, project_egress_bad_keys)
{
        write_file(project_path, "[egress]\nenabled = false\nallow = \"*\"\n");
        load_fails("@/project.toml:3:9: 'allow': expected an array, found a string");
        write_file(project_path, "[egress]\nports = [443]\n");
        load_fails("@/project.toml:2:1: unknown key 'ports': expected one of enabled, allow, deny");
        write_file(project_path, "egress = true\n");
        load_fails("@/project.toml:1:10: 'egress': expected a table, found a boolean");
        write_file(project_path, "[egress]\nenabled = \"true\"\n");
        load_fails("@/project.toml:2:11: 'enabled': expected a boolean, found a string");
}

/* The rest of [ingress] is in test-ingress.c. */
Test(policy_config, project_ingress_ports)
{
        write_file(project_path, "preset = \"dev\"\n\n[ingress]\nports = [8080]\n");
        struct policy_config c = {0};
        load_ok(&c);
        cr_assert(c.ingress_allowed);
        cr_assert_eq(c.n_ingress_ports, 1);
        cr_assert_eq(c.ingress_ports[0], 8080);
        policy_config_free(&c);
}

Test(policy_config, project_unknown_keys)
{
        write_file(project_path, "preset = \"dev\"\ngrants = []\n");
        load_fails("@/project.toml:2:1: unknown key 'grants': expected one of grant, preset, env, "
                   "egress");
        write_file(project_path, "[[grant]]\npath = \"/srv\"\n  writable = true\n");
        load_fails("@/project.toml:3:3: unknown key 'writable': expected one of path, mode");
}

Test(policy_config, project_bad_grants)
{
        write_file(project_path, "[[grant]]\nmode = \"ro\"\n");
        load_fails("@/project.toml:1:1: [[grant]]: expected a 'path'");
        write_file(project_path, "[[grant]]\npath = \"srv/data\"\n");
        load_fails("@/project.toml:2:8: 'path': expected an absolute path, found 'srv/data'");
        write_file(project_path, "[[grant]]\npath = 7\n");
        load_fails("@/project.toml:2:8: 'path': expected a string, found an integer");
        write_file(project_path, "[[grant]]\npath = \"/srv\"\nmode = \"wr\"\n");
        load_fails("@/project.toml:3:8: 'mode': expected \"ro\" or \"rw\", found 'wr'");
        write_file(project_path, "[[grant]]\npath = \"/srv\"\nmode = true\n");
        load_fails("@/project.toml:3:8: 'mode': expected a string, found a boolean");
        write_file(project_path, "grant = [\"/srv\"]\n");
        load_fails("@/project.toml:1:10: 'grant': expected [[grant]] tables, found a string");
        write_file(project_path, "[grant]\npath = \"/srv\"\n");
        load_fails("@/project.toml:1:1: 'grant': expected an array, found a table");
}

Test(policy_config, project_bad_env)
{
        write_file(project_path, "env = [\"OK\", \"NOT-OK\"]\n");
        load_fails("@/project.toml:1:14: 'env': expected a variable name");
        write_file(project_path, "env = [\"1ABC\"]\n");
        load_fails("@/project.toml:1:8: 'env': expected a variable name");
        write_file(project_path, "env = [\"\"]\n");
        load_fails("@/project.toml:1:8: 'env': expected a variable name");
        write_file(project_path, "env = \"PATH\"\n");
        load_fails("@/project.toml:1:7: 'env': expected an array, found a string");
}

Test(policy_config, control_bytes_in_messages_are_masked)
{
        write_file(project_path, "env = [\"A\\u0007B\"]\n");
        load_fails("'env': expected a variable name ([A-Za-z_][A-Za-z0-9_]*), found 'A?B'");
}

Test(policy_config, preset_precedence)
{
        write_file(user_path, "preset = \"build\"\n");
        struct policy_config c = {0};
        load_ok(&c);
        cr_assert_str_eq(c.preset, "build", "the user's default");
        policy_config_free(&c);
        write_file(project_path, "preset = \"review\"\n");
        load_ok(&c);
        cr_assert_str_eq(c.preset, "review", "the project's over the user's");
        policy_config_free(&c);
}

Test(policy_config, project_preset_must_be_allowed_by_the_floor)
{
        need_root();
        write_file(floor_path, "presets = [\"review\"]\n");
        write_file(project_path, "\n\npreset = \"auto\"\n");
        load_fails(
            "@/project.toml:3:10: preset 'auto' is not allowed by @/etc/floor.toml (allowed: "
            "review)");
}

Test(policy_config, absent_user_and_project_keep_the_floor)
{
        need_root();
        write_file(floor_path, "grant_roots = [\"@/roots\", \"/srv\"]\npresets = [\"dev\"]\n");
        struct policy_config c = {0};
        load_ok(&c);
        assert_strv(c.grant_roots, (const char *const[]){"@/roots", "/srv", NULL});
        cr_assert_str_eq(c.preset, "dev");
        cr_assert_eq(c.n_grants, 0);
        policy_config_free(&c);
}

Test(policy_config, unreadable_layer_is_an_error_not_an_absent_one)
{
        cr_assert_eq(mkdir(user_path, 0755), 0);
        _cleanup_error_ struct umw_error *err = NULL;
        struct policy_config c = {0};
        cr_assert_lt(policy_load(&paths, home, &c, &err), 0);
        cr_assert_not_null(strstr(err->msg, user_path), "%s", err->msg);
}
