#include "common/error.h"
#include "common/json.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static yajl_val parse(const char *text)
{
        yajl_val tree = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(umw_json_parse(text, "t.json", &tree, &err), 0, "%s: %s", text,
                     err ? err->msg : "?");
        return tree;
}

/* A location's parent must outlive it: the root of at() is static. */
static struct umw_jloc at(const char *key)
{
        static struct umw_jloc root = {.file = "t.json"};
        return umw_jloc_key(&root, key);
}

/* Reads the first array element of text as int64 in [min, max]; returns the
 * error message (malloc'd) or NULL on success with *out set. */
static char *read_int64(const char *text, int64_t min, int64_t max, int64_t *out)
{
        yajl_val tree = parse(text);
        struct umw_jloc loc = at("n");
        struct umw_error *err = NULL;
        char *msg = NULL;
        if (umw_json_int64(tree->u.array.values[0], &loc, min, max, out, &err) < 0) {
                cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
                msg = strdup(err->msg);
        } else {
                cr_assert_null(err);
        }
        umw_error_free(err);
        yajl_tree_free(tree);
        return msg;
}

static char *read_uint64(const char *text, uint64_t *out)
{
        yajl_val tree = parse(text);
        struct umw_jloc loc = at("u");
        struct umw_error *err = NULL;
        char *msg = NULL;
        if (umw_json_uint64(tree->u.array.values[0], &loc, out, &err) < 0)
                msg = strdup(err->msg);
        umw_error_free(err);
        yajl_tree_free(tree);
        return msg;
}

Test(json, jloc_paths)
{
        struct umw_jloc root, a, b, c;
        char path[UMW_JLOC_PATH_MAX];
        umw_jloc_init(&root, "config.json");
        cr_assert_str_eq(umw_jloc_path(&root, path), "");
        a = umw_jloc_key(&root, "linux");
        b = umw_jloc_index(&a, 12);
        c = umw_jloc_key(&b, "type");
        cr_assert_str_eq(umw_jloc_path(&a, path), ".linux");
        cr_assert_str_eq(umw_jloc_path(&b, path), ".linux[12]");
        cr_assert_str_eq(umw_jloc_path(&c, path), ".linux[12].type");
        cr_assert_str_eq(c.file, "config.json");
}

Test(json, jloc_root_at_a_path)
{
        struct umw_jloc root, a;
        char path[UMW_JLOC_PATH_MAX];
        umw_jloc_init_at(&root, "config.json", ".linux.resources");
        a = umw_jloc_index(&root, 0);
        cr_assert_str_eq(umw_jloc_path(&root, path), ".linux.resources");
        cr_assert_str_eq(umw_jloc_path(&a, path), ".linux.resources[0]");
}

/* A key from the input cannot break the one-line message, and a path longer
 * than a message shows is cut, not overrun. */
Test(json, jloc_keys_shown_safely)
{
        struct umw_jloc root, a, b;
        char path[UMW_JLOC_PATH_MAX];
        char long_key[2 * UMW_JLOC_PATH_MAX];
        memset(long_key, 'k', sizeof(long_key) - 1);
        long_key[sizeof(long_key) - 1] = '\0';
        umw_jloc_init(&root, "f.json");
        a = umw_jloc_key(&root, "a\nb\x7f");
        cr_assert_str_eq(umw_jloc_path(&a, path), ".a?b?");
        b = umw_jloc_key(&a, long_key);
        cr_assert_eq(strlen(umw_jloc_path(&b, path)), UMW_JLOC_PATH_MAX - 1);
        cr_assert(strncmp(path, ".a?b?.kkk", 9) == 0, "%s", path);
}

Test(json, expected_message_at_root_and_below)
{
        struct umw_jloc root;
        umw_jloc_init(&root, "f.json");
        struct umw_error *err = NULL;
        cr_assert_lt(umw_json_expected(&root, "an object", &err), 0);
        cr_assert_str_eq(err->msg, "f.json: .: expected an object");
        umw_error_free(err);
        err = NULL;
        struct umw_jloc k = umw_jloc_index(&root, 3);
        umw_json_expected(&k, "a string", &err);
        cr_assert_str_eq(err->msg, "f.json: [3]: expected a string");
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
        umw_error_free(err);
}

