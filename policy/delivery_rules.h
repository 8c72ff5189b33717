/* Which bucket each changed path of an agent's layer goes in when it is
 * delivered to the host: apply (ordinary text files), hold (delivered
 * only when the user names it: what host tools execute or read as
 * configuration, executables, links, binaries, large files, nested
 * repositories) or reject (never: any .git in any spelling a filesystem
 * folds to it, paths that leave the tree, names that are not UTF-8,
 * special files, what could not be read). Pure: the caller reads the layer
 * (without following links, through fds) and describes each entry. */
#ifndef UMW_DELIVERY_RULES_H
#define UMW_DELIVERY_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum delivery_bucket { DELIVERY_APPLY, DELIVERY_HOLD, DELIVERY_REJECT };

/* A file larger than this is held unless the rules say otherwise. */
#define DELIVERY_SIZE_LIMIT (1024 * 1024)

struct delivery_entry {
        const char *path; /* relative to the workspace, '/'-separated, len bytes */
        size_t len;
        mode_t mode;      /* the layer's (type and permissions); 0 when deleted */
        mode_t base_mode; /* the baseline's; 0 when the path is new */
        uint64_t size;
        bool binary;       /* a NUL byte in its first 8000 bytes, as git decides */
        bool through_link; /* a directory on its way is a symbolic link */
        bool unreadable;   /* the reader could not open or read it */
        bool nested_repo;  /* a directory that holds a repository of its own */
};

struct delivery_rules {
        uint64_t size_limit;        /* 0: DELIVERY_SIZE_LIMIT */
        const char *const *hold;    /* more held names (the user config), NULL-ended */
        const char *const *reasons; /* one per hold entry; NULL: "named in the user config" */
};

struct delivery_verdict {
        enum delivery_bucket bucket;
        const char *reason; /* static text; NULL for apply */
};

void delivery_classify(const struct delivery_rules *rules, const struct delivery_entry *e,
                       struct delivery_verdict *v);

/* Whether one name (len bytes, no '/') is .git in a spelling some
 * filesystem folds to it (the reject rule's test, for a walker that looks
 * at names one by one). */
bool delivery_part_is_dotgit(const char *part, size_t len);
/* Why the path alone, whatever its content, is held: git's own files and
 * the names host tools execute or read as configuration (the built-in
 * list and rules->hold); NULL when its names hold it for nothing. */
const char *delivery_held_by_name(const struct delivery_rules *rules,
                                  const struct delivery_entry *e);

/* "apply", "hold", "reject". */
const char *delivery_bucket_name(enum delivery_bucket b);

#endif
