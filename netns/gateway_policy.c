#include "netns/gateway_policy.h"
#include "policy/egress_rules.h"
#include "policy/toml.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The strings of array key in table t as a NULL-terminated vector pointing
 * into the tree; *out stays NULL when the key is absent. */
static int string_list(const struct toml_value *t, const char *key, const char *file,
                       const char ***out, struct umw_error **err)
{
        const struct toml_value *a = NULL;
        int r = toml_get(t, key, TOML_ARRAY, file, &a, err);
        if (r <= 0)
                return r;
        const char **v = calloc(a->array.n + 1, sizeof(*v));
        if (!v)
                return umw_fail_sys(err, ENOMEM, "%s: egress.%s", file, key);
        for (size_t i = 0; i < a->array.n; i++) {
                const struct toml_value *item = a->array.items[i];
                if (item->kind != TOML_STRING) {
                        free(v);
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "%s:%u:%u: egress.%s: expected an array of strings, found "
                                        "%s",
                                        file, item->line, item->column, key,
                                        toml_kind_name(item->kind));
                }
                v[i] = item->string;
        }
        *out = v;
        return 0;
}

/* Moves the rules of from to the end of the lists in to. */
static int rules_append(struct egress_rules *to, struct egress_rules *from)
{
        struct egress_rule *deny =
            reallocarray(to->deny, to->n_deny + from->n_deny + 1, sizeof(*deny));
        if (!deny)
                return -ENOMEM;
        to->deny = deny;
        struct egress_rule *allow =
            reallocarray(to->allow, to->n_allow + from->n_allow + 1, sizeof(*allow));
        if (!allow)
                return -ENOMEM;
        to->allow = allow;
        for (size_t i = 0; i < from->n_deny; i++)
                to->deny[to->n_deny++] = from->deny[i];
        for (size_t i = 0; i < from->n_allow; i++)
                to->allow[to->n_allow++] = from->allow[i];
        from->n_deny = from->n_allow = 0;
        egress_rules_free(from);
        return 0;
}

/* fd -1: file opened by name. */
static int load_file(const char *file, int fd, struct egress_rules *out, struct umw_error **err)
{
        static const char *const keys[] = {"enabled", "allow", "deny", NULL};
        _cleanup_toml_ struct toml_value *root = NULL;
        const struct toml_value *e = NULL;
        bool enabled = true;
        _cleanup_free_ const char **allow = NULL;
        _cleanup_free_ const char **deny = NULL;
        int r = fd < 0 ? toml_parse_file(file, &root, err) : toml_parse_fd(fd, file, &root, err);
        if (r < 0)
                return r;
        if ((r = toml_get(root, "egress", TOML_TABLE, file, &e, err)) <= 0)
                return r;
        if ((r = toml_check_keys(e, keys, file, err)) < 0 ||
            (r = toml_get_bool(e, "enabled", file, &enabled, err)) < 0 ||
            (r = string_list(e, "allow", file, &allow, err)) < 0 ||
            (r = string_list(e, "deny", file, &deny, err)) < 0)
                return r;
        struct egress_rules rules = {0};
        r = egress_rules_parse(enabled ? allow : NULL, deny, &rules, err);
        if (r < 0)
                return umw_error_prefix(err, "%s", file);
        r = rules_append(out, &rules);
        if (r < 0) {
                egress_rules_free(&rules);
                return umw_fail_sys(err, -r, "%s", file);
        }
        return 0;
}

int gateway_policy_load(const char *const *files, size_t n, struct egress_rules *out,
                        struct umw_error **err)
{
        *out = (struct egress_rules){0};
        for (size_t i = 0; i < n; i++) {
                int r = load_file(files[i], -1, out, err);
                if (r < 0) {
                        egress_rules_free(out);
                        *out = (struct egress_rules){0};
                        return r;
                }
        }
        return 0;
}

int gateway_policy_load_fds(const char *const *files, const int *fds, const int *errs, size_t n,
                            struct egress_rules *out, struct umw_error **err)
{
        *out = (struct egress_rules){0};
        for (size_t i = 0; i < n; i++) {
                /* The message toml_parse_file() would have given. */
                int r = errs[i] ? umw_fail_sys(err, errs[i], "open %s", files[i])
                                : load_file(files[i], fds[i], out, err);
                if (r < 0) {
                        egress_rules_free(out);
                        *out = (struct egress_rules){0};
                        return r;
                }
        }
        return 0;
}

static const char *inspecting(const struct egress_rule *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (v[i].methods || v[i].path)
                        return v[i].text;
        return NULL;
}

const char *gateway_policy_inspecting_rule(const struct egress_rules *rules)
{
        const char *deny = inspecting(rules->deny, rules->n_deny);
        return deny ? deny : inspecting(rules->allow, rules->n_allow);
}
