/* glob and grep, inside the sandbox (worker_int.h): a walk from a
 * directory by fds, never following a link, never into .git. */
#include "mcp/worker_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WALK_DEPTH    64
#define WALK_VISITS   200000 /* entries a walk looks at */
#define GLOB_MAX      1000   /* paths a glob answers */
#define GREP_MAX      1000   /* lines a grep answers */
#define GREP_LINE_MAX 500    /* bytes of a matching line shown */
#define GREP_TEXT_MAX (256u << 10)
#define BINARY_PROBE  8192 /* a NUL in these first bytes: a binary file, skipped */

/* ------------------------------------------------------------ matching */

/* One segment of each (up to '/' or the end), by fnmatch. */
static bool segment_match(const char *pat, size_t plen, const char *name, size_t nlen)
{
        char p[NAME_MAX + 1], n[NAME_MAX + 1];
        if (plen > NAME_MAX || nlen > NAME_MAX)
                return false;
        memcpy(p, pat, plen);
        p[plen] = '\0';
        memcpy(n, name, nlen);
        n[nlen] = '\0';
        return fnmatch(p, n, 0) == 0;
}

bool worker_glob_match(const char *pat, const char *name)
{
        if (strncmp(pat, "**", 2) == 0 && (pat[2] == '/' || pat[2] == '\0')) {
                if (pat[2] == '\0')
                        return true;
                for (const char *p = name;; p++) {
                        if (worker_glob_match(pat + 3, p))
                                return true;
                        if (!(p = strchr(p, '/')))
                                return false;
                }
        }
        const char *ps = strchrnul(pat, '/'), *ns = strchrnul(name, '/');
        if (!segment_match(pat, (size_t)(ps - pat), name, (size_t)(ns - name)))
                return false;
        if (!*ps || !*ns)
                return !*ps && !*ns;
        return worker_glob_match(ps + 1, ns + 1);
}

/* ------------------------------------------------------------ the walk */

struct walk;
typedef int (*walk_fn)(struct walk *w, int dirfd, const char *name, const char *rel);

struct walk {
        walk_fn file; /* called for each entry that is not a directory */
        void *ctx;
        size_t visits;
        bool stop;     /* the callback has all it may answer */
        size_t unread; /* directories that could not be read */
        char rel[PATH_MAX];
};

static int walk_dir(struct walk *w, int dirfd, size_t rel_len, int depth);

static void walk_entry(struct walk *w, int dirfd, const struct dirent *e, size_t rel_len, int depth)
{
        size_t n = strlen(e->d_name);
        if (rel_len + n + 2 > sizeof(w->rel))
                return;
        size_t at = rel_len ? rel_len + 1 : 0;
        if (rel_len)
                w->rel[rel_len] = '/';
        memcpy(w->rel + at, e->d_name, n + 1);
        unsigned char type = e->d_type;
        struct stat st;
        if (type == DT_UNKNOWN && fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
        if (type != DT_DIR) {
                if (w->file(w, dirfd, e->d_name, w->rel) > 0)
                        w->stop = true;
                return;
        }
        if (strcmp(e->d_name, ".git") == 0 || depth >= WALK_DEPTH)
                return;
        int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) {
                w->unread++;
                return;
        }
        walk_dir(w, sub, at + n, depth + 1);
}

/* Takes dirfd. Entries in name order, so an answer is the same each time. */
static int walk_dir(struct walk *w, int dirfd, size_t rel_len, int depth)
{
        _cleanup_close_ int fd = dirfd;
        struct dirent **list = NULL;
        int n = scandirat(fd, ".", &list, NULL, alphasort);
        if (n < 0) {
                w->unread++;
                return 0;
        }
        for (int i = 0; i < n; i++) {
                bool dot = strcmp(list[i]->d_name, ".") == 0 || strcmp(list[i]->d_name, "..") == 0;
                if (!dot && !w->stop && w->visits++ < WALK_VISITS)
                        walk_entry(w, fd, list[i], rel_len, depth);
                free(list[i]);
        }
        free(list);
        return 0;
}

static int walk_from(struct walk *w, const char *path, struct umw_error **err)
{
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return umw_fail_errno(err, "%s", path);
        w->rel[0] = '\0';
        return walk_dir(w, fd, 0, 0);
}

/* What the walk did not look at, said after the answer. */
static void walk_notes(const struct walk *w, struct mcp_text *out)
{
        out->max += 512;
        if (w->visits > WALK_VISITS)
                mcp_text_printf(out, "[stopped after %d entries]\n", WALK_VISITS);
        if (w->unread)
                mcp_text_printf(out, "[%zu directories could not be read]\n", w->unread);
}

/* ------------------------------------------------------------ glob */

struct glob_ctx {
        const char *pattern, *root;
        struct mcp_text *out;
        size_t found;
};

static int glob_one(struct walk *w, int dirfd, const char *name, const char *rel)
{
        (void)dirfd, (void)name;
        struct glob_ctx *g = w->ctx;
        if (!worker_glob_match(g->pattern, rel))
                return 0;
        if (g->found++ == GLOB_MAX)
                return 1;
        if (strcmp(g->root, ".") == 0)
                mcp_text_printf(g->out, "%s\n", rel);
        else
                mcp_text_printf(g->out, "%s/%s\n", g->root, rel);
        return 0;
}

