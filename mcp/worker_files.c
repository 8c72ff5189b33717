/* read, write, edit and ls, inside the sandbox (worker_int.h). Each opens
 * its file once and works on the fd; what the sandbox may not do fails
 * as it would for `cat` or `>` there, with the same errno. */
#include "mcp/worker_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/paths.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A read's text: what one answer may carry. */
#define READ_MAX (4u << 20)
#define LS_MAX   2000 /* entries a listing shows */

/* path opened (a FIFO does not block: O_NONBLOCK until checked) and
 * refused unless a regular file. */
static int open_regular(const char *path, int flags, struct umw_error **err)
{
        _cleanup_close_ int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
        struct stat st;
        if (fd < 0)
                return umw_fail_errno(err, "%s", path);
        if (fstat(fd, &st) < 0)
                return umw_fail_errno(err, "%s", path);
        if (!S_ISREG(st.st_mode))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: not a regular file", path);
        if (fcntl(fd, F_SETFL, flags & O_APPEND) < 0)
                return umw_fail_errno(err, "%s", path);
        return TAKE_FD(fd);
}

/* ------------------------------------------------------------ read */

struct lines_in {
        unsigned long first, last; /* the lines wanted, 1-based, inclusive */
        unsigned long line;        /* the line the next byte is on */
        bool binary;
};

static int take_chunk(struct lines_in *l, const char *p, size_t n, struct mcp_text *out)
{
        while (n > 0) {
                const char *nl = memchr(p, '\n', n);
                size_t len = nl ? (size_t)(nl - p) + 1 : n;
                if (l->line >= l->first && l->line <= l->last) {
                        if (memchr(p, '\0', len))
                                l->binary = true;
                        if (mcp_text_add(out, p, len) < 0)
                                return -ENOMEM;
                }
                if (nl)
                        l->line++;
                p += len;
                n -= len;
        }
        return 0;
}

int worker_read(yajl_val args, struct mcp_text *out, struct umw_error **err)
{
        const char *path = NULL;
        unsigned long offset = 1, limit = 0;
        int r;
        if ((r = worker_arg_str(args, "path", true, &path, err)) < 0 ||
            (r = worker_arg_uint(args, "offset", 1UL << 40, &offset, err)) < 0 ||
            (r = worker_arg_uint(args, "limit", 1UL << 40, &limit, err)) < 0)
                return r;
        _cleanup_close_ int fd = open_regular(path, O_RDONLY, err);
        if (fd < 0)
                return fd;
        struct lines_in l = {.first = offset ? offset : 1, .line = 1};
        l.last = limit ? l.first + limit - 1 : (unsigned long)-1;
        out->max = READ_MAX;
        char chunk[65536];
        ssize_t n;
        while ((n = read(fd, chunk, sizeof(chunk))) > 0 && !out->cut && l.line <= l.last)
                if (take_chunk(&l, chunk, (size_t)n, out) < 0)
                        return umw_fail_sys(err, ENOMEM, "%s", path);
        if (n < 0)
                return umw_fail_errno(err, "%s", path);
        if (l.binary)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: a binary file (it holds NUL bytes); see it with bash "
                                "(od, xxd)",
                                path);
        if (out->cut) {
                out->max += 256;
                mcp_text_printf(out, "\n[cut at %u bytes: read on with offset and limit]\n",
                                READ_MAX);
        }
        return 0;
}

/* ------------------------------------------------------------ write */

/* The directories above path, made as mkdir -p would. */
static int make_parents(const char *path, struct umw_error **err)
{
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return umw_fail_sys(err, ENOMEM, "%s", path);
        const char *dir = dirname(copy);
        struct stat st;
        if (stat(dir, &st) == 0)
                return 0;
        return umw_mkdir_p(dir, 0777, 0777, err);
}

int worker_write(yajl_val args, struct mcp_text *out, struct umw_error **err)
{
        const char *path = NULL, *content = NULL;
        int r;
        if ((r = worker_arg_str(args, "path", true, &path, err)) < 0 ||
            (r = worker_arg_str(args, "content", true, &content, err)) < 0 ||
            (r = make_parents(path, err)) < 0)
                return r;
        _cleanup_close_ int fd = open_regular(path, O_WRONLY | O_CREAT | O_TRUNC, err);
        if (fd < 0)
                return fd;
        size_t len = strlen(content);
        if (umw_write_all(fd, content, len) < 0 || fsync(fd) < 0)
                return umw_fail_errno(err, "%s", path);
        mcp_text_printf(out, "wrote %zu bytes to %s", len, path);
        return 0;
}

