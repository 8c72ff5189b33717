/* A sandbox's live grants on disk (relay_int.h): RELAYDIR/sandboxes/ID/
 * grants, one line a grant, "MOUNT-ID RW FILE HASH PATH", rewritten whole
 * (temp file and rename) at every grant and revoke, so that a relay
 * started after one that was killed knows what the sandbox holds and can
 * still revoke it. Beside it "ports", a port published live a line (its
 * forwarder outlives a killed relay, so the next one still lists it and
 * refuses it twice), and "pending", "ID HASH" a request a human is
 * asked, rewritten as they come and go: the next relay denies, in the
 * audit log, what a killed one left undecided; and RELAY_EGRESS_FILE,
 * an egress rule opened live a line, which the face reads too (it writes
 * the gateway's rules: sandbox_relay_egress). The directory is the
 * relay's (0700, in no sandbox). */
#include "face/relay_int.h"
#include "face/sandbox_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GRANTS_FILE  "grants"
#define PENDING_FILE "pending"
#define PORTS_FILE   "ports"
#define PENDING_LINE (RELAY_ID_MAX + RELAY_HASH_HEX + 3)
#define LINE_MAX_    (RELAY_PATH_MAX + RELAY_HASH_HEX + 48)

int relay_live_save(const struct relay_sandbox *sb, struct umw_error **err)
{
        _cleanup_free_ char *text = malloc(sb->n_live * LINE_MAX_ + 1);
        size_t n = 0;
        if (!text)
                return umw_fail_sys(err, ENOMEM, "grants of %s", sb->id);
        text[0] = '\0';
        for (size_t i = 0; i < sb->n_live; i++) {
                const struct relay_live *l = &sb->live[i];
                n += (size_t)snprintf(text + n, LINE_MAX_ + 1, "%" PRIu64 " %d %d %s %s\n",
                                      l->mnt_id, l->rw, l->is_file, l->hash, l->path);
        }
        return umw_write_file_atomic(sb->dir, GRANTS_FILE, text, n, 0600, err);
}

/* One line into l: every field present and in bounds, the path absolute. */
static bool parse_line(char *line, struct relay_live *l)
{
        int rw, file, at = 0;
        char hash[RELAY_HASH_HEX + 1];
        if (sscanf(line, "%" SCNu64 " %d %d %64s %n", &l->mnt_id, &rw, &file, hash, &at) != 4 ||
            at == 0 || line[at] != '/' || strlen(line + at) > RELAY_PATH_MAX ||
            strlen(hash) != RELAY_HASH_HEX)
                return false;
        l->rw = rw == 1;
        l->is_file = file == 1;
        memcpy(l->hash, hash, sizeof(l->hash));
        memcpy(l->path, line + at, strlen(line + at) + 1);
        return true;
}

void relay_live_load(struct relay_sandbox *sb)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        size_t len = 0;
        if (umw_read_file_at(sb->dir, GRANTS_FILE, RELAY_GRANTS_MAX * LINE_MAX_, &text, &len,
                             &err) < 0)
                return; /* none yet */
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line && sb->n_live < RELAY_GRANTS_MAX;
             line = strtok_r(NULL, "\n", &save)) {
                struct relay_live *more = realloc(sb->live, (sb->n_live + 1) * sizeof(*more));
                if (!more)
                        return;
                sb->live = more;
                if (!parse_line(line, &sb->live[sb->n_live])) {
                        umw_log(UMW_LOG_WARNING, "sandbox %s: a bad line in its grants file",
                                sb->id);
                        continue;
                }
                sb->n_live++;
        }
}

int relay_pending_save(const struct relay *R, const struct relay_sandbox *sb,
                       struct umw_error **err)
{
        char text[RELAY_PENDING_MAX * PENDING_LINE + 1];
        size_t n = 0;
        text[0] = '\0';
        for (size_t i = 0; i < ARRAY_SIZE(R->pending) && n < RELAY_PENDING_MAX * PENDING_LINE;
             i++) {
                const struct relay_pending *p = R->pending[i];
                if (p && p->conn->sb == sb)
                        n += (size_t)snprintf(text + n, sizeof(text) - n, "%" PRIu64 " %s\n", p->id,
                                              p->hash);
        }
        return umw_write_file_atomic(sb->dir, PENDING_FILE, text, n, 0600, err);
}

void relay_pending_left(struct relay_sandbox *sb, relay_left_fn left)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        size_t len = 0;
        if (umw_read_file_at(sb->dir, PENDING_FILE, RELAY_PENDING_MAX * PENDING_LINE, &text, &len,
                             &err) < 0)
                return; /* none */
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char id[RELAY_ID_MAX + 1], hash[RELAY_HASH_HEX + 1];
                if (sscanf(line, "%20[0-9] %64[0-9a-f]", id, hash) == 2 &&
                    strlen(hash) == RELAY_HASH_HEX)
                        left(sb, id, hash);
        }
        (void)unlinkat(sb->dir, PENDING_FILE, 0);
}

int relay_ports_save(const struct relay_sandbox *sb, struct umw_error **err)
{
        char text[RELAY_PORTS_MAX * 6 + 1];
        size_t n = 0;
        text[0] = '\0';
        for (size_t i = 0; i < sb->n_ports; i++)
                n += (size_t)snprintf(text + n, sizeof(text) - n, "%u\n", (unsigned)sb->ports[i]);
        return umw_write_file_atomic(sb->dir, PORTS_FILE, text, n, 0600, err);
}

void relay_ports_load(struct relay_sandbox *sb)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        size_t len = 0;
        if (umw_read_file_at(sb->dir, PORTS_FILE, RELAY_PORTS_MAX * 6, &text, &len, &err) < 0)
                return; /* none */
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line && sb->n_ports < RELAY_PORTS_MAX;
             line = strtok_r(NULL, "\n", &save)) {
                char *end;
                unsigned long v = strtoul(line, &end, 10);
                if (*end || v < 1 || v > 65535 || line[0] < '0' || line[0] > '9') {
                        umw_log(UMW_LOG_WARNING, "sandbox %s: a bad line in its ports file",
                                sb->id);
                        continue;
                }
                sb->ports[sb->n_ports++] = (uint16_t)v;
        }
}

int relay_egress_save(const struct relay_sandbox *sb, struct umw_error **err)
{
        _cleanup_free_ char *text = malloc(sb->n_egress * (RELAY_RULE_MAX + 1) + 1);
        size_t n = 0;
        if (!text)
                return umw_fail_sys(err, ENOMEM, "egress rules of %s", sb->id);
        text[0] = '\0';
        for (size_t i = 0; i < sb->n_egress; i++)
                n += (size_t)snprintf(text + n, RELAY_RULE_MAX + 2, "%s\n", sb->egress[i]);
        return umw_write_file_atomic(sb->dir, RELAY_EGRESS_FILE, text, n, 0600, err);
}

void relay_egress_load(struct relay_sandbox *sb)
{
        _cleanup_error_ struct umw_error *err = NULL;
        if (sandbox_relay_egress_at(sb->dir, &sb->egress, &err) < 0) {
                umw_log(UMW_LOG_WARNING, "sandbox %s: %s", sb->id, err->msg);
                return;
        }
        while (sb->egress && sb->egress[sb->n_egress])
                sb->n_egress++;
}