Test(json, int64_ranges)
{
        int64_t v = 0;
        char *msg;
        cr_assert_null(read_int64("[0]", 0, 10, &v));
        cr_assert_eq(v, 0);
        cr_assert_null(read_int64("[10]", 0, 10, &v));
        cr_assert_eq(v, 10);
        /* yajl itself cannot hold -2^63 as an integer; one above it is the floor. */
        cr_assert_null(read_int64("[-9223372036854775807]", INT64_MIN, 0, &v));
        cr_assert_eq(v, INT64_MIN + 1);
        msg = read_int64("[11]", 0, 10, &v);
        cr_assert_str_eq(msg, "t.json: .n: expected an integer from 0 to 10");
        free(msg);
        msg = read_int64("[-1]", 0, 10, &v);
        cr_assert_not_null(msg);
        free(msg);
        msg = read_int64("[1.0]", 0, 10, &v);
        cr_assert_not_null(msg, "a double is not an integer");
        free(msg);
        msg = read_int64("[\"5\"]", 0, 10, &v);
        cr_assert_not_null(msg, "a string is not an integer");
        free(msg);
        msg = read_int64("[9223372036854775808]", INT64_MIN, INT64_MAX, &v);
        cr_assert_not_null(msg, "2^63 does not fit");
        free(msg);
}

Test(json, uint64_full_range)
{
        uint64_t v = 0;
        char *msg;
        cr_assert_null(read_uint64("[42]", &v));
        cr_assert_eq(v, 42);
        cr_assert_null(read_uint64("[9223372036854775807]", &v));
        cr_assert_eq(v, INT64_MAX);
        /* Above 2^63 yajl has only the raw text. */
        cr_assert_null(read_uint64("[9223372036854775808]", &v));
        cr_assert_eq(v, UINT64_C(9223372036854775808));
        cr_assert_null(read_uint64("[18446744073709551615]", &v));
        cr_assert_eq(v, UINT64_MAX);
        msg = read_uint64("[18446744073709551616]", &v);
        cr_assert_str_eq(msg, "t.json: .u: expected an unsigned 64-bit integer");
        free(msg);
        const char *bad[] = {"[-1]",   "[-18446744073709551615]", "[1.5]", "[1e3]", "[true]",
                             "[\"7\"]"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                msg = read_uint64(bad[i], &v);
                cr_expect_not_null(msg, "accepted %s", bad[i]);
                free(msg);
        }
}

Test(json, strv)
{
        yajl_val tree = parse("{\"a\":[\"x\",\"y\"],\"b\":[],\"c\":[\"x\",1],\"d\":\"x\"}");
        struct umw_error *err = NULL;
        const char **v = NULL;
        size_t n = 99;
        struct umw_jloc loc = at("a");
        cr_assert_eq(umw_json_strv(umw_json_member(tree, "a"), &loc, &v, &n, &err), 0);
        cr_assert_eq(n, 2);
        cr_assert_str_eq(v[0], "x");
        cr_assert_str_eq(v[1], "y");
        cr_assert_null(v[2]);
        free(v);

        loc = at("b");
        cr_assert_eq(umw_json_strv(umw_json_member(tree, "b"), &loc, &v, NULL, &err), 0);
        cr_assert_null(v[0]);
        free(v);

        v = NULL;
        loc = at("c");
        cr_assert_lt(umw_json_strv(umw_json_member(tree, "c"), &loc, &v, &n, &err), 0);
        cr_assert_null(v);
        cr_assert_str_eq(err->msg, "t.json: .c[1]: expected a string");
        umw_error_free(err);
        err = NULL;

        loc = at("d");
        cr_assert_lt(umw_json_strv(umw_json_member(tree, "d"), &loc, &v, &n, &err), 0);
        cr_assert_str_eq(err->msg, "t.json: .d: expected an array of strings");
        umw_error_free(err);
        yajl_tree_free(tree);
}

Test(json, member_treats_null_as_absent)
{
        yajl_val tree = parse("{\"a\":null,\"b\":false}");
        cr_assert_null(umw_json_member(tree, "a"));
        cr_assert_null(umw_json_member(tree, "zz"));
        cr_assert_not_null(umw_json_member(tree, "b"));
        cr_assert_null(umw_json_member(umw_json_member(tree, "b"), "x"), "not an object");
        yajl_tree_free(tree);
}

