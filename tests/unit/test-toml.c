/* The strict TOML reader: accepted documents and the trees they give, every
 * kind of refusal at its exact line and column, and the schema helpers. */
#include "policy/toml.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A compact rendering of a tree: {k=v,...} [v,...] "s" 12 true, with
 * non-printable bytes of strings as \xNN. */
static void dump(const struct toml_value *v, FILE *f)
{
        switch (v->kind) {
        case TOML_TABLE:
                fputc('{', f);
                for (size_t i = 0; i < v->table.n; i++)
                        fprintf(f, "%s%s=", i ? "," : "", v->table.entries[i].key),
                            dump(v->table.entries[i].value, f);
                fputc('}', f);
                break;
        case TOML_ARRAY:
                fputc('[', f);
                for (size_t i = 0; i < v->array.n; i++)
                        fputs(i ? "," : "", f), dump(v->array.items[i], f);
                fputc(']', f);
                break;
        case TOML_STRING:
                fputc('"', f);
                for (const unsigned char *s = (const unsigned char *)v->string; *s; s++)
                        if (*s < 0x20 || *s >= 0x7f)
                                fprintf(f, "\\x%02x", *s);
                        else
                                fputc(*s, f);
                fputc('"', f);
                break;
        case TOML_INTEGER:
                fprintf(f, "%" PRId64, v->integer);
                break;
        case TOML_BOOL:
                fputs(v->boolean ? "true" : "false", f);
                break;
        }
}

static char *dump_string(const struct toml_value *v)
{
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);
        cr_assert_not_null(f);
        dump(v, f);
        cr_assert_eq(fclose(f), 0);
        return s;
}

static struct toml_value *parse_ok(const char *text)
{
        struct toml_value *root = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(toml_parse(text, strlen(text), "t.toml", &root, &err), 0, "%s: %s", text,
                     err ? err->msg : "?");
        cr_assert_null(err);
        return root;
}

struct valid_case {
        const char *text, *tree;
};

static const struct valid_case valid[] = {
    {"", "{}"},
    {"# only a comment\n\n   \t\n", "{}"},
    {"a = 1\nb = -2\nc = +3\nd = 0\ne = -0\nf = 1_000_000\n", "{a=1,b=-2,c=3,d=0,e=0,f=1000000}"},
    {"max = 9223372036854775807\nmin = -9223372036854775808",
     "{max=9223372036854775807,min=-9223372036854775808}"},
    {"t = true\nf = false", "{t=true,f=false}"},
    {"s = \"plain\"\nl = 'C:\\no\\escapes'", "{s=\"plain\",l=\"C:\\no\\escapes\"}"},
    {"e = \"q\\\" b\\\\ n\\n t\\t r\\r b\\b f\\f\"",
     "{e=\"q\" b\\ n\\x0a t\\x09 r\\x0d b\\x08 f\\x0c\"}"},
    {"u = \"\\u00e9\\U0001F600\\u0041\"", "{u=\"\\xc3\\xa9\\xf0\\x9f\\x98\\x80A\"}"},
    {"raw = \"é\tx\"", "{raw=\"\\xc3\\xa9\\x09x\"}"},
    {"\"quoted key\" = 1\n'lit key' = 2\nbare-key_9 = 3\n1234 = 4\n\"\" = 5",
     "{quoted key=1,lit key=2,bare-key_9=3,1234=4,=5}"},
    {"a=1#no space needed\r\nb = 2 # crlf\r\n", "{a=1,b=2}"},
    {"a = []\nb = [1, 2, 3]\nc = [ \"x\" , 'y' ]", "{a=[],b=[1,2,3],c=[\"x\",\"y\"]}"},
    {"a = [\n  1, # one\n  2,\n\n  # comment line\n  3,\n]\n", "{a=[1,2,3]}"},
    {"a = [[1, 2], [\"x\"], []]", "{a=[[1,2],[\"x\"],[]]}"},
    {"a = 1\n[t]\nb = 'x'\n[u]\n", "{a=1,t={b=\"x\"},u={}}"},
    {"[ \"spaced name\" ]\nk = 1", "{spaced name={k=1}}"},
    {"[[grant]]\npath = \"/srv/data\"\nmode = \"ro\"\n\n[[grant]]\npath = \"/x\"\n[other]\n",
     "{grant=[{path=\"/srv/data\",mode=\"ro\"},{path=\"/x\"}],other={}}"},
    {"[[g]]\n[t]\n[[g]]\na = true", "{g=[{},{a=true}],t={}}"},
    {"z = 1\ny = 2\nx = 3\nw = 4", "{z=1,y=2,x=3,w=4}"},
    {"a = 1 ", "{a=1}"},
    {"[[action]]\nname = 'a'\n[action.params]\nsite = ['x']\n[[action]]\nname = 'b'\n"
     "[action.env]\nLANG = 'C'",
     "{action=[{name=\"a\",params={site=[\"x\"]}},{name=\"b\",env={LANG=\"C\"}}]}"},
    {"[t]\n[ t . \"u v\" ]\nk = 1", "{t={u v={k=1}}}"},
};

