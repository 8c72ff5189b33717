/* policy/delivery_rules.c: the bucket of each path an agent's layer changed. */
#include "policy/delivery_rules.h"

#include <criterion/criterion.h>
#include <string.h>
#include <sys/stat.h>

static struct delivery_verdict judge_entry(struct delivery_entry e)
{
        struct delivery_verdict v;
        if (!e.len && e.path)
                e.len = strlen(e.path);
        delivery_classify(NULL, &e, &v);
        return v;
}

/* A new 0644 text file at path. */
static struct delivery_verdict judge(const char *path)
{
        return judge_entry((struct delivery_entry){.path = path, .mode = S_IFREG | 0644});
}

#define expect_bucket(v, b, why)                                                                   \
        do {                                                                                       \
                struct delivery_verdict v_ = (v);                                                  \
                cr_expect_eq(v_.bucket, (b), "%s: got %s (%s)", (why),                             \
                             delivery_bucket_name(v_.bucket), v_.reason ? v_.reason : "-");        \
        } while (0)

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Each of paths, a new text file, in bucket b with in_reason in its reason
 * (any reason where in_reason is NULL). */
static void expect_each(const char *const *paths, size_t n, enum delivery_bucket b,
                        const char *in_reason)
{
        for (size_t i = 0; i < n; i++) {
                struct delivery_verdict v = judge(paths[i]);
                expect_bucket(v, b, paths[i]);
                cr_expect(v.reason && (!in_reason || strstr(v.reason, in_reason)), "%s: %s",
                          paths[i], v.reason ? v.reason : "no reason");
        }
}

Test(delivery, ordinary_text_applies)
{
        expect_bucket(judge("src/main.c"), DELIVERY_APPLY, "src/main.c");
        expect_bucket(judge("README.md"), DELIVERY_APPLY, "README.md");
        expect_bucket(judge(".github/ISSUE_TEMPLATE.md"), DELIVERY_APPLY, ".github, not workflows");
        cr_expect_null(judge("a/b/c.txt").reason);
        /* Deleted and edited text too. */
        expect_bucket(
            judge_entry((struct delivery_entry){.path = "old.txt", .base_mode = S_IFREG | 0644}),
            DELIVERY_APPLY, "a deleted text file");
        expect_bucket(judge_entry((struct delivery_entry){
                          .path = "x.txt", .mode = S_IFREG | 0644, .base_mode = S_IFREG | 0600}),
                      DELIVERY_APPLY, "a permission change without x");
}

Test(delivery, every_spelling_of_dotgit_is_rejected)
{
        static const char *const paths[] = {
            ".git/hooks/pre-commit",
            ".GIT/config",
            "sub/.Git/HEAD",
            ".git./config",
            ".git /config",
            ".git. . ./x",
            "GIT~1/config",
            "git~1/hooks/x",
            ".git::$INDEX_ALLOCATION/x",
            /* HFS+ ignores these code points: U+200C, U+200D, U+FEFF. */
            ".g\xe2\x80\x8cit/config",
            "\xe2\x80\x8d.git/config",
            ".git\xef\xbb\xbf/x",
            ".git",
        };
        expect_each(paths, N_OF(paths), DELIVERY_REJECT, ".git");
        /* Deleting one is no different. */
        expect_bucket(
            judge_entry((struct delivery_entry){.path = ".git/config", .base_mode = S_IFREG}),
            DELIVERY_REJECT, "a deleted .git file");
        /* Names that only start like it are not .git. */
        expect_bucket(judge(".gitx/a"), DELIVERY_HOLD, ".gitx is a git-ish name, held");
        expect_bucket(judge("git/a"), DELIVERY_APPLY, "git/ is a name");
        expect_bucket(judge("x.git/a"), DELIVERY_APPLY, "x.git is a name");
}

Test(delivery, paths_that_leave_the_tree_are_rejected)
{
        static const char *const paths[] = {"/etc/passwd", "../x", "a/../../x", "a/./b",
                                            "a//b",        "a/",   ".",         "a\\..\\b"};
        expect_each(paths, N_OF(paths), DELIVERY_REJECT, NULL);
        expect_bucket(
            judge_entry((struct delivery_entry){.path = "a\0b", .len = 3, .mode = S_IFREG}),
            DELIVERY_REJECT, "a NUL inside");
        expect_bucket(judge(""), DELIVERY_REJECT, "empty");
}

Test(delivery, names_not_utf8_are_rejected)
{
        static const char *const paths[] = {"bad\xff", "a/\xc0\xae", "\xed\xa0\x80x", "\xe2\x80",
                                            "\xf4\x90\x80\x80"};
        expect_each(paths, N_OF(paths), DELIVERY_REJECT, "UTF-8");
        expect_bucket(judge("caf\xc3\xa9/\xe6\x96\x87.txt"), DELIVERY_APPLY, "valid UTF-8");
}

Test(delivery, special_files_unreadable_and_through_links_are_rejected)
{
        mode_t types[] = {S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK};
        for (size_t i = 0; i < 4; i++)
                expect_bucket(
                    judge_entry((struct delivery_entry){.path = "dev", .mode = types[i] | 0666}),
                    DELIVERY_REJECT, "a special file");
        expect_bucket(
            judge_entry((struct delivery_entry){.path = "a", .mode = S_IFREG, .unreadable = true}),
            DELIVERY_REJECT, "unreadable");
        expect_bucket(judge_entry((struct delivery_entry){
                          .path = "l/x", .mode = S_IFREG, .through_link = true}),
                      DELIVERY_REJECT, "through a link");
}

