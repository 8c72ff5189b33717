/* A live container's cgroup: freezing and thawing it, killing everything
 * in it, listing its processes, removing it at delete. */
#include "runtime/cgroup.h"
#include "runtime/cgroup_host.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FREEZE_TIMEOUT_MS 10000

/* ---------------------------------------------------------------- freezing */

static void sleep_ms(long ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static bool v1_frozen(int dirfd)
{
        char buf[32];
        cgroup_read_small(dirfd, "freezer.state", buf, sizeof(buf));
        return strncmp(buf, "FROZEN", 6) == 0;
}

static bool v2_frozen(int dirfd)
{
        char buf[512];
        cgroup_read_small(dirfd, "cgroup.events", buf, sizeof(buf));
        return strstr(buf, "frozen 1") != NULL;
}

/* Writes the freeze request (again while FREEZING: a task that was forking
 * may have escaped the first pass) until the kernel reports it done. */
static int freeze_one(int dirfd, bool v2, bool frozen)
{
        const char *file = v2 ? "cgroup.freeze" : "freezer.state";
        const char *value = v2 ? (frozen ? "1" : "0") : (frozen ? "FROZEN" : "THAWED");
        for (long waited = 0; waited < FREEZE_TIMEOUT_MS; waited += 10) {
                int r = cgroup_write_at(dirfd, file, value);
                if (r < 0)
                        return r;
                if ((v2 ? v2_frozen(dirfd) : v1_frozen(dirfd)) == frozen)
                        return 0;
                sleep_ms(10);
        }
        cgroup_write_at(dirfd, file, v2 ? "0" : "THAWED");
        return -ETIMEDOUT;
}

/* The hierarchies that can freeze path: the v1 freezer and the unified
 * hierarchy's cgroup.freeze, in the order freezing goes (v2 first, so the
 * v1 freezer finds every task already stopped). */
static size_t freezers(const struct host *host, const char *path, int *fds, bool *v2s)
{
        size_t n = 0;
        for (int want_v2 = 1; want_v2 >= 0; want_v2--) {
                for (size_t i = 0; i < host->n; i++) {
                        const struct hierarchy *h = &host->h[i];
                        if (h->v2 != want_v2 || (!h->v2 && !cgroup_has_controller(h, "freezer")))
                                continue;
                        int fd = cgroup_open_in(h, path, O_PATH);
                        if (fd < 0)
                                continue;
                        if (faccessat(fd, h->v2 ? "cgroup.freeze" : "freezer.state", F_OK, 0) < 0) {
                                close(fd);
                                continue;
                        }
                        v2s[n] = h->v2;
                        fds[n++] = fd;
                }
        }
        return n;
}

/* The n freezers set, in order to freeze and in reverse to thaw, up to the
 * first that fails; the caller closes fds. */
static int freeze_all(const char *path, bool frozen, const int *fds, const bool *v2s, size_t n,
                      struct umw_error **err)
{
        if (n == 0)
                return umw_fail(err, UMW_EXIT_FAILURE, EOPNOTSUPP,
                                "cgroup %s: no freezer (neither the v1 freezer nor cgroup.freeze)",
                                path);
        for (size_t k = 0; k < n; k++) {
                size_t i = frozen ? k : n - 1 - k;
                int r = freeze_one(fds[i], v2s[i], frozen);
                if (r < 0)
                        return umw_fail_sys(err, -r, "cgroup %s: %s (%s)", path,
                                            frozen ? "freeze" : "thaw",
                                            v2s[i] ? "cgroup.freeze" : "freezer.state");
        }
        return 0;
}

int cgroup_freeze(const char *path, bool frozen, struct umw_error **err)
{
        struct host host;
        int r = cgroup_host_find(&host, err);
        if (r < 0)
                return r;
        int fds[2 * MAX_HIERARCHIES];
        bool v2s[2 * MAX_HIERARCHIES];
        size_t n = freezers(&host, path, fds, v2s);
        r = freeze_all(path, frozen, fds, v2s, n, err);
        for (size_t i = 0; i < n; i++)
                close(fds[i]);
        return r;
}

bool cgroup_is_frozen(const char *path)
{
        struct host host;
        _cleanup_error_ struct umw_error *ignored = NULL;
        if (cgroup_host_find(&host, &ignored) < 0)
                return false;
        int fds[2 * MAX_HIERARCHIES];
        bool v2s[2 * MAX_HIERARCHIES];
        size_t n = freezers(&host, path, fds, v2s);
        /* The v1 freezer says when there is one (it comes last). */
        bool frozen = n > 0 && (v2s[n - 1] ? v2_frozen(fds[n - 1]) : v1_frozen(fds[n - 1]));
        for (size_t i = 0; i < n; i++)
                close(fds[i]);
        return frozen;
}

int cgroup_kill(const char *path, bool *done, struct umw_error **err)
{
        struct host host;
        int r = cgroup_host_find(&host, err);
        *done = false;
        if (r < 0)
                return r;
        struct hierarchy *v2 = cgroup_unified(&host);
        if (!v2)
                return 0;
        _cleanup_close_ int fd = cgroup_open_in(v2, path, O_PATH);
        if (fd < 0 || faccessat(fd, "cgroup.kill", F_OK, 0) < 0)
                return 0;
        if ((r = cgroup_write_at(fd, "cgroup.kill", "1")) < 0)
                return umw_fail_sys(err, -r, "cgroup %s/%s: cgroup.kill", v2->mountpoint, path);
        *done = true;
        return 0;
}

/* ---------------------------------------------------------------- listing */

static int read_pids(int fd, pid_t **pids, size_t *n)
{
        _cleanup_fclose_ FILE *f = fdopen(fd, "re");
        if (!f) {
                close(fd);
                return -errno;
        }
        size_t cap = 0;
        long v;
        while (fscanf(f, "%ld", &v) == 1) {
                if (*n == cap) {
                        cap = cap ? cap * 2 : 16;
                        pid_t *bigger = realloc(*pids, cap * sizeof(pid_t));
                        if (!bigger)
                                return -ENOMEM;
                        *pids = bigger;
                }
                (*pids)[(*n)++] = (pid_t)v;
        }
        return 0;
}

int cgroup_pids(const char *path, pid_t **pids, size_t *n, struct umw_error **err)
{
        struct host host;
        int r = cgroup_host_find(&host, err);
        if (r < 0)
                return r;
        *pids = NULL;
        *n = 0;
        /* Every hierarchy holds the same processes; the first readable one says. */
        for (size_t i = 0; i < host.n; i++) {
                char file[1024];
                snprintf(file, sizeof(file), "%s/%s/cgroup.procs", host.h[i].mountpoint, path);
                int fd = open(file, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                r = read_pids(fd, pids, n);
                if (r < 0)
                        return umw_fail_sys(err, -r, "read %s", file);
                return 0;
        }
        /* In no hierarchy (rootless without delegation): no processes known. */
        return 0;
}

int cgroup_remove(const char *path, struct umw_error **err)
{
        struct host host;
        int r = cgroup_host_find(&host, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < host.n; i++) {
                char dir[1024];
                snprintf(dir, sizeof(dir), "%s/%s", host.h[i].mountpoint, path);
                /* The last process may still be leaving: retry briefly on EBUSY. */
                for (int tries = 0; rmdir(dir) < 0; tries++) {
                        if (errno == ENOENT)
                                break;
                        if (errno != EBUSY || tries == 100)
                                return umw_fail_errno(err, "remove cgroup %s", dir);
                        usleep(10000);
                }
        }
        return 0;
}
