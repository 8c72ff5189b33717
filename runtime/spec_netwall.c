/* The network wall's rules of a spec: the annotation's one value, a network
 * namespace to put it in, no CAP_NET_ADMIN to take it down. */
#include "runtime/spec_int.h"
#include "common/error.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>

int spec_check_netwall(struct spec *spec, const char *v, const char *file, struct umw_error **err)
{
        if (!v)
                return 0;
        if (strcmp(v, SPEC_NETWALL_DEFAULT_DROP) != 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: .annotations[\"%s\"]: expected \"%s\", got \"%s\"", file,
                                SPEC_NETWALL_ANNOTATION, SPEC_NETWALL_DEFAULT_DROP, v);
        if (!spec->namespaces[SPEC_NS_NET].enabled)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s: .annotations[\"%s\"]: %s needs a network namespace in "
                                ".linux.namespaces (it would wall the host's own)",
                                file, SPEC_NETWALL_ANNOTATION, SPEC_NETWALL_DEFAULT_DROP);
        spec->netwall = true;
        char where[4096];
        snprintf(where, sizeof(where), "%s: .process.capabilities", file);
        return spec_check_netwall_caps(spec, &spec->process.caps, where, err);
}

int spec_check_netwall_caps(const struct spec *spec, const struct spec_caps *c, const char *where,
                            struct umw_error **err)
{
        uint64_t any = c->bounding | c->effective | c->inheritable | c->permitted | c->ambient;
        if (!(any & (1ULL << CAP_NET_ADMIN)) || !spec->netwall)
                return 0;
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                        "%s: CAP_NET_ADMIN is refused with .annotations[\"%s\"] = \"%s\" (the "
                        "workload could take its network wall down)",
                        where, SPEC_NETWALL_ANNOTATION, SPEC_NETWALL_DEFAULT_DROP);
}
