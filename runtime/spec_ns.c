/* The namespaces of a spec: their names in config.json and their clone flags. */
#include "runtime/spec_int.h"
#include "common/cleanup.h"

#include <sched.h>
#include <stddef.h>

const struct name_value spec_ns_names[SPEC_NS_COUNT] = {
    {"user", SPEC_NS_USER},     {"mount", SPEC_NS_MOUNT}, {"pid", SPEC_NS_PID},
    {"network", SPEC_NS_NET},   {"ipc", SPEC_NS_IPC},     {"uts", SPEC_NS_UTS},
    {"cgroup", SPEC_NS_CGROUP}, {"time", SPEC_NS_TIME},
};

static const int ns_clone_flags[SPEC_NS_COUNT] = {
    [SPEC_NS_USER] = CLONE_NEWUSER,     [SPEC_NS_MOUNT] = CLONE_NEWNS,
    [SPEC_NS_PID] = CLONE_NEWPID,       [SPEC_NS_NET] = CLONE_NEWNET,
    [SPEC_NS_IPC] = CLONE_NEWIPC,       [SPEC_NS_UTS] = CLONE_NEWUTS,
    [SPEC_NS_CGROUP] = CLONE_NEWCGROUP, [SPEC_NS_TIME] = CLONE_NEWTIME,
};

const char *spec_ns_name(enum spec_ns ns)
{
        for (size_t i = 0; i < ARRAY_SIZE(spec_ns_names); i++) {
                if (spec_ns_names[i].value == (int)ns)
                        return spec_ns_names[i].name;
        }
        return NULL;
}

int spec_ns_clone_flag(enum spec_ns ns)
{
        return (unsigned int)ns < SPEC_NS_COUNT ? ns_clone_flags[ns] : 0;
}