Test(toml, valid_documents_give_their_trees)
{
        for (size_t i = 0; i < ARRAY_SIZE(valid); i++) {
                struct toml_value *root = parse_ok(valid[i].text);
                _cleanup_free_ char *got = dump_string(root);
                cr_expect_str_eq(got, valid[i].tree, "case %zu: %s gave %s", i, valid[i].text, got);
                toml_free(root);
        }
}

struct invalid_case {
        const char *text;
        const char *where;  /* "LINE:COLUMN" */
        const char *reason; /* a word of the message */
};

static const struct invalid_case invalid[] = {
    /* strings */
    {"s = \"a\\qb\"", "1:7", "bad escape"},
    {"s = \"a\\u12\"", "1:7", "hexadecimal digits"},
    {"s = \"\\UFFFFFFFF\"", "1:6", "scalar"},
    {"s = \"\\uD800\"", "1:6", "scalar"},
    {"s = \"\\u0000\"", "1:6", "NUL"},
    {"s = \"\\e\"", "1:6", "bad escape"},
    {"s = \"abc\nt = 1", "1:5", "unterminated string"},
    {"s = 'abc", "1:5", "unterminated string"},
    {"s = \"a\\\"", "1:5", "unterminated string"},
    {"s = \"\"\"multi\"\"\"", "1:5", "multi-line strings"},
    {"s = '''multi'''", "1:5", "multi-line strings"},
    {"s = \"a\x01b\"", "1:7", "control character"},
    {"s = 'a\x7f'", "1:7", "control character"},
    {"s = \"a\rb\"", "1:7", "control character"},
    {"s = \"\xc3\"", "1:6", "UTF-8"},
    {"a = 1\n# caf\xc3\xa9 \xff\n", "2:8", "UTF-8"},
    {"s = \"\xc0\xaf\"", "1:6", "UTF-8"},
    {"s = \"\xed\xa0\x80\"", "1:6", "UTF-8"},
    {"# comment \x02\n", "1:11", "control character"},
    /* keys and structure */
    {"a = 1\na = 2", "2:1", "duplicate key"},
    {"[t]\nk = 1\nk = 2", "3:1", "duplicate key"},
    {"\"a\" = 1\na = 2", "2:1", "duplicate key"},
    {"a.b = 1", "1:2", "dotted keys"},
    {"a . b = 1", "1:3", "dotted keys"},
    {"a 1", "1:3", "expected '='"},
    {"a\n= 1", "1:2", "expected '='"},
    {"a =", "1:4", "expected a value"},
    {"a = \n", "1:5", "expected a value"},
    {"= 1", "1:1", "expected a key"},
    {"a = 1 2", "1:7", "end of the line"},
    {"a = \"x\" y", "1:9", "end of the line"},
    {"a = truex", "1:5", "bare word"},
    {"a = True", "1:5", "expected a value"},
    {"a = 1\r", "1:6", "carriage return"},
    /* tables */
    {"[t]\n[t]", "2:1", "defined twice"},
    {"t = 1\n[t]", "2:1", "redefines"},
    {"[t]\n[[t]]", "2:1", "redefines"},
    {"t = [1]\n[[t]]", "2:1", "redefines"},
    {"[[t]]\n[t]", "2:1", "redefines"},
    {"[a.b]", "1:1", "expected a [a] or [[a]] header before it"},
    {"a = 1\n[a.b]", "2:1", "expected a [a] or [[a]] header before it"},
    {"[a]\n[a.b.c]", "2:5", "table names of three keys"},
    {"[a]\n[a.b]\n[a.b]", "3:1", "defined twice"},
    {"[a]\nb = 1\n[a.b]", "3:1", "redefines"},
    {"[[a.b]]", "1:4", "dotted table names"},
    {"[]", "1:2", "expected a key"},
    {"[t", "1:3", "expected ']'"},
    {"[[t]", "1:4", "expected ']]'"},
    {"[t] x", "1:5", "end of the line"},
    /* values TOML has and this reader does not */
    {"f = 1.5", "1:5", "floats"},
    {"f = 1e6", "1:5", "floats"},
    {"f = -inf", "1:5", "floats"},
    {"f = nan", "1:5", "floats"},
    {"f = 01.5", "1:5", "floats"},
    {"d = 1979-05-27", "1:5", "dates"},
    {"d = 07:32:00", "1:5", "dates"},
    {"d = 1979-05-27T07:32:00Z", "1:5", "dates"},
    {"d = 1-2", "1:6", "end of the line"},
    {"n = 12nan", "1:7", "end of the line"},
    {"d = 10_00-01-01", "1:10", "end of the line"},
    {"t = { a = 1 }", "1:5", "inline tables"},
    {"h = 0x1F", "1:5", "hexadecimal"},
    {"o = 0o17", "1:5", "octal"},
    /* integers */
    {"i = 012", "1:5", "leading zeros"},
    {"i = -0_1", "1:5", "leading zeros"},
    {"i = 1__2", "1:6", "between two digits"},
    {"i = 1_", "1:6", "between two digits"},
    {"i = _1", "1:5", "expected a value"},
    {"i = +", "1:5", "digit after the sign"},
    {"i = 9223372036854775808", "1:5", "64-bit range"},
    {"i = -9223372036854775809", "1:5", "64-bit range"},
    /* arrays */
    {"a = [1, \"x\"]", "1:9", "mixed types"},
    {"a = [[1], 2]", "1:11", "mixed types"},
    {"a = [true,\n  1]", "2:3", "mixed types"},
    {"a = [1 2]", "1:8", "expected ',' or ']'"},
    {"a = [1,,]", "1:8", "expected a value"},
    {"a = [,]", "1:6", "expected a value"},
    {"a = [1,\n2", "1:5", "unterminated array"},
    {"a = [", "1:5", "unterminated array"},
};

