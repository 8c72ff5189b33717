/* Grants a human approved with --remember (umwelt-relay(1)): kept in the
 * project's state directory, which no sandbox sees, never in the
 * workspace; a layer between the user's config and the project's file,
 * read at the next start and checked there as every grant is. One line a
 * grant: "ro PATH" or "rw PATH". */
#ifndef UMW_FACE_REMEMBERED_H
#define UMW_FACE_REMEMBERED_H

#include <stdbool.h>
#include <stddef.h>

struct umw_error;

#define REMEMBERED_FILE "relay-grants"
#define REMEMBERED_MAX  64

struct remembered {
        char *text;                       /* the file, cut into lines */
        const char *path[REMEMBERED_MAX]; /* point into text */
        bool rw[REMEMBERED_MAX];
        size_t n;
};

/* The project's remembered grants (none when the file is absent); a line
 * that is not "ro|rw ABSOLUTE-PATH" is an error naming file and line. */
int remembered_read(const char *project_id, struct remembered *out, struct umw_error **err);
void remembered_free(struct remembered *r);
/* Adds one (a path there already: its mode is replaced), rewriting the
 * file whole (0600, temp file and rename). */
int remembered_add(const char *project_id, const char *path, bool rw, struct umw_error **err);

#endif
