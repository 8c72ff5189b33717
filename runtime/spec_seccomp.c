/* config.json's linux.seccomp object: the default action, architectures,
 * flags, and the syscall rules with their argument comparisons. */
#include "runtime/spec.h"
#include "runtime/spec_int.h"
#include "common/cleanup.h"
#include "common/json.h"

static const struct name_value seccomp_actions[] = {
    {"SCMP_ACT_KILL", SPEC_SCMP_KILL},
    {"SCMP_ACT_KILL_THREAD", SPEC_SCMP_KILL},
    {"SCMP_ACT_KILL_PROCESS", SPEC_SCMP_KILL_PROCESS},
    {"SCMP_ACT_TRAP", SPEC_SCMP_TRAP},
    {"SCMP_ACT_ERRNO", SPEC_SCMP_ERRNO},
    {"SCMP_ACT_TRACE", SPEC_SCMP_TRACE},
    {"SCMP_ACT_ALLOW", SPEC_SCMP_ALLOW},
    {"SCMP_ACT_LOG", SPEC_SCMP_LOG},
    {"SCMP_ACT_NOTIFY", SPEC_SCMP_NOTIFY},
};

static const struct name_value seccomp_ops[] = {
    {"SCMP_CMP_NE", SPEC_SCMP_CMP_NE},
    {"SCMP_CMP_LT", SPEC_SCMP_CMP_LT},
    {"SCMP_CMP_LE", SPEC_SCMP_CMP_LE},
    {"SCMP_CMP_EQ", SPEC_SCMP_CMP_EQ},
    {"SCMP_CMP_GE", SPEC_SCMP_CMP_GE},
    {"SCMP_CMP_GT", SPEC_SCMP_CMP_GT},
    {"SCMP_CMP_MASKED_EQ", SPEC_SCMP_CMP_MASKED_EQ},
};

static int parse_seccomp_arg(yajl_val obj, const struct umw_jloc *loc, struct spec_seccomp_arg *a,
                             struct umw_error **err)
{
        struct umw_jloc index_at = umw_jloc_key(loc, "index");
        struct umw_jloc value_at = umw_jloc_key(loc, "value");
        struct umw_jloc two_at = umw_jloc_key(loc, "valueTwo");
        struct umw_jloc op_at = umw_jloc_key(loc, "op");
        int64_t index = 0;
        int op = 0;
        yajl_val two = umw_json_member(obj, "valueTwo");
        int r;
        if ((r = umw_json_object(obj, loc, err)) < 0 ||
            (r = umw_json_int64(umw_json_member(obj, "index"), &index_at, 0, 5, &index, err)) < 0 ||
            (r = umw_json_uint64(umw_json_member(obj, "value"), &value_at, &a->value, err)) < 0 ||
            (two && (r = umw_json_uint64(two, &two_at, &a->value_two, err)) < 0) ||
            (r = spec_read_enum(umw_json_member(obj, "op"), &op_at, seccomp_ops,
                                ARRAY_SIZE(seccomp_ops), &op, err)) < 0)
                return r;
        a->index = (unsigned int)index;
        a->op = op;
        return 0;
}

static int parse_seccomp_rule(yajl_val obj, const struct umw_jloc *loc,
                              struct spec_seccomp_rule *rule, struct umw_error **err)
{
        struct umw_jloc names_at = umw_jloc_key(loc, "names");
        struct umw_jloc action_at = umw_jloc_key(loc, "action");
        struct umw_jloc args_at;
        yajl_val names, args = NULL;
        int action = 0;
        int r = umw_json_object(obj, loc, err);
        if (r < 0)
                return r;
        names = umw_json_member(obj, "names");
        if (!YAJL_IS_ARRAY(names) || names->u.array.len == 0)
                return umw_json_expected(&names_at, "a non-empty array of strings", err);
        if ((r = umw_json_strv(names, &names_at, &rule->names, &rule->n_names, err)) < 0 ||
            (r = spec_read_enum(umw_json_member(obj, "action"), &action_at, seccomp_actions,
                                ARRAY_SIZE(seccomp_actions), &action, err)) < 0 ||
            (r = member_u32(obj, loc, "errnoRet", false, &rule->errno_ret, &rule->has_errno_ret,
                            err)) < 0 ||
            (r = member_typed(obj, loc, "args", true, &args, &args_at, err)) < 0)
                return r;
        rule->action = action;
        if (!args)
                return 0;
        r = spec_alloc_array(args->u.array.len, sizeof(*rule->args), &rule->args, err);
        if (r < 0)
                return r;
        rule->n_args = args->u.array.len;
        for (size_t i = 0; i < args->u.array.len; i++) {
                struct umw_jloc at = umw_jloc_index(&args_at, i);
                r = parse_seccomp_arg(args->u.array.values[i], &at, &rule->args[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_seccomp_rules(yajl_val arr, const struct umw_jloc *loc, struct spec_seccomp *sc,
                               struct umw_error **err)
{
        int r = spec_alloc_array(arr->u.array.len, sizeof(*sc->rules), &sc->rules, err);
        if (r < 0)
                return r;
        sc->n_rules = arr->u.array.len;
        for (size_t i = 0; i < arr->u.array.len; i++) {
                struct umw_jloc at = umw_jloc_index(loc, i);
                r = parse_seccomp_rule(arr->u.array.values[i], &at, &sc->rules[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* umwelt-run has no seccomp listener: a config that names one is refused
 * rather than run without it (its agent would wait for a notify fd that
 * never comes). */
static int refuse_listener(yajl_val obj, const struct umw_jloc *loc, struct umw_error **err)
{
        const char *path = NULL;
        int r = member_string(obj, loc, "listenerPath", false, &path, err);
        if (r < 0 || !path || !*path)
                return r;
        struct umw_jloc at = umw_jloc_key(loc, "listenerPath");
        return umw_json_expected(&at, "no seccomp listener (umwelt-run has none)", err);
}

int spec_parse_seccomp(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                       struct umw_error **err)
{
        struct umw_jloc action_at = umw_jloc_key(loc, "defaultAction");
        struct umw_jloc rules_at;
        yajl_val rules;
        int action = 0;
        int r = spec_alloc_array(1, sizeof(*spec->seccomp), &spec->seccomp, err);
        if (r < 0)
                return r;
        struct spec_seccomp *sc = spec->seccomp;
        r = spec_read_enum(umw_json_member(obj, "defaultAction"), &action_at, seccomp_actions,
                           ARRAY_SIZE(seccomp_actions), &action, err);
        if (r < 0)
                return r;
        sc->default_action = action;
        if ((r = member_u32(obj, loc, "defaultErrnoRet", false, &sc->default_errno_ret,
                            &sc->has_default_errno_ret, err)) < 0 ||
            (r = member_strv(obj, loc, "architectures", &sc->architectures, &sc->n_architectures,
                             err)) < 0 ||
            (r = member_strv(obj, loc, "flags", &sc->flags, &sc->n_flags, err)) < 0 ||
            (r = member_typed(obj, loc, "syscalls", true, &rules, &rules_at, err)) < 0 ||
            (r = refuse_listener(obj, loc, err)) < 0)
                return r;
        return rules ? parse_seccomp_rules(rules, &rules_at, sc, err) : 0;
}
