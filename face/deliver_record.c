/* The deliveries' records: STATE/umwelt/PROJECT-ID/deliveries/N.json, one
 * per delivery, numbered from 1, and the audit line each delivery writes.
 * A record says which branch and commit (apply), when, and every change
 * with its bucket, whether it went, and the blob id it went as: review
 * --since N leaves out what a delivery up to N delivered as it is now. */
#include "face/deliver_int.h"
#include "common/audit.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/paths.h"
#include "common/utf8.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RECORD_MAX (256u << 20)

bool deliver_item_goes(const struct deliver_item *it)
{
        return it->v.bucket == DELIVERY_APPLY || (it->v.bucket == DELIVERY_HOLD && it->included);
}

void deliver_put_lines(FILE *out, const char *text, const char *indent)
{
        for (const char *p = text; *p;) {
                const char *nl = strchr(p, '\n');
                size_t n = nl ? (size_t)(nl - p) : strlen(p);
                fputs(indent, out);
                umw_put_printable(out, p, n, true);
                putc('\n', out);
                p += n + (nl ? 1 : 0);
        }
}

char *deliver_printable_lines(const char *text)
{
        char *out = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&out, &n);
        if (!f)
                return NULL;
        deliver_put_lines(f, text, "");
        return fclose(f) == 0 ? out : NULL;
}

/* N of "N.json" (no leading zero), 0 for any other name. */
static unsigned record_number(const char *name)
{
        char *end = NULL;
        if (name[0] < '1' || name[0] > '9')
                return 0;
        unsigned long n = strtoul(name, &end, 10);
        return strcmp(end, ".json") == 0 && n < 1000000000ul ? (unsigned)n : 0;
}

int deliver_last_number(const char *state, unsigned *out, struct umw_error **err)
{
        *out = 0;
        _cleanup_free_ char *dir = NULL;
        if (asprintf(&dir, "%s/deliveries", state) < 0)
                return umw_fail_sys(err, ENOMEM, "deliveries");
        _cleanup_closedir_ DIR *d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : umw_fail_errno(err, "open %s", dir);
        struct dirent *e;
        while ((e = readdir(d))) {
                unsigned n = record_number(e->d_name);
                if (n > *out)
                        *out = n;
        }
        return 0;
}

void delivered_free(struct delivered *m)
{
        for (size_t i = 0; i < m->n; i++)
                free(m->path[i]);
        free(m->path);
        free(m->blob);
        *m = (struct delivered){0};
}

const char *delivered_blob(const struct delivered *m, const char *path)
{
        for (size_t i = m->n; i-- > 0;) /* the latest delivery wins */
                if (strcmp(m->path[i], path) == 0)
                        return m->blob[i];
        return NULL;
}

static int delivered_add(struct delivered *m, const char *path, const char *blob)
{
        char **p = realloc(m->path, (m->n + 1) * sizeof(*p));
        if (!p)
                return -ENOMEM;
        m->path = p;
        deliver_hex *b = realloc(m->blob, (m->n + 1) * sizeof(*b));
        if (!b)
                return -ENOMEM;
        m->blob = b;
        if (!(m->path[m->n] = strdup(path)))
                return -ENOMEM;
        snprintf(m->blob[m->n], sizeof(m->blob[m->n]), "%s", blob);
        m->n++;
        return 0;
}

