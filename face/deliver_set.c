/* The set a delivery works on: the layer's changes (face/layer.c), each
 * classified (policy/delivery_rules.h), its bytes read by fd from the
 * layer's upper (openat2, no link followed: a link's text is read, never
 * its target) and hashed as git would; what a delivery up to --since
 * delivered as it is now marked seen; the conflicts with the host; the
 * files named with --include checked against their buckets. */
#include "face/deliver_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/utf8.h"
#include "common/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void deliver_set_free(struct deliver_set *d)
{
        for (size_t i = 0; i < d->n; i++) {
                free(d->items[i].data);
                free(d->items[i].merge);
        }
        free(d->items);
        layer_changes_free(&d->changes);
        git_tree_free(d->base_tree);
        git_repository_free(d->repo);
        if (d->upper >= 0)
                close(d->upper);
        if (d->lower >= 0)
                close(d->lower);
        free(d->state);
        sandbox_release(&d->s);
}

/* The layer's upper directory and the workspace, opened once. */
static int open_layer(struct deliver_set *d, struct umw_error **err)
{
        _cleanup_free_ char *dir = NULL;
        int r = sandbox_layer_dir(&d->s, &dir, err);
        if (r < 0)
                return r;
        _cleanup_close_ int layer = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        d->upper = layer < 0
                       ? -1
                       : openat(layer, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d->upper < 0 && errno == ENOENT)
                return umw_fail(
                    err, UMW_EXIT_NOTFOUND, ENOENT,
                    "no layer for %s (%s/upper): no review-mode sandbox wrote there yet",
                    d->s.project.workspace, dir);
        if (d->upper < 0)
                return umw_fail_errno(err, "open %s/upper", dir);
        d->lower = open(d->s.project.workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return d->lower < 0 ? umw_fail_errno(err, "open workspace %s", d->s.project.workspace) : 0;
}

/* The agent's bytes of a file or link it, hashed; a change the layer no
 * longer holds as listed is refused as unreadable. A large file's bytes
 * are kept only where keep (it was included). */
static void read_item(struct deliver_set *d, struct deliver_item *it, bool keep)
{
        const struct delivery_entry *e = &it->c->entry;
        if (it->v.bucket == DELIVERY_REJECT || it->c->kind == LAYER_DELETED || S_ISDIR(e->mode))
                return;
        _cleanup_error_ struct umw_error *rerr = NULL;
        mode_t mode;
        if (layer_read_path(d->upper, it->c->path, LAYER_FILE_MAX, &it->data, &it->len, &mode,
                            &rerr) < 0 ||
            (mode & S_IFMT) != (e->mode & S_IFMT)) {
                free(it->data);
                it->data = NULL;
                it->v = (struct delivery_verdict){DELIVERY_REJECT, "it could not be read"};
                return;
        }
        it->mode = mode;
        deliver_git_hash(it->data, it->len, it->blob);
        /* A large file is held: its bytes are read again only when it is
         * included, so a layer of many large files never sits in memory. */
        if (!keep && it->len > DELIVERY_SIZE_LIMIT) {
                free(it->data);
                it->data = NULL;
        }
}

static int classify(struct deliver_set *d, struct umw_error **err)
{
        d->rules.hold = (const char *const *)d->s.view.policy.delivery_hold;
        d->n = d->changes.n;
        d->items = calloc(d->n + 1, sizeof(*d->items));
        if (!d->items)
                return umw_fail_sys(err, ENOMEM, "deliver");
        for (size_t i = 0; i < d->n; i++) {
                struct deliver_item *it = &d->items[i];
                it->c = &d->changes.v[i];
                it->mode = it->c->entry.mode;
                delivery_classify(&d->rules, &it->c->entry, &it->v);
                read_item(d, it, false);
        }
        return 0;
}

/* The delivery --since names: 0 for start. */
static int since_number(const struct deliver_set *d, const char *since, unsigned *out,
                        struct umw_error **err)
{
        char *end = NULL;
        if (!since || strcmp(since, "last") == 0) {
                *out = d->last;
                return 0;
        }
        if (strcmp(since, "start") == 0) {
                *out = 0;
                return 0;
        }
        unsigned long n = since[0] >= '1' && since[0] <= '9' ? strtoul(since, &end, 10) : 0;
        if (!n || *end)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "--since %s: expected start, last or a delivery number", since);
        if (n > d->last)
                return umw_fail(err, UMW_EXIT_NOTFOUND, ENOENT,
                                "--since %s: no such delivery (the last is %u)", since, d->last);
        *out = (unsigned)n;
        return 0;
}

static int mark_seen(struct deliver_set *d, const char *since, struct umw_error **err)
{
        unsigned upto = 0;
        struct delivered m;
        int r;
        if ((r = deliver_last_number(d->state, &d->last, err)) < 0 ||
            (r = since_number(d, since, &upto, err)) < 0 ||
            (r = deliver_load(d->state, upto, &m, err)) < 0)
                return r;
        for (size_t i = 0; i < d->n; i++) {
                const char *blob = delivered_blob(&m, d->items[i].c->path);
                d->items[i].seen = blob && strcmp(blob, d->items[i].blob) == 0;
        }
        delivered_free(&m);
        return 0;
}

static struct deliver_item *find_item(struct deliver_set *d, const char *path)
{
        for (size_t i = 0; i < d->n; i++) {
                if (strcmp(d->items[i].c->path, path) == 0)
                        return &d->items[i];
        }
        return NULL;
}

/* --include PATH: a held change of the layer, delivered too. */
static int include_one(struct deliver_set *d, const char *path, struct umw_error **err)
{
        struct deliver_item *it = find_item(d, path);
        _cleanup_free_ char *shown = umw_printable_dup(path, strlen(path));
        const char *p = shown ? shown : "?";
        if (!it)
                return umw_fail(err, UMW_EXIT_CONFIG, ENOENT,
                                "--include %s: no such change in the layer (see deliver review)",
                                p);
        if (it->v.bucket == DELIVERY_REJECT)
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "--include %s: refused: rejected (%s), never delivered", p,
                                it->v.reason);
        if (it->v.bucket == DELIVERY_APPLY)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "--include %s: not held: it is delivered without --include", p);
        if (S_ISDIR(it->mode))
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                                "--include %s: refused: a nested repository is not delivered "
                                "(commit in it, or copy its files without its .git)",
                                p);
        if (!it->data && it->mode)
                read_item(d, it, true);
        if (!it->data && it->mode)
                return umw_fail(err, UMW_EXIT_FAILURE, EIO, "--include %s: it could not be read",
                                p);
        it->included = true;
        return 0;
}

int deliver_set_read(struct deliver_set *d, const struct deliver_opts *o, struct umw_error **err)
{
        int r;
        if ((r = sandbox_locate(&d->s, o->project, err)) < 0 ||
            (r = sandbox_user_policy_read(&d->s, err)) < 0 ||
            (r = umw_state_dir(d->s.project.id, &d->state, err)) < 0 ||
            (r = open_layer(d, err)) < 0 ||
            (r = layer_read_changes(d->upper, d->lower, &d->changes, err)) < 0 ||
            (r = classify(d, err)) < 0 || (r = mark_seen(d, o->since, err)) < 0 ||
            (r = deliver_git_open(d, err)) < 0 || (r = deliver_git_conflicts(d, err)) < 0)
                return r;
        for (size_t i = 0; i < o->n_include; i++)
                if ((r = include_one(d, o->include[i], err)) < 0)
                        return r;
        return 0;
}
