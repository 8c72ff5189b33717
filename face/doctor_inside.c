/* doctor --inside: the walls of a sandbox, each tried from within it. Every
 * check is a probe that fails where the wall is missing: run on the host it
 * reports the host's interfaces, homes, capabilities and writable root. */
#include "face/doctor.h"
#include "policy/compose.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

/* Appends ", item" (or "item" first) to a fixed buffer, cutting off what
 * does not fit. */
static void list_add(char *buf, size_t size, const char *item)
{
        size_t len = strlen(buf);
        if (len < size)
                snprintf(buf + len, size - len, "%s%s", len ? ", " : "", item);
}

/* A new network namespace has lo and nothing else. */
static void check_interfaces(struct doctor_report *r)
{
        struct if_nameindex *ifs = if_nameindex();
        if (!ifs) {
                doctor_add(r, "network", false, true, NULL, "listing interfaces: %s",
                           strerror(errno));
                return;
        }
        char names[512] = "";
        bool only_lo = true;
        for (struct if_nameindex *i = ifs; i->if_index; i++) {
                list_add(names, sizeof(names), i->if_name);
                only_lo &= strcmp(i->if_name, "lo") == 0;
        }
        if_freenameindex(ifs);
        doctor_add(r, "network", only_lo, true, NULL, "interfaces: %s%s", names[0] ? names : "none",
                   only_lo ? "" : " (expected lo alone)");
}

/* What of dir is visible beyond the way down to home: each entry must lie
 * on that way (a mount point the sandbox made for the fresh home). */
static void visible_beyond(const char *dir, const char *home, char *found, size_t size)
{
        _cleanup_closedir_ DIR *d = opendir(dir);
        if (!d)
                return; /* absent or not listable: nothing shows */
        struct dirent *e;
        while ((e = readdir(d))) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                char path[4096];
                snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name);
                size_t len = strlen(path);
                if (strcmp(path, home) == 0)
                        continue;
                if (strncmp(home, path, len) == 0 && home[len] == '/')
                        visible_beyond(path, home, found, size);
                else
                        list_add(found, size, path);
        }
}

/* No home directory of the host shows: /home and /root hold nothing but
 * the way to $HOME, and $HOME is an empty tmpfs of the sandbox's own, or
 * absent as on the host (a passwd entry's /nonexistent: compose.h). */
static void check_home(struct doctor_report *r)
{
        const char *home = getenv("HOME");
        if (!home || home[0] != '/') {
                doctor_add(r, "home", false, true, NULL, "HOME is not an absolute path");
                return;
        }
        char found[512] = "";
        visible_beyond("/home", home, found, sizeof(found));
        visible_beyond("/root", home, found, sizeof(found));
        if (strcmp(home, "/home") != 0 && strcmp(home, "/root") != 0)
                visible_beyond(home, "", found, sizeof(found));
        struct statfs fs;
        int st = statfs(home, &fs);
        bool absent = st < 0 && errno == ENOENT;
        bool tmpfs = st == 0 && fs.f_type == TMPFS_MAGIC;
        bool ok = (tmpfs || absent) && !found[0];
        doctor_add(r, "home", ok, true, NULL, "%s%s; visible: %s", home,
                   absent  ? " does not exist (nor on the host)"
                   : tmpfs ? " is a tmpfs"
                           : " is not a fresh tmpfs",
                   found[0] ? found : "nothing");
}

/* Every capability set is empty: read from the kernel's own account. */
static void check_capabilities(struct doctor_report *r)
{
        static const char *const sets[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        if (!f) {
                doctor_add(r, "capabilities", false, true, NULL, "/proc/self/status: %s",
                           strerror(errno));
                return;
        }
        char line[256], held[512] = "";
        size_t seen = 0;
        while (fgets(line, sizeof(line), f)) {
                for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
                        size_t n = strlen(sets[i]);
                        if (strncmp(line, sets[i], n) != 0 || line[n] != ':')
                                continue;
                        seen++;
                        unsigned long long v = strtoull(line + n + 1, NULL, 16);
                        line[strcspn(line, "\n")] = '\0';
                        if (v)
                                list_add(held, sizeof(held), line);
                }
        }
        bool ok = seen == ARRAY_SIZE(sets) && !held[0];
        doctor_add(r, "capabilities", ok, true, NULL, "%s",
                   ok        ? "none in any set"
                   : held[0] ? held
                             : "the capability sets are missing from /proc/self/status");
}

static void check_no_new_privs(struct doctor_report *r)
{
        int v = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
        doctor_add(r, "no_new_privs", v == 1, true, NULL, "%s",
                   v == 1   ? "set"
                   : v == 0 ? "not set"
                            : strerror(errno));
}

/* The profile denies making namespaces with EPERM; tried in a child, since
 * where it is allowed the namespace would be ours. */
static int unshare_user_child(const void *arg)
{
        return unshare(CLONE_NEWUSER) < 0 ? errno : 0;
}

