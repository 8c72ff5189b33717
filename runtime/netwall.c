#include "runtime/netwall.h"
#include "runtime/spec.h"
#include "runtime/sync.h"
#include "netns/nft_install.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/proc.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int open_netns(const struct spec *spec, pid_t pid, int *fd, struct umw_error **err)
{
        char proc[64];
        const char *path = spec->namespaces[SPEC_NS_NET].path;
        if (!path) {
                snprintf(proc, sizeof(proc), "/proc/%d/ns/net", pid);
                path = proc;
        }
        *fd = open(path, O_RDONLY | O_CLOEXEC);
        if (*fd < 0)
                return umw_fail_errno(err, "nftables: open network namespace %s", path);
        return 0;
}

static bool same_file(int fd, const char *path)
{
        struct stat a, b;
        return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
               a.st_ino == b.st_ino;
}

/* The user namespace that owns netns, or -1 when it is our own. */
static int owner_userns(int netns, int *fd, struct umw_error **err)
{
        *fd = ioctl(netns, NS_GET_USERNS);
        if (*fd < 0)
                return umw_fail_errno(err, "nftables: find the network namespace's user namespace");
        if (same_file(*fd, "/proc/self/ns/user"))
                umw_close_fdp(fd);
        return 0;
}

/* lo is the only way a walled namespace has: a new one starts with it down. */
static int loopback_up(struct umw_error **err)
{
        _cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct ifreq ifr = {.ifr_name = "lo"};
        if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
                return umw_fail_errno(err, "read the flags of lo");
        if (ifr.ifr_flags & IFF_UP)
                return 0;
        ifr.ifr_flags |= IFF_UP;
        if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
                return umw_fail_errno(err, "bring lo up");
        return 0;
}

int netwall_loopback_init(const struct spec *spec, struct umw_error **err)
{
        const struct spec_namespace *n = &spec->namespaces[SPEC_NS_NET];
        if (!n->enabled || n->path || spec->netwall)
                return 0;
        return loopback_up(err);
}

/* In the container's network namespace: the ruleset, then its only door. */
static int wall_up(struct umw_error **err)
{
        int r = nft_ruleset_install(err);
        return r < 0 ? r : loopback_up(err);
}

/* A runtime that may enter the network namespace itself (root: CAP_SYS_ADMIN
 * over its own user namespace and the namespace's owner) does, and comes
 * back: no child to fork. *done false: it may not (rootless), a child must. */
static int install_in_place(int netns, bool *done, struct umw_error **err)
{
        *done = false;
        _cleanup_close_ int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (home < 0)
                return umw_fail_errno(err, "nftables: open the runtime's network namespace");
        if (setns(netns, CLONE_NEWNET) < 0)
                return errno == EPERM
                           ? 0
                           : umw_fail_errno(err, "nftables: enter the network namespace");
        *done = true;
        int r = wall_up(err);
        if (setns(home, CLONE_NEWNET) < 0)
                return umw_fail_errno(err, "nftables: return to the runtime's network namespace");
        return r;
}

/* The child: it enters the container's namespaces, so it is undumpable like
 * every runtime process that does (init.h). */
static __attribute__((noreturn)) void installer_main(int netns, int userns, int report)
{
        struct umw_error *err = NULL;
        int r = umw_make_undumpable(&err);
        if (r == 0 && userns >= 0 && setns(userns, CLONE_NEWUSER) < 0)
                r = umw_fail_errno(&err, "nftables: enter the network namespace's user namespace");
        if (r == 0 && setns(netns, CLONE_NEWNET) < 0)
                r = umw_fail_errno(&err, "nftables: enter the network namespace");
        if (r == 0)
                r = wall_up(&err);
        if (r == 0)
                r = sync_send(report, SYNC_READY, 0, &err);
        if (r < 0)
                sync_send_error(report, err);
        _exit(r < 0);
}

static int run_installer(int netns, int userns, struct umw_error **err)
{
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return umw_fail_errno(err, "nftables: installer socket");
        pid_t child = fork();
        if (child == 0) {
                close(pair[0]);
                installer_main(netns, userns, pair[1]);
        }
        close(pair[1]);
        int r = child < 0 ? umw_fail_errno(err, "nftables: fork the installer")
                          : sync_expect(pair[0], SYNC_READY, "nftables installer", NULL, err);
        close(pair[0]);
        while (child > 0 && waitpid(child, NULL, 0) < 0 && errno == EINTR)
                ;
        return r;
}

int netwall_open(const struct spec *spec, pid_t pid, int *netns, struct umw_error **err)
{
        *netns = -1;
        if (!spec->netwall)
                return 0;
        int r = open_netns(spec, pid, netns, err);
        if (r < 0)
                return umw_error_prefix(err, "%s=%s", SPEC_NETWALL_ANNOTATION,
                                        SPEC_NETWALL_DEFAULT_DROP);
        return 0;
}

/* By this thread where it may enter netns, else by a child that enters its
 * owning user namespace first. */
static int install_here_or_in_child(int netns, struct umw_error **err)
{
        _cleanup_close_ int userns = -1;
        bool done = false;
        int r = install_in_place(netns, &done, err);
        if (r < 0 || done)
                return r;
        if ((r = owner_userns(netns, &userns, err)) < 0)
                return r;
        return run_installer(netns, userns, err);
}

int netwall_install(int netns, struct umw_error **err)
{
        if (netns < 0)
                return 0;
        if (install_here_or_in_child(netns, err) < 0)
                return umw_error_prefix(err, "%s=%s", SPEC_NETWALL_ANNOTATION,
                                        SPEC_NETWALL_DEFAULT_DROP);
        return 0;
}