Test(json, typed_readers)
{
        yajl_val tree = parse("[true,false,\"s\",{},[]]");
        yajl_val *e = tree->u.array.values;
        struct umw_jloc loc = at("v");
        struct umw_error *err = NULL;
        bool b = false;
        const char *s = NULL;
        cr_assert_eq(umw_json_bool(e[0], &loc, &b, &err), 0);
        cr_assert(b);
        cr_assert_eq(umw_json_bool(e[1], &loc, &b, &err), 0);
        cr_assert_not(b);
        cr_assert_eq(umw_json_string(e[2], &loc, &s, &err), 0);
        cr_assert_str_eq(s, "s");
        cr_assert_eq(umw_json_object(e[3], &loc, &err), 0);
        cr_assert_eq(umw_json_array(e[4], &loc, &err), 0);
        cr_assert_null(err);
        cr_assert_lt(umw_json_bool(e[2], &loc, &b, &err), 0);
        cr_assert_str_eq(err->msg, "t.json: .v: expected true or false");
        umw_error_free(err);
        err = NULL;
        cr_assert_lt(umw_json_object(e[4], &loc, &err), 0);
        cr_assert_str_eq(err->msg, "t.json: .v: expected an object");
        umw_error_free(err);
        err = NULL;
        cr_assert_lt(umw_json_string(NULL, &loc, &s, &err), 0, "absent is not a string");
        umw_error_free(err);
        yajl_tree_free(tree);
}

Test(json, parse_error_is_one_line)
{
        yajl_val tree = NULL;
        struct umw_error *err = NULL;
        cr_assert_lt(umw_json_parse("{\"a\": [1, 2", "bad.json", &tree, &err), 0);
        cr_assert_null(tree);
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
        cr_assert_eq(strncmp(err->msg, "bad.json: invalid JSON: ", 24), 0, "%s", err->msg);
        cr_assert_null(strchr(err->msg, '\n'));
        umw_error_free(err);
}

Test(json, quote_escapes)
{
        char *q = umw_json_quote("a\"b\\c\n\x01");
        cr_assert_str_eq(q, "\"a\\\"b\\\\c\\n\\u0001\"");
        free(q);
        q = umw_json_quote("");
        cr_assert_str_eq(q, "\"\"");
        free(q);
}

Test(json, quote_round_trips)
{
        const char *s = "tab\there \xc3\xa9 \"quoted\"";
        char *q = umw_json_quote(s);
        char doc[128];
        snprintf(doc, sizeof(doc), "[%s]", q);
        yajl_val tree = parse(doc);
        cr_assert_str_eq(tree->u.array.values[0]->u.string, s);
        yajl_tree_free(tree);
        free(q);
}

Test(json, generator)
{
        yajl_gen g = umw_jgen_new(false);
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "id", "c1");
        umw_jgen_key_int(g, "pid", -7);
        umw_jgen_key_bool(g, "ok", true);
        umw_jgen_key_str(g, "none", NULL);
        umw_jgen_key(g, "list");
        yajl_gen_array_open(g);
        umw_jgen_str(g, "x");
        yajl_gen_array_close(g);
        yajl_gen_map_close(g);
        size_t len = 0;
        char *out = umw_jgen_finish(g, &len);
        const char *want = "{\"id\":\"c1\",\"pid\":-7,\"ok\":true,\"none\":\"\",\"list\":[\"x\"]}";
        cr_assert_str_eq(out, want);
        cr_assert_eq(len, strlen(want));
        free(out);
}

