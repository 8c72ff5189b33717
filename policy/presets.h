/* Resource presets for the sandbox face: named memory, CPU and pids limits,
 * fitted to the machine so that a preset never asks for more than it has. */
#ifndef UMW_POLICY_PRESETS_H
#define UMW_POLICY_PRESETS_H

#include <stdint.h>

struct umw_error;

struct machine_size {
        uint64_t memory_bytes; /* MemTotal */
        unsigned cpus;         /* online CPUs */
};

struct preset {
        const char *name;
        uint64_t memory_bytes;
        unsigned cpus_milli; /* 1000 = one CPU */
        uint64_t pids;
};

/* This machine's size, from /proc/meminfo and the online CPU count. */
int presets_machine_size_read(struct machine_size *out, struct umw_error **err);
/* The MemTotal line of a /proc/meminfo text, in bytes. */
int presets_meminfo_total_bytes(const char *meminfo, uint64_t *out, struct umw_error **err);

/* The preset called name, each value capped at what m has; "auto" is half of
 * m (at least one CPU). An unknown name is bad input, listing the valid ones. */
int preset_resolve(const char *name, const struct machine_size *m, struct preset *out,
                   struct umw_error **err);
/* The valid names, NULL-terminated. */
const char *const *preset_names(void);
/* p as an OCI linux.resources object (malloc'd JSON text; NULL on ENOMEM). */
char *preset_resources_json(const struct preset *p);

#endif
