/* Direct mode's report file (direct_int.h): STATE/PROJECT-ID/
 * direct-report.json, one object: the workspace, the start the walk
 * reached back to, whether a bound cut it, and the entries, each with its
 * exact bytes in hex beside the printable path, and the inode and ctime
 * quarantine checks before it moves one. */
#include "face/direct_int.h"
#include "face/direct_report.h"
#include "face/sandbox_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/paths.h"
#include "common/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A report is a state file umwelt wrote: bounded all the same. */
#define REPORT_MAX (16u << 20)

int direct_state_open(const struct sandbox *s, int *fd, struct umw_error **err)
{
        _cleanup_free_ char *dir = NULL;
        int r = umw_state_dir(s->project.id, &dir, err);
        if (r < 0)
                return r;
        *fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return *fd < 0 ? umw_fail_errno(err, "open the state directory %s", dir) : 0;
}

static void hex(const char *p, size_t n, char *out)
{
        static const char digits[] = "0123456789abcdef";
        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[(unsigned char)p[i] >> 4];
                out[2 * i + 1] = digits[(unsigned char)p[i] & 15];
        }
        out[2 * n] = '\0';
}

static void gen_u64(yajl_gen g, const char *key, uint64_t v)
{
        char text[24];
        snprintf(text, sizeof(text), "%" PRIu64, v);
        umw_jgen_key_str(g, key, text);
}

/* path: the printable form for people; path_hex: its exact bytes, which
 * quarantine moves; dev and ino as decimal text (a JSON number may not
 * hold 64 bits). */
static int gen_item(yajl_gen g, const struct direct_item *it)
{
        _cleanup_free_ char *name = umw_printable_dup(it->path, it->len);
        _cleanup_free_ char *raw = malloc(2 * it->len + 1);
        if (!name || !raw)
                return -ENOMEM;
        hex(it->path, it->len, raw);
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "path", name);
        umw_jgen_key_str(g, "path_hex", raw);
        umw_jgen_key_str(g, "reason", it->reason);
        gen_u64(g, "dev", (uint64_t)it->dev);
        gen_u64(g, "ino", (uint64_t)it->ino);
        umw_jgen_key_int(g, "ctime_sec", (long long)it->ctime.tv_sec);
        umw_jgen_key_int(g, "ctime_nsec", (long long)it->ctime.tv_nsec);
        yajl_gen_map_close(g);
        return 0;
}

static char *render(const struct sandbox *s, const struct direct_found *f)
{
        yajl_gen g = umw_jgen_new(true);
        if (!g)
                return NULL;
        int r = 0;
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "workspace", s->project.workspace);
        umw_jgen_key_int(g, "since_sec", (long long)f->since.tv_sec);
        umw_jgen_key_int(g, "since_nsec", (long long)f->since.tv_nsec);
        umw_jgen_key(g, "cut");
        if (f->cut)
                umw_jgen_str(g, f->cut);
        else
                yajl_gen_null(g);
        umw_jgen_key(g, "entries");
        yajl_gen_array_open(g);
        for (size_t i = 0; r == 0 && i < f->n; i++)
                r = gen_item(g, &f->v[i]);
        yajl_gen_array_close(g);
        yajl_gen_map_close(g);
        char *text = umw_jgen_finish(g, NULL);
        if (r < 0) {
                free(text);
                return NULL;
        }
        return text;
}

int direct_report_write(const struct sandbox *s, int state_fd, const struct direct_found *f,
                        struct umw_error **err)
{
        if (f->n == 0 && !f->cut) {
                if (unlinkat(state_fd, DIRECT_REPORT_FILE, 0) < 0 && errno != ENOENT)
                        return umw_fail_errno(err, "remove %s", DIRECT_REPORT_FILE);
                return 0;
        }
        _cleanup_free_ char *text = render(s, f);
        if (!text)
                return umw_fail_sys(err, ENOMEM, "direct mode: the report");
        return umw_write_file_atomic(state_fd, DIRECT_REPORT_FILE, text, strlen(text), 0600, err);
}

/* in's hex digits as bytes into *out (malloc'd, the caller's to free
 * whatever the answer): false when in is no path's hex. */
static bool unhex(const char *in, char **out, size_t *len)
{
        size_t n = strlen(in);
        *out = NULL;
        if (n == 0 || n % 2 || n / 2 >= DIRECT_PATH_MAX || !(*out = malloc(n / 2 + 1)))
                return false;
        for (size_t i = 0; i < n / 2; i++) {
                unsigned v;
                if (sscanf(in + 2 * i, "%2x", &v) != 1 || v == 0)
                        return false;
                (*out)[i] = (char)v;
        }
        (*out)[n / 2] = '\0';
        *len = n / 2;
        return true;
}

static bool get_u64(yajl_val o, const char *key, uint64_t *v)
{
        const char *text = umw_json_member_str(o, key, NULL);
        char *end;
        errno = 0;
        *v = text ? strtoull(text, &end, 10) : 0;
        return text && *text && !*end && errno == 0;
}

static bool get_int(yajl_val o, const char *key, long long *v)
{
        yajl_val x = umw_json_member(o, key);
        *v = YAJL_IS_INTEGER(x) ? x->u.number.i : 0;
        return YAJL_IS_INTEGER(x);
}

static int read_item(struct direct_found *f, yajl_val o)
{
        uint64_t dev, ino;
        long long sec, nsec;
        const char *raw = umw_json_member_str(o, "path_hex", NULL);
        const char *reason = umw_json_member_str(o, "reason", NULL);
        _cleanup_free_ char *path = NULL;
        size_t len;
        if (!raw || !reason || !unhex(raw, &path, &len) || !get_u64(o, "dev", &dev) ||
            !get_u64(o, "ino", &ino) || !get_int(o, "ctime_sec", &sec) ||
            !get_int(o, "ctime_nsec", &nsec))
                return -EINVAL;
        struct stat st = {.st_dev = (dev_t)dev, .st_ino = (ino_t)ino};
        st.st_ctim = (struct timespec){.tv_sec = (time_t)sec, .tv_nsec = (long)nsec};
        return direct_found_add(f, path, len, reason, &st) ? 0 : -ENOMEM;
}

int direct_report_read(int state_fd, struct direct_found *f, bool *none, struct umw_error **err)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        *none = false;
        int r = umw_read_file_at(state_fd, DIRECT_REPORT_FILE, REPORT_MAX, &text, &len, err);
        if (r < 0 && (*err)->errnum == ENOENT) {
                umw_error_freep(err);
                *none = true;
                return 0;
        }
        if (r < 0 || (r = umw_json_parse(text, DIRECT_REPORT_FILE, &f->tree, err)) < 0)
                return r;
        long long sec, nsec;
        yajl_val entries = umw_json_member(f->tree, "entries");
        if (!get_int(f->tree, "since_sec", &sec) || !get_int(f->tree, "since_nsec", &nsec) ||
            !YAJL_IS_ARRAY(entries))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: expected since_sec, since_nsec and entries",
                                DIRECT_REPORT_FILE);
        f->since = (struct timespec){.tv_sec = (time_t)sec, .tv_nsec = (long)nsec};
        for (size_t i = 0; i < entries->u.array.len; i++)
                if (read_item(f, entries->u.array.values[i]) < 0)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "%s: entries[%zu]: expected path_hex, reason, dev, ino, "
                                        "ctime_sec and ctime_nsec",
                                        DIRECT_REPORT_FILE, i);
        return 0;
}
