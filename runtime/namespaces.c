#include "runtime/namespaces.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

int ns_clone_flags(const struct spec *spec)
{
        int flags = 0;
        for (int ns = 0; ns < SPEC_NS_COUNT; ns++) {
                const struct spec_namespace *n = &spec->namespaces[ns];
                if (n->enabled && !n->path && ns != SPEC_NS_TIME && ns != SPEC_NS_CGROUP)
                        flags |= spec_ns_clone_flag(ns);
        }
        return flags;
}

int ns_check(const struct spec *spec, struct umw_error **err)
{
        if (!spec->namespaces[SPEC_NS_MOUNT].enabled)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: .linux.namespaces: expected a mount namespace "
                                "(the root is pivoted inside it)",
                                spec->file);
        bool new_user =
            spec->namespaces[SPEC_NS_USER].enabled && !spec->namespaces[SPEC_NS_USER].path;
        if (new_user && spec->n_uid_mappings == 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: .linux.uidMappings: expected at least one mapping "
                                "with a new user namespace",
                                spec->file);
        if (new_user && spec->n_gid_mappings == 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: .linux.gidMappings: expected at least one mapping "
                                "with a new user namespace",
                                spec->file);
        return 0;
}

static int setns_path(const char *path, int nstype, const char *name, struct umw_error **err)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return umw_fail_errno(err, "open %s namespace %s", name, path);
        if (setns(fd, nstype) < 0)
                return umw_fail_errno(err, "join %s namespace %s", name, path);
        return 0;
}

static int write_time_offsets(const struct spec *spec, struct umw_error **err)
{
        char buf[128];
        int len =
            snprintf(buf, sizeof(buf), "monotonic %lld %u\nboottime %lld %u\n",
                     (long long)spec->time_offset_monotonic_secs, spec->time_offset_monotonic_nsecs,
                     (long long)spec->time_offset_boottime_secs, spec->time_offset_boottime_nsecs);
        _cleanup_close_ int fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return umw_fail_errno(err, "open /proc/self/timens_offsets");
        /* The kernel takes one clock per write. */
        char *second = strchr(buf, '\n') + 1;
        int r;
        if ((r = umw_write_all(fd, buf, (size_t)(second - buf))) < 0 ||
            (r = umw_write_all(fd, second, (size_t)(len - (second - buf)))) < 0)
                return umw_fail_sys(err, -r, "write time namespace offsets");
        return 0;
}

static int save_active(const char *name, int *fd, struct umw_error **err)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
        *fd = open(path, O_RDONLY | O_CLOEXEC);
        return *fd < 0 ? umw_fail_errno(err, "open %s", path) : 0;
}

int ns_prepare_parent(const struct spec *spec, struct ns_saved *saved, struct umw_error **err)
{
        *saved = (struct ns_saved){.pid_fd = -1, .time_fd = -1};
        const struct spec_namespace *pid = &spec->namespaces[SPEC_NS_PID];
        const struct spec_namespace *t = &spec->namespaces[SPEC_NS_TIME];
        int r;
        if (pid->enabled && pid->path &&
            ((r = save_active("pid", &saved->pid_fd, err)) < 0 ||
             (r = setns_path(pid->path, CLONE_NEWPID, "pid", err)) < 0))
                return r;
        if (!t->enabled)
                return 0;
        if ((r = save_active("time", &saved->time_fd, err)) < 0)
                return r;
        if (t->path)
                return setns_path(t->path, CLONE_NEWTIME, "time", err);
        if (unshare(CLONE_NEWTIME) < 0)
                return umw_fail_errno(err, "create time namespace");
        return write_time_offsets(spec, err);
}

int ns_restore_parent(struct ns_saved *saved, struct umw_error **err)
{
        int r = 0;
        if (saved->pid_fd >= 0 && setns(saved->pid_fd, CLONE_NEWPID) < 0)
                r = umw_fail_errno(err, "return to the runtime's pid namespace");
        if (saved->time_fd >= 0 && setns(saved->time_fd, CLONE_NEWTIME) < 0 && r == 0)
                r = umw_fail_errno(err, "return to the runtime's time namespace");
        umw_close_fdp(&saved->pid_fd);
        umw_close_fdp(&saved->time_fd);
        return r;
}

int ns_open_user(const struct spec *spec, int *fd, struct umw_error **err)
{
        const struct spec_namespace *n = &spec->namespaces[SPEC_NS_USER];
        *fd = -1;
        if (!n->enabled || !n->path)
                return 0;
        *fd = open(n->path, O_RDONLY | O_CLOEXEC);
        if (*fd < 0)
                return umw_fail_errno(err, "open user namespace %s", n->path);
        /* Joined only at start: a path of another type is refused now, at
         * create, as setns would refuse it then. */
        int type = ioctl(*fd, NS_GET_NSTYPE);
        if (type == CLONE_NEWUSER)
                return 0;
        int e = type < 0 ? errno : EINVAL;
        umw_close_fdp(fd);
        return umw_fail(err, UMW_EXIT_CONFIG, e,
                        "%s: .linux.namespaces: user namespace path %s is not a user "
                        "namespace",
                        spec->file, n->path);
}

