#include "common/audit.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp[] = "/tmp/test-audit-XXXXXX";

static void make_tmp(void)
{
        cr_assert_not_null(mkdtemp(tmp));
}

static void remove_tmp(void)
{
        pid_t pid = fork();
        if (pid == 0) {
                execlp("rm", "rm", "-rf", tmp, (char *)NULL);
                _exit(127);
        }
        waitpid(pid, NULL, 0);
}

TestSuite(audit, .init = make_tmp, .fini = remove_tmp);

static char *tmp_path(const char *rel)
{
        char *p = NULL;
        cr_assert_geq(asprintf(&p, "%s/%s", tmp, rel), 0);
        return p;
}

static int open_log(const char *path)
{
        int fd = -1;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(audit_open(path, &fd, &err), 0, "%s", err ? err->msg : "?");
        return fd;
}

static void append(int fd, const char *event, const char *const *kv)
{
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(audit_append(fd, event, kv, &err), 0, "%s", err ? err->msg : "?");
}

struct collected {
        size_t n;
        char events[64][32];
        char grants[64][64];
};

static int collect(yajl_val line, size_t lineno, void *ctx, struct umw_error **err)
{
        struct collected *c = ctx;
        cr_assert_eq(lineno, c->n + 1);
        cr_assert_lt(c->n, 64);
        snprintf(c->events[c->n], sizeof(c->events[0]), "%s",
                 umw_json_member(line, "event")->u.string);
        yajl_val grant = umw_json_member(line, "grant");
        snprintf(c->grants[c->n], sizeof(c->grants[0]), "%s",
                 YAJL_IS_STRING(grant) ? grant->u.string : "");
        c->n++;
        return 0;
}

static int read_log(const char *path, struct collected *c, char **msg)
{
        memset(c, 0, sizeof(*c));
        _cleanup_error_ struct umw_error *err = NULL;
        int r = audit_read(path, collect, c, &err);
        if (msg)
                *msg = err ? strdup(err->msg) : NULL;
        return r;
}

static void write_raw(const char *path, const char *text)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

static off_t file_size(const char *path)
{
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        return st.st_size;
}

Test(audit, lines_are_appended_and_read_back)
{
        _cleanup_free_ char *path = tmp_path("a/b/audit.jsonl");
        _cleanup_close_ int fd = open_log(path);
        append(fd, "start", (const char *const[]){"project", "/w", NULL});
        append(fd, "grant", (const char *const[]){"grant", "/srv/\"data\"\n", "mode", "ro", NULL});
        append(fd, "stop", NULL);

        struct collected c;
        cr_assert_eq(read_log(path, &c, NULL), 0);
        cr_assert_eq(c.n, 3);
        cr_expect_str_eq(c.events[0], "start");
        cr_expect_str_eq(c.events[1], "grant");
        cr_expect_str_eq(c.grants[1], "/srv/\"data\"\n");
        cr_expect_str_eq(c.events[2], "stop");
}

