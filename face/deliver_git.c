/* The host's repository, through libgit2 only: the baseline the layer
 * began from, the host's files against it (conflicts, merged with
 * git_merge_file), the branch rules, and the commit. Objects are written
 * to the object database and one reference is moved; the working tree,
 * the index and HEAD are never touched and nothing is checked out.
 * libgit2 runs no hook (deliver-apply.sh plants them to prove it). */
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

void deliver_git_repo_freep(git_repository **p)
{
        git_repository_free(*p);
}
void deliver_git_tree_freep(git_tree **p)
{
        git_tree_free(*p);
}
void deliver_git_commit_freep(git_commit **p)
{
        git_commit_free(*p);
}
void deliver_git_ref_freep(git_reference **p)
{
        git_reference_free(*p);
}
void deliver_git_sig_freep(git_signature **p)
{
        git_signature_free(*p);
}
static void tree_entry_freep(git_tree_entry **p)
{
        git_tree_entry_free(*p);
}
static void blob_freep(git_blob **p)
{
        git_blob_free(*p);
}
static void config_freep(git_config **p)
{
        git_config_free(*p);
}
#define _cleanup_git_entry_  __attribute__((cleanup(tree_entry_freep)))
#define _cleanup_git_blob_   __attribute__((cleanup(blob_freep)))
#define _cleanup_git_config_ __attribute__((cleanup(config_freep)))

int deliver_git_fail(struct umw_error **err, enum umw_exit kind, const char *what)
{
        const git_error *e = git_error_last();
        return umw_fail(err, kind, EIO, "%s: %s", what, e && e->message ? e->message : "libgit2");
}

/* layer/baseline, the commit the layer began from ("" when absent). */
static int read_baseline_file(const struct deliver_set *d, char hex[GIT_OID_HEXSZ + 1],
                              struct umw_error **err)
{
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t len;
        hex[0] = '\0';
        if (asprintf(&path, "%s/layer/baseline", d->state) < 0)
                return umw_fail_sys(err, ENOMEM, "baseline");
        int r = umw_read_file_at(AT_FDCWD, path, 128, &text, &len, err);
        if (r < 0 && (*err)->errnum == ENOENT) {
                umw_error_freep(err);
                return 0;
        }
        if (r < 0)
                return r;
        if (len < GIT_OID_HEXSZ || (len > GIT_OID_HEXSZ && text[GIT_OID_HEXSZ] != '\n') ||
            strspn(text, "0123456789abcdef") != GIT_OID_HEXSZ)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: expected one line, a 40-hex commit id", path);
        memcpy(hex, text, GIT_OID_HEXSZ);
        hex[GIT_OID_HEXSZ] = '\0';
        return 0;
}

static int open_baseline(struct deliver_set *d, struct umw_error **err)
{
        char hex[GIT_OID_HEXSZ + 1];
        int r = read_baseline_file(d, hex, err);
        if (r < 0)
                return r;
        if (hex[0])
                r = git_oid_fromstr(&d->baseline, hex);
        else /* no baseline recorded: the host's HEAD now */
                r = git_reference_name_to_id(&d->baseline, d->repo, "HEAD");
        if (r == GIT_ENOTFOUND || r == GIT_EUNBORNBRANCH)
                return 0; /* no commit yet: the branch starts from nothing */
        _cleanup_git_commit_ git_commit *c = NULL;
        if (r < 0 || git_commit_lookup(&c, d->repo, &d->baseline) < 0 ||
            git_commit_tree(&d->base_tree, c) < 0)
                return deliver_git_fail(err, UMW_EXIT_CONFIG, "baseline commit");
        d->has_baseline = true;
        return 0;
}

