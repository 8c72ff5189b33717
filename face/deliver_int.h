/* The parts of a delivery (face/deliver*.c): the set of changes as
 * umwelt-deliver sees it, the host repository, the records. */
#ifndef UMW_DELIVER_INT_H
#define UMW_DELIVER_INT_H

#include "face/deliver.h"
#include "face/layer.h"
#include "face/sandbox_int.h"
#include "common/error.h"

#include <git2.h>
#include <stdio.h>

/* The hex id of a blob, or "" for a path that is not there (deleted). */
typedef char deliver_hex[GIT_OID_HEXSZ + 1];

struct deliver_item {
        struct layer_change *c;
        struct delivery_verdict v;
        mode_t mode; /* the layer's, 0 when deleted */
        char *data;  /* the layer's bytes (a link's text), NULL when not read */
        size_t len;
        deliver_hex blob; /* of data; "" when deleted or unread */
        bool included;    /* named with --include */
        bool seen;        /* delivered as it is now by a delivery up to --since */
        bool conflict;    /* the host's file is no longer the baseline's */
        char *merge;      /* git_merge_file's text for a conflict (malloc'd) */
};

struct deliver_set {
        struct sandbox s;
        char *state;      /* STATE/umwelt/PROJECT-ID */
        int upper, lower; /* the layer's upper, the host's workspace */
        struct layer_changes changes;
        struct deliver_item *items;
        size_t n;
        git_repository *repo; /* NULL: the project is no repository */
        git_oid baseline;
        bool has_baseline;
        git_tree *base_tree;         /* the baseline commit's */
        unsigned last;               /* the highest delivery number, 0: none */
        struct delivery_rules rules; /* the user's hold names (s.view.policy's) */
};

#define DELIVER_SET_INIT                                                                           \
        {                                                                                          \
                .s.project.audit_fd = -1, .upper = -1, .lower = -1                                 \
        }
void deliver_set_free(struct deliver_set *d);
#define _cleanup_deliver_set_ __attribute__((cleanup(deliver_set_free)))

/* ---------------------------------------------------------- deliver_record.c */

/* The files delivered by deliveries 1..upto, path -> blob ("" deleted). */
struct delivered {
        char **path;
        deliver_hex *blob;
        size_t n;
};
void delivered_free(struct delivered *m);
/* The highest delivery number in state/deliveries (0: none). */
int deliver_last_number(const char *state, unsigned *out, struct umw_error **err);
int deliver_load(const char *state, unsigned upto, struct delivered *out, struct umw_error **err);
/* The blob path was last delivered as, NULL when never. */
const char *delivered_blob(const struct delivered *m, const char *path);
/* What one delivery did, for its record and its audit line. */
struct deliver_result {
        const char *kind;   /* "apply", "sync" */
        const char *branch; /* apply's */
        const char *commit; /* apply's hex */
        const char *baseline;
        unsigned number; /* set by deliver_record */
};
/* Writes state/deliveries/N.json (0600, a temp file renamed without
 * replacing: two deliveries never share a number) and the audit line. */
int deliver_record(struct deliver_set *d, struct deliver_result *res, struct umw_error **err);
/* What the delivery did, one line or one JSON document on stdout. */
void deliver_report(const struct deliver_set *d, const struct deliver_result *res, bool json);
/* Whether item i goes to the host in this delivery. */
bool deliver_item_goes(const struct deliver_item *it);
/* The agent's text (a merge), each line terminal-safe after indent. */
void deliver_put_lines(FILE *out, const char *text, const char *indent);
/* Same, without indent, as a string (malloc'd). */
char *deliver_printable_lines(const char *text);

/* ------------------------------------------------------------- deliver_git.c */

#define _cleanup_git_repo_   __attribute__((cleanup(deliver_git_repo_freep)))
#define _cleanup_git_tree_   __attribute__((cleanup(deliver_git_tree_freep)))
#define _cleanup_git_commit_ __attribute__((cleanup(deliver_git_commit_freep)))
#define _cleanup_git_ref_    __attribute__((cleanup(deliver_git_ref_freep)))
#define _cleanup_git_sig_    __attribute__((cleanup(deliver_git_sig_freep)))
void deliver_git_repo_freep(git_repository **p);
void deliver_git_tree_freep(git_tree **p);
void deliver_git_commit_freep(git_commit **p);
void deliver_git_ref_freep(git_reference **p);
void deliver_git_sig_freep(git_signature **p);

/* libgit2's last error as an umw_error of kind. */
int deliver_git_fail(struct umw_error **err, enum umw_exit kind, const char *what);
/* The workspace's repository (it must be its top: no search upward),
 * NULL when there is none; the baseline (layer/baseline, else HEAD now). */
int deliver_git_open(struct deliver_set *d, struct umw_error **err);
/* The blob id bytes would have. */
void deliver_git_hash(const char *data, size_t len, deliver_hex out);
/* Marks each change whose host file is no longer the baseline's a
 * conflict, with git_merge_file's text. */
int deliver_git_conflicts(struct deliver_set *d, struct umw_error **err);
/* Refuses a branch name that is invalid or protected. */
int deliver_git_check_branch(git_repository *repo, const char *branch,
                             char *const *protected_branches, struct umw_error **err);
/* Commits the set on refs/heads/branch; the commit's hex in out. */
int deliver_git_commit(struct deliver_set *d, const char *branch, const char *message,
                       deliver_hex out, struct umw_error **err);

/* ------------------------------------------------------------- deliver_set.c */

/* The layer's changes, classified, read, since-filtered (since NULL:
 * "last"; "start": nothing hidden), with conflicts; includes checked. */
int deliver_set_read(struct deliver_set *d, const struct deliver_opts *o, struct umw_error **err);

#endif
