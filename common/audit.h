/* The per-project audit log: one JSON object per line,
 * {"time":"<RFC 3339, ns, UTC>","event":"<name>",...}, appended so that a
 * reader only ever sees whole lines, whatever fails or crashes on the way. */
#ifndef UMW_AUDIT_H
#define UMW_AUDIT_H

#include <stddef.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

struct umw_error;

/* The longest line written or read, newline included; longer is refused. */
#define AUDIT_LINE_MAX (64 * 1024)

/* $XDG_STATE_HOME/umwelt/<project_id>/audit.jsonl (malloc'd). An unset,
 * empty or relative XDG_STATE_HOME means $HOME/.local/state. project_id must
 * be a single path component. */
int audit_path(const char *project_id, char **out, struct umw_error **err);

/* Opens path for appending (O_APPEND, O_CLOEXEC), creating it 0600 and the
 * missing directories above it 0700. A symbolic link or anything but a
 * regular file at path is refused; an existing file is set back to 0600. */
int audit_open(const char *path, int *fd, struct umw_error **err);

/* Adds an event's own members after "time" and "event": calls to
 * umw_jgen_key_str() and friends, keys other than "time" and "event". */
typedef void (*audit_fields_fn)(yajl_gen g, void *ctx);

/* Appends one line for event with the members written by fields (NULL:
 * none). The line goes out in a single write() under an exclusive flock();
 * a write that fails or falls short is cut off again, and so is a partial
 * line a crashed writer left at the end, so the file only ever grows by
 * whole lines. */
int audit_append_fields(int fd, const char *event, audit_fields_fn fields, void *ctx,
                        struct umw_error **err);
/* The line audit_append_fields() would append (malloc'd, newline-ended,
 * checked the same way), for a writer that gathers several. */
int audit_line(const char *event, audit_fields_fn fields, void *ctx, char **out, size_t *len,
               struct umw_error **err);
/* Appends len bytes of whole lines made by audit_line() as one append does
 * a line: one write() under the lock, after a partial last line a crashed
 * writer left is cut; a write that fails or falls short is cut back whole.
 * A writer killed inside the write() leaves whole lines and at most part of
 * one, which the next append cuts. */
int audit_append_lines(int fd, const char *lines, size_t len, struct umw_error **err);
/* Same with string members given as a NULL-terminated key, value, key,
 * value, ... vector (NULL: none). */
int audit_append(int fd, const char *event, const char *const *kv, struct umw_error **err);

/* Called with each line of the log, in order, as a parsed JSON object that
 * has string members "time" and "event"; lineno counts from 1. A negative
 * return stops the read and is returned. */
typedef int (*audit_line_fn)(yajl_val line, size_t lineno, void *ctx, struct umw_error **err);

/* Reads the log at path line by line. A line that is not such an object, is
 * too long, is empty or lacks its newline is an error "PATH:LINE: WHAT"; none
 * is skipped. A missing file is an error with errnum ENOENT. */
int audit_read(const char *path, audit_line_fn each, void *ctx, struct umw_error **err);

#endif
