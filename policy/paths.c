#include "policy/paths.h"
#include "common/cleanup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool path_within(const char *path, const char *base)
{
        size_t n = strlen(base);
        if (n == 1 && base[0] == '/')
                return true;
        return strncmp(path, base, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool path_strictly_below(const char *path, const char *base)
{
        return path_within(path, base) && strcmp(path, base) != 0;
}

char *path_clean(const char *path)
{
        size_t len = strlen(path);
        char *out = malloc(len + 2);
        if (!out)
                return NULL;
        size_t o = 0;
        for (const char *p = path; *p;) {
                while (*p == '/')
                        p++;
                size_t n = strcspn(p, "/");
                if (n == 0 || (n == 1 && p[0] == '.')) {
                        p += n;
                        continue;
                }
                if (n == 2 && p[0] == '.' && p[1] == '.') {
                        while (o > 0 && out[--o] != '/')
                                ;
                } else {
                        out[o++] = '/';
                        memcpy(out + o, p, n);
                        o += n;
                }
                p += n;
        }
        if (o == 0)
                out[o++] = '/';
        out[o] = '\0';
        return out;
}

char *path_resolve_prefix(const char *clean)
{
        _cleanup_free_ char *head = strdup(clean);
        if (!head)
                return NULL;
        const char *tail = "";
        for (;;) {
                _cleanup_free_ char *real = realpath(head, NULL);
                if (real) {
                        char *out = NULL;
                        bool root = strcmp(real, "/") == 0;
                        if (asprintf(&out, "%s%s", root && tail[0] ? "" : real, tail) < 0)
                                return NULL;
                        return out;
                }
                if (errno == ENOMEM)
                        return NULL;
                char *slash = strrchr(head, '/');
                tail = clean + (slash - head);
                slash[slash == head ? 1 : 0] = '\0';
        }
}
