/* libFuzzer harness for the /proc/net/unix line reader compose uses to
 * mask the host's sockets. Its input is the kernel's table, whose paths any
 * host user chooses (a socket bound to any name it may create): any bytes,
 * cut after their first newline as getline() hands compose a line, give
 * NULL or a path inside that line that starts with '/', holds no newline,
 * and follows seven fields. (A path that itself holds a newline spans two
 * such lines, which the table cannot tell apart: compose.c says what that
 * leaves.) */
#include "policy/compose.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const uint8_t *nl = memchr(data, '\n', size);
        if (nl)
                size = (size_t)(nl - data) + 1;
        char *line = malloc(size + 1);
        if (!line)
                return 0;
        memcpy(line, data, size);
        line[size] = '\0';
        size_t len = strlen(line);
        const char *path = compose_unix_socket_path(line);
        if (path) {
                if (path < line || path >= line + len || path[0] != '/' || strchr(path, '\n'))
                        abort();
                /* Seven fields, each ended by a space, come before it. */
                int spaces = 0;
                for (const char *c = line; c < path; c++)
                        spaces += *c == ' ' && (c + 1 == path || c[1] != ' ');
                if (spaces < 7)
                        abort();
        }
        free(line);
        return 0;
}
