/* Direct mode's report (direct_report.h): the walk since the start
 * (direct_walk.c), printed terminal-safe, written (direct_file.c) and
 * audited; up's start kept for down. */
#include "face/direct_int.h"
#include "face/direct_report.h"
#include "face/sandbox_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"
#include "common/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void direct_now(struct timespec *t)
{
        if (clock_gettime(CLOCK_REALTIME_COARSE, t) < 0)
                clock_gettime(CLOCK_REALTIME, t);
}

static void print_found(const struct sandbox *s, const struct direct_found *f)
{
        for (size_t i = 0; i < f->n; i++) {
                fputs("umwelt-run: direct mode: ", stderr);
                umw_put_printable(stderr, f->v[i].path, f->v[i].len, false);
                fprintf(stderr, ": %s\n", f->v[i].reason);
        }
        if (f->cut)
                fprintf(stderr,
                        "umwelt-run: direct mode: the walk of %s stopped early (%s): what lies "
                        "past it was not looked at\n",
                        s->project.workspace, f->cut);
        if (f->n)
                fprintf(stderr,
                        "umwelt-run: direct mode: %zu file%s the host may execute changed in %s "
                        "since the sandbox started; umwelt-run deliver quarantine -p %s moves "
                        "them aside\n",
                        f->n, f->n == 1 ? "" : "s", s->project.workspace, s->project.workspace);
}

/* The walk since since, or since an earlier report that was not
 * quarantined (its entries are found again, with any new ones). */
static int report(struct sandbox *s, const struct timespec *since, struct umw_error **err)
{
        _cleanup_close_ int state_fd = -1;
        _cleanup_found_ struct direct_found old = {0}, f = {.since = *since};
        bool none;
        int r;
        if ((r = direct_state_open(s, &state_fd, err)) < 0 ||
            (r = direct_report_read(state_fd, &old, &none, err)) < 0)
                return r;
        if (!none && (old.since.tv_sec < f.since.tv_sec ||
                      (old.since.tv_sec == f.since.tv_sec && old.since.tv_nsec < f.since.tv_nsec)))
                f.since = old.since;
        if ((r = direct_walk(s->project.workspace, &f, err)) < 0 ||
            (r = direct_report_write(s, state_fd, &f, err)) < 0)
                return r;
        print_found(s, &f);
        char found[24];
        snprintf(found, sizeof(found), "%zu", f.n);
        const char *kv[] = {"id",  s->project.container_id, "found",  found,
                            "cut", f.cut ? f.cut : "no",    "report", f.n ? DIRECT_REPORT_FILE : "",
                            NULL};
        sandbox_audit(s, "direct-report", kv);
        return 0;
}

void direct_report_end(struct sandbox *s, const struct timespec *since)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (report(s, since, &err) < 0)
                umw_warn("direct mode: no report of what the agent changed: %s", err->msg);
}

int direct_up_begins(struct sandbox *s, struct umw_error **err)
{
        if (s->view.review)
                return 0;
        _cleanup_close_ int state_fd = -1;
        int r = direct_state_open(s, &state_fd, err);
        if (r < 0)
                return r;
        /* A start no down reported (the sandbox was gc'd, or umwelt-run
         * killed) is kept: the next down's report reaches back to it. */
        struct stat st;
        if (fstatat(state_fd, DIRECT_START_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return 0;
        struct timespec now;
        direct_now(&now);
        char text[48];
        int n = snprintf(text, sizeof(text), "%lld %ld\n", (long long)now.tv_sec, now.tv_nsec);
        return umw_write_file_atomic(state_fd, DIRECT_START_FILE, text, (size_t)n, 0600, err);
}

void direct_report_down(struct sandbox *s)
{
        _cleanup_error_ struct umw_error *err = NULL;
        _cleanup_close_ int state_fd = -1;
        _cleanup_free_ char *text = NULL;
        size_t len;
        long long sec;
        long nsec;
        if (direct_state_open(s, &state_fd, &err) < 0 ||
            umw_read_file_at(state_fd, DIRECT_START_FILE, 64, &text, &len, &err) < 0) {
                if (err->errnum != ENOENT)
                        umw_warn("direct mode: no report of what the agent changed: %s", err->msg);
                return;
        }
        if (sscanf(text, "%lld %ld", &sec, &nsec) != 2) {
                umw_warn("direct mode: %s: expected the start time: no report", DIRECT_START_FILE);
                return;
        }
        struct timespec since = {.tv_sec = (time_t)sec, .tv_nsec = nsec};
        direct_report_end(s, &since);
        if (unlinkat(state_fd, DIRECT_START_FILE, 0) < 0)
                umw_warn("remove %s: %s", DIRECT_START_FILE, strerror(errno));
}
