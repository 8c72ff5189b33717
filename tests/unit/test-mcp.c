/* umwelt-mcp's parts that need no sandbox: the JSON-RPC reader, the
 * worker's frames, the tools' arguments, and the worker's file tools on a
 * directory of our own (inside a sandbox the kernel adds the walls; the
 * integration tests, mcp.sh, try them). */
#include "mcp/frame.h"
#include "mcp/rpc.h"
#include "mcp/tools.h"
#include "mcp/worker_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ rpc */

static int parse_code(const char *line)
{
        struct mcp_msg m;
        _cleanup_error_ struct umw_error *err = NULL;
        int code = mcp_msg_parse(line, &m, &err);
        mcp_msg_free(&m);
        return code;
}

Test(mcp_rpc, classes)
{
        cr_assert_eq(parse_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"), 0);
        cr_assert_eq(parse_code("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}"), 0);
        cr_assert_eq(parse_code("{nope"), MCP_PARSE_ERROR);
        cr_assert_eq(parse_code("[]"), MCP_INVALID_REQUEST);
        cr_assert_eq(parse_code("{\"id\":1,\"method\":\"ping\"}"), MCP_INVALID_REQUEST);
        cr_assert_eq(parse_code("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}"),
                     MCP_INVALID_REQUEST);
        cr_assert_eq(parse_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}"),
                     MCP_INVALID_REQUEST);
        cr_assert_eq(parse_code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[]}"),
                     MCP_INVALID_REQUEST);
}

static char *gen_text(const char *s, size_t n)
{
        yajl_gen g = umw_jgen_new(false);
        mcp_gen_text(g, s, n);
        return umw_jgen_finish(g, NULL);
}

Test(mcp_rpc, text_that_is_not_utf8_is_replaced)
{
        _cleanup_free_ char *a = gen_text("ok\xff\xc3(\xe2\x82\xac", 8);
        cr_assert_str_eq(a, "\"ok\xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac\"");
        _cleanup_free_ char *b = gen_text("a\0b", 3);
        cr_assert_str_eq(b, "\"a\\u0000b\"");
}

/* ------------------------------------------------------------ frames */

static void feed(struct mcp_frames *fr, const void *p, size_t n)
{
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(mcp_frames_room(fr, n, &err), 0);
        memcpy(fr->buf + fr->have, p, n);
        fr->have += n;
}

Test(mcp_frame, whole_frames_only)
{
        struct mcp_frames fr = {0};
        struct mcp_frame f = {.magic = MCP_FRAME_MAGIC, .id = 7, .kind = MCP_FRAME_TEXT, .len = 5};
        struct mcp_frame got;
        const char *t, *t2;
        _cleanup_error_ struct umw_error *err = NULL;
        feed(&fr, &f, sizeof(f));
        feed(&fr, "hel", 3);
        cr_assert_eq(mcp_frames_next(&fr, &got, &t, &t2, &err), 0);
        feed(&fr, "lo", 2);
        cr_assert_eq(mcp_frames_next(&fr, &got, &t, &t2, &err), 1);
        cr_assert_eq(got.id, 7);
        cr_assert_eq(memcmp(t, "hello", 5), 0);
        cr_assert_eq(mcp_frames_next(&fr, &got, &t, &t2, &err), 0);
        mcp_frames_free(&fr);
}

static int one_frame(struct mcp_frame f)
{
        struct mcp_frames fr = {0};
        struct mcp_frame got;
        const char *t, *t2;
        _cleanup_error_ struct umw_error *err = NULL;
        feed(&fr, &f, sizeof(f));
        int r = mcp_frames_next(&fr, &got, &t, &t2, &err);
        mcp_frames_free(&fr);
        return r;
}

Test(mcp_frame, headers_out_of_bounds_are_refused)
{
        struct mcp_frame ok = {.magic = MCP_FRAME_MAGIC, .id = 1, .kind = MCP_FRAME_RAN};
        cr_assert_eq(one_frame(ok), 1);
        struct mcp_frame f = ok;
        f.magic = 0;
        cr_assert_lt(one_frame(f), 0);
        f = ok;
        f.kind = 9;
        cr_assert_lt(one_frame(f), 0);
        f = ok;
        f.len = MCP_PAYLOAD_MAX + 1;
        cr_assert_lt(one_frame(f), 0);
        f = ok;
        f.kind = MCP_FRAME_TEXT;
        f.len2 = 1;
        cr_assert_lt(one_frame(f), 0);
        f = ok;
        f.status = 256;
        cr_assert_lt(one_frame(f), 0);
}

