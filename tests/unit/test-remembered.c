/* Remembered grants (face/remembered.h): added, replaced by path, read
 * back; a bad line refuses with file and line. */
#include "face/remembered.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/umwt-remembered.XXXXXX";

static void setup(void)
{
        cr_assert_not_null(mkdtemp(dir));
        setenv("XDG_STATE_HOME", dir, 1);
}

static void teardown(void)
{
        char cmd[64];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        cr_assert_eq(system(cmd), 0);
}

TestSuite(remembered, .init = setup, .fini = teardown);

Test(remembered, absent_is_none_added_and_replaced)
{
        struct remembered r;
        struct umw_error *err = NULL;
        cr_assert_eq(remembered_read("proj-1", &r, &err), 0);
        cr_assert_eq(r.n, 0);
        cr_assert_eq(remembered_add("proj-1", "/srv/a", false, &err), 0);
        cr_assert_eq(remembered_add("proj-1", "/srv/b", true, &err), 0);
        cr_assert_eq(remembered_add("proj-1", "/srv/a", true, &err), 0); /* replaced */
        cr_assert_eq(remembered_read("proj-1", &r, &err), 0);
        cr_assert_eq(r.n, 2);
        cr_assert_str_eq(r.path[0], "/srv/b");
        cr_assert_str_eq(r.path[1], "/srv/a");
        cr_assert(r.rw[0] && r.rw[1]);
        remembered_free(&r);
}

Test(remembered, a_bad_line_names_file_and_line)
{
        char path[128];
        snprintf(path, sizeof(path), "%s/umwelt/proj-2", dir);
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "mkdir -p %s && printf 'ro /srv/a\\nrx /srv/b\\n' >%s/%s", path,
                 path, REMEMBERED_FILE);
        cr_assert_eq(system(cmd), 0);
        struct remembered r;
        struct umw_error *err = NULL;
        cr_assert_lt(remembered_read("proj-2", &r, &err), 0);
        cr_assert_not_null(strstr(err->msg, "relay-grants:2: expected \"ro PATH\" or \"rw PATH\""),
                           "%s", err->msg);
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
        umw_error_free(err);
}