int deliver_git_open(struct deliver_set *d, struct umw_error **err)
{
        int r = git_repository_open_ext(&d->repo, d->s.project.workspace,
                                        GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
        if (r == GIT_ENOTFOUND) {
                d->repo = NULL;
                return 0;
        }
        if (r < 0)
                return deliver_git_fail(err, UMW_EXIT_FAILURE, d->s.project.workspace);
        return open_baseline(d, err);
}

void deliver_git_hash(const char *data, size_t len, deliver_hex out)
{
        git_oid id;
        if (git_odb_hash(&id, data, len, GIT_OBJECT_BLOB) < 0) {
                out[0] = '\0';
                return;
        }
        git_oid_tostr(out, GIT_OID_HEXSZ + 1, &id);
}

/* git_merge_file's three-way text: baseline, host, agent (malloc'd). */
static char *merge_text(git_blob *base, const char *host, size_t hlen, const char *path,
                        const struct deliver_item *it)
{
        git_merge_file_input anc = GIT_MERGE_FILE_INPUT_INIT, ours = GIT_MERGE_FILE_INPUT_INIT,
                             theirs = GIT_MERGE_FILE_INPUT_INIT;
        anc.ptr = base ? git_blob_rawcontent(base) : "";
        anc.size = base ? (size_t)git_blob_rawsize(base) : 0;
        ours.ptr = host ? host : "";
        ours.size = host ? hlen : 0;
        theirs.ptr = it->data ? it->data : "";
        theirs.size = it->data ? it->len : 0;
        anc.path = ours.path = theirs.path = path;
        git_merge_file_options opts = GIT_MERGE_FILE_OPTIONS_INIT;
        opts.ancestor_label = "baseline";
        opts.our_label = "host";
        opts.their_label = "agent";
        git_merge_file_result res = {0};
        if (git_merge_file(&res, &anc, &ours, &theirs, &opts) < 0)
                return NULL;
        char *out = malloc(res.len + 1);
        if (out) {
                memcpy(out, res.ptr, res.len);
                out[res.len] = '\0';
        }
        git_merge_file_result_free(&res);
        return out;
}

/* Whether the host's file at the item's path is no longer the baseline's. */
static int check_one(struct deliver_set *d, struct deliver_item *it, struct umw_error **err)
{
        _cleanup_free_ char *host = NULL;
        size_t hlen;
        mode_t hmode;
        _cleanup_error_ struct umw_error *rerr = NULL;
        int unread =
            layer_read_path(d->lower, it->c->path, LAYER_FILE_MAX, &host, &hlen, &hmode, &rerr);
        _cleanup_git_entry_ git_tree_entry *e = NULL;
        if (d->base_tree && git_tree_entry_bypath(&e, d->base_tree, it->c->path) < 0)
                e = NULL;
        /* A directory then and now: its files are changes of their own. */
        if (unread && rerr->errnum == EISDIR && e && git_tree_entry_type(e) == GIT_OBJECT_TREE)
                return 0;
        if (e && git_tree_entry_type(e) != GIT_OBJECT_BLOB)
                e = (git_tree_entry_free(e), NULL);
        deliver_hex hex = "";
        if (!unread && hmode)
                deliver_git_hash(host, hlen, hex);
        if (!unread &&
            (e ? hmode && strcmp(hex, git_oid_tostr_s(git_tree_entry_id(e))) == 0 : !hmode))
                return 0;
        it->conflict = true;
        it->v = (struct delivery_verdict){
            DELIVERY_HOLD, e || unread ? "a conflict: the host's file changed since the baseline"
                                       : "a conflict: the host has a file the baseline commit "
                                         "does not (untracked, or new since)"};
        if (unread || !S_ISREG(it->mode ? it->mode : S_IFREG) || (hmode && !S_ISREG(hmode)) ||
            it->c->entry.binary || (it->mode && !it->data))
                return 0;
        _cleanup_git_blob_ git_blob *base = NULL;
        if (e && git_blob_lookup(&base, d->repo, git_tree_entry_id(e)) < 0)
                return deliver_git_fail(err, UMW_EXIT_FAILURE, "baseline blob");
        it->merge = merge_text(base, host, hlen, it->c->path, it);
        return 0;
}

int deliver_git_conflicts(struct deliver_set *d, struct umw_error **err)
{
        if (!d->repo)
                return 0;
        for (size_t i = 0; i < d->n; i++) {
                struct deliver_item *it = &d->items[i];
                int r;
                if (it->v.bucket == DELIVERY_REJECT || it->seen || S_ISDIR(it->mode))
                        continue;
                if ((r = check_one(d, it, err)) < 0)
                        return r;
        }
        return 0;
}

/* The short name of a symbolic reference's target under prefix, or NULL. */
static const char *target_below(git_repository *repo, const char *ref, const char *prefix,
                                git_reference **hold)
{
        if (git_reference_lookup(hold, repo, ref) < 0) {
                *hold = NULL;
                return NULL;
        }
        const char *t = git_reference_symbolic_target(*hold);
        size_t n = strlen(prefix);
        return t && strncmp(t, prefix, n) == 0 ? t + n : NULL;
}

/* Why branch may not be written to, NULL when it may. */
static const char *protected_why(git_repository *repo, const char *branch,
                                 char *const *protected_branches)
{
        _cleanup_git_ref_ git_reference *head = NULL, *origin = NULL;
        _cleanup_git_config_ git_config *cfg = NULL;
        const char *t;
        if (strcmp(branch, "main") == 0 || strcmp(branch, "master") == 0)
                return "main and master are never delivered to";
        for (size_t i = 0; protected_branches && protected_branches[i]; i++)
                if (strcmp(branch, protected_branches[i]) == 0)
                        return "protected in the user config ([delivery] protected_branches)";
        if ((t = target_below(repo, "HEAD", "refs/heads/", &head)) && strcmp(t, branch) == 0)
                return "it is the branch checked out on the host";
        if ((t = target_below(repo, "refs/remotes/origin/HEAD", "refs/remotes/origin/", &origin)) &&
            strcmp(t, branch) == 0)
                return "it is the repository's default branch (origin/HEAD)";
        if (git_repository_config_snapshot(&cfg, repo) == 0 &&
            git_config_get_string(&t, cfg, "init.defaultBranch") == 0 && strcmp(t, branch) == 0)
                return "it is the default branch (init.defaultBranch)";
        return NULL;
}

int deliver_git_check_branch(git_repository *repo, const char *branch,
                             char *const *protected_branches, struct umw_error **err)
{
        _cleanup_free_ char *ref = NULL;
        int valid = 0;
        if (asprintf(&ref, "refs/heads/%s", branch) < 0)
                return umw_fail_sys(err, ENOMEM, "branch");
        if (!branch[0] || branch[0] == '-' || git_reference_name_is_valid(&valid, ref) < 0 ||
            !valid)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "--branch %s: expected a valid git branch name", branch);
        const char *why = protected_why(repo, branch, protected_branches);
        if (why)
                return umw_fail(err, UMW_EXIT_CONFIG, EPERM, "--branch %s: refused: %s", branch,
                                why);
        return 0;
}

