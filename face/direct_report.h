/* Direct mode's report: what the agent left in the workspace that the host
 * executes or reads as configuration. In direct mode the workspace is the
 * project itself, read-write; read-only binds protect the inodes that exist
 * (.git whole, the protected names), never a name that does not exist yet.
 * So at the end of every run and at down the workspace is walked (by fd,
 * no link followed, bounded) for what changed since the start and is a
 * .git in any spelling, a name the delivery rules hold, or a new
 * executable; it is printed, written to STATE/PROJECT-ID/direct-report.json
 * and audited, and deliver quarantine moves it aside. */
#ifndef UMW_DIRECT_REPORT_H
#define UMW_DIRECT_REPORT_H

#include <stdbool.h>
#include <time.h>

struct sandbox;
struct umw_error;

#define DIRECT_REPORT_FILE "direct-report.json"
#define DIRECT_START_FILE  "direct-start" /* up's start, until down */
/* The walk's bounds: past one it stops and says so. */
#define DIRECT_DEPTH_MAX   256
#define DIRECT_ENTRIES_MAX (1u << 22)
#define DIRECT_ITEMS_MAX   10000
#define DIRECT_PATH_MAX    4096

/* Now, in the clock the kernel stamps ctime with (the coarse one): a change
 * made after this call has a ctime at or after it. */
void direct_now(struct timespec *t);
/* up in direct mode: records the start (DIRECT_START_FILE, 0600), unless a
 * start no down reported is there already (it is kept). Review mode:
 * nothing. */
int direct_up_begins(struct sandbox *s, struct umw_error **err);
/* The end of a direct-mode run: the report of what changed since since
 * (and since an earlier report not yet quarantined), on stderr, in the
 * report file and the audit log. A failure is a warning: the run's own
 * status stands. */
void direct_report_end(struct sandbox *s, const struct timespec *since);
/* down (and gc's): the same, since the start up recorded (whatever mode this up
 * was in); the record goes. Nothing when there is none. */
void direct_report_down(struct sandbox *s);
/* deliver quarantine: each reported entry, still the inode reported (dev,
 * ino, ctime), moved into STATE/PROJECT-ID/quarantine/N/ at its relative
 * path; audited and printed. No report is UMW_EXIT_NOTFOUND; an entry left
 * in place (changed since, another filesystem) is UMW_EXIT_STATE after the
 * others moved, and stays in the report. */
int sandbox_deliver_quarantine(const char *project, struct umw_error **err);

#endif
