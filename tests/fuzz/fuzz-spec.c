/* libFuzzer harness for the config.json and process.json parsers: any input
 * must either load or fail with an error, never crash or leak. */
#include "runtime/spec.h"
#include "src/common/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';

        struct spec *spec = NULL;
        struct umw_error *err = NULL;
        if (spec_load(text, "fuzz.json", &spec, &err) == 0)
                spec_free(spec);
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
