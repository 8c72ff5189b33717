/* Binds made by umwelt-run in its own namespaces before GO and handed to
 * the init (SYNC_TREES), mounts.h says which. Idmapped ones show what the
 * source's files are owned by on disk through the container's user
 * namespace (or the mount's own), and what the container writes lands on
 * disk under the ids it maps to. */
#include "runtime/mounts.h"
#include "runtime/namespaces.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

static bool same_maps(const struct spec_idmap *a, size_t na, const struct spec_idmap *b, size_t nb)
{
        return na == nb && (na == 0 || memcmp(a, b, na * sizeof(*a)) == 0);
}

/* Whether m is idmapped, refusing what cannot be honoured. */
static int idmapped(const struct spec *spec, const struct spec_mount *m, struct umw_error **err)
{
        struct mount_opts o;
        int r = mount_opts_parse(m->options, m->n_options, &o, err);
        if (r < 0)
                return r;
        mount_opts_release(&o);
        bool own_maps = m->n_uid_mappings || m->n_gid_mappings;
        if (!o.idmap && !own_maps)
                return 0;
        const char *why = NULL;
        if (!o.idmap)
                why = "uidMappings/gidMappings need the \"idmap\" or \"ridmap\" option";
        else if (!o.bind && !(m->type && (strcmp(m->type, "bind") == 0 ||
                                          (strcmp(m->type, "overlay") == 0 && !own_maps))))
                why = "only a bind or an overlay (its layers) can be idmapped here";
        else if (!own_maps && !spec->namespaces[SPEC_NS_USER].enabled)
                why = "an idmapped mount needs a user namespace or uidMappings/gidMappings of "
                      "its own";
        else if (own_maps && (!m->n_uid_mappings || !m->n_gid_mappings))
                why = "an idmapped mount's own mapping needs both uidMappings and gidMappings";
        if (why)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: .mounts[%s]: %s", spec->file,
                                m->destination, why);
        return 1;
}

static bool has_option(const struct spec_mount *m, const char *a, const char *b)
{
        for (size_t i = 0; i < m->n_options; i++)
                if (m->options[i] &&
                    (strcmp(m->options[i], a) == 0 || strcmp(m->options[i], b) == 0))
                        return true;
        return false;
}

/* A source below the rootfs (the image's) is the init's to look up. */
static bool host_source(const struct spec_mount *m, const char *rootfs)
{
        size_t n = strlen(rootfs);
        return m->source && (n <= 1 || strncmp(m->source, rootfs, n) != 0 || m->source[n] != '/');
}

bool mounts_tree_from_runtime(const struct spec *spec, const struct spec_mount *m,
                              const char *rootfs, bool runtime_clones)
{
        if (has_option(m, "idmap", "ridmap"))
                return true;
        bool bind = has_option(m, "bind", "rbind") || (m->type && strcmp(m->type, "bind") == 0);
        return runtime_clones && bind && spec->namespaces[SPEC_NS_USER].enabled &&
               host_source(m, rootfs);
}

int mounts_count_trees(const struct spec *spec, const char *rootfs, bool runtime_clones,
                       struct umw_error **err)
{
        int n = 0;
        for (size_t i = 0; i < spec->n_mounts; i++) {
                const struct spec_mount *m = &spec->mounts[i];
                int r = idmapped(spec, m, err);
                if (r < 0)
                        return r;
                n += mounts_tree_from_runtime(spec, m, rootfs, runtime_clones);
        }
        return n;
}

/* Whether m maps through a user namespace of its own rather than the
 * container's. */
static bool maps_itself(const struct spec *spec, const struct spec_mount *m)
{
        return m->n_uid_mappings && (!same_maps(m->uid_mappings, m->n_uid_mappings,
                                                spec->uid_mappings, spec->n_uid_mappings) ||
                                     !same_maps(m->gid_mappings, m->n_gid_mappings,
                                                spec->gid_mappings, spec->n_gid_mappings) ||
                                     spec->namespaces[SPEC_NS_USER].path);
}

/* The child's half of mount_userns: a user namespace, held until told. */
__attribute__((noreturn)) static void hold_userns(int ready, int hold)
{
        char c = unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
        if (write(ready, &c, 1) == 1 && c == 'y')
                (void)!read(hold, &c, 1);
        _exit(0);
}

/* The user namespace the child pid made, once ready_rd says so, with m's
 * maps written, opened: its fd. */
