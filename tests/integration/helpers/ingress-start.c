/* ingress-start [--audit FILE] [--id ID] PID PORT...: publishes PORT... of
 * the container whose init is PID on the host's loopback through
 * ingress_start(), prints the forwarder's pid and exits, leaving the
 * forwarder running. For ingress.sh. */
#include "netns/ingress.h"
#include "common/audit.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct umw_error *err)
{
        fprintf(stderr, "ingress-start: %s\n", err->msg);
        int code = (int)err->kind; /* the exit codes of umwelt-run(1) */
        umw_error_free(err);
        return code;
}

int main(int argc, char **argv)
{
        struct umw_error *err = NULL;
        const char *audit = NULL, *id = NULL;
        int i = 1;
        for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
                if (strcmp(argv[i], "--audit") == 0)
                        audit = argv[i + 1];
                else if (strcmp(argv[i], "--id") == 0)
                        id = argv[i + 1];
                else
                        break;
        }
        if (argc - i < 2 || argc - i - 1 > INGRESS_PORTS_MAX) {
                fprintf(stderr, "usage: ingress-start [--audit FILE] [--id ID] PID PORT...\n");
                return 2;
        }
        char *end;
        long pid = strtol(argv[i], &end, 10);
        if (*end || pid <= 0) {
                fprintf(stderr, "ingress-start: bad pid '%s'\n", argv[i]);
                return 2;
        }
        uint16_t ports[INGRESS_PORTS_MAX];
        size_t n = 0;
        for (int a = i + 1; a < argc; a++)
                if (ingress_port_parse("port", argv[a], &ports[n++], &err) < 0)
                        return fail(err);
        _cleanup_close_ int audit_fd = -1;
        if (audit && audit_open(audit, &audit_fd, &err) < 0)
                return fail(err);
        struct ingress_request req = {.sandbox_pid = (pid_t)pid,
                                      .ports = ports,
                                      .n_ports = n,
                                      .sandbox_id = id,
                                      .audit_fd = audit_fd};
        pid_t forwarder;
        if (ingress_start(&req, &forwarder, &err) < 0)
                return fail(err);
        printf("%d\n", (int)forwarder);
        return 0;
}