int ns_join_user(int fd, struct umw_error **err)
{
        if (fd >= 0 && setns(fd, CLONE_NEWUSER) < 0)
                return umw_fail_errno(err, "join the user namespace");
        return 0;
}

int ns_join_paths(const struct spec *spec, struct umw_error **err)
{
        for (int ns = 0; ns < SPEC_NS_COUNT; ns++) {
                const struct spec_namespace *n = &spec->namespaces[ns];
                if (!n->enabled || !n->path || ns == SPEC_NS_USER || ns == SPEC_NS_PID ||
                    ns == SPEC_NS_TIME)
                        continue;
                int r = setns_path(n->path, spec_ns_clone_flag(ns), spec_ns_name(ns), err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static char *format_map(const struct spec_idmap *m, size_t n)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%u %u %u\n", m[i].container_id, m[i].host_id, m[i].size);
        fclose(f);
        return buf;
}

static int write_proc_file(pid_t pid, const char *name, const char *text, struct umw_error **err)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return umw_fail_errno(err, "open %s", path);
        int r = umw_write_all(fd, text, strlen(text));
        if (r < 0)
                return umw_fail_sys(err, -r, "write %s", path);
        return 0;
}

/* Without CAP_SETUID in the parent namespace, a process may only map its own
 * id once; anything wider needs the setuid helpers from the uidmap package,
 * which check /etc/subuid. Their argv is fixed: no shell. */
static bool map_is_own_id(const struct spec_idmap *m, size_t n, uid_t own)
{
        return n == 1 && m[0].host_id == own && m[0].size == 1;
}

static int run_id_helper(const char *helper, pid_t pid, const struct spec_idmap *m, size_t n,
                         struct umw_error **err)
{
        size_t argc = 2 + 3 * n + 1;
        _cleanup_free_ char **argv = calloc(argc, sizeof(char *));
        _cleanup_free_ char *numbers = calloc(3 * n + 1, 16);
        if (!argv || !numbers)
                return umw_fail_sys(err, ENOMEM, "%s", helper);
        argv[0] = (char *)helper;
        argv[1] = numbers;
        snprintf(numbers, 16, "%d", pid);
        for (size_t i = 0; i < n; i++) {
                uint32_t v[3] = {m[i].container_id, m[i].host_id, m[i].size};
                for (int j = 0; j < 3; j++) {
                        char *slot = numbers + 16 * (1 + 3 * i + j);
                        snprintf(slot, 16, "%u", v[j]);
                        argv[2 + 3 * i + j] = slot;
                }
        }
        pid_t child = fork();
        if (child < 0)
                return umw_fail_errno(err, "fork %s", helper);
        if (child == 0) {
                execv(helper, argv);
                _exit(127);
        }
        int status;
        while (waitpid(child, &status, 0) < 0)
                if (errno != EINTR)
                        return umw_fail_errno(err, "wait for %s", helper);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return umw_fail(err, UMW_EXIT_FAILURE, EPERM,
                                "%s failed to map ids for the user namespace (is there an "
                                "entry in /etc/sub%cid?)",
                                helper, strstr(helper, "gid") ? 'g' : 'u');
        return 0;
}

static int write_one_map(const char *file, const char *helper, pid_t pid,
                         const struct spec_idmap *m, size_t n, bool privileged, uid_t own,
                         struct umw_error **err)
{
        if (!privileged && !map_is_own_id(m, n, own))
                return run_id_helper(helper, pid, m, n, err);
        _cleanup_free_ char *text = format_map(m, n);
        if (!text)
                return umw_fail_sys(err, ENOMEM, "%s", file);
        return write_proc_file(pid, file, text, err);
}

int ns_write_maps(pid_t pid, const struct spec_idmap *uids, size_t n_uids,
                  const struct spec_idmap *gids, size_t n_gids, struct umw_error **err)
{
        bool privileged = geteuid() == 0;
        int r = write_one_map("uid_map", "/usr/bin/newuidmap", pid, uids, n_uids, privileged,
                              geteuid(), err);
        if (r < 0)
                return r;
        /* An unprivileged writer must give up setgroups before mapping gids. */
        bool own_gid = map_is_own_id(gids, n_gids, getegid());
        if (!privileged && own_gid) {
                r = write_proc_file(pid, "setgroups", "deny", err);
                if (r < 0)
                        return r;
        }
        return write_one_map("gid_map", "/usr/bin/newgidmap", pid, gids, n_gids, privileged,
                             getegid(), err);
}

int ns_write_id_maps(const struct spec *spec, pid_t pid, struct umw_error **err)
{
        return ns_write_maps(pid, spec->uid_mappings, spec->n_uid_mappings, spec->gid_mappings,
                             spec->n_gid_mappings, err);
}