/* The tree a delivery starts from: the branch's tip, else the baseline,
 * else an empty one; *parent the commit it continues, NULL for none. */
static int start_tree(struct deliver_set *d, const char *ref, git_commit **parent, git_tree **tree,
                      struct umw_error **err)
{
        git_oid tip, empty;
        *parent = NULL;
        *tree = NULL;
        int r = git_reference_name_to_id(&tip, d->repo, ref);
        if (r < 0 && r != GIT_ENOTFOUND)
                return deliver_git_fail(err, UMW_EXIT_FAILURE, ref);
        if (r == 0 || d->has_baseline) {
                if (git_commit_lookup(parent, d->repo, r == 0 ? &tip : &d->baseline) < 0 ||
                    git_commit_tree(tree, *parent) < 0)
                        return deliver_git_fail(err, UMW_EXIT_FAILURE, "parent commit");
                return 0;
        }
        git_treebuilder *b = NULL;
        if (git_treebuilder_new(&b, d->repo, NULL) < 0 || git_treebuilder_write(&empty, b) < 0 ||
            git_tree_lookup(tree, d->repo, &empty) < 0) {
                git_treebuilder_free(b);
                return deliver_git_fail(err, UMW_EXIT_FAILURE, "empty tree");
        }
        git_treebuilder_free(b);
        return 0;
}

static git_filemode_t filemode(mode_t m)
{
        return S_ISLNK(m) ? GIT_FILEMODE_LINK
               : m & 0100 ? GIT_FILEMODE_BLOB_EXECUTABLE
                          : GIT_FILEMODE_BLOB;
}

/* Whether a directory above path is removed already (trees[0..n)): its
 * files go with it. Such directories are few: each is a file or link the
 * agent put where a directory was. */
static bool below_removed(const char *const *trees, size_t n, const char *path)
{
        for (size_t k = 0; k < n; k++) {
                size_t len = strlen(trees[k]);
                if (strncmp(trees[k], path, len) == 0 && path[len] == '/')
                        return true;
        }
        return false;
}

/* What base loses: each deletion it has, and each directory a file or
 * link that goes replaces. A pass of its own, before the blobs: libgit2
 * neither upserts a blob over a tree nor removes a file and adds below
 * its name in one update (a D/F conflict). */
