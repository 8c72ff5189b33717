/* deliver apply and deliver sync: the set (face/deliver_set.c) brought to
 * the host, as one commit on a working branch of its repository
 * (face/deliver_git.c) or written into its tree by fd; each numbered and
 * audited (face/deliver_record.c). Every refusal comes before anything is
 * written: a bad branch, an include that is not held, no identity. */
#include "face/deliver_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The set as it is now, whole: a delivery carries every change that goes,
 * whatever an earlier one (perhaps to another branch) carried. */
static int read_all(struct deliver_set *d, const struct deliver_opts *o, struct umw_error **err)
{
        struct deliver_opts all = *o;
        all.since = "start";
        int r = deliver_set_read(d, &all, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < d->n; i++)
                if (deliver_item_goes(&d->items[i]))
                        return 0;
        return umw_fail(err, UMW_EXIT_STATE, ENODATA,
                        "nothing to deliver for %s: no change in the apply bucket, none "
                        "included (see deliver review)",
                        d->s.project.workspace);
}

static char *default_message(const struct deliver_set *d)
{
        size_t n = 0;
        for (size_t i = 0; i < d->n; i++)
                n += deliver_item_goes(&d->items[i]);
        char *m = NULL;
        if (asprintf(&m,
                     "umwelt: the agent's changes (%zu files)\n\nDelivered by umwelt-deliver "
                     "from the review-mode layer of %s.\n",
                     n, d->s.project.workspace) < 0)
                return NULL;
        return m;
}

int deliver_apply(const struct deliver_opts *o, struct umw_error **err)
{
        _cleanup_deliver_set_ struct deliver_set d = DELIVER_SET_INIT;
        _cleanup_free_ char *message = NULL;
        deliver_hex commit, baseline = "";
        int r;
        if ((r = read_all(&d, o, err)) < 0)
                return r;
        if (!d.repo)
                return umw_fail(err, UMW_EXIT_NOTFOUND, ENOENT,
                                "%s is no git repository (no .git at its top): deliver sync "
                                "writes the changes into the tree instead",
                                d.s.project.workspace);
        if ((r = deliver_git_check_branch(d.repo, o->branch, d.s.view.policy.protected_branches,
                                          err)) < 0)
                return r;
        if (!o->message && !(message = default_message(&d)))
                return umw_fail_sys(err, ENOMEM, "deliver apply");
        if ((r = deliver_git_commit(&d, o->branch, o->message ? o->message : message, commit,
                                    err)) < 0)
                return r;
        if (d.has_baseline)
                git_oid_tostr(baseline, sizeof(baseline), &d.baseline);
        struct deliver_result res = {.kind = "apply",
                                     .branch = o->branch,
                                     .commit = commit,
                                     .baseline = d.has_baseline ? baseline : NULL};
        if ((r = deliver_record(&d, &res, err)) < 0)
                return umw_error_prefix(err, "committed %s on %s, but", commit, o->branch);
        deliver_report(&d, &res, o->json);
        return 0;
}

/* ------------------------------------------------------------------ sync */

/* it's bytes as path's last part (name) in dirfd: a temp file (or link)
 * made there, then renamed over; owned as the workspace. */
static int write_one(int dirfd, const char *name, const struct deliver_item *it,
                     const struct stat *ws, struct umw_error **err)
{
        char tmp[NAME_MAX + 1];
        snprintf(tmp, sizeof(tmp), ".umwelt-sync.%d.tmp", (int)getpid());
        const char *path = it->c->path;
        if (S_ISLNK(it->mode)) {
                if (symlinkat(it->data, dirfd, tmp) < 0)
                        return umw_fail_errno(err, "sync %s: symlink", path);
                if (geteuid() == 0 &&
                    fchownat(dirfd, tmp, ws->st_uid, ws->st_gid, AT_SYMLINK_NOFOLLOW) < 0) {
                        int e = errno;
                        unlinkat(dirfd, tmp, 0);
                        return umw_fail_sys(err, e, "sync %s: chown", path);
                }
        } else {
                /* The exec bit only for a file named with --include. */
                mode_t mode = it->mode & (it->included ? 0777 : 0666);
                _cleanup_close_ int fd =
                    openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                int r = fd < 0 ? -errno : umw_write_all(fd, it->data, it->len);
                if (r == 0 && geteuid() == 0 && fchown(fd, ws->st_uid, ws->st_gid) < 0)
                        r = -errno;
                if (r == 0 && fchmod(fd, mode) < 0)
                        r = -errno;
                if (r < 0) {
                        if (fd >= 0)
                                unlinkat(dirfd, tmp, 0);
                        return umw_fail_sys(err, -r, "sync %s", path);
                }
        }
        if (renameat(dirfd, tmp, dirfd, name) < 0) {
                int e = errno;
                unlinkat(dirfd, tmp, 0);
                return umw_fail_sys(err, e, "sync %s: rename", path);
        }
        return 0;
}

