#include "common/utf8.h"

#include <stdio.h>
#include <stdlib.h>

size_t umw_utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
        unsigned char c = p[0], lo = 0x80, hi = 0xbf;
        if (c < 0x80) {
                *cp = c;
                return 1;
        }
        size_t len = c >= 0xc2 && c <= 0xdf   ? 2
                     : c >= 0xe0 && c <= 0xef ? 3
                     : c >= 0xf0 && c <= 0xf4 ? 4
                                              : 0;
        if (!len || len > n)
                return 0;
        /* The second byte's range rules out overlong forms, surrogates
         * (U+D800..U+DFFF) and what lies past U+10FFFF. */
        if (c == 0xe0)
                lo = 0xa0;
        else if (c == 0xed)
                hi = 0x9f;
        else if (c == 0xf0)
                lo = 0x90;
        else if (c == 0xf4)
                hi = 0x8f;
        if (p[1] < lo || p[1] > hi)
                return 0;
        uint32_t v = c & (0xff >> (len + 1));
        for (size_t i = 1; i < len; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                v = v << 6 | (p[i] & 0x3f);
        }
        *cp = v;
        return len;
}

void umw_put_printable(FILE *out, const char *text, size_t n, bool tab)
{
        const unsigned char *p = (const unsigned char *)text;
        for (size_t i = 0; i < n;) {
                uint32_t cp = 0;
                size_t u = p[i] >= 0x80 ? umw_utf8_decode(p + i, n - i, &cp) : 0;
                if (u && cp >= 0xa0) { /* not a C1 control */
                        fwrite(p + i, 1, u, out);
                        i += u;
                } else if ((p[i] < 0x20 && !(tab && p[i] == '\t')) || p[i] >= 0x7f) {
                        fprintf(out, "\\x%02x", p[i++]);
                } else if (p[i] == '\\') {
                        fputs("\\\\", out);
                        i++;
                } else {
                        fputc(p[i++], out);
                }
        }
}

char *umw_printable_dup(const char *p, size_t n)
{
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (!f)
                return NULL;
        umw_put_printable(f, p, n, false);
        if (fclose(f) == 0)
                return out;
        free(out);
        return NULL;
}
