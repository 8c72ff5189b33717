/* libFuzzer harness for the config.json and process.json parsers, and for the
 * mount options each loaded mount carries: any input must either load or fail
 * with an error, never crash or leak. */
#include "runtime/mounts.h"
#include "runtime/spec.h"
#include "common/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse_mount_options(const struct spec *spec)
{
        for (size_t i = 0; i < spec->n_mounts; i++) {
                struct mount_opts o;
                struct umw_error *err = NULL;
                if (mount_opts_parse(spec->mounts[i].options, spec->mounts[i].n_options, &o,
                                     &err) == 0)
                        mount_opts_release(&o);
                umw_error_free(err);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';

        struct spec *spec = NULL;
        struct umw_error *err = NULL;
        if (spec_load(text, "fuzz.json", &spec, &err) == 0) {
                parse_mount_options(spec);
                spec_free(spec);
        }
        umw_error_free(err);

        yajl_val tree = NULL;
        struct spec_process p;
        err = NULL;
        if (spec_load_process(text, "fuzz.json", &tree, &p, &err) == 0) {
                spec_process_release(&p);
                yajl_tree_free(tree);
        }
        umw_error_free(err);
        free(text);
        return 0;
}