static int open_child_userns(const struct spec_mount *m, pid_t pid, int ready_rd,
                             struct umw_error **err)
{
        char c = 'n';
        if (read(ready_rd, &c, 1) != 1 || c != 'y')
                return umw_fail(err, UMW_EXIT_FAILURE, EPERM,
                                "create the user namespace of the mount on %s", m->destination);
        int r = ns_write_maps(pid, m->uid_mappings, m->n_uid_mappings, m->gid_mappings,
                              m->n_gid_mappings, err);
        if (r < 0)
                return r;
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        return fd < 0 ? umw_fail_errno(err, "open %s", path) : fd;
}

/* A user namespace with m's own mapping, for its mount alone (as crun
 * makes one): a child unshares it and holds it while its maps are written
 * and it is opened, then ends; the fd keeps the namespace. */
static int mount_userns(const struct spec_mount *m, struct umw_error **err)
{
        int ready[2], hold[2];
        if (pipe2(ready, O_CLOEXEC) < 0)
                return umw_fail_errno(err, "pipe");
        if (pipe2(hold, O_CLOEXEC) < 0) {
                close(ready[0]);
                close(ready[1]);
                return umw_fail_errno(err, "pipe");
        }
        pid_t pid = fork();
        if (pid == 0) {
                close(ready[0]);
                close(hold[1]);
                hold_userns(ready[1], hold[0]);
        }
        close(ready[1]);
        close(hold[0]);
        _cleanup_close_ int ready_rd = ready[0], hold_wr = hold[1];
        if (pid < 0)
                return umw_fail_errno(err, "fork for the user namespace of %s", m->destination);
        int r = open_child_userns(m, pid, ready_rd, err);
        umw_close_fdp(&hold_wr);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        return r;
}

/* The clone of m with its flags, idmapped with userns_fd when asked. */
static int make_tree(const struct spec_mount *m, int userns_fd, struct umw_error **err)
{
        struct mount_opts o;
        int r = mount_opts_parse(m->options, m->n_options, &o, err);
        if (r < 0)
                return r;
        mount_opts_release(&o);
        _cleanup_close_ int fd = mounts_clone_bind(m, err);
        if (fd < 0 || !o.idmap)
                return fd < 0 ? fd : TAKE_FD(fd);
        struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns_fd};
        unsigned int at = AT_EMPTY_PATH | (o.ridmap && o.recursive ? AT_RECURSIVE : 0);
        if (mount_setattr(fd, "", at, &a, sizeof(a)) < 0)
                return umw_fail_errno(err, "idmap the bind of %s", m->source);
        return TAKE_FD(fd);
}

static bool is_overlay(const struct spec_mount *m)
{
        return m->type && strcmp(m->type, "overlay") == 0;
}

/* An idmapped overlay's tree: its layers idmapped (mount_overlay.c). */
static int overlay_tree(const struct spec_mount *m, int userns_fd, struct umw_error **err)
{
        struct mount_opts o;
        int r = mount_opts_parse(m->options, m->n_options, &o, err);
        if (r < 0)
                return r;
        r = mounts_overlay_tree(m, o.data, userns_fd, err);
        mount_opts_release(&o);
        return r;
}

/* The tree of m, idmapped (when asked) through its own user namespace or
 * the container's. */
static int runtime_tree(const struct spec *spec, const struct spec_mount *m, int userns_fd,
                        struct umw_error **err)
{
        if (is_overlay(m))
                return overlay_tree(m, userns_fd, err);
        if (!maps_itself(spec, m))
                return make_tree(m, userns_fd, err);
        _cleanup_close_ int own = mount_userns(m, err);
        return own < 0 ? own : make_tree(m, own, err);
}

int mounts_make_trees(const struct spec *spec, const char *rootfs, bool runtime_clones,
                      int userns_fd, int *trees, struct umw_error **err)
{
        for (size_t i = 0; i < spec->n_mounts; i++)
                trees[i] = -1;
        for (size_t i = 0; i < spec->n_mounts; i++) {
                const struct spec_mount *m = &spec->mounts[i];
                int r = 0;
                if (mounts_tree_from_runtime(spec, m, rootfs, runtime_clones))
                        r = trees[i] = runtime_tree(spec, m, userns_fd, err);
                if (r < 0) {
                        for (size_t j = 0; j < i; j++)
                                umw_close_fdp(&trees[j]);
                        trees[i] = -1;
                        return r;
                }
        }
        return 0;
}