int worker_glob(yajl_val args, struct mcp_text *out, struct umw_error **err)
{
        struct glob_ctx g = {.root = ".", .out = out};
        int r;
        if ((r = worker_arg_str(args, "pattern", true, &g.pattern, err)) < 0 ||
            (r = worker_arg_str(args, "path", false, &g.root, err)) < 0)
                return r;
        struct walk w = {.file = glob_one, .ctx = &g};
        if ((r = walk_from(&w, g.root, err)) < 0)
                return r;
        if (g.found > GLOB_MAX)
                mcp_text_printf(out, "[more than %d paths: the first %d shown]\n", GLOB_MAX,
                                GLOB_MAX);
        else if (g.found == 0)
                mcp_text_printf(out, "no path matches %s\n", g.pattern);
        walk_notes(&w, out);
        return 0;
}

/* ------------------------------------------------------------ grep */

struct grep_ctx {
        regex_t re;
        const char *filter, *root;
        struct mcp_text *out;
        size_t found;
};

static bool filter_passes(const char *filter, const char *rel)
{
        if (!filter)
                return true;
        const char *base = strrchr(rel, '/');
        return worker_glob_match(filter, strchr(filter, '/') || !base ? rel : base + 1);
}

static void grep_line(struct grep_ctx *g, const char *rel, size_t lineno, const char *line)
{
        size_t n = strlen(line);
        int show = n > GREP_LINE_MAX ? GREP_LINE_MAX : (int)n;
        mcp_text_printf(g->out, "%s:%zu:%.*s%s\n", rel, lineno, show, line,
                        n > GREP_LINE_MAX ? " [...]" : "");
}

/* Each line of text (NUL-terminated, n bytes) that matches; 1 once the
 * answer is full. */
static int grep_text(struct grep_ctx *g, const char *rel, char *text, size_t n)
{
        if (memchr(text, '\0', n < BINARY_PROBE ? n : BINARY_PROBE))
                return 0;
        size_t lineno = 1;
        for (char *p = text; p < text + n; lineno++) {
                char *nl = memchr(p, '\n', (size_t)(text + n - p));
                if (nl)
                        *nl = '\0';
                if (regexec(&g->re, p, 0, NULL, 0) == 0) {
                        if (g->found++ == GREP_MAX || g->out->cut)
                                return 1;
                        grep_line(g, rel, lineno, p);
                }
                if (!nl)
                        break;
                p = nl + 1;
        }
        return 0;
}

static int grep_fd(struct grep_ctx *g, int fd, const char *rel)
{
        struct stat st;
        _cleanup_free_ char *text = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        size_t n;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > WORKER_FILE_MAX ||
            fcntl(fd, F_SETFL, 0) < 0 || umw_read_fd(fd, rel, WORKER_FILE_MAX, &text, &n, &err) < 0)
                return 0;
        return grep_text(g, rel, text, n);
}

static int grep_one(struct walk *w, int dirfd, const char *name, const char *rel)
{
        struct grep_ctx *g = w->ctx;
        if (!filter_passes(g->filter, rel))
                return 0;
        _cleanup_close_ int fd =
            openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        char shown[PATH_MAX + 2];
        snprintf(shown, sizeof(shown), "%s%s%s", strcmp(g->root, ".") ? g->root : "",
                 strcmp(g->root, ".") ? "/" : "", rel);
        return grep_fd(g, fd, shown);
}

static int grep_compile(struct grep_ctx *g, const char *pattern, bool icase, struct umw_error **err)
{
        int rc = regcomp(&g->re, pattern, REG_EXTENDED | REG_NEWLINE | (icase ? REG_ICASE : 0));
        if (rc == 0)
                return 0;
        char why[256];
        regerror(rc, &g->re, why, sizeof(why));
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                        "arguments: .pattern: expected a POSIX extended regular expression (%s)",
                        why);
}

/* path opened once: a directory is walked from that fd, a file read. */
static int grep_run(struct grep_ctx *g, struct umw_error **err)
{
        struct stat st;
        _cleanup_close_ int fd = open(g->root, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return umw_fail_errno(err, "%s", g->root);
        if (!S_ISDIR(st.st_mode)) {
                grep_fd(g, fd, g->root);
                return 0;
        }
        struct walk w = {.file = grep_one, .ctx = g};
        walk_dir(&w, TAKE_FD(fd), 0, 0);
        walk_notes(&w, g->out);
        return 0;
}

int worker_grep(yajl_val args, struct mcp_text *out, struct umw_error **err)
{
        struct grep_ctx g = {.root = ".", .out = out};
        const char *pattern = NULL;
        bool icase = false;
        int r;
        if ((r = worker_arg_str(args, "pattern", true, &pattern, err)) < 0 ||
            (r = worker_arg_str(args, "path", false, &g.root, err)) < 0 ||
            (r = worker_arg_str(args, "glob", false, &g.filter, err)) < 0 ||
            (r = worker_arg_bool(args, "ignore_case", &icase, err)) < 0 ||
            (r = grep_compile(&g, pattern, icase, err)) < 0)
                return r;
        out->max = GREP_TEXT_MAX;
        r = grep_run(&g, err);
        regfree(&g.re);
        if (r >= 0 && g.found > GREP_MAX)
                mcp_text_printf(out, "[more than %d matching lines: the first %d shown]\n",
                                GREP_MAX, GREP_MAX);
        else if (r >= 0 && g.found == 0)
                mcp_text_printf(out, "no line matches\n");
        return r;
}
