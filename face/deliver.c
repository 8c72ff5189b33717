/* deliver review: what the agent changed in the project's layer, file by
 * file with its +/- lines, each in its bucket (policy/delivery_rules.h)
 * with the reason. Only the layer is read (face/layer.c): the workspace is
 * looked at only where the layer names a path. Names are the agent's
 * bytes: printed terminal-safe, and in JSON the same escaped text. */
#include "face/layer.h"
#include "face/sandbox_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct review {
        struct layer_changes changes;
        struct delivery_verdict *verdicts;
        size_t count[3]; /* by bucket */
};

static void review_free(struct review *r)
{
        layer_changes_free(&r->changes);
        free(r->verdicts);
}

/* The layer's upper directory and the workspace, opened once. */
static int open_layer(struct sandbox *s, int *upper, int *lower, struct umw_error **err)
{
        _cleanup_free_ char *dir = NULL;
        int r = sandbox_layer_dir(s, &dir, err);
        if (r < 0)
                return r;
        _cleanup_close_ int layer = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        *upper = layer < 0
                     ? -1
                     : openat(layer, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (*upper < 0 && errno == ENOENT)
                return umw_fail(
                    err, UMW_EXIT_NOTFOUND, ENOENT,
                    "no layer for %s (%s/upper): no review-mode sandbox wrote there yet",
                    s->project.workspace, dir);
        if (*upper < 0)
                return umw_fail_errno(err, "open %s/upper", dir);
        *lower = open(s->project.workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (*lower < 0) {
                umw_close_fdp(upper);
                return umw_fail_errno(err, "open workspace %s", s->project.workspace);
        }
        return 0;
}

static int review_read(struct sandbox *s, struct review *rv, struct umw_error **err)
{
        _cleanup_close_ int upper = -1, lower = -1;
        int r;
        if ((r = open_layer(s, &upper, &lower, err)) < 0 ||
            (r = layer_read_changes(upper, lower, &rv->changes, err)) < 0)
                return r;
        rv->verdicts = calloc(rv->changes.n + 1, sizeof(*rv->verdicts));
        if (!rv->verdicts)
                return umw_fail_sys(err, ENOMEM, "deliver review");
        for (size_t i = 0; i < rv->changes.n; i++) {
                delivery_classify(NULL, &rv->changes.v[i].entry, &rv->verdicts[i]);
                rv->count[rv->verdicts[i].bucket]++;
        }
        return 0;
}

static void print_text(const struct review *rv)
{
        for (size_t i = 0; i < rv->changes.n; i++) {
                const struct layer_change *c = &rv->changes.v[i];
                const struct delivery_verdict *v = &rv->verdicts[i];
                char lines[48] = "";
                if (c->added || c->removed)
                        snprintf(lines, sizeof(lines), "+%zu -%zu", c->added, c->removed);
                printf("%-6s %-8s %-13s ", delivery_bucket_name(v->bucket),
                       layer_change_kind_name(c->kind), lines);
                umw_put_printable(stdout, c->path, c->entry.len, false);
                printf("%s%s\n", v->reason ? ": " : "", v->reason ? v->reason : "");
        }
        printf("%zu changed: %zu apply, %zu hold, %zu reject\n", rv->changes.n,
               rv->count[DELIVERY_APPLY], rv->count[DELIVERY_HOLD], rv->count[DELIVERY_REJECT]);
}

static int gen_change(yajl_gen g, const struct layer_change *c, const struct delivery_verdict *v)
{
        _cleanup_free_ char *path = umw_printable_dup(c->path, c->entry.len);
        if (!path)
                return -ENOMEM;
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "path", path);
        umw_jgen_key_str(g, "change", layer_change_kind_name(c->kind));
        umw_jgen_key_str(g, "bucket", delivery_bucket_name(v->bucket));
        umw_jgen_key(g, "reason");
        if (v->reason)
                umw_jgen_str(g, v->reason);
        else
                yajl_gen_null(g);
        umw_jgen_key_int(g, "added", (long long)c->added);
        umw_jgen_key_int(g, "removed", (long long)c->removed);
        yajl_gen_map_close(g);
        return 0;
}

static int print_json(const struct sandbox *s, const struct review *rv, struct umw_error **err)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return umw_fail_sys(err, ENOMEM, "deliver review");
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "project", s->project.workspace);
        umw_jgen_key(g, "changes");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < rv->changes.n; i++)
                if (gen_change(g, &rv->changes.v[i], &rv->verdicts[i]) < 0) {
                        yajl_gen_free(g);
                        return umw_fail_sys(err, ENOMEM, "deliver review");
                }
        yajl_gen_array_close(g);
        for (int b = DELIVERY_APPLY; b <= DELIVERY_REJECT; b++)
                umw_jgen_key_int(g, delivery_bucket_name(b), (long long)rv->count[b]);
        yajl_gen_map_close(g);
        _cleanup_free_ char *text = umw_jgen_finish(g, NULL);
        if (!text)
                return umw_fail_sys(err, ENOMEM, "deliver review");
        printf("%s\n", text);
        return 0;
}

#define _cleanup_review_ __attribute__((cleanup(review_free)))

int sandbox_deliver_review(const char *project, bool json, struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        _cleanup_review_ struct review rv = {0};
        int r;
        if ((r = sandbox_locate(&s, project, err)) < 0 || (r = review_read(&s, &rv, err)) < 0)
                return r;
        if (json)
                return print_json(&s, &rv, err);
        print_text(&rv);
        return 0;
}
