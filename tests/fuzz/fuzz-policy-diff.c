/* libFuzzer harness for policy diff, which prints a project's .umwelt.toml
 * (the agent's bytes) against the accepted copy on the user's terminal. The
 * input is both files: the first two bytes give the accepted copy's length.
 * Whatever they hold, the output must be valid UTF-8 with no control byte
 * but newline and tab and no C1 control (U+0080..U+009F), so that no line
 * can move the cursor over another. */
#include "face/project_policy.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <locale.h>
#include <string.h>
#include <wchar.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless out is well-formed UTF-8 free of controls but '\n' and
 * '\t', decoded by the C library's own UTF-8 locale (an oracle apart from
 * the code under test). */
static void check_terminal_safe(const char *p, size_t n)
{
        mbstate_t st = {0};
        for (size_t i = 0; i < n;) {
                wchar_t wc;
                size_t k = mbrtowc(&wc, p + i, n - i, &st);
                if (k == (size_t)-1 || k == (size_t)-2)
                        abort();
                if (k == 0)
                        abort(); /* a NUL byte */
                if ((wc < 0x20 && wc != L'\n' && wc != L'\t') || (wc >= 0x7f && wc < 0xa0))
                        abort();
                i += k;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 2)
                return 0;
        static bool utf8;
        if (!utf8 && !setlocale(LC_CTYPE, "C.UTF-8"))
                abort();
        utf8 = true;
        size_t cut = ((size_t)data[0] << 8 | data[1]) % (size - 1);
        struct project_policy p = {
            .file = "fuzz/.umwelt.toml",
            .present = true,
            .text = (char *)data + 2 + cut,
            .len = size - 2 - cut,
            .has_accepted = data[0] & 1,
            .accepted = (char *)data + 2,
            .accepted_len = cut,
        };
        char *out = NULL;
        size_t out_len = 0;
        FILE *f = open_memstream(&out, &out_len);
        if (!f)
                return 0;
        project_policy_diff(&p, f, NULL);
        fclose(f);
        check_terminal_safe(out, out_len);
        free(out);
        return 0;
}
