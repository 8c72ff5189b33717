#include "common/audit.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/paths.h"
#include "common/json.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* XDG: a relative path in these variables is invalid and is ignored. */
int audit_path(const char *project_id, char **out, struct umw_error **err)
{
        if (!project_id[0] || strchr(project_id, '/') || strcmp(project_id, ".") == 0 ||
            strcmp(project_id, "..") == 0)
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                                "audit log: project id \"%s\": expected a single path component",
                                project_id);
        _cleanup_free_ char *dir = NULL;
        int r = umw_state_dir(project_id, &dir, err);
        if (r < 0)
                return umw_error_prefix(err, "audit log");
        if (asprintf(out, "%s/audit.jsonl", dir) < 0) {
                *out = NULL;
                return umw_fail_sys(err, ENOMEM, "audit log path");
        }
        return 0;
}

/* The directories of path's directory part, each new one 0700. */
static int make_parents(const char *path, struct umw_error **err)
{
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return umw_fail_sys(err, ENOMEM, "audit log %s", path);
        char *last = strrchr(dir, '/');
        if (!last || last == dir)
                return 0;
        *last = '\0';
        int r = umw_mkdir_p(dir, 0700, 0700, err);
        return r < 0 ? umw_error_prefix(err, "audit log") : 0;
}

/* Read access too: an append looks at the file's last bytes. O_NONBLOCK so
 * that a FIFO planted at path cannot hang the open. */
static int open_log(const char *path)
{
        return open(path,
                    O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK,
                    0600);
}

int audit_open(const char *path, int *fd, struct umw_error **err)
{
        /* The directories are made only when the open finds one missing: at
         * every sandbox start a mkdir per component cost more than the two
         * appends that follow. */
        _cleanup_close_ int f = open_log(path);
        if (f < 0 && errno == ENOENT) {
                int r = make_parents(path, err);
                if (r < 0)
                        return r;
                f = open_log(path);
        }
        if (f < 0 && errno == ELOOP)
                return umw_fail(err, UMW_EXIT_FAILURE, ELOOP,
                                "audit log %s: is a symbolic link, refused", path);
        if (f < 0)
                return umw_fail_errno(err, "open audit log %s", path);
        struct stat st;
        if (fstat(f, &st) < 0)
                return umw_fail_errno(err, "stat audit log %s", path);
        if (!S_ISREG(st.st_mode))
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                                "audit log %s: not a regular file, refused", path);
        if ((st.st_mode & 07777) != 0600 && fchmod(f, 0600) < 0)
                return umw_fail_errno(err, "audit log %s: chmod 0600", path);
        *fd = TAKE_FD(f);
        return 0;
}

static size_t count_key(yajl_val obj, const char *key)
{
        size_t n = 0;
        for (size_t i = 0; i < obj->u.object.len; i++)
                n += strcmp(obj->u.object.keys[i], key) == 0;
        return n;
}

/* The caller's fields run inside our object; parsing the result back is what
 * proves they kept it one well-formed object (yajl_gen does not check that
 * a map is closed where it was opened), so no reader ever trips over it. */
static int check_line(const char *event, const char *text, struct umw_error **err)
{
        char errbuf[128];
        yajl_val tree = yajl_tree_parse(text, errbuf, sizeof(errbuf));
        bool ok = tree && YAJL_IS_OBJECT(tree) && count_key(tree, "time") == 1 &&
                  count_key(tree, "event") == 1;
        yajl_tree_free(tree);
        if (!ok)
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                                "audit event %s: fields do not make one JSON object with a single "
                                "\"time\" and \"event\" (invalid UTF-8?)",
                                event);
        return 0;
}