static int remove_from(struct deliver_set *d, git_tree **base, git_tree_update *u,
                       struct umw_error **err)
{
        size_t n = 0, ntrees = 0;
        _cleanup_free_ const char **trees = calloc(d->n + 1, sizeof(*trees));
        if (!trees)
                return umw_fail_sys(err, ENOMEM, "tree");
        for (size_t i = 0; i < d->n; i++) {
                struct deliver_item *it = &d->items[i];
                _cleanup_git_entry_ git_tree_entry *e = NULL;
                if (!deliver_item_goes(it) || S_ISDIR(it->mode) ||
                    below_removed(trees, ntrees, it->c->path) ||
                    git_tree_entry_bypath(&e, *base, it->c->path) < 0)
                        continue; /* not in the tree: nothing to remove */
                bool tree = git_tree_entry_type(e) == GIT_OBJECT_TREE;
                if (tree && it->mode)
                        trees[ntrees++] = it->c->path;
                if (!it->mode || tree)
                        u[n++] = (git_tree_update){.action = GIT_TREE_UPDATE_REMOVE,
                                                   .path = it->c->path};
        }
        git_oid id;
        git_tree *smaller = NULL;
        if (n == 0)
                return 0;
        if (git_tree_create_updated(&id, d->repo, *base, n, u) < 0 ||
            git_tree_lookup(&smaller, d->repo, &id) < 0)
                return deliver_git_fail(err, UMW_EXIT_FAILURE, "tree");
        git_tree_free(*base);
        *base = smaller;
        return 0;
}

/* What it gains: a blob written for each file or link that goes. */
static int add_to(struct deliver_set *d, git_tree_update *u, size_t *n, struct umw_error **err)
{
        *n = 0;
        for (size_t i = 0; i < d->n; i++) {
                struct deliver_item *it = &d->items[i];
                if (!deliver_item_goes(it) || !it->mode || S_ISDIR(it->mode))
                        continue;
                git_tree_update *x = &u[(*n)++];
                *x = (git_tree_update){.action = GIT_TREE_UPDATE_UPSERT,
                                       .path = it->c->path,
                                       .filemode = filemode(it->mode)};
                if (git_blob_create_from_buffer(&x->id, d->repo, it->data, it->len) < 0)
                        return deliver_git_fail(err, UMW_EXIT_FAILURE, "blob");
        }
        return 0;
}

int deliver_git_commit(struct deliver_set *d, const char *branch, const char *message,
                       deliver_hex out, struct umw_error **err)
{
        _cleanup_free_ char *ref = NULL;
        _cleanup_free_ git_tree_update *u = calloc(d->n + 1, sizeof(*u));
        _cleanup_git_commit_ git_commit *parent = NULL;
        _cleanup_git_tree_ git_tree *base = NULL, *tree = NULL;
        _cleanup_git_sig_ git_signature *sig = NULL;
        git_oid tree_id, commit;
        size_t n;
        int r;
        if (!u || asprintf(&ref, "refs/heads/%s", branch) < 0)
                return umw_fail_sys(err, ENOMEM, "deliver apply");
        if (git_signature_default(&sig, d->repo) < 0)
                return umw_fail(err, UMW_EXIT_CONFIG, ENOENT,
                                "%s: no git identity: set user.name and user.email "
                                "(git config user.name NAME; git config user.email ADDRESS)",
                                d->s.project.workspace);
        if ((r = start_tree(d, ref, &parent, &base, err)) < 0)
                return r;
        git_oid start = *git_tree_id(base);
        if ((r = remove_from(d, &base, u, err)) < 0 || (r = add_to(d, u, &n, err)) < 0)
                return r;
        if (git_tree_create_updated(&tree_id, d->repo, base, n, u) < 0 ||
            git_tree_lookup(&tree, d->repo, &tree_id) < 0)
                return deliver_git_fail(err, UMW_EXIT_FAILURE, "tree");
        if (git_oid_equal(&tree_id, &start) && parent)
                return umw_fail(err, UMW_EXIT_STATE, ENODATA,
                                "nothing to deliver: %s already holds every change that goes",
                                branch);
        const git_commit *parents[1] = {parent};
        if (git_commit_create(&commit, d->repo, ref, sig, sig, NULL, message, tree, parent ? 1 : 0,
                              parents) < 0)
                return deliver_git_fail(err, UMW_EXIT_FAILURE, "commit");
        git_oid_tostr(out, GIT_OID_HEXSZ + 1, &commit);
        return 0;
}
