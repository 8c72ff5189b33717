/* face/layer_file.c: one path of a layer read, its parent opened, a tree
 * removed, all by fd and never through a link. */
#include "face/layer.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/test-layer-file.XXXXXX";
static int root = -1;

static void setup(void)
{
        cr_assert(mkdtemp(dir));
        root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert(root >= 0);
        cr_assert(mkdirat(root, "d", 0755) == 0);
        int fd = openat(root, "d/f", O_WRONLY | O_CREAT, 0644);
        cr_assert(fd >= 0 && write(fd, "text\n", 5) == 5);
        close(fd);
        cr_assert(symlinkat("/etc/shadow", root, "link") == 0);
        cr_assert(symlinkat("d", root, "dlink") == 0);
        cr_assert(mkfifoat(root, "fifo", 0644) == 0);
}

static void teardown(void)
{
        struct umw_error *err = NULL;
        int parent = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        layer_remove_tree(parent, strrchr(dir, '/') + 1, &err);
        umw_error_free(err);
        close(parent);
        close(root);
}

TestSuite(layer_file, .init = setup, .fini = teardown);

static int read_path(const char *path, char **out, size_t *len, mode_t *mode)
{
        struct umw_error *err = NULL;
        int r = layer_read_path(root, path, 1024, out, len, mode, &err);
        umw_error_free(err);
        return r;
}

Test(layer_file, a_file_is_read_whole)
{
        char *out;
        size_t len;
        mode_t mode;
        cr_assert_eq(read_path("d/f", &out, &len, &mode), 0);
        cr_expect(S_ISREG(mode) && len == 5 && memcmp(out, "text\n", 5) == 0);
        free(out);
}

Test(layer_file, a_link_is_its_text_never_its_target)
{
        char *out;
        size_t len;
        mode_t mode;
        cr_assert_eq(read_path("link", &out, &len, &mode), 0);
        cr_expect(S_ISLNK(mode));
        cr_expect_str_eq(out, "/etc/shadow");
        free(out);
}

Test(layer_file, a_link_on_the_way_is_refused)
{
        char *out;
        size_t len;
        mode_t mode;
        cr_expect_lt(read_path("dlink/f", &out, &len, &mode), 0);
        cr_expect_lt(read_path("../etc/passwd", &out, &len, &mode), 0);
}

Test(layer_file, absent_is_mode_0_and_a_fifo_is_refused_without_blocking)
{
        char *out;
        size_t len;
        mode_t mode;
        cr_expect_eq(read_path("none", &out, &len, &mode), 0);
        cr_expect_eq(mode, 0);
        cr_expect_lt(read_path("fifo", &out, &len, &mode), 0);
}

Test(layer_file, the_parent_is_made_part_by_part_and_never_through_a_link)
{
        struct umw_error *err = NULL;
        int fd = -1;
        size_t base;
        cr_assert_eq(layer_open_parent(root, "a/b/c.txt", true, &fd, &base, &err), 0);
        cr_expect_str_eq("a/b/c.txt" + base, "c.txt");
        close(fd);
        struct stat st;
        cr_expect(fstatat(root, "a/b", &st, 0) == 0 && S_ISDIR(st.st_mode));
        cr_expect_lt(layer_open_parent(root, "dlink/x", true, &fd, &base, &err), 0);
        umw_error_free(err);
}

Test(layer_file, a_tree_is_removed_even_with_a_000_directory_and_links_left_alone)
{
        struct umw_error *err = NULL;
        cr_assert(mkdirat(root, "t", 0755) == 0 && mkdirat(root, "t/work", 0) == 0);
        cr_assert(symlinkat("/etc", root, "t/etc") == 0);
        cr_expect_eq(layer_remove_tree(root, "t", &err), 0, "%s", err ? err->msg : "");
        struct stat st;
        cr_expect(fstatat(root, "t", &st, AT_SYMLINK_NOFOLLOW) < 0);
        cr_expect(stat("/etc/passwd", &st) == 0);
        umw_error_free(err);
}
