/* face/deliver_record.c: the deliveries' numbers, and what deliveries up
 * to N delivered (review --since N). */
#include "face/deliver_int.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char state[] = "/tmp/test-deliver-record.XXXXXX";

static void put(const char *name, const char *text)
{
        char path[256];
        snprintf(path, sizeof(path), "%s/deliveries/%s", state, name);
        FILE *f = fopen(path, "w");
        cr_assert(f);
        fputs(text, f);
        fclose(f);
}

static void setup(void)
{
        char dir[256];
        cr_assert(mkdtemp(state));
        snprintf(dir, sizeof(dir), "%s/deliveries", state);
        cr_assert(mkdir(dir, 0700) == 0);
        put("1.json", "{\"files\":[{\"path\":\"a\",\"delivered\":true,\"blob\":\"aaa\"},"
                      "{\"path\":\"held\",\"delivered\":false,\"blob\":\"hhh\"}]}");
        put("2.json", "{\"files\":[{\"path\":\"a\",\"delivered\":true,\"blob\":\"bbb\"},"
                      "{\"path\":\"gone\",\"delivered\":true,\"blob\":\"\"}]}");
        /* Not records: a leading zero, another name, a temp file. */
        put("07.json", "{}");
        put("x.json", "{}");
        put(".record.1.tmp", "{}");
}

static void teardown(void)
{
        const char *names[] = {"1.json", "2.json", "4.json", "07.json", "x.json", ".record.1.tmp"};
        char path[256];
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                snprintf(path, sizeof(path), "%s/deliveries/%s", state, names[i]);
                unlink(path);
        }
        snprintf(path, sizeof(path), "%s/deliveries", state);
        rmdir(path);
        rmdir(state);
}

TestSuite(deliver_record, .init = setup, .fini = teardown);

Test(deliver_record, the_last_number_counts_only_records)
{
        struct umw_error *err = NULL;
        unsigned n = 99;
        cr_assert_eq(deliver_last_number(state, &n, &err), 0);
        cr_expect_eq(n, 2);
        put("4.json", "{\"files\":[]}");
        cr_assert_eq(deliver_last_number(state, &n, &err), 0);
        cr_expect_eq(n, 4, "a number left out is no end");
}

Test(deliver_record, no_deliveries_directory_is_none)
{
        struct umw_error *err = NULL;
        unsigned n = 99;
        cr_assert_eq(deliver_last_number("/nonexistent/state", &n, &err), 0);
        cr_expect_eq(n, 0);
}

Test(deliver_record, since_n_is_what_deliveries_up_to_n_delivered)
{
        struct umw_error *err = NULL;
        struct delivered m;
        cr_assert_eq(deliver_load(state, 1, &m, &err), 0);
        cr_expect_str_eq(delivered_blob(&m, "a"), "aaa");
        cr_expect_null(delivered_blob(&m, "held"), "held, not delivered");
        cr_expect_null(delivered_blob(&m, "gone"));
        delivered_free(&m);
        cr_assert_eq(deliver_load(state, 3, &m, &err), 0, "3 is missing: skipped");
        cr_expect_str_eq(delivered_blob(&m, "a"), "bbb", "the latest delivery wins");
        cr_expect_str_eq(delivered_blob(&m, "gone"), "", "a deletion");
        delivered_free(&m);
}

Test(deliver_record, a_broken_record_is_an_error_naming_it)
{
        struct umw_error *err = NULL;
        struct delivered m;
        put("1.json", "{\"files\":");
        cr_assert_lt(deliver_load(state, 1, &m, &err), 0);
        cr_expect(err && strstr(err->msg, "deliveries/1.json"), "%s", err ? err->msg : "");
        umw_error_free(err);
}