int audit_line(const char *event, audit_fields_fn fields, void *ctx, char **out, size_t *len,
               struct umw_error **err)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return umw_fail_sys(err, ENOMEM, "audit event %s", event);
        yajl_gen_config(g, yajl_gen_validate_utf8, 1);
        char now[64];
        umw_format_now(now, sizeof(now));
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "time", now);
        umw_jgen_key_str(g, "event", event);
        if (fields)
                fields(g, ctx);
        yajl_gen_map_close(g);
        size_t n = 0;
        _cleanup_free_ char *text = umw_jgen_finish(g, &n);
        if (!text)
                return umw_fail_sys(err, ENOMEM, "audit event %s", event);
        int r = check_line(event, text, err);
        if (r < 0)
                return r;
        if (n + 1 > AUDIT_LINE_MAX)
                return umw_fail(err, UMW_EXIT_FAILURE, E2BIG,
                                "audit event %s: line of %zu bytes, more than %d", event, n + 1,
                                AUDIT_LINE_MAX);
        char *line = realloc(text, n + 2);
        if (!line)
                return umw_fail_sys(err, ENOMEM, "audit event %s", event);
        text = NULL;
        line[n] = '\n';
        line[n + 1] = '\0';
        *out = line;
        *len = n + 1;
        return 0;
}

/* A writer killed in the middle of its write() (a fatal signal stops a
 * regular file write between pages) leaves a line without its newline; cut
 * it so that the next line does not get glued to it. Returns the new end. */
static int cut_partial_tail(int fd, off_t *end, struct umw_error **err)
{
        char last;
        if (*end == 0)
                return 0;
        if (pread(fd, &last, 1, *end - 1) != 1)
                return umw_fail_errno(err, "audit log: read its last byte");
        if (last == '\n')
                return 0;
        off_t window = *end < AUDIT_LINE_MAX ? *end : AUDIT_LINE_MAX;
        _cleanup_free_ char *buf = malloc((size_t)window);
        if (!buf)
                return umw_fail_sys(err, ENOMEM, "audit log: read its tail");
        if (pread(fd, buf, (size_t)window, *end - window) != window)
                return umw_fail_errno(err, "audit log: read its tail");
        char *nl = memrchr(buf, '\n', (size_t)window);
        if (!nl && window < *end)
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                                "audit log: ends in more than %d bytes without a newline, which "
                                "no append wrote: not cutting",
                                AUDIT_LINE_MAX);
        off_t keep = nl ? *end - window + (nl - buf) + 1 : 0;
        if (ftruncate(fd, keep) < 0)
                return umw_fail_errno(err, "audit log: cut a partial last line");
        umw_warn("audit log: cut a partial last line of %jd bytes left by an interrupted append",
                 (intmax_t)(*end - keep));
        *end = keep;
        return 0;
}

static int append_locked(int fd, const char *event, const char *lines, size_t len,
                         struct umw_error **err)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return umw_fail_errno(err, "audit log: stat");
        off_t end = st.st_size;
        int r = cut_partial_tail(fd, &end, err);
        if (r < 0)
                return r;
        ssize_t n;
        do
                n = write(fd, lines, len);
        while (n < 0 && errno == EINTR);
        if (n == (ssize_t)len)
                return 0;
        int errnum = n < 0 ? errno : EIO;
        /* Under the lock nobody else appended, so end is where our line began. */
        if (ftruncate(fd, end) < 0)
                return umw_fail_errno(err, "audit log: cut back a failed append of %s", event);
        if (n < 0)
                return umw_fail_sys(err, errnum, "audit log: append %s", event);
        return umw_fail(err, UMW_EXIT_FAILURE, errnum,
                        "audit log: append %s: short write (%zd of %zu bytes), cut back", event, n,
                        len);
}

static int flock_retry(int fd, int op)
{
        while (flock(fd, op) < 0) {
                if (errno != EINTR)
                        return -errno;
        }
        return 0;
}

/* what names the lines in an error: an event, or "lines" for a batch.
 * O_APPEND alone keeps whole lines of concurrent writers apart, but both
 * cuts need the end to stay where this writer found it: the partial last
 * line of a killed writer (a fatal signal can stop a write() between pages,
 * so even one short line can end half written) and this writer's own failed
 * or short write (ENOSPC). Without the lock either ftruncate could cut
 * another writer's line. It costs two flock() calls, ~3 us a line. */