/* ------------------------------------------------------------ edit */

static size_t count_of(const char *hay, size_t n, const char *needle, size_t k)
{
        size_t count = 0;
        if (k == 0)
                return 0;
        for (const char *p = hay; (p = memmem(p, n - (size_t)(p - hay), needle, k)); p += k)
                count++;
        return count;
}

/* text with every old (or the one) replaced by new, into out. */
static int replaced(const char *text, size_t n, const char *old, const char *new,
                    struct mcp_text *out)
{
        size_t k = strlen(old);
        const char *p = text, *hit;
        out->max = (size_t)-1;
        while ((hit = memmem(p, n - (size_t)(p - text), old, k))) {
                if (mcp_text_add(out, p, (size_t)(hit - p)) < 0 ||
                    mcp_text_add(out, new, strlen(new)) < 0)
                        return -ENOMEM;
                p = hit + k;
        }
        return mcp_text_add(out, p, n - (size_t)(p - text));
}

static int edit_checks(const char *path, const char *old, const char *new, size_t count, bool all,
                       struct umw_error **err)
{
        if (!*old)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: old_string is empty", path);
        if (strcmp(old, new) == 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: old_string and new_string are the same", path);
        if (count == 0)
                return umw_fail(err, UMW_EXIT_CONFIG, ENOENT, "%s: old_string is not in the file",
                                path);
        if (count > 1 && !all)
                return umw_fail(err, UMW_EXIT_CONFIG, EEXIST,
                                "%s: old_string is in the file %zu times: give more of its "
                                "context, or replace_all",
                                path, count);
        return 0;
}

int worker_edit(yajl_val args, struct mcp_text *out, struct umw_error **err)
{
        const char *path = NULL, *old = NULL, *new = NULL;
        bool all = false;
        int r;
        if ((r = worker_arg_str(args, "path", true, &path, err)) < 0 ||
            (r = worker_arg_str(args, "old_string", true, &old, err)) < 0 ||
            (r = worker_arg_str(args, "new_string", true, &new, err)) < 0 ||
            (r = worker_arg_bool(args, "replace_all", &all, err)) < 0)
                return r;
        if (!*old)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: old_string is empty", path);
        _cleanup_close_ int fd = open_regular(path, O_RDWR, err);
        _cleanup_free_ char *text = NULL;
        size_t n;
        if (fd < 0)
                return fd;
        if ((r = umw_read_fd(fd, path, WORKER_FILE_MAX, &text, &n, err)) < 0)
                return r;
        size_t count = count_of(text, n, old, strlen(old));
        if ((r = edit_checks(path, old, new, count, all, err)) < 0)
                return r;
        struct mcp_text next = {0};
        if (replaced(text, n, old, new, &next) < 0) {
                mcp_text_free(&next);
                return umw_fail_sys(err, ENOMEM, "%s", path);
        }
        if (pwrite(fd, next.p, next.len, 0) != (ssize_t)next.len ||
            ftruncate(fd, (off_t)next.len) < 0 || fsync(fd) < 0)
                r = umw_fail_errno(err, "%s", path);
        mcp_text_free(&next);
        if (r >= 0)
                mcp_text_printf(out, "replaced %zu occurrence%s in %s", count,
                                count == 1 ? "" : "s", path);
        return r;
}

/* ------------------------------------------------------------ ls */

static int by_name(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *type_mark(unsigned char type)
{
        return type == DT_DIR ? "/" : type == DT_LNK ? "@" : "";
}

int worker_ls(yajl_val args, struct mcp_text *out, struct umw_error **err)
{
        const char *path = ".";
        int r = worker_arg_str(args, "path", false, &path, err);
        if (r < 0)
                return r;
        _cleanup_closedir_ DIR *d = opendir(path);
        if (!d)
                return umw_fail_errno(err, "%s", path);
        char *names[LS_MAX];
        size_t n = 0, more = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                if (n == LS_MAX) {
                        more++;
                        continue;
                }
                if (asprintf(&names[n], "%s%s", e->d_name, type_mark(e->d_type)) < 0)
                        break;
                n++;
        }
        qsort(names, n, sizeof(names[0]), by_name);
        for (size_t i = 0; i < n; i++) {
                mcp_text_printf(out, "%s\n", names[i]);
                free(names[i]);
        }
        if (more)
                mcp_text_printf(out, "[%zu more entries not shown]\n", more);
        return 0;
}
