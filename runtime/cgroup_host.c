/* The cgroup hierarchies of this mount namespace and the file helpers the
 * cgroup engine shares. */
#include "runtime/cgroup_host.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool cgroup_list_has(const char *list, const char *sep, const char *name)
{
        size_t len = strlen(name);
        for (const char *p = list + strspn(list, sep); *p; p += strspn(p, sep)) {
                size_t n = strcspn(p, sep);
                if (n == len && strncmp(p, name, len) == 0)
                        return true;
                p += n;
        }
        return false;
}

bool cgroup_has_controller(const struct hierarchy *h, const char *name)
{
        return cgroup_list_has(h->controllers, h->v2 ? " \n" : ",", name);
}

void cgroup_read_small(int dirfd, const char *file, char *buf, size_t size)
{
        _cleanup_close_ int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? 0 : umw_read_all(fd, buf, size - 1);
        buf[n > 0 ? n : 0] = '\0';
}

/* Every cgroup (v1) and cgroup2 mount of this mount namespace, from
 * mountinfo. Only mounts whose root is "/" count: a bind of a sub-cgroup is
 * not a hierarchy to create containers in. */
static int read_mountinfo(struct host *host, struct umw_error **err)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return umw_fail_errno(err, "open /proc/self/mountinfo");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        host->n = 0;
        while (getline(&line, &cap, f) > 0 && host->n < MAX_HIERARCHIES) {
                char root[256], mnt[256], fstype[64], super[512];
                char *sep = strstr(line, " - ");
                if (!sep || sscanf(line, "%*s %*s %*s %255s %255s", root, mnt) != 2 ||
                    sscanf(sep + 3, "%63s %*s %511s", fstype, super) != 2)
                        continue;
                if (strcmp(root, "/") != 0)
                        continue;
                if (strcmp(fstype, "cgroup2") != 0 && strcmp(fstype, "cgroup") != 0)
                        continue;
                struct hierarchy *h = &host->h[host->n++];
                snprintf(h->mountpoint, sizeof(h->mountpoint), "%s", mnt);
                h->v2 = strcmp(fstype, "cgroup2") == 0;
                snprintf(h->controllers, sizeof(h->controllers), "%s", super);
        }
        return 0;
}

/* Read once per process and mount namespace: run reads the hierarchies to
 * make its cgroup and again to remove it, ~70 us each (the kernel renders
 * every mount). A child in a mount namespace of its own (the init) has
 * another pid and namespace; a hierarchy mounted while a run lives is seen
 * by the next process, and its removal goes where the cgroup was made. */
int cgroup_host_find(struct host *host, struct umw_error **err)
{
        static struct host cached;
        static pid_t cached_pid;
        static dev_t cached_dev;
        static ino_t cached_ino;
        struct stat ns;
        bool keyed = stat("/proc/self/ns/mnt", &ns) == 0;
        pid_t pid = getpid();
        if (keyed && cached_pid == pid && cached_dev == ns.st_dev && cached_ino == ns.st_ino) {
                *host = cached;
                return 0;
        }
        int r = read_mountinfo(host, err);
        if (r < 0)
                return r;
        if (keyed) {
                cached = *host;
                cached_pid = pid;
                cached_dev = ns.st_dev;
                cached_ino = ns.st_ino;
        }
        return 0;
}

struct hierarchy *cgroup_unified(struct host *host)
{
        for (size_t i = 0; i < host->n; i++)
                if (host->h[i].v2)
                        return &host->h[i];
        return NULL;
}

int cgroup_write_at(int dirfd, const char *file, const char *value)
{
        _cleanup_close_ int fd = openat(dirfd, file, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return umw_write_all(fd, value, strlen(value));
}

int cgroup_open_in(const struct hierarchy *h, const char *path, int flags)
{
        char dir[1024];
        snprintf(dir, sizeof(dir), "%s/%s", h->mountpoint, path);
        return open(dir, flags | O_DIRECTORY | O_CLOEXEC);
}