/* ------------------------------------------------------------ tools */

static yajl_val args(const char *text)
{
        yajl_val v = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(umw_json_parse(text, "args", &v, &err), 0);
        return v;
}

static int request(const char *tool, const char *text, struct relay_request *q)
{
        yajl_val a = args(text);
        _cleanup_error_ struct umw_error *err = NULL;
        int r = mcp_tool_request(mcp_tool(tool), a, q, &err);
        yajl_tree_free(a);
        return r;
}

Test(mcp_tools, asking_arguments)
{
        struct relay_request q;
        cr_assert_eq(
            request("request_grant", "{\"path\":\"/srv/d\",\"mode\":\"rw\",\"why\":\"w\"}", &q), 0);
        cr_assert_eq(q.kind, RELAY_GRANT);
        cr_assert_eq(q.rw, 1);
        cr_assert_lt(
            request("request_grant", "{\"path\":\"/srv/d\",\"mode\":\"x\",\"why\":\"w\"}", &q), 0);
        cr_assert_lt(request("request_grant", "{\"path\":\"/srv/d\"}", &q), 0);
        cr_assert_lt(request("publish_port", "{\"port\":0,\"why\":\"w\"}", &q), 0);
        cr_assert_eq(request("publish_port", "{\"port\":8080,\"why\":\"w\"}", &q), 0);
        cr_assert_eq(q.port, 8080);
        cr_assert_eq(
            request("host_action", "{\"name\":\"t\",\"params\":{\"p\":\"v\"},\"why\":\"w\"}", &q),
            0);
        cr_assert_eq(q.n_params, 1);
        cr_assert_str_eq(q.params[0].value, "v");
        cr_assert_lt(
            request("host_action", "{\"name\":\"t\",\"params\":{\"p\":1},\"why\":\"w\"}", &q), 0);
        cr_assert_eq(request("status", "{}", &q), 0);
        cr_assert_lt(request("note", "{\"text\":\"a\\u0007b\"}", &q), 0);
}

Test(mcp_tools, host)
{
        _cleanup_error_ struct umw_error *err = NULL;
        yajl_val a = args("{\"host\":\"local\"}"), b = args("{\"host\":\"far-away\"}");
        cr_assert_eq(mcp_tool_host(a, &err), 0);
        cr_assert_lt(mcp_tool_host(b, &err), 0);
        cr_assert(strstr(err->msg, "far-away"));
        yajl_tree_free(a);
        yajl_tree_free(b);
}

/* ------------------------------------------------------------ the worker's file tools */

static char dir[] = "/tmp/umwelt-test-mcp.XXXXXX";

static void in_dir(void)
{
        cr_assert(mkdtemp(dir));
        cr_assert_eq(chdir(dir), 0);
}

static void out_dir(void)
{
        cr_assert_eq(chdir("/"), 0);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        cr_assert_eq(system(cmd), 0);
}

typedef int (*tool_fn)(yajl_val, struct mcp_text *, struct umw_error **);

/* The tool's text, or "ERROR: why". */
static char *run(tool_fn fn, const char *text)
{
        yajl_val a = args(text);
        struct mcp_text out = {.max = MCP_PAYLOAD_MAX};
        struct umw_error *err = NULL;
        char *s = NULL;
        if (fn(a, &out, &err) < 0)
                cr_assert(asprintf(&s, "ERROR: %s", err->msg) > 0);
        else
                s = strdup(out.p ? out.p : "");
        umw_error_free(err);
        mcp_text_free(&out);
        yajl_tree_free(a);
        return s;
}

#define EXPECT(fn, text, want)                                                                     \
        do {                                                                                       \
                _cleanup_free_ char *got = run(fn, text);                                          \
                cr_assert_str_eq(got, want);                                                       \
        } while (0)
#define EXPECT_ERROR(fn, text, part)                                                               \
        do {                                                                                       \
                _cleanup_free_ char *got = run(fn, text);                                          \
                cr_assert(strstr(got, part), "%s", got);                                           \
        } while (0)