static void check_seccomp(struct doctor_report *r)
{
        int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
        int e = doctor_in_child(unshare_user_child, NULL);
        bool ok = mode == 2 && e == EPERM;
        doctor_add(r, "seccomp", ok, true, NULL, "mode %d (%s); unshare(CLONE_NEWUSER): %s", mode,
                   mode == 2 ? "filter" : "no filter",
                   e == 0 ? "allowed" : strerror(e < 0 ? -e : e));
}

/* A file can be made, written and removed in the workspace. */
static void check_workspace(struct doctor_report *r, const char *workspace)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/.umwelt-doctor-%d", workspace, getpid());
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        bool ok = fd >= 0 && write(fd, "ok\n", 3) == 3;
        int e = errno;
        if (fd >= 0 && unlink(path) < 0 && ok) {
                ok = false;
                e = errno;
        }
        doctor_add(r, "workspace", ok, true, NULL, "%s: %s", workspace,
                   ok ? "writable" : strerror(e));
}

/* The errno of making something in dir: EROFS on a read-only mount. An
 * O_TMPFILE file has no name, so where the probe succeeds it leaves
 * nothing; a filesystem without O_TMPFILE (overlayfs before Linux 6.6) gets
 * a directory made and removed at once, whose mount check (EROFS) comes
 * before the permission check too. */
static int make_errno(const char *dir)
{
        int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        if (fd >= 0) {
                close(fd);
                return 0;
        }
        if (errno != EOPNOTSUPP && errno != EISDIR)
                return errno;
        char probe[256];
        snprintf(probe, sizeof(probe), "%s/.umwelt-doctor-%d", strcmp(dir, "/") == 0 ? "" : dir,
                 (int)getpid());
        if (mkdir(probe, 0700) < 0)
                return errno;
        rmdir(probe);
        return 0;
}

/* A file cannot be made in / or /usr because the mount is read-only, not
 * merely because of permissions. */
static void check_read_only(struct doctor_report *r)
{
        static const char *const dirs[] = {"/", "/usr", "/etc"};
        char detail[512] = "", item[128];
        bool ok = true;
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
                int e = make_errno(dirs[i]);
                snprintf(item, sizeof(item), "%s %s", dirs[i],
                         e == EROFS ? "read-only"
                         : e        ? strerror(e)
                                    : "writable");
                list_add(detail, sizeof(detail), item);
                ok &= e == EROFS;
        }
        doctor_add(r, "read-only root", ok, true, NULL, "%s", detail);
}

/* Only the variables a sandbox is given: a credential among them means the
 * environment was not filtered. */
static void check_environment(struct doctor_report *r)
{
        char names[2048] = "", name[128];
        for (char **e = environ; e && *e; e++) {
                if (strncmp(*e, "HOME=", 5) == 0 || compose_env_allowed(*e, NULL))
                        continue;
                snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
                list_add(names, sizeof(names), name);
        }
        doctor_add(r, "environment", !names[0], true, NULL, "%s%s",
                   names[0] ? "variables a sandbox is not given: " : "only what a sandbox is given",
                   names);
}

/* Whether a unix socket at path takes a connection from here: a stream
 * connect, or a datagram one where the socket is of that type. A full
 * backlog (EAGAIN) is a listener reached. */
static bool socket_reachable(const char *path)
{
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof(a.sun_path))
                return false;
        memcpy(a.sun_path, path, strlen(path) + 1);
        int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET};
        for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
                _cleanup_close_ int fd =
                    socket(AF_UNIX, types[i] | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (fd < 0)
                        return false;
                if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 || errno == EAGAIN ||
                    errno == EINPROGRESS)
                        return true;
                if (errno != EPROTOTYPE)
                        return false;
        }
        return false;
}

/* The host's pathname sockets (the list doctor --deep copied from the
 * host's /proc/net/unix into the workspace; without one, this namespace's
 * own) each tried: none may take a connection from inside. */
static void check_host_sockets(struct doctor_report *r, const char *workspace)
{
        char list[4096];
        snprintf(list, sizeof(list), "%s/" DOCTOR_HOST_SOCKETS, workspace);
        _cleanup_fclose_ FILE *f = fopen(list, "re");
        if (!f)
                f = fopen("/proc/net/unix", "re");
        if (!f) {
                doctor_add(r, "host sockets", false, true, NULL, "reading %s: %s", list,
                           strerror(errno));
                return;
        }
        char reached[1024] = "";
        _cleanup_free_ char *line = NULL;
        size_t cap = 0, tried = 0;
        while (getline(&line, &cap, f) > 0) {
                const char *path = compose_unix_socket_path(line);
                if (path && (++tried, socket_reachable(path)))
                        list_add(reached, sizeof(reached), path);
        }
        doctor_add(r, "host sockets", !reached[0], true, NULL, "%s%s (%zu tried)",
                   reached[0] ? "reachable from inside: " : "none of the host's reachable", reached,
                   tried);
}

void doctor_inside_checks(struct doctor_report *r, const char *workspace)
{
        check_interfaces(r);
        check_home(r);
        check_capabilities(r);
        check_no_new_privs(r);
        check_seccomp(r);
        check_workspace(r, workspace ? workspace : ".");
        check_read_only(r);
        check_environment(r);
        check_host_sockets(r, workspace ? workspace : ".");
}
