#include "sync.h"
#include "src/common/error.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

struct sync_packet {
        int32_t type;
        int32_t value; /* a pid, or the error's class */
        int32_t errnum;
        char msg[2048];
};

int sync_send(int fd, enum sync_msg type, int value, struct umw_error **err)
{
        struct sync_packet p = {.type = type, .value = value};
        if (send(fd, &p, offsetof(struct sync_packet, msg), MSG_NOSIGNAL) < 0)
                return umw_fail_errno(err, "sync with container init");
        return 0;
}

void sync_send_error(int fd, const struct umw_error *failure)
{
        struct sync_packet p = {.type = SYNC_ERROR};
        if (failure) {
                p.value = failure->kind;
                p.errnum = failure->errnum;
                strncpy(p.msg, failure->msg, sizeof(p.msg) - 1);
        }
        size_t len = offsetof(struct sync_packet, msg) + strlen(p.msg) + 1;
        /* The peer may be gone already; nothing more can be said then. */
        (void)!send(fd, &p, len, MSG_NOSIGNAL);
}

int sync_expect(int fd, enum sync_msg type, const char *what, int *value, struct umw_error **err)
{
        struct sync_packet p;
        ssize_t n;
        do
                n = recv(fd, &p, sizeof(p), 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return umw_fail_errno(err, "sync with %s", what);
        if (n < (ssize_t)offsetof(struct sync_packet, msg))
                return umw_fail(err, UMW_EXIT_FAILURE, EPIPE, "%s exited unexpectedly", what);
        if (p.type == SYNC_ERROR) {
                p.msg[sizeof(p.msg) - 1] = '\0';
                return umw_fail(err, (enum umw_exit)p.value, p.errnum > 0 ? p.errnum : EINVAL, "%s",
                                p.msg);
        }
        if (p.type != (int32_t)type)
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                "%s: unexpected message %d (wanted %d)", what, p.type, type);
        if (value)
                *value = p.value;
        return 0;
}