Test(toml, invalid_documents_are_refused_where_they_go_wrong)
{
        for (size_t i = 0; i < ARRAY_SIZE(invalid); i++) {
                const struct invalid_case *c = &invalid[i];
                struct toml_value *root = NULL;
                _cleanup_error_ struct umw_error *err = NULL;
                int r = toml_parse(c->text, strlen(c->text), "bad.toml", &root, &err);
                cr_expect_lt(r, 0, "case %zu accepted: %s", i, c->text);
                cr_expect_null(root, "case %zu", i);
                if (!err)
                        continue;
                char where[32];
                snprintf(where, sizeof(where), "bad.toml:%s: ", c->where);
                cr_expect_eq(err->kind, UMW_EXIT_CONFIG, "case %zu", i);
                cr_expect(strncmp(err->msg, where, strlen(where)) == 0,
                          "case %zu (%s): want %s, got: %s", i, c->text, where, err->msg);
                cr_expect_not_null(strstr(err->msg, c->reason), "case %zu (%s): want '%s' in: %s",
                                   i, c->text, c->reason, err->msg);
                cr_expect_null(strchr(err->msg, '\n'), "case %zu: one line", i);
        }
}

Test(toml, nul_byte_in_text_is_refused)
{
        static const char text[] = "a = \"x\0y\"";
        struct toml_value *root = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(toml_parse(text, sizeof(text) - 1, "nul.toml", &root, &err), 0);
        cr_assert_str_eq(err->msg, "nul.toml:1:7: control character 0x00 in a string (write it "
                                   "as an escape)");
}

/* Depth is bounded so that a hostile file cannot exhaust the stack. */
Test(toml, nesting_is_bounded)
{
        char text[128] = "a = ";
        size_t n = strlen(text);
        for (int i = 0; i < TOML_MAX_DEPTH; i++)
                text[n++] = '[';
        for (int i = 0; i < TOML_MAX_DEPTH; i++)
                text[n++] = ']';
        text[n] = '\0';
        toml_free(parse_ok(text));

        char deeper[128] = "a = ";
        n = strlen(deeper);
        for (int i = 0; i <= TOML_MAX_DEPTH; i++)
                deeper[n++] = '[';
        deeper[n] = '\0';
        struct toml_value *root = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(toml_parse(deeper, n, "deep.toml", &root, &err), 0);
        cr_assert_str_eq(err->msg, "deep.toml:1:37: arrays nested deeper than 32");
}

Test(toml, tables_are_bounded)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        for (int i = 0; i <= TOML_MAX_TABLE_KEYS; i++)
                fprintf(f, "k%d = %d\n", i, i);
        fclose(f);
        struct toml_value *root = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(toml_parse(text, len, "big.toml", &root, &err), 0);
        cr_assert_str_eq(err->msg, "big.toml:1025:1: more than 1024 keys in one table");
        free(text);
}

