/* Mount options as the runtime spec writes them, split into the flags
 * mount(2) and mount_setattr(2) take and the data a filesystem gets. */
#include "runtime/mounts.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

struct flag_opt {
        const char *name;
        unsigned long set, clr;
};

/* The atime modes exclude each other: setting one clears the other two. */
static const struct flag_opt flag_opts[] = {
    {"defaults", 0, 0},
    {"ro", MS_RDONLY, 0},
    {"rw", 0, MS_RDONLY},
    {"suid", 0, MS_NOSUID},
    {"nosuid", MS_NOSUID, 0},
    {"dev", 0, MS_NODEV},
    {"nodev", MS_NODEV, 0},
    {"exec", 0, MS_NOEXEC},
    {"noexec", MS_NOEXEC, 0},
    {"sync", MS_SYNCHRONOUS, 0},
    {"async", 0, MS_SYNCHRONOUS},
    {"dirsync", MS_DIRSYNC, 0},
    {"remount", MS_REMOUNT, 0},
    {"mand", MS_MANDLOCK, 0},
    {"nomand", 0, MS_MANDLOCK},
    {"atime", 0, MS_NOATIME},
    {"noatime", MS_NOATIME, MS_RELATIME | MS_STRICTATIME},
    {"diratime", 0, MS_NODIRATIME},
    {"nodiratime", MS_NODIRATIME, 0},
    {"relatime", MS_RELATIME, MS_NOATIME | MS_STRICTATIME},
    {"norelatime", 0, MS_RELATIME},
    {"strictatime", MS_STRICTATIME, MS_NOATIME | MS_RELATIME},
    {"nostrictatime", 0, MS_STRICTATIME},
    {"nosymfollow", MS_NOSYMFOLLOW, 0},
    {"symfollow", 0, MS_NOSYMFOLLOW},
};

static const struct {
        const char *name;
        unsigned long flags;
} propagation_opts[] = {
    {"private", MS_PRIVATE},       {"rprivate", MS_PRIVATE | MS_REC},
    {"shared", MS_SHARED},         {"rshared", MS_SHARED | MS_REC},
    {"slave", MS_SLAVE},           {"rslave", MS_SLAVE | MS_REC},
    {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC},
};

static bool parse_flag_opt(const char *opt, struct mount_opts *o)
{
        for (size_t i = 0; i < ARRAY_SIZE(flag_opts); i++) {
                if (strcmp(opt, flag_opts[i].name) != 0)
                        continue;
                o->flags = (o->flags & ~flag_opts[i].clr) | flag_opts[i].set;
                o->clear = (o->clear & ~flag_opts[i].set) | flag_opts[i].clr;
                return true;
        }
        for (size_t i = 0; i < ARRAY_SIZE(propagation_opts); i++) {
                if (strcmp(opt, propagation_opts[i].name) == 0) {
                        o->propagation = propagation_opts[i].flags;
                        return true;
                }
        }
        if (strcmp(opt, "bind") == 0 || strcmp(opt, "rbind") == 0) {
                o->bind = true;
                o->recursive = o->recursive || opt[0] == 'r';
                o->flags |= MS_BIND | (o->recursive ? MS_REC : 0);
                return true;
        }
        if (strcmp(opt, "tmpcopyup") == 0 || strcmp(opt, "notmpcopyup") == 0) {
                o->tmpcopyup = opt[0] == 't';
                return true;
        }
        return false;
}

static int append_data(char **data, size_t *len, const char *opt)
{
        size_t n = strlen(opt);
        char *p = realloc(*data, *len + n + 2);
        if (!p)
                return -ENOMEM;
        if (*len > 0)
                p[(*len)++] = ',';
        memcpy(p + *len, opt, n + 1);
        *len += n;
        *data = p;
        return 0;
}

int mount_opts_parse(const char *const *options, size_t n, struct mount_opts *out,
                     struct umw_error **err)
{
        struct mount_opts o = {0};
        size_t len = 0;
        for (size_t i = 0; i < n; i++) {
                const char *opt = options[i];
                if (!opt || !*opt || parse_flag_opt(opt, &o))
                        continue;
                if (strcmp(opt, "idmap") == 0 || strcmp(opt, "ridmap") == 0) {
                        o.idmap = true;
                        o.ridmap = o.ridmap || opt[0] == 'r';
                        continue;
                }
                if (strncmp(opt, "idmap=", 6) == 0 || strncmp(opt, "ridmap=", 7) == 0) {
                        mount_opts_release(&o);
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "mount option \"%s\": expected \"idmap\" or \"ridmap\" "
                                        "without a value (the mapping is the mount's "
                                        "uidMappings/gidMappings or the container's)",
                                        opt);
                }
                if (append_data(&o.data, &len, opt) < 0) {
                        mount_opts_release(&o);
                        return umw_fail_sys(err, ENOMEM, "mount options");
                }
        }
        *out = o;
        return 0;
}

void mount_opts_release(struct mount_opts *o)
{
        free(o->data);
        o->data = NULL;
}
