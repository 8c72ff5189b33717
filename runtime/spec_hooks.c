/* config.json's hooks object: the commands run at each point of the
 * lifecycle. */
#include "runtime/spec.h"
#include "runtime/spec_int.h"
#include "common/json.h"

#include <limits.h>

static const char *const hook_keys[SPEC_HOOK_COUNT] = {
    [SPEC_HOOK_PRESTART] = "prestart",
    [SPEC_HOOK_CREATE_RUNTIME] = "createRuntime",
    [SPEC_HOOK_CREATE_CONTAINER] = "createContainer",
    [SPEC_HOOK_START_CONTAINER] = "startContainer",
    [SPEC_HOOK_POSTSTART] = "poststart",
    [SPEC_HOOK_POSTSTOP] = "poststop",
};

const char *spec_hook_name(enum spec_hook_kind kind)
{
        return hook_keys[kind];
}

static int parse_hook(yajl_val obj, const struct umw_jloc *loc, struct spec_hook *h,
                      struct umw_error **err)
{
        struct umw_jloc path_at = umw_jloc_key(loc, "path");
        struct umw_jloc timeout_at = umw_jloc_key(loc, "timeout");
        yajl_val timeout;
        int r;
        if ((r = umw_json_object(obj, loc, err)) < 0 ||
            (r = spec_read_absolute_path(umw_json_member(obj, "path"), &path_at, &h->path, err)) <
                0 ||
            (r = member_strv(obj, loc, "args", &h->args, NULL, err)) < 0 ||
            (r = member_strv(obj, loc, "env", &h->env, NULL, err)) < 0)
                return r;
        if (!(timeout = umw_json_member(obj, "timeout")))
                return 0;
        int64_t secs = 0;
        if ((r = umw_json_int64(timeout, &timeout_at, 1, INT_MAX, &secs, err)) < 0)
                return r;
        h->timeout = (int)secs;
        return 0;
}

int spec_parse_hooks(yajl_val obj, const struct umw_jloc *loc, struct spec *spec,
                     struct umw_error **err)
{
        for (int kind = 0; kind < SPEC_HOOK_COUNT; kind++) {
                struct spec_hooks *hooks = &spec->hooks[kind];
                struct umw_jloc list_at;
                yajl_val list;
                int r = member_typed(obj, loc, hook_keys[kind], true, &list, &list_at, err);
                if (r < 0)
                        return r;
                if (!list)
                        continue;
                r = spec_alloc_array(list->u.array.len, sizeof(*hooks->list), &hooks->list, err);
                if (r < 0)
                        return r;
                hooks->count = list->u.array.len;
                for (size_t i = 0; i < list->u.array.len; i++) {
                        struct umw_jloc at = umw_jloc_index(&list_at, i);
                        r = parse_hook(list->u.array.values[i], &at, &hooks->list[i], err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}