Test(toml, values_and_keys_remember_where_they_are)
{
        _cleanup_toml_ struct toml_value *root =
            parse_ok("# policy\npreset = \"dev\"\n\n[[grant]]\n  path = '/srv'\n  list = [ 1,\n"
                     "    2 ]\n");
        const struct toml_entry *e = toml_table_entry(root, "preset");
        cr_assert_not_null(e);
        cr_expect_eq(e->line, 2);
        cr_expect_eq(e->column, 1);
        cr_expect_eq(e->value->line, 2);
        cr_expect_eq(e->value->column, 10);

        const struct toml_value *grants = toml_table_get(root, "grant");
        cr_assert_not_null(grants);
        cr_assert_eq(grants->kind, TOML_ARRAY);
        cr_expect(grants->is_table_array);
        cr_assert_eq(grants->array.n, 1);
        const struct toml_value *g = grants->array.items[0];
        cr_expect_eq(g->line, 4);
        cr_expect_eq(g->column, 1);
        e = toml_table_entry(g, "path");
        cr_expect_eq(e->line, 5);
        cr_expect_eq(e->column, 3);
        cr_expect_eq(e->value->column, 10);
        const struct toml_value *list = toml_table_get(g, "list");
        cr_expect_eq(list->array.items[1]->line, 7);
        cr_expect_eq(list->array.items[1]->column, 5);
}

Test(toml, columns_count_characters_not_bytes)
{
        struct toml_value *root = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        static const char text[] = "\"é€😀\" = 1.0";
        cr_assert_lt(toml_parse(text, strlen(text), "u.toml", &root, &err), 0);
        cr_assert_str_eq(err->msg, "u.toml:1:9: floats are not supported: expected an integer");
}

Test(toml, lookups)
{
        _cleanup_toml_ struct toml_value *root = parse_ok("a = 1\n[t]\nb = 'x'\n");
        cr_expect_null(toml_table_get(root, "b"));
        cr_expect_null(toml_table_get(toml_table_get(root, "a"), "b"));
        cr_expect_null(toml_table_get(NULL, "a"));
        cr_expect_str_eq(toml_table_get(toml_table_get(root, "t"), "b")->string, "x");
        cr_expect_str_eq(toml_kind_name(TOML_INTEGER), "an integer");
        cr_expect_str_eq(toml_kind_name(TOML_TABLE), "a table");
}

static const char *const grant_keys[] = {"path", "mode", NULL};

Test(toml, check_keys_accepts_known_keys)
{
        _cleanup_toml_ struct toml_value *root = parse_ok("mode = 'ro'\npath = '/srv'\n");
        _cleanup_error_ struct umw_error *err = NULL;
        cr_expect_eq(toml_check_keys(root, grant_keys, "p.toml", &err), 0);
        cr_expect_null(err);
}

Test(toml, check_keys_names_the_first_unknown_key_where_it_is)
{
        _cleanup_toml_ struct toml_value *root =
            parse_ok("path = '/srv'\n  \"mo\\u0007de\" = 'ro'\nother = 1\n");
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(toml_check_keys(root, grant_keys, "p.toml", &err), 0);
        cr_expect_eq(err->kind, UMW_EXIT_CONFIG);
        cr_expect_str_eq(err->msg,
                         "p.toml:2:3: unknown key 'mo\\x07de': expected one of path, mode");
}

Test(toml, long_keys_are_cut_in_messages_between_characters)
{
        char text[128];
        text[0] = '"';
        memset(text + 1, 'a', 71);
        strcpy(text + 72, "\xc3\xa9\xc3\xa9\" = 1");
        _cleanup_toml_ struct toml_value *root = parse_ok(text);
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(toml_check_keys(root, grant_keys, "p.toml", &err), 0);
        char want[160];
        snprintf(want, sizeof(want),
                 "p.toml:1:1: unknown key '%.71s\xc3\xa9...': expected one of "
                 "path, mode",
                 text + 1);
        cr_expect_str_eq(err->msg, want);
}

Test(toml, check_keys_with_nothing_allowed)
{
        static const char *const none[] = {NULL};
        _cleanup_toml_ struct toml_value *root = parse_ok("[t]\n[u]\nx = 1\n");
        _cleanup_error_ struct umw_error *err = NULL;
        cr_expect_eq(toml_check_keys(toml_table_get(root, "t"), none, "p.toml", &err), 0);
        cr_assert_lt(toml_check_keys(toml_table_get(root, "u"), none, "p.toml", &err), 0);
        cr_expect_str_eq(err->msg, "p.toml:3:1: unknown key 'x': this table takes no keys");
}

