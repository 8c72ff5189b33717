#include "cgroup.h"
#include "src/common/cleanup.h"
#include "src/common/error.h"
#include "src/common/fdio.h"
#include "src/common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_HIERARCHIES 32

struct hierarchy {
        char mountpoint[256];
        bool is_cpuset;
};

/* Every cgroup (v1) and cgroup2 mount of this mount namespace, from
 * mountinfo. Only mounts whose root is "/" count: a bind of a sub-cgroup is
 * not a hierarchy to create containers in. */
static int find_hierarchies(struct hierarchy *h, size_t *n, struct umw_error **err)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return umw_fail_errno(err, "open /proc/self/mountinfo");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        *n = 0;
        while (getline(&line, &cap, f) > 0 && *n < MAX_HIERARCHIES) {
                char root[256], mnt[256], fstype[64], super[512];
                char *sep = strstr(line, " - ");
                if (!sep || sscanf(line, "%*s %*s %*s %255s %255s", root, mnt) != 2 ||
                    sscanf(sep + 3, "%63s %*s %511s", fstype, super) != 2)
                        continue;
                if (strcmp(root, "/") != 0)
                        continue;
                if (strcmp(fstype, "cgroup2") != 0 && strcmp(fstype, "cgroup") != 0)
                        continue;
                snprintf(h[*n].mountpoint, sizeof(h[*n].mountpoint), "%s", mnt);
                h[*n].is_cpuset = strcmp(fstype, "cgroup") == 0 && strstr(super, "cpuset");
                (*n)++;
        }
        return 0;
}

int cgroup_path_resolve(const char *cgroups_path, const char *id, enum cgroup_manager manager,
                        char **out, struct umw_error **err)
{
        char *path = NULL;
        if (!cgroups_path || !*cgroups_path) {
                if (asprintf(&path, "umwelt-run/%s", id) < 0)
                        return umw_fail_sys(err, ENOMEM, "cgroup path");
                *out = path;
                return 0;
        }
        const char *colon = strchr(cgroups_path, ':');
        if (manager == CGROUP_MANAGER_SYSTEMD && colon && cgroups_path[0] != '/') {
                /* "machine.slice:libpod:ID" is the scope machine.slice/libpod-ID.scope. */
                char slice[256], prefix[256], name[512];
                if (sscanf(cgroups_path, "%255[^:]:%255[^:]:%511s", slice, prefix, name) != 3)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "config.json: .linux.cgroupsPath: expected "
                                        "slice:prefix:name, got '%s'",
                                        cgroups_path);
                if (asprintf(&path, "%s/%s-%s.scope", slice, prefix, name) < 0)
                        return umw_fail_sys(err, ENOMEM, "cgroup path");
        } else {
                while (*cgroups_path == '/')
                        cgroups_path++;
                path = strdup(cgroups_path);
                if (!path)
                        return umw_fail_sys(err, ENOMEM, "cgroup path");
        }
        /* No component may climb out or be empty. */
        bool bad = path[0] == '\0';
        for (char *c = path; !bad && c;) {
                char *slash = strchr(c, '/');
                size_t len = slash ? (size_t)(slash - c) : strlen(c);
                bad = len == 0 || (len == 2 && c[0] == '.' && c[1] == '.') ||
                      (len == 1 && c[0] == '.');
                c = slash ? slash + 1 : NULL;
        }
        if (bad) {
                free(path);
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "config.json: .linux.cgroupsPath: expected a path without '.', "
                                "'..' or empty components, got '%s'",
                                cgroups_path);
        }
        *out = path;
        return 0;
}

/* A new cpuset cgroup starts with no cpus and no mems, and refuses tasks:
 * copy both from the parent. */
static int cpuset_inherit(int parentfd, int fd)
{
        static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                char buf[4096];
                _cleanup_close_ int in = openat(parentfd, files[i], O_RDONLY | O_CLOEXEC);
                if (in < 0)
                        return -errno;
                ssize_t n = umw_read_all(in, buf, sizeof(buf));
                if (n < 0)
                        return (int)n;
                _cleanup_close_ int cur = openat(fd, files[i], O_RDWR | O_CLOEXEC);
                if (cur < 0)
                        return -errno;
                char now[16];
                ssize_t m = umw_read_all(cur, now, sizeof(now));
                if (m > 1)
                        continue; /* already set */
                if (umw_write_all(cur, buf, (size_t)n) < 0)
                        return -errno;
        }
        return 0;
}

/* mkdir -p of path below the hierarchy root, returning an fd of the leaf. */
static int make_cgroup_dir(const struct hierarchy *h, const char *path, int *out)
{
        _cleanup_close_ int fd = open(h->mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        char *save = NULL;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                bool created = mkdirat(fd, c, 0755) == 0;
                if (!created && errno != EEXIST)
                        return -errno;
                int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0)
                        return -errno;
                if (h->is_cpuset) {
                        int r = cpuset_inherit(fd, next);
                        if (r < 0) {
                                close(next);
                                return r;
                        }
                }
                close(fd);
                fd = next;
        }
        *out = TAKE_FD(fd);
        return 0;
}

static int write_pid(int dirfd, pid_t pid)
{
        _cleanup_close_ int fd = openat(dirfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        char buf[32];
        int len = snprintf(buf, sizeof(buf), "%d", pid);
        return umw_write_all(fd, buf, (size_t)len);
}

int cgroup_enter(const char *path, pid_t pid, bool strict, bool *placed, struct umw_error **err)
{
        struct hierarchy h[MAX_HIERARCHIES];
        size_t n = 0;
        int r = find_hierarchies(h, &n, err);
        if (r < 0)
                return r;
        *placed = false;
        for (size_t i = 0; i < n; i++) {
                _cleanup_close_ int fd = -1;
                r = make_cgroup_dir(&h[i], path, &fd);
                if (r == 0)
                        r = write_pid(fd, pid);
                if (r < 0 && strict)
                        return umw_fail_sys(err, -r, "cgroup %s/%s", h[i].mountpoint, path);
                if (r < 0) {
                        umw_debug("cgroup %s/%s not used: %s", h[i].mountpoint, path, strerror(-r));
                        continue;
                }
                *placed = true;
        }
        return 0;
}

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
        struct hierarchy h[MAX_HIERARCHIES];
        size_t nh = 0;
        int r = find_hierarchies(h, &nh, err);
        if (r < 0)
                return r;
        *pids = NULL;
        *n = 0;
        /* Every hierarchy holds the same processes; the first readable one says. */
        for (size_t i = 0; i < nh; i++) {
                char file[1024];
                snprintf(file, sizeof(file), "%s/%s/cgroup.procs", h[i].mountpoint, path);
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
        struct hierarchy h[MAX_HIERARCHIES];
        size_t n = 0;
        int r = find_hierarchies(h, &n, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                char dir[1024];
                snprintf(dir, sizeof(dir), "%s/%s", h[i].mountpoint, path);
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
