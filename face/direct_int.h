/* What direct mode's files share: the entries of a report
 * (direct_walk.c finds them), its file and the project's state directory
 * (direct_file.c), for direct_report.c and direct_quarantine.c. */
#ifndef UMW_DIRECT_INT_H
#define UMW_DIRECT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>
#include <yajl/yajl_tree.h>

struct sandbox;
struct umw_error;

struct direct_item {
        char *path; /* relative to the workspace, the bytes as on disk */
        size_t len;
        const char *reason; /* static text, or the parsed report's */
        dev_t dev;
        ino_t ino;
        struct timespec ctime;
};

struct direct_found {
        struct timespec since;
        struct direct_item *v;
        size_t n, cap;
        size_t seen;     /* entries looked at */
        const char *cut; /* why the walk stopped early; NULL: it did not */
        yajl_val tree;   /* a parsed report the reasons point into */
};

void direct_found_free(struct direct_found *f);
#define _cleanup_found_ __attribute__((cleanup(direct_found_free)))

/* Appends a copy of path (len bytes); false when full or out of memory
 * (f->cut says which). */
bool direct_found_add(struct direct_found *f, const char *path, size_t len, const char *reason,
                      const struct stat *st);
/* The workspace walked for what changed since f->since (direct_walk.c):
 * sorted by path; a bound that stopped the walk in f->cut. */
int direct_walk(const char *workspace, struct direct_found *f, struct umw_error **err);
/* The project's state directory, opened (O_DIRECTORY, no link followed). */
int direct_state_open(const struct sandbox *s, int *fd, struct umw_error **err);
/* The report in state_fd, parsed into f (f->tree owns the reasons); *none
 * when there is no report. */
int direct_report_read(int state_fd, struct direct_found *f, bool *none, struct umw_error **err);
/* f as the report (0600, through a temporary and a rename); with no
 * entries the report file is removed. */
int direct_report_write(const struct sandbox *s, int state_fd, const struct direct_found *f,
                        struct umw_error **err);

#endif
