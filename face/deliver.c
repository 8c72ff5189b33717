/* deliver review: what the agent changed in the project's layer since a
 * delivery (face/deliver_set.c), file by file with its +/- lines, each in
 * its bucket (policy/delivery_rules.h) with the reason, a conflict with
 * git_merge_file's text. Only the layer is read (face/layer.c): the workspace is
 * looked at only where the layer names a path. Names are the agent's
 * bytes: printed terminal-safe, and in JSON the same escaped text. */
#include "face/deliver_int.h"
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

struct counts {
        size_t shown, by[3]; /* by bucket */
};

static struct counts count(const struct deliver_set *d)
{
        struct counts c = {0};
        for (size_t i = 0; i < d->n; i++)
                if (!d->items[i].seen) {
                        c.shown++;
                        c.by[d->items[i].v.bucket]++;
                }
        return c;
}

static void print_text(const struct deliver_set *d)
{
        for (size_t i = 0; i < d->n; i++) {
                const struct layer_change *c = d->items[i].c;
                const struct delivery_verdict *v = &d->items[i].v;
                if (d->items[i].seen)
                        continue;
                char lines[48] = "";
                if (c->added || c->removed)
                        snprintf(lines, sizeof(lines), "+%zu -%zu", c->added, c->removed);
                printf("%-6s %-8s %-13s ", delivery_bucket_name(v->bucket),
                       layer_change_kind_name(c->kind), lines);
                umw_put_printable(stdout, c->path, c->entry.len, false);
                printf("%s%s\n", v->reason ? ": " : "", v->reason ? v->reason : "");
                if (d->items[i].merge)
                        deliver_put_lines(stdout, d->items[i].merge, "    ");
        }
        struct counts n = count(d);
        if (n.shown < d->n)
                printf("(%zu more as delivered up to --since: --since start shows them)\n",
                       d->n - n.shown);
        printf("%zu changed: %zu apply, %zu hold, %zu reject\n", n.shown, n.by[DELIVERY_APPLY],
               n.by[DELIVERY_HOLD], n.by[DELIVERY_REJECT]);
}

static int gen_change(yajl_gen g, const struct deliver_item *it)
{
        const struct layer_change *c = it->c;
        const struct delivery_verdict *v = &it->v;
        _cleanup_free_ char *path = umw_printable_dup(c->path, c->entry.len);
        _cleanup_free_ char *merge = it->merge ? deliver_printable_lines(it->merge) : NULL;
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
        umw_jgen_key_bool(g, "conflict", it->conflict);
        umw_jgen_key(g, "merge");
        if (merge)
                umw_jgen_str(g, merge);
        else
                yajl_gen_null(g);
        umw_jgen_key_str(g, "blob", it->blob);
        yajl_gen_map_close(g);
        return 0;
}

static int print_json(const struct deliver_set *d, struct umw_error **err)
{
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return umw_fail_sys(err, ENOMEM, "deliver review");
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "project", d->s.project.workspace);
        umw_jgen_key_int(g, "deliveries", d->last);
        umw_jgen_key(g, "changes");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < d->n; i++)
                if (!d->items[i].seen && gen_change(g, &d->items[i]) < 0) {
                        yajl_gen_free(g);
                        return umw_fail_sys(err, ENOMEM, "deliver review");
                }
        yajl_gen_array_close(g);
        struct counts n = count(d);
        for (int b = DELIVERY_APPLY; b <= DELIVERY_REJECT; b++)
                umw_jgen_key_int(g, delivery_bucket_name(b), (long long)n.by[b]);
        yajl_gen_map_close(g);
        _cleanup_free_ char *text = umw_jgen_finish(g, NULL);
        if (!text)
                return umw_fail_sys(err, ENOMEM, "deliver review");
        printf("%s\n", text);
        return 0;
}

int deliver_review(const struct deliver_opts *o, struct umw_error **err)
{
        _cleanup_deliver_set_ struct deliver_set d = DELIVER_SET_INIT;
        int r = deliver_set_read(&d, o, err);
        if (r < 0)
                return r;
        if (o->json)
                return print_json(&d, err);
        print_text(&d);
        return 0;
}