/* The files record n delivered, added to m. */
static int load_one(const char *state, unsigned n, struct delivered *m, struct umw_error **err)
{
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t len;
        yajl_val doc = NULL;
        int r;
        if (asprintf(&path, "%s/deliveries/%u.json", state, n) < 0)
                return umw_fail_sys(err, ENOMEM, "deliveries");
        if ((r = umw_read_file_at(AT_FDCWD, path, RECORD_MAX, &text, &len, err)) < 0 &&
            (*err)->errnum == ENOENT) {
                umw_error_freep(err); /* a number left out */
                return 0;
        }
        if (r < 0)
                return r;
        if ((r = umw_json_parse(text, path, &doc, err)) < 0)
                return r;
        yajl_val files = umw_json_member(doc, "files");
        for (size_t i = 0; YAJL_IS_ARRAY(files) && i < files->u.array.len; i++) {
                yajl_val f = files->u.array.values[i];
                yajl_val went = umw_json_member(f, "delivered");
                const char *p = umw_json_member_str(f, "path", NULL);
                const char *blob = umw_json_member_str(f, "blob", "");
                if (!p || !YAJL_IS_TRUE(went))
                        continue;
                if (delivered_add(m, p, blob) < 0) {
                        yajl_tree_free(doc);
                        return umw_fail_sys(err, ENOMEM, "%s", path);
                }
        }
        yajl_tree_free(doc);
        return 0;
}

int deliver_load(const char *state, unsigned upto, struct delivered *out, struct umw_error **err)
{
        *out = (struct delivered){0};
        for (unsigned n = 1; n <= upto; n++) {
                int r = load_one(state, n, out, err);
                if (r < 0) {
                        delivered_free(out);
                        return r;
                }
        }
        return 0;
}

static void now_rfc3339(char out[40])
{
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        strftime(out, 40, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

struct record_ctx {
        struct deliver_set *d;
        struct deliver_result *res;
        const char *time;
        bool audit; /* the audit line: path and bucket only */
};

/* A path as the record keeps it: the exact bytes for one that went (the
 * rules let only UTF-8 names go), else the printable text. */
static void gen_file(yajl_gen g, const struct deliver_item *it, bool audit)
{
        bool went = deliver_item_goes(it);
        _cleanup_free_ char *shown = went ? NULL : umw_printable_dup(it->c->path, it->c->entry.len);
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "path", went ? it->c->path : shown ? shown : "?");
        umw_jgen_key_str(g, "bucket",
                         it->conflict ? "conflict" : delivery_bucket_name(it->v.bucket));
        umw_jgen_key_bool(g, "delivered", went);
        if (!audit) {
                umw_jgen_key_str(g, "change", layer_change_kind_name(it->c->kind));
                umw_jgen_key_bool(g, "included", it->included);
                umw_jgen_key_str(g, "blob", it->blob);
        }
        yajl_gen_map_close(g);
}

static void gen_record(yajl_gen g, void *ctx)
{
        struct record_ctx *x = ctx;
        if (!x->audit) {
                yajl_gen_map_open(g);
                umw_jgen_key_str(g, "time", x->time);
        }
        umw_jgen_key_int(g, "number", x->res->number);
        umw_jgen_key_str(g, "kind", x->res->kind);
        umw_jgen_key_str(g, "project", x->d->s.project.workspace);
        if (x->res->branch)
                umw_jgen_key_str(g, "branch", x->res->branch);
        if (x->res->commit)
                umw_jgen_key_str(g, "commit", x->res->commit);
        if (x->res->baseline)
                umw_jgen_key_str(g, "baseline", x->res->baseline);
        umw_jgen_key(g, "files");
        yajl_gen_array_open(g);
        /* An audit line is at most AUDIT_LINE_MAX: past its budget the
         * files are counted, and the record holds them all. */
        size_t budget = AUDIT_LINE_MAX / 4 * 3, left_out = 0;
        for (size_t i = 0; i < x->d->n; i++) {
                const struct deliver_item *it = &x->d->items[i];
                size_t cost = it->c->entry.len * 4 + 64; /* escaped at worst */
                if (it->seen)
                        continue;
                if (x->audit && cost > budget) {
                        left_out++;
                        continue;
                }
                budget -= x->audit ? cost : 0;
                gen_file(g, it, x->audit);
        }
        yajl_gen_array_close(g);
        if (left_out)
                umw_jgen_key_int(g, "files_not_listed", (long long)left_out);
        if (!x->audit)
                yajl_gen_map_close(g);
}

/* Writes text as deliveries/N.json, N the first free number past last. */
static int write_numbered(int dirfd, const char *text, size_t len, unsigned *number,
                          struct umw_error **err)
{
        char tmp[64], name[32];
        snprintf(tmp, sizeof(tmp), ".record.%d.tmp", (int)getpid());
        _cleanup_close_ int fd =
            openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        int r;
        if (fd < 0)
                return umw_fail_errno(err, "deliveries: create %s", tmp);
        if ((r = umw_write_all(fd, text, len)) < 0 || fsync(fd) < 0) {
                unlinkat(dirfd, tmp, 0);
                return umw_fail_sys(err, r < 0 ? -r : errno, "deliveries: write %s", tmp);
        }
        for (;; (*number)++) {
                snprintf(name, sizeof(name), "%u.json", *number);
                if (renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) == 0)
                        return 0;
                if (errno != EEXIST) {
                        unlinkat(dirfd, tmp, 0);
                        return umw_fail_errno(err, "deliveries: rename to %s", name);
                }
        }
}