Test(delivery, what_host_tools_run_is_held)
{
        static const char *const paths[] = {
            ".gitmodules",
            ".gitattributes",
            "sub/.gitignore",
            ".umwelt.toml",
            ".envrc",
            "deep/dir/.envrc",
            ".vscode/tasks.json",
            ".idea/workspace.xml",
            ".devcontainer/devcontainer.json",
            ".bashrc",
            ".profile",
            ".zshrc",
            ".npmrc",
            ".cargo/config.toml",
            ".pre-commit-config.yaml",
            ".husky/pre-commit",
            ".github/workflows/ci.yml",
            ".VSCode/settings.json",
            "GITMOD~1",
        };
        expect_each(paths, N_OF(paths), DELIVERY_HOLD, NULL);
        expect_bucket(judge("cargo/config.toml"), DELIVERY_APPLY, "not .cargo");
        expect_bucket(judge("my.bashrc"), DELIVERY_APPLY, "a part, not a suffix");
}

Test(delivery, links_executables_binaries_and_large_files_are_held)
{
        expect_bucket(judge_entry((struct delivery_entry){.path = "l", .mode = S_IFLNK | 0777}),
                      DELIVERY_HOLD, "a symlink");
        expect_bucket(
            judge_entry((struct delivery_entry){.path = "run.sh", .mode = S_IFREG | 0755}),
            DELIVERY_HOLD, "a new executable");
        expect_bucket(judge_entry((struct delivery_entry){
                          .path = "run.sh", .mode = S_IFREG | 0644, .base_mode = S_IFREG | 0755}),
                      DELIVERY_HOLD, "x taken away");
        expect_bucket(judge_entry((struct delivery_entry){
                          .path = "run.sh", .mode = S_IFREG | 0755, .base_mode = S_IFREG | 0755}),
                      DELIVERY_HOLD, "an edited executable");
        expect_bucket(judge_entry((struct delivery_entry){
                          .path = "a", .mode = S_IFREG | 0644, .base_mode = S_IFLNK | 0777}),
                      DELIVERY_HOLD, "a link become a file");
        expect_bucket(judge_entry((struct delivery_entry){
                          .path = "a.png", .mode = S_IFREG | 0644, .binary = true}),
                      DELIVERY_HOLD, "binary");
        expect_bucket(judge_entry((struct delivery_entry){
                          .path = "big", .mode = S_IFREG | 0644, .size = DELIVERY_SIZE_LIMIT + 1}),
                      DELIVERY_HOLD, "over the limit");
        expect_bucket(judge_entry((struct delivery_entry){
                          .path = "big", .mode = S_IFREG | 0644, .size = DELIVERY_SIZE_LIMIT}),
                      DELIVERY_APPLY, "at the limit");
        expect_bucket(judge_entry((struct delivery_entry){
                          .path = "sub", .mode = S_IFDIR | 0755, .nested_repo = true}),
                      DELIVERY_HOLD, "a nested repository");
}

Test(delivery, the_user_config_extends_the_held_list)
{
        const char *const hold[] = {"Makefile", "scripts/ci", NULL};
        const char *const reasons[] = {"make runs it", NULL};
        struct delivery_rules r = {.size_limit = 10, .hold = hold, .reasons = reasons};
        struct delivery_entry e = {.path = "sub/Makefile", .len = 12, .mode = S_IFREG | 0644};
        struct delivery_verdict v;
        delivery_classify(&r, &e, &v);
        cr_expect_eq(v.bucket, DELIVERY_HOLD);
        cr_expect_str_eq(v.reason, "make runs it");
        e = (struct delivery_entry){.path = "scripts/ci/x", .len = 12, .mode = S_IFREG | 0644};
        delivery_classify(&r, &e, &v);
        cr_expect_str_eq(v.reason, "named in the user config");
        e = (struct delivery_entry){
            .path = "eleven.txt", .len = 10, .mode = S_IFREG | 0644, .size = 11};
        delivery_classify(&r, &e, &v);
        cr_expect_str_eq(v.reason, "larger than the size limit");
}

/* Direct mode's report looks at names one by one: the same .git test as
 * the reject rule, and the held names without their content's rules. */
Test(delivery, dotgit_part_in_every_spelling)
{
        static const char *const yes[] = {".git",  ".GIT",   ".git.",           ".git ",
                                          "git~1", ".git:x", ".g\xe2\x80\x8cit"};
        static const char *const no[] = {".github", ".gitignore", "git", ".git2", "x.git"};
        for (size_t i = 0; i < N_OF(yes); i++)
                cr_expect(delivery_part_is_dotgit(yes[i], strlen(yes[i])), "%s", yes[i]);
        for (size_t i = 0; i < N_OF(no); i++)
                cr_expect(!delivery_part_is_dotgit(no[i], strlen(no[i])), "%s", no[i]);
}

Test(delivery, held_by_name_ignores_content)
{
        struct delivery_entry envrc = {.path = "a/.envrc", .len = 8, .mode = S_IFREG | 0644};
        struct delivery_entry cargo = {.path = ".cargo/config.toml", .len = 18, .mode = S_IFREG};
        struct delivery_entry mods = {.path = ".gitmodules", .len = 11, .mode = S_IFREG};
        struct delivery_entry exe = {.path = "tool.sh", .len = 7, .mode = S_IFREG | 0755};
        cr_expect(strstr(delivery_held_by_name(NULL, &envrc), "direnv"));
        cr_expect(strstr(delivery_held_by_name(NULL, &cargo), "cargo"));
        cr_expect(strstr(delivery_held_by_name(NULL, &mods), "git reads it"));
        cr_expect_null(delivery_held_by_name(NULL, &exe), "an executable is held by content");
}