static int append_named(int fd, const char *what, const char *lines, size_t len,
                        struct umw_error **err)
{
        int r = flock_retry(fd, LOCK_EX);
        if (r < 0)
                return umw_fail_sys(err, -r, "audit log: lock");
        r = append_locked(fd, what, lines, len, err);
        int u = flock_retry(fd, LOCK_UN);
        if (r < 0)
                return r;
        if (u < 0)
                return umw_fail_sys(err, -u, "audit log: unlock");
        return 0;
}

int audit_append_lines(int fd, const char *lines, size_t len, struct umw_error **err)
{
        if (len == 0)
                return 0;
        if (lines[len - 1] != '\n')
                return umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                                "audit log: %zu bytes to append do not end a line", len);
        return append_named(fd, "lines", lines, len, err);
}

int audit_append_fields(int fd, const char *event, audit_fields_fn fields, void *ctx,
                        struct umw_error **err)
{
        _cleanup_free_ char *line = NULL;
        size_t len = 0;
        int r = audit_line(event, fields, ctx, &line, &len, err);
        return r < 0 ? r : append_named(fd, event, line, len, err);
}

static void string_fields(yajl_gen g, void *ctx)
{
        const char *const *kv = ctx;
        for (size_t i = 0; kv[i]; i += 2)
                umw_jgen_key_str(g, kv[i], kv[i + 1]);
}

int audit_append(int fd, const char *event, const char *const *kv, struct umw_error **err)
{
        static const char *const none[] = {NULL};
        if (!kv)
                kv = none;
        for (size_t i = 0; kv[i]; i += 2) {
                if (!kv[i + 1])
                        return umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                                        "audit event %s: key %s without a value", event, kv[i]);
        }
        return audit_append_fields(fd, event, string_fields, (void *)kv, err);
}

static int line_error(const char *path, size_t lineno, const char *what, struct umw_error **err)
{
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s:%zu: %s", path, lineno, what);
}

static int parse_line(const char *path, size_t lineno, const char *buf, size_t n, yajl_val *out,
                      struct umw_error **err)
{
        if (n > AUDIT_LINE_MAX)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s:%zu: line longer than %d bytes",
                                path, lineno, AUDIT_LINE_MAX);
        if (buf[n - 1] != '\n')
                return line_error(path, lineno, "last line has no newline (an interrupted append?)",
                                  err);
        if (n == 1)
                return line_error(path, lineno, "empty line", err);
        if (memchr(buf, '\0', n))
                return line_error(path, lineno, "NUL byte in the line", err);
        char where[PATH_MAX + 32];
        snprintf(where, sizeof(where), "%s:%zu", path, lineno);
        yajl_val tree = NULL;
        int r = umw_json_parse(buf, where, &tree, err);
        if (r < 0)
                return r;
        yajl_val time = umw_json_member(tree, "time");
        yajl_val event = umw_json_member(tree, "event");
        if (!YAJL_IS_OBJECT(tree) || !YAJL_IS_STRING(time) || !YAJL_IS_STRING(event)) {
                yajl_tree_free(tree);
                return line_error(path, lineno,
                                  "expected an object with string members \"time\" and \"event\"",
                                  err);
        }
        *out = tree;
        return 0;
}

int audit_read(const char *path, audit_line_fn each, void *ctx, struct umw_error **err)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return umw_fail_errno(err, "open audit log %s", path);
        _cleanup_fclose_ FILE *f = fdopen(fd, "r");
        if (!f) {
                close(fd);
                return umw_fail_errno(err, "open audit log %s", path);
        }
        _cleanup_free_ char *buf = NULL;
        size_t cap = 0, lineno = 0;
        ssize_t n;
        while ((n = getline(&buf, &cap, f)) > 0) {
                yajl_val line = NULL;
                int r = parse_line(path, ++lineno, buf, (size_t)n, &line, err);
                if (r < 0)
                        return r;
                r = each(line, lineno, ctx, err);
                yajl_tree_free(line);
                if (r < 0)
                        return r;
        }
        if (ferror(f))
                return umw_fail_errno(err, "read audit log %s", path);
        return 0;
}
