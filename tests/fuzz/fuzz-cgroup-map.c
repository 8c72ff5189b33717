/* libFuzzer harness for the linux.resources -> cgroup files mapping: any
 * document (its "resources" member, or the whole of it) must map or fail
 * with an error for both cgroup versions, never crash or leak. */
#include "runtime/cgroup_map.h"
#include "common/error.h"
#include "common/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void map(yajl_val resources, enum cgroup_version v)
{
        struct cgroup_settings s;
        struct umw_error *err = NULL;
        if (cgroup_map_resources(resources, v, "fuzz.json", &s, &err) == 0)
                cgroup_settings_release(&s);
        umw_error_free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';

        yajl_val tree = NULL;
        struct umw_error *err = NULL;
        if (umw_json_parse(text, "fuzz.json", &tree, &err) == 0) {
                yajl_val resources = umw_json_member(tree, "resources");
                map(resources ? resources : tree, CGROUP_V1);
                map(resources ? resources : tree, CGROUP_V2);
                yajl_tree_free(tree);
        }
        umw_error_free(err);
        free(text);
        return 0;
}