static int sync_one(struct deliver_set *d, const struct deliver_item *it, const struct stat *ws,
                    struct umw_error **err)
{
        _cleanup_close_ int dirfd = -1;
        size_t base;
        int r = layer_open_parent(d->lower, it->c->path, it->mode != 0, &dirfd, &base, err);
        if (r < 0 && !it->mode && (*err)->errnum == ENOENT) {
                umw_error_freep(err); /* deleted, and its directory with it */
                return 0;
        }
        if (r < 0)
                return umw_error_prefix(err, "sync");
        const char *name = it->c->path + base;
        struct stat st;
        if (!it->mode)
                return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT
                           ? umw_fail_errno(err, "sync %s: unlink", it->c->path)
                           : 0;
        /* A directory the agent replaced: its files were deletions, done. */
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
            (r = layer_remove_dirs(dirfd, name, err)) < 0)
                return umw_error_prefix(err, "sync %s", it->c->path);
        return write_one(dirfd, name, it, ws, err);
}

static int by_item_path(const void *key, const void *item)
{
        return strcmp(key, ((const struct deliver_item *)item)->c->path);
}

/* Whether the set deletes a file or link above path (items are sorted
 * by path): a file the agent replaced by a directory. */
static bool above_deleted(const struct deliver_set *d, const char *path)
{
        char up[LAYER_PATH_MAX + 1];
        snprintf(up, sizeof(up), "%s", path);
        for (char *slash; (slash = strrchr(up, '/'));) {
                *slash = '\0';
                const struct deliver_item *it =
                    bsearch(up, d->items, d->n, sizeof(*d->items), by_item_path);
                if (it && !it->mode && deliver_item_goes(it))
                        return true;
        }
        return false;
}

/* Every parent on the way is a directory, missing (made later) or a file
 * or link the set deletes: anything else refuses the sync before
 * anything is written. */
static int sync_check(struct deliver_set *d, struct umw_error **err)
{
        for (size_t i = 0; i < d->n; i++) {
                const struct deliver_item *it = &d->items[i];
                _cleanup_close_ int dirfd = -1;
                size_t base;
                if (!deliver_item_goes(it) || S_ISDIR(it->mode))
                        continue;
                int r = layer_open_parent(d->lower, it->c->path, false, &dirfd, &base, err);
                int e = r < 0 ? (*err)->errnum : 0;
                if (r < 0 && (e == ENOENT ||
                              ((e == ENOTDIR || e == ELOOP) && above_deleted(d, it->c->path)))) {
                        umw_error_freep(err);
                        continue;
                }
                if (r < 0)
                        return umw_error_prefix(err, "sync: nothing written");
        }
        return 0;
}

int deliver_sync(const struct deliver_opts *o, struct umw_error **err)
{
        _cleanup_deliver_set_ struct deliver_set d = DELIVER_SET_INIT;
        struct stat ws;
        int r;
        if ((r = read_all(&d, o, err)) < 0 ||
            (r = sandbox_refuse_running(o->rt, &d.s, "syncing", err)) < 0 ||
            (r = sync_check(&d, err)) < 0)
                return r;
        if (fstat(d.lower, &ws) < 0)
                return umw_fail_errno(err, "%s", d.s.project.workspace);
        /* Deletions first: a file may take a deleted directory's place,
         * a directory a deleted file's. */
        for (int writes = 0; writes < 2; writes++)
                for (size_t i = 0; i < d.n; i++) {
                        const struct deliver_item *it = &d.items[i];
                        if (deliver_item_goes(it) && !S_ISDIR(it->mode) && !it->mode == !writes &&
                            (r = sync_one(&d, it, &ws, err)) < 0)
                                return r;
                }
        struct deliver_result res = {.kind = "sync"};
        if ((r = deliver_record(&d, &res, err)) < 0)
                return r;
        deliver_report(&d, &res, o->json);
        return 0;
}