Test(toml, check_keys_wants_a_table)
{
        _cleanup_toml_ struct toml_value *root = parse_ok("\na = [1]\n");
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(toml_check_keys(toml_table_get(root, "a"), grant_keys, "p.toml", &err), 0);
        cr_expect_str_eq(err->msg, "p.toml:2:5: expected a table, found an array");
}

Test(toml, typed_getters)
{
        _cleanup_toml_ struct toml_value *root = parse_ok("s = 'x'\ni = -7\nb = true\na = ['q']\n");
        const char *s = "unset";
        int64_t i = 0;
        bool b = false;
        const struct toml_value *a = NULL;
        struct umw_error *err = NULL;
        cr_expect_eq(toml_get_string(root, "s", "g.toml", &s, &err), 1);
        cr_expect_str_eq(s, "x");
        cr_expect_eq(toml_get_integer(root, "i", "g.toml", &i, &err), 1);
        cr_expect_eq(i, -7);
        cr_expect_eq(toml_get_bool(root, "b", "g.toml", &b, &err), 1);
        cr_expect(b);
        cr_expect_eq(toml_get(root, "a", TOML_ARRAY, "g.toml", &a, &err), 1);
        cr_expect_eq(a->array.n, 1);
        s = "unset";
        cr_expect_eq(toml_get_string(root, "missing", "g.toml", &s, &err), 0);
        cr_expect_str_eq(s, "unset");
        cr_expect_null(err);

        cr_assert_lt(toml_get_string(root, "i", "g.toml", &s, &err), 0);
        cr_expect_str_eq(err->msg, "g.toml:2:5: 'i': expected a string, found an integer");
        umw_error_free(err);
        err = NULL;
        cr_assert_lt(toml_get_bool(root, "a", "g.toml", &b, &err), 0);
        cr_expect_str_eq(err->msg, "g.toml:4:5: 'a': expected a boolean, found an array");
        umw_error_free(err);
}

static char *write_temp(const char *text)
{
        char *path = strdup("/tmp/test-toml-XXXXXX");
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        return path;
}

Test(toml, parse_file_reads_and_names_the_file)
{
        _cleanup_free_ char *path = write_temp("[[grant]]\npath = \"/srv\"\n");
        _cleanup_toml_ struct toml_value *root = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(toml_parse_file(path, &root, &err), 0, "%s", err ? err->msg : "?");
        cr_expect_str_eq(toml_table_get(root, "grant")->array.items[0]->table.entries[0].key,
                         "path");
        unlink(path);
}

Test(toml, parse_file_errors_name_the_file)
{
        _cleanup_free_ char *path = write_temp("ok = 1\nbad = 1.5\n");
        struct toml_value *root = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_lt(toml_parse_file(path, &root, &err), 0);
        char want[256];
        snprintf(want, sizeof(want), "%s:2:7: floats are not supported: expected an integer", path);
        cr_expect_str_eq(err->msg, want);
        unlink(path);
}

Test(toml, parse_file_refuses_what_is_not_a_small_regular_file)
{
        struct toml_value *root = NULL;
        struct umw_error *err = NULL;
        cr_assert_lt(toml_parse_file("/tmp", &root, &err), 0);
        cr_expect_str_eq(err->msg, "/tmp: not a regular file");
        umw_error_free(err);
        err = NULL;

        char dir[] = "/tmp/test-toml-XXXXXX", fifo[64];
        cr_assert_not_null(mkdtemp(dir));
        snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
        cr_assert_eq(mkfifo(fifo, 0600), 0);
        cr_assert_lt(toml_parse_file(fifo, &root, &err), 0);
        cr_expect_not_null(strstr(err->msg, "not a regular file"), "%s", err->msg);
        unlink(fifo);
        rmdir(dir);
        umw_error_free(err);
        err = NULL;

        char big_path[] = "/tmp/test-toml-big-XXXXXX";
        int fd = mkstemp(big_path);
        cr_assert_geq(fd, 0);
        cr_assert_eq(ftruncate(fd, TOML_MAX_FILE_SIZE + 1), 0);
        close(fd);
        cr_assert_lt(toml_parse_file(big_path, &root, &err), 0);
        cr_expect_not_null(strstr(err->msg, "larger than"), "%s", err->msg);
        cr_expect_eq(err->kind, UMW_EXIT_CONFIG);
        unlink(big_path);
        umw_error_free(err);
        cr_expect_null(root);
}
