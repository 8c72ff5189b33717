/* The kernel's network wall a bundle asks for with the annotation
 * run.umwelt.net (umwelt-run(1), ANNOTATIONS), so that podman users get it
 * with --annotation as a sandbox does: create puts it up in the container's
 * network namespace before the workload can run, and a start without it is
 * refused. */
#ifndef UMW_NETWALL_H
#define UMW_NETWALL_H

#include <sys/types.h>

struct spec;
struct umw_error;

/* When the spec asks for it, *netns is the network namespace of the
 * container whose init is pid (the one the spec joins by path, or the init's
 * new one); -1 otherwise. Opened before the init is let go: from then on it
 * may make itself undumpable, and a rootless runtime (no CAP_SYS_PTRACE)
 * could no longer open its /proc/PID/ns/net. */
int netwall_open(const struct spec *spec, pid_t pid, int *netns, struct umw_error **err);
/* Installs the ruleset in netns (nothing for -1): root enters it and comes
 * back; otherwise a child enters the namespace's owning user namespace first
 * (a rootless runtime holds CAP_NET_ADMIN only there), then the network
 * namespace. Either way the ruleset is read back, and lo brought up. Any
 * failure of either is one line naming the annotation and nftables. */
int netwall_install(int netns, struct umw_error **err);

/* In the init, in a network namespace of the container's own: lo up, as
 * crun and runc do (podman --network none still has 127.0.0.1). Nothing for
 * the host's or one joined by path, nor with the wall, whose installer
 * brings lo up only once the ruleset stands. */
int netwall_loopback_init(const struct spec *spec, struct umw_error **err);

#endif
