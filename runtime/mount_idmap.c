/* Idmapped binds, made by umwelt-run in its own namespaces before GO and
 * handed to the init (SYNC_TREES): what the source's files are owned by on
 * disk is shown through the container's user namespace, and what the
 * container writes lands on disk under the ids it maps to. */
#include "mounts.h"
#include "spec.h"
#include "src/common/cleanup.h"
#include "src/common/error.h"
#include "src/common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
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
        else if (!o.bind && !(m->type && strcmp(m->type, "bind") == 0))
                why = "only a bind mount can be idmapped here";
        else if (!spec->namespaces[SPEC_NS_USER].enabled)
                why = "an idmapped mount needs a user namespace";
        /* One user namespace maps them all: a mount's own mapping would need
         * a namespace of its own (crun makes one); the container's is what
         * podman and Kubernetes pass. */
        else if (own_maps && (!same_maps(m->uid_mappings, m->n_uid_mappings, spec->uid_mappings,
                                         spec->n_uid_mappings) ||
                              !same_maps(m->gid_mappings, m->n_gid_mappings, spec->gid_mappings,
                                         spec->n_gid_mappings)))
                why = "uidMappings/gidMappings other than the container's are not supported";
        if (why)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "config.json: mounts[%s]: %s",
                                m->destination, why);
        return 1;
}

bool mounts_is_idmapped(const struct spec_mount *m)
{
        for (size_t i = 0; i < m->n_options; i++)
                if (m->options[i] &&
                    (strcmp(m->options[i], "idmap") == 0 || strcmp(m->options[i], "ridmap") == 0))
                        return true;
        return false;
}

int mounts_count_idmapped(const struct spec *spec, struct umw_error **err)
{
        int n = 0;
        for (size_t i = 0; i < spec->n_mounts; i++) {
                int r = idmapped(spec, &spec->mounts[i], err);
                if (r < 0)
                        return r;
                n += r;
        }
        return n;
}

static int idmap_tree(const struct spec_mount *m, int userns_fd, struct umw_error **err)
{
        struct mount_opts o;
        int r = mount_opts_parse(m->options, m->n_options, &o, err);
        if (r < 0)
                return r;
        mount_opts_release(&o);
        if (!m->source)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "mounts: bind mount of %s has no source", m->destination);
        unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (o.recursive ? AT_RECURSIVE : 0);
        _cleanup_close_ int fd = open_tree(AT_FDCWD, m->source, flags);
        if (fd < 0)
                return umw_fail_errno(err, "bind %s", m->source);
        struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns_fd};
        unsigned int at = AT_EMPTY_PATH | (o.ridmap && o.recursive ? AT_RECURSIVE : 0);
        if (mount_setattr(fd, "", at, &a, sizeof(a)) < 0)
                return umw_fail_errno(err, "idmap the bind of %s", m->source);
        return TAKE_FD(fd);
}

int mounts_idmap_trees(const struct spec *spec, int userns_fd, int *trees, struct umw_error **err)
{
        for (size_t i = 0; i < spec->n_mounts; i++)
                trees[i] = -1;
        for (size_t i = 0; i < spec->n_mounts; i++) {
                int r = idmapped(spec, &spec->mounts[i], err);
                if (r > 0)
                        r = trees[i] = idmap_tree(&spec->mounts[i], userns_fd, err);
                if (r < 0) {
                        for (size_t j = 0; j < i; j++)
                                umw_close_fdp(&trees[j]);
                        trees[i] = -1;
                        return r;
                }
        }
        return 0;
}
