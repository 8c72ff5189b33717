/* /dev: the default device set every OCI runtime provides (null, zero, full,
 * random, urandom, tty, ptmx link), the spec's linux.devices, and the
 * standard links (/dev/fd, stdin, stdout, stderr, core). */
#ifndef UMW_DEVICES_H
#define UMW_DEVICES_H

#include <stdbool.h>

struct spec;
struct umw_error;

/* Before pivot, rootfs_fd an O_PATH fd of the rootfs. in_userns: mknod is not
 * allowed, so each node is a bind mount of the host's device instead. */
int devices_setup(const struct spec *spec, int rootfs_fd, bool in_userns, struct umw_error **err);

#endif
