/* Which namespace holds each sysctl a config.json sets. The init writes them
 * through its own /proc/sys, so a key whose namespace the container shares
 * with the caller would set the caller's value: the host's, for a runtime
 * started from the host. Refused at load, as runc and crun do, before
 * anything is made. */
#include "runtime/spec.h"
#include "runtime/spec_int.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* The IPC namespace's keys (ipc/ipc_sysctl.c, ipc/mq_sysctl.c), the UTS
 * namespace's (kernel/utsname_sysctl.c) and the network namespace's: every
 * other key is the machine's, whatever namespace the container has. */
static const char *const ipc_keys[] = {
    "kernel.msgmax",      "kernel.msgmnb",      "kernel.msgmni",      "kernel.sem",
    "kernel.shmall",      "kernel.shmmax",      "kernel.shmmni",      "kernel.shm_rmid_forced",
    "kernel.msg_next_id", "kernel.sem_next_id", "kernel.shm_next_id",
};
static const char *const uts_keys[] = {"kernel.hostname", "kernel.domainname"};

static bool listed(const char *key, const char *const *keys, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(key, keys[i]) == 0)
                        return true;
        return false;
}

/* The namespace that holds key, or SPEC_NS_COUNT when none does. */
static enum spec_ns sysctl_namespace(const char *key)
{
        if (strncmp(key, "net.", 4) == 0)
                return SPEC_NS_NET;
        if (strncmp(key, "fs.mqueue.", 10) == 0 || listed(key, ipc_keys, ARRAY_SIZE(ipc_keys)))
                return SPEC_NS_IPC;
        if (listed(key, uts_keys, ARRAY_SIZE(uts_keys)))
                return SPEC_NS_UTS;
        return SPEC_NS_COUNT;
}

static const char *const proc_ns_names[SPEC_NS_COUNT] = {
    [SPEC_NS_NET] = "net", [SPEC_NS_IPC] = "ipc", [SPEC_NS_UTS] = "uts"};

/* Whether the namespace at path is this process's own of that type. */
static bool is_callers(enum spec_ns ns, const char *path)
{
        char own[32];
        struct stat a, b;
        snprintf(own, sizeof(own), "/proc/self/ns/%s", proc_ns_names[ns]);
        if (stat(path, &a) < 0 || stat(own, &b) < 0)
                return false; /* a path that cannot be joined fails at the join */
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static const char *sysctl_value(const struct spec *spec, const char *key)
{
        for (size_t i = 0; i < spec->n_sysctl; i++)
                if (strcmp(spec->sysctl[i].key, key) == 0)
                        return spec->sysctl[i].value;
        return "";
}

static int refuse(const struct umw_jloc *loc, const char *key, const char *why,
                  struct umw_error **err)
{
        char path[UMW_JLOC_PATH_MAX];
        struct umw_jloc at = umw_jloc_key(loc, key);
        umw_jloc_path(&at, path);
        return umw_fail(err, UMW_EXIT_CONFIG, EPERM, "%s: %s: %s", loc->file, path, why);
}

static int check_key(const struct spec *spec, const struct umw_jloc *loc, const char *key,
                     struct umw_error **err)
{
        if (!key[0] || strstr(key, "..") || strchr(key, '/') || key[0] == '.')
                return refuse(loc, key, "expected a sysctl name like net.ipv4.ip_forward", err);
        /* The names have fields of their own; two sources of one value
         * would leave which wins to the order of writes (runc and crun refuse
         * them too). */
        if (strcmp(key, "kernel.hostname") == 0)
                return refuse(loc, key, "set .hostname instead", err);
        const char *value = sysctl_value(spec, key);
        if (strcmp(key, "kernel.domainname") == 0 && spec->domainname &&
            strcmp(spec->domainname, value) != 0)
                return refuse(loc, key, "conflicts with .domainname", err);
        enum spec_ns ns = sysctl_namespace(key);
        if (ns == SPEC_NS_COUNT)
                return refuse(loc, key,
                              "no namespace holds this sysctl: setting it would set the host's",
                              err);
        const struct spec_namespace *n = &spec->namespaces[ns];
        char why[96];
        snprintf(why, sizeof(why), "needs the container's own %s namespace", spec_ns_name(ns));
        if (!n->enabled || (n->path && is_callers(ns, n->path)))
                return refuse(loc, key, why, err);
        return 0;
}

int spec_check_sysctl(const struct spec *spec, const struct umw_jloc *loc, struct umw_error **err)
{
        for (size_t i = 0; i < spec->n_sysctl; i++) {
                int r = check_key(spec, loc, spec->sysctl[i].key, err);
                if (r < 0)
                        return r;
        }
        return 0;
}
