/* umwelt-mcp: for now only its install and uninstall verbs
 * (mcp/install.h); the MCP server itself joins here (issue 16). */
#include "mcp/install.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        if (argc < 2 || (strcmp(argv[1], "install") != 0 && strcmp(argv[1], "uninstall") != 0)) {
                fputs("usage: umwelt-mcp install|uninstall opencode|claude|codex [--project DIR] "
                      "[--dry-run]\n",
                      stderr);
                return 2;
        }
        /* The entry a harness starts names this binary by its real path. */
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n < 0) {
                perror("umwelt-mcp: /proc/self/exe");
                return 1;
        }
        self[n] = '\0';
        return mcp_install_main(argc - 1, argv + 1, self);
}