Test(audit, line_layout_and_time_format)
{
        _cleanup_free_ char *path = tmp_path("audit.jsonl");
        _cleanup_close_ int fd = open_log(path);
        append(fd, "start", (const char *const[]){"k", "v", NULL});
        char buf[256] = "";
        int rfd = open(path, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(rfd, 0);
        ssize_t n = read(rfd, buf, sizeof(buf) - 1);
        close(rfd);
        cr_assert_gt(n, 0);
        /* {"time":"YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ","event":"start","k":"v"}\n */
        cr_assert_eq(strncmp(buf, "{\"time\":\"", 9), 0, "%s", buf);
        const char *t = buf + 9;
        cr_expect(t[4] == '-' && t[7] == '-' && t[10] == 'T' && t[13] == ':' && t[16] == ':' &&
                      t[19] == '.' && t[29] == 'Z' && t[30] == '"',
                  "%s", buf);
        cr_expect_str_eq(t + 30, "\",\"event\":\"start\",\"k\":\"v\"}\n");
}

Test(audit, file_is_0600_and_new_directories_0700)
{
        mode_t old = umask(022);
        _cleanup_free_ char *path = tmp_path("x/y/audit.jsonl");
        _cleanup_free_ char *x = tmp_path("x");
        _cleanup_free_ char *y = tmp_path("x/y");
        _cleanup_close_ int fd = open_log(path);
        umask(old);
        struct stat st;
        cr_assert_eq(fstat(fd, &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0600, "%o", st.st_mode & 07777);
        cr_assert_eq(stat(x, &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0700, "%o", st.st_mode & 07777);
        cr_assert_eq(stat(y, &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0700, "%o", st.st_mode & 07777);
}

Test(audit, existing_file_is_set_back_to_0600)
{
        _cleanup_free_ char *path = tmp_path("audit.jsonl");
        write_raw(path, "");
        cr_assert_eq(chmod(path, 0644), 0);
        _cleanup_close_ int fd = open_log(path);
        struct stat st;
        cr_assert_eq(fstat(fd, &st), 0);
        cr_expect_eq(st.st_mode & 07777, 0600, "%o", st.st_mode & 07777);
}

Test(audit, symlink_is_refused)
{
        _cleanup_free_ char *target = tmp_path("target");
        _cleanup_free_ char *path = tmp_path("audit.jsonl");
        write_raw(target, "");
        cr_assert_eq(symlink(target, path), 0);
        int fd = -1;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(audit_open(path, &fd, &err), -ELOOP);
        cr_assert_eq(fd, -1);
        _cleanup_free_ char *want = NULL;
        cr_assert_geq(asprintf(&want, "audit log %s: is a symbolic link, refused", path), 0);
        cr_expect_str_eq(err->msg, want);
        /* A dangling link is refused too rather than created through. */
        _cleanup_free_ char *dangling = tmp_path("dangling");
        cr_assert_eq(symlink("/nonexistent-audit-target", dangling), 0);
        umw_error_freep(&err);
        cr_expect_eq(audit_open(dangling, &fd, &err), -ELOOP);
}

Test(audit, fifo_is_refused)
{
        _cleanup_free_ char *path = tmp_path("fifo");
        cr_assert_eq(mkfifo(path, 0600), 0);
        int fd = -1;
        _cleanup_error_ struct umw_error *err = NULL;
        cr_expect_lt(audit_open(path, &fd, &err), 0);
        cr_expect_eq(fd, -1);
}

Test(audit, path_from_xdg_state_home_or_home)
{
        _cleanup_error_ struct umw_error *err = NULL;
        char *p = NULL;
        setenv("HOME", "/home/u", 1);
        setenv("XDG_STATE_HOME", "/state", 1);
        cr_assert_eq(audit_path("proj-1", &p, &err), 0);
        cr_expect_str_eq(p, "/state/umwelt/proj-1/audit.jsonl");
        free(p);
        setenv("XDG_STATE_HOME", "", 1);
        cr_assert_eq(audit_path("proj-1", &p, &err), 0);
        cr_expect_str_eq(p, "/home/u/.local/state/umwelt/proj-1/audit.jsonl");
        free(p);
        setenv("XDG_STATE_HOME", "relative/state", 1);
        cr_assert_eq(audit_path("proj-1", &p, &err), 0);
        cr_expect_str_eq(p, "/home/u/.local/state/umwelt/proj-1/audit.jsonl");
        free(p);
        unsetenv("XDG_STATE_HOME");
        cr_assert_eq(audit_path("proj-1", &p, &err), 0);
        cr_expect_str_eq(p, "/home/u/.local/state/umwelt/proj-1/audit.jsonl");
        free(p);

        cr_expect_eq(audit_path("../x", &p, &err), -EINVAL);
        cr_expect_str_eq(err->msg,
                         "audit log: project id \"../x\": expected a single path component");
        umw_error_freep(&err);
        cr_expect_eq(audit_path("..", &p, &err), -EINVAL);
        umw_error_freep(&err);
        unsetenv("HOME");
        cr_expect_eq(audit_path("p", &p, &err), -EINVAL);
        cr_expect_str_eq(err->msg,
                         "audit log: cannot place umwelt/p: neither XDG_STATE_HOME nor HOME is an "
                         "absolute path");
}

static void add_typed(yajl_gen g, void *ctx)
{
        umw_jgen_key_int(g, "pid", 42);
        umw_jgen_key_bool(g, "forced_ro", true);
}

static void leave_map_open(yajl_gen g, void *ctx)
{
        umw_jgen_key(g, "nested");
        yajl_gen_map_open(g);
}

static void invalid_utf8(yajl_gen g, void *ctx)
{
        umw_jgen_key_str(g, "path", "/srv/\xff\xfe");
}

static void duplicate_event(yajl_gen g, void *ctx)
{
        umw_jgen_key_str(g, "event", "forged");
}

Test(audit, fields_callback_and_malformed_fields_refused)
{
        _cleanup_free_ char *path = tmp_path("audit.jsonl");
        _cleanup_close_ int fd = open_log(path);
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(audit_append_fields(fd, "exec", add_typed, NULL, &err), 0);
        off_t size = file_size(path);

        audit_fields_fn bad[] = {leave_map_open, invalid_utf8, duplicate_event};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                cr_expect_eq(audit_append_fields(fd, "exec", bad[i], NULL, &err), -EINVAL);
                cr_expect_not_null(err);
                umw_error_freep(&err);
        }
        cr_expect_eq(audit_append(fd, "exec", (const char *const[]){"k", NULL}, &err), -EINVAL);
        cr_expect_str_eq(err->msg, "audit event exec: key k without a value");
        cr_expect_eq(file_size(path), size);
}

Test(audit, line_longer_than_the_limit_refused)
{
        _cleanup_free_ char *path = tmp_path("audit.jsonl");
        _cleanup_close_ int fd = open_log(path);
        _cleanup_free_ char *big = malloc(AUDIT_LINE_MAX);
        memset(big, 'x', AUDIT_LINE_MAX - 1);
        big[AUDIT_LINE_MAX - 1] = '\0';
        _cleanup_error_ struct umw_error *err = NULL;
        cr_expect_eq(audit_append(fd, "big", (const char *const[]){"k", big, NULL}, &err), -E2BIG);
        cr_expect_eq(file_size(path), 0);
        /* Just under the limit goes through. */
        umw_error_freep(&err);
        big[AUDIT_LINE_MAX - 200] = '\0';
        cr_expect_eq(audit_append(fd, "big", (const char *const[]){"k", big, NULL}, &err), 0);
}

/* RLIMIT_FSIZE stands in for a full disk: the write that crosses it comes
 * back short (or EFBIG with SIGXFSZ ignored). */
Test(audit, short_write_is_cut_back)
{
        _cleanup_free_ char *path = tmp_path("audit.jsonl");
        _cleanup_close_ int fd = open_log(path);
        append(fd, "start", NULL);
        off_t before = file_size(path);

        static char value[2000];
        memset(value, 'v', sizeof(value) - 1);
        for (int limit_past_end = 0; limit_past_end < 2; limit_past_end++) {
                pid_t pid = fork();
                cr_assert_geq(pid, 0);
                if (pid == 0) {
                        signal(SIGXFSZ, SIG_IGN);
                        /* 0: the write fails outright; 1: 100 bytes go out first. */
                        rlim_t lim = (rlim_t)before + (limit_past_end ? 100 : 0);
                        struct rlimit rl = {lim, lim};
                        if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
                                _exit(2);
                        struct umw_error *e = NULL;
                        int r =
                            audit_append(fd, "grant", (const char *const[]){"v", value, NULL}, &e);
                        _exit(r < 0 && e ? 0 : 1);
                }
                int status = 0;
                cr_assert_eq(waitpid(pid, &status, 0), pid);
                cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
                cr_expect_eq(file_size(path), before, "limit+%d: size %jd, want %jd",
                             limit_past_end, (intmax_t)file_size(path), (intmax_t)before);
        }
        append(fd, "stop", NULL);
        struct collected c;
        cr_assert_eq(read_log(path, &c, NULL), 0);
        cr_assert_eq(c.n, 2);
        cr_expect_str_eq(c.events[0], "start");
        cr_expect_str_eq(c.events[1], "stop");
}

Test(audit, partial_line_left_by_a_crash_is_cut_before_the_next_append)
{
        _cleanup_free_ char *path = tmp_path("audit.jsonl");
        write_raw(path, "{\"time\":\"t\",\"event\":\"start\"}\n{\"time\":\"t\",\"ev");
        _cleanup_close_ int fd = open_log(path);
        append(fd, "stop", NULL);
        struct collected c;
        cr_assert_eq(read_log(path, &c, NULL), 0);
        cr_assert_eq(c.n, 2);
        cr_expect_str_eq(c.events[0], "start");
        cr_expect_str_eq(c.events[1], "stop");

        /* A file that is one partial line is emptied. */
        write_raw(path, "{\"time\":");
        append(fd, "start", NULL);
        cr_assert_eq(read_log(path, &c, NULL), 0);
        cr_assert_eq(c.n, 1);
}

#define WRITERS 6

struct writer_count {
        size_t lines, per[WRITERS];
};

static int count_writer(yajl_val line, size_t lineno, void *ctx, struct umw_error **err)
{
        struct writer_count *count = ctx;
        const char *event = umw_json_member(line, "event")->u.string;
        cr_assert(event[0] == 'w' && event[1] >= '0' && event[1] < '0' + WRITERS, "%s", event);
        count->per[event[1] - '0']++;
        count->lines++;
        return 0;
}

Test(audit, concurrent_writers_leave_whole_lines)
{
        _cleanup_free_ char *path = tmp_path("audit.jsonl");
        enum { EACH = 40 };
        static char value[3000];
        memset(value, 'w', sizeof(value) - 1);
        pid_t pids[WRITERS];
        for (int w = 0; w < WRITERS; w++) {
                pids[w] = fork();
                cr_assert_geq(pids[w], 0);
                if (pids[w] == 0) {
                        int fd = -1;
                        struct umw_error *e = NULL;
                        if (audit_open(path, &fd, &e) < 0)
                                _exit(1);
                        char who[16];
                        snprintf(who, sizeof(who), "w%d", w);
                        for (int i = 0; i < EACH; i++) {
                                if (audit_append(fd, who, (const char *const[]){"pad", value, NULL},
                                                 &e) < 0)
                                        _exit(1);
                        }
                        _exit(0);
                }
        }
        for (int w = 0; w < WRITERS; w++) {
                int status = 0;
                cr_assert_eq(waitpid(pids[w], &status, 0), pids[w]);
                cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        struct writer_count count = {0};
        _cleanup_error_ struct umw_error *err = NULL;
        int r = audit_read(path, count_writer, &count, &err);
        cr_assert_eq(r, 0, "%s", err ? err->msg : "");
        cr_expect_eq(count.lines, WRITERS * EACH);
        for (int w = 0; w < WRITERS; w++)
                cr_expect_eq(count.per[w], EACH, "writer %d: %zu lines", w, count.per[w]);
}

static void expect_read_error(const char *text, const char *what)
{
        _cleanup_free_ char *path = tmp_path("bad.jsonl");
        write_raw(path, text);
        struct collected c;
        _cleanup_free_ char *msg = NULL;
        cr_assert_lt(read_log(path, &c, &msg), 0, "%s", text);
        _cleanup_free_ char *want = NULL;
        cr_assert_geq(asprintf(&want, "%s:%s", path, what), 0);
        cr_expect_eq(strncmp(msg, want, strlen(want)), 0, "got \"%s\", want \"%s...\"", msg, want);
}

Test(audit, broken_lines_are_errors_naming_file_and_line)
{
        const char *good = "{\"time\":\"t\",\"event\":\"start\"}\n";
        char text[512];
        snprintf(text, sizeof(text), "%s%s", good, "{\"time\":\"t\",\"ev\n");
        expect_read_error(text, "2: invalid JSON");
        snprintf(text, sizeof(text), "%s%s%s", good, good, "\n");
        expect_read_error(text, "3: empty line");
        snprintf(text, sizeof(text), "%s%s", good, "{\"time\":\"t\",\"event\":\"x\"}");
        expect_read_error(text, "2: last line has no newline");
        snprintf(text, sizeof(text), "%s%s", good, "{\"time\":\"t\"}\n");
        expect_read_error(text, "2: expected an object with string members \"time\" and \"event\"");
        snprintf(text, sizeof(text), "%s", "[1,2]\n");
        expect_read_error(text, "1: expected an object with string members \"time\" and \"event\"");
}

Test(audit, missing_log_is_enoent)
{
        _cleanup_free_ char *path = tmp_path("none.jsonl");
        struct collected c;
        cr_expect_eq(read_log(path, &c, NULL), -ENOENT);
}

static void gather_line(char **buf, size_t *len, const char *event)
{
        _cleanup_error_ struct umw_error *err = NULL;
        _cleanup_free_ char *line = NULL;
        size_t n = 0;
        cr_assert_eq(audit_line(event, NULL, NULL, &line, &n, &err), 0);
        cr_assert_eq(line[n - 1], '\n');
        *buf = realloc(*buf, *len + n);
        memcpy(*buf + *len, line, n);
        *len += n;
}

Test(audit, gathered_lines_go_out_whole_or_not_at_all)
{
        _cleanup_free_ char *path = tmp_path("audit.jsonl");
        write_raw(path, "{\"time\":\"t\",\"event\":\"start\"}\n{\"time\":\"t\",\"ev");
        _cleanup_close_ int fd = open_log(path);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        gather_line(&buf, &len, "one");
        gather_line(&buf, &len, "two");
        _cleanup_error_ struct umw_error *err = NULL;
        cr_assert_eq(audit_append_lines(fd, buf, len, &err), 0);
        struct collected c;
        cr_assert_eq(read_log(path, &c, NULL), 0);
        cr_assert_eq(c.n, 3, "the crash's partial line cut, both lines after it");
        cr_expect_str_eq(c.events[1], "one");
        cr_expect_str_eq(c.events[2], "two");

        off_t before = file_size(path);
        cr_assert_lt(audit_append_lines(fd, buf, len - 1, &err), 0, "not ending a line");
        cr_assert_eq(file_size(path), before);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                /* room for the first line only: the write falls short */
                signal(SIGXFSZ, SIG_IGN);
                struct rlimit rl = {(rlim_t)before + 10, (rlim_t)before + 10};
                struct umw_error *e = NULL;
                _exit(setrlimit(RLIMIT_FSIZE, &rl) == 0 &&
                              audit_append_lines(fd, buf, len, &e) < 0 && e
                          ? 0
                          : 1);
        }
        int status = 0;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
        cr_expect_eq(file_size(path), before, "a short batch is cut back whole");
}
