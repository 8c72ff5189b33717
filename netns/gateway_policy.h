/* The gateway's rules, read from policy files: the [egress] table of each
 * (enabled, allow, deny: the keys of a project's .umwelt.toml, so that file
 * can be given as it is; other tables are not the gateway's and are left to
 * their readers). The rules of all files are joined: every file's deny list
 * is checked first, then every allow list. A file whose [egress] says
 * enabled = false contributes its deny list only. Bounding one layer by
 * another is the job of whoever writes the files (the sandbox face). */
#ifndef UMW_NETNS_GATEWAY_POLICY_H
#define UMW_NETNS_GATEWAY_POLICY_H

#include <stddef.h>

struct egress_rules;
struct umw_error;

/* Fills *out (freed with egress_rules_free); on failure *out is empty and
 * the error names the file and the rule. */
int gateway_policy_load(const char *const *files, size_t n, struct egress_rules *out,
                        struct umw_error **err);

/* The same from files opened by someone else (the gateway's monitor, on
 * SIGHUP): fds[i] is files[i] open for reading, or errs[i] says why it
 * could not be opened. */
int gateway_policy_load_fds(const char *const *files, const int *fds, const int *errs, size_t n,
                            struct egress_rules *out, struct umw_error **err);

/* The first rule (deny list, then allow list) with methods or a path: one
 * that makes the gateway terminate TLS to decide an HTTPS request. NULL
 * when there is none. */
const char *gateway_policy_inspecting_rule(const struct egress_rules *rules);

#endif