Test(mcp_worker, files, .init = in_dir, .fini = out_dir)
{
        EXPECT(worker_write, "{\"path\":\"a/b/c.txt\",\"content\":\"x\\ny\\nx\\n\"}",
               "wrote 6 bytes to a/b/c.txt");
        EXPECT(worker_read, "{\"path\":\"a/b/c.txt\",\"offset\":2,\"limit\":1}", "y\n");
        EXPECT(worker_read, "{\"path\":\"a/b/c.txt\",\"offset\":9}", "");
        EXPECT_ERROR(worker_edit,
                     "{\"path\":\"a/b/c.txt\",\"old_string\":\"x\",\"new_string\":\"z\"}",
                     "2 times");
        EXPECT_ERROR(worker_edit,
                     "{\"path\":\"a/b/c.txt\",\"old_string\":\"q\",\"new_string\":\"z\"}",
                     "not in the file");
        EXPECT_ERROR(worker_edit,
                     "{\"path\":\"a/b/c.txt\",\"old_string\":\"\",\"new_string\":\"z\"}", "empty");
        EXPECT(worker_edit,
               "{\"path\":\"a/b/"
               "c.txt\",\"old_string\":\"x\",\"new_string\":\"zz\",\"replace_all\":true}",
               "replaced 2 occurrences in a/b/c.txt");
        EXPECT(worker_read, "{\"path\":\"a/b/c.txt\"}", "zz\ny\nzz\n");
        EXPECT(worker_ls, "{\"path\":\"a\"}", "b/\n");
        EXPECT_ERROR(worker_read, "{\"path\":\"a\"}", "not a regular file");
        cr_assert_eq(mkfifo("fifo", 0600), 0);
        EXPECT_ERROR(worker_read, "{\"path\":\"fifo\"}", "not a regular file");
        EXPECT_ERROR(worker_write, "{\"path\":\"fifo\",\"content\":\"x\"}", "fifo");
        int fd = open("bin", O_WRONLY | O_CREAT, 0600);
        cr_assert(write(fd, "a\0b", 3) == 3);
        close(fd);
        EXPECT_ERROR(worker_read, "{\"path\":\"bin\"}", "binary file");
        EXPECT_ERROR(worker_read, "{\"path\":7}", "arguments: .path: expected a string");
}

Test(mcp_worker, find, .init = in_dir, .fini = out_dir)
{
        cr_assert_eq(system("mkdir -p s/t .git u && echo 'int main' >s/t/m.c && echo 'main' "
                            ">u/x.h && echo main >.git/config && ln -s /etc out && ln -s s "
                            "s-link"),
                     0);
        EXPECT(worker_glob, "{\"pattern\":\"**/*.c\"}", "s/t/m.c\n");
        EXPECT(worker_glob, "{\"pattern\":\"*/*.h\"}", "u/x.h\n");
        EXPECT(worker_glob, "{\"pattern\":\"**/config\"}", "no path matches **/config\n");
        EXPECT(worker_grep, "{\"pattern\":\"ma[i]n\",\"glob\":\"*.c\"}", "s/t/m.c:1:int main\n");
        EXPECT(worker_grep, "{\"pattern\":\"MAIN\",\"ignore_case\":true,\"path\":\"u\"}",
               "u/x.h:1:main\n");
        /* Links inside the walk are not followed, .git is not entered. */
        EXPECT(worker_grep, "{\"pattern\":\"main\"}", "s/t/m.c:1:int main\nu/x.h:1:main\n");
        EXPECT(worker_grep, "{\"pattern\":\"root:\"}", "no line matches\n");
        EXPECT_ERROR(worker_grep, "{\"pattern\":\"(\"}", "regular expression");
}

Test(mcp_worker, glob_match)
{
        cr_assert(worker_glob_match("**", "a/b/c"));
        cr_assert(worker_glob_match("**/c", "c"));
        cr_assert(worker_glob_match("a/**/c", "a/x/y/c"));
        cr_assert(worker_glob_match("*.c", "m.c"));
        cr_assert_not(worker_glob_match("*.c", "s/m.c"));
        cr_assert_not(worker_glob_match("a/*", "a/b/c"));
}