/* The record's text with res->number as it is (malloc'd). */
static char *record_text(struct record_ctx *x, size_t *len)
{
        yajl_gen g = umw_jgen_new(true);
        if (!g)
                return NULL;
        gen_record(g, x);
        return umw_jgen_finish(g, len);
}

int deliver_record(struct deliver_set *d, struct deliver_result *res, struct umw_error **err)
{
        char time[40];
        now_rfc3339(time);
        struct record_ctx x = {.d = d, .res = res, .time = time};
        _cleanup_free_ char *dir = NULL;
        int r;
        if (asprintf(&dir, "%s/deliveries", d->state) < 0)
                return umw_fail_sys(err, ENOMEM, "deliveries");
        if ((r = umw_mkdir_p(dir, 0700, 0700, err)) < 0)
                return umw_error_prefix(err, "deliveries");
        _cleanup_close_ int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dirfd < 0)
                return umw_fail_errno(err, "open %s", dir);
        res->number = d->last + 1;
        /* The number is in the text: a lost race renumbers and rewrites. */
        for (;;) {
                size_t len;
                unsigned want = res->number;
                _cleanup_free_ char *text = record_text(&x, &len);
                if (!text)
                        return umw_fail_sys(err, ENOMEM, "deliveries");
                if ((r = write_numbered(dirfd, text, len, &res->number, err)) < 0)
                        return r;
                if (res->number == want)
                        break;
                char name[32];
                snprintf(name, sizeof(name), "%u.json", res->number);
                unlinkat(dirfd, name, 0);
        }
        x.audit = true;
        if ((r = sandbox_open_audit(&d->s, err)) < 0)
                return r;
        return audit_append_fields(d->s.project.audit_fd, "deliver", gen_record, &x, err);
}

void deliver_report(const struct deliver_set *d, const struct deliver_result *res, bool json)
{
        size_t went = 0, held = 0, rejected = 0;
        for (size_t i = 0; i < d->n; i++) {
                const struct deliver_item *it = &d->items[i];
                went += deliver_item_goes(it);
                held += !deliver_item_goes(it) && it->v.bucket == DELIVERY_HOLD;
                rejected += it->v.bucket == DELIVERY_REJECT;
        }
        if (!json) {
                printf("delivery %u: %zu delivered, %zu held, %zu rejected", res->number, went,
                       held, rejected);
                if (res->branch)
                        printf(": %s on %s", res->commit, res->branch);
                printf("\n");
                return;
        }
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return;
        yajl_gen_map_open(g);
        umw_jgen_key_int(g, "delivery", res->number);
        umw_jgen_key_str(g, "kind", res->kind);
        if (res->branch) {
                umw_jgen_key_str(g, "branch", res->branch);
                umw_jgen_key_str(g, "commit", res->commit);
        }
        umw_jgen_key_int(g, "delivered", (long long)went);
        umw_jgen_key_int(g, "held", (long long)held);
        umw_jgen_key_int(g, "rejected", (long long)rejected);
        yajl_gen_map_close(g);
        _cleanup_free_ char *text = umw_jgen_finish(g, NULL);
        if (text)
                printf("%s\n", text);
}