/* Whether a and b are the same tree, down to each number's flags and text. */
static void assert_same_tree(yajl_val a, yajl_val b, const char *where)
{
        cr_assert_eq(a->type, b->type, "%s: type", where);
        switch (a->type) {
        case yajl_t_string:
                cr_assert_str_eq(a->u.string, b->u.string, "%s", where);
                break;
        case yajl_t_number:
                cr_assert_str_eq(a->u.number.r, b->u.number.r, "%s", where);
                cr_assert_eq(a->u.number.flags, b->u.number.flags, "%s: flags of %s", where,
                             a->u.number.r);
                if (a->u.number.flags & YAJL_NUMBER_INT_VALID)
                        cr_assert_eq(a->u.number.i, b->u.number.i, "%s", where);
                if (a->u.number.flags & YAJL_NUMBER_DOUBLE_VALID)
                        cr_assert_eq(memcmp(&a->u.number.d, &b->u.number.d, sizeof(double)), 0,
                                     "%s", where);
                break;
        case yajl_t_object:
                cr_assert_eq(a->u.object.len, b->u.object.len, "%s: members", where);
                for (size_t i = 0; i < a->u.object.len; i++) {
                        cr_assert_str_eq(a->u.object.keys[i], b->u.object.keys[i], "%s", where);
                        assert_same_tree(a->u.object.values[i], b->u.object.values[i],
                                         a->u.object.keys[i]);
                }
                break;
        case yajl_t_array:
                cr_assert_eq(a->u.array.len, b->u.array.len, "%s: elements", where);
                for (size_t i = 0; i < a->u.array.len; i++)
                        assert_same_tree(a->u.array.values[i], b->u.array.values[i], where);
                break;
        default:
                break;
        }
}

static const char *const same_docs[] = {
    "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"/bin/sh\", \"-c\", \"true\"], "
    "\"env\": [], \"user\": {\"uid\": 0, \"gid\": 4294967295}}, \"empty\": {}, \"none\": [], "
    "\"n\": null, \"t\": true, \"f\": false, \"dup\": 1, \"dup\": 2, "
    "\"deep\": [[[{\"a\": [{}, [], \"\\u00e9\\n\\\"\"]}]]]}",
    "[0, -0, 1, -1, 9223372036854775807, 9223372036854775808, -9223372036854775807, "
    "-9223372036854775808, 18446744073709551615, 99999999999999999999, 1.5, -2.25e3, 1e400, "
    "0.1, 1E2]",
    "/* comments as yajl_tree_parse allows */ {\"a\": 1 // one\n}",
    "\"just a string\"",
    "42",
    "null",
    /* No item stored before the root closes (fuzz-spec found it, UBSan). */
    "{}",
    "[]",
};

Test(json, doc_same_tree_as_parse)
{
        for (size_t i = 0; i < sizeof(same_docs) / sizeof(same_docs[0]); i++) {
                yajl_val want = parse(same_docs[i]), got = NULL;
                _cleanup_error_ struct umw_error *err = NULL;
                cr_assert_eq(umw_json_parse_doc(same_docs[i], "t.json", &got, &err), 0, "%s: %s",
                             same_docs[i], err ? err->msg : "?");
                assert_same_tree(want, got, same_docs[i]);
                yajl_tree_free(want);
                umw_json_doc_free(got);
        }
}

/* A document larger than the arena's first block, as config.json is. */
Test(json, doc_spans_blocks)
{
        size_t n = 20000, len = 0;
        char *text = malloc(n * 16 + 16);
        cr_assert_not_null(text);
        len += (size_t)sprintf(text, "[");
        for (size_t i = 0; i < n; i++)
                len += (size_t)sprintf(text + len, "%s{\"k%zu\":[%zu]}", i ? "," : "", i % 10, i);
        sprintf(text + len, "]");
        yajl_val want = parse(text), got = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(umw_json_parse_doc(text, "t.json", &got, &err), 0);
        assert_same_tree(want, got, "big");
        yajl_tree_free(want);
        umw_json_doc_free(got);
        umw_json_doc_free(NULL);
        free(text);
}

Test(json, doc_errors_as_parse)
{
        static const char *const bad[] = {"",          "{",     "{\"a\":}", "[1,]",
                                          "{\"a\" 1}", "[1] 2", "\"\\x\"",  "nul"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                _cleanup_error_ struct umw_error *e1 = NULL;
                _cleanup_error_ struct umw_error *e2 = NULL;
                yajl_val t = NULL;
                cr_assert_lt(umw_json_parse(bad[i], "b.json", &t, &e1), 0, "%s", bad[i]);
                cr_assert_lt(umw_json_parse_doc(bad[i], "b.json", &t, &e2), 0, "%s", bad[i]);
                cr_assert_str_eq(e1->msg, e2->msg, "'%s'", bad[i]);
                cr_assert_eq(e2->kind, UMW_EXIT_CONFIG);
        }
}
