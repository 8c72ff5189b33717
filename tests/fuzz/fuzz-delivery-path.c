/* libFuzzer harness for the delivery rules, which judge the names an
 * agent's layer holds: any bytes. The first byte picks the entry's type and
 * flags, the rest is the path. Whatever it is, a verdict has a reason
 * unless it applies, and a path with a part that is .git in ASCII case and
 * trailing dots or spaces (the simplest spellings) is never delivered. */
#include "policy/delivery_rules.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool simple_dotgit(const char *p, size_t n)
{
        for (size_t start = 0; start <= n;) {
                const char *slash = memchr(p + start, '/', n - start);
                size_t end = slash ? (size_t)(slash - p) : n;
                size_t k = end;
                while (k > start && (p[k - 1] == '.' || p[k - 1] == ' '))
                        k--;
                if (k - start == 4 && p[start] == '.' &&
                    tolower((unsigned char)p[start + 1]) == 'g' &&
                    tolower((unsigned char)p[start + 2]) == 'i' &&
                    tolower((unsigned char)p[start + 3]) == 't')
                        return true;
                start = end + 1;
        }
        return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        static const mode_t types[] = {S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO, 0, S_IFREG | 0755};
        struct delivery_entry e = {
            .path = (const char *)data + 1,
            .len = size - 1,
            .mode = types[data[0] % 6] | (data[0] & 0x40 ? 0 : 0644),
            .base_mode = data[0] & 0x80 ? S_IFREG | 0644 : 0,
            .binary = data[0] & 0x20,
            .size = data[0] & 0x10 ? DELIVERY_SIZE_LIMIT + 1 : 1,
        };
        struct delivery_verdict v;
        delivery_classify(NULL, &e, &v);
        if ((v.bucket == DELIVERY_APPLY) != (v.reason == NULL))
                abort();
        if (simple_dotgit(e.path, e.len) && v.bucket != DELIVERY_REJECT)
                abort();
        return 0;
}
