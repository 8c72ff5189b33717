/* libFuzzer harness for the layer reader (face/layer.c), which walks what
 * an agent left in its overlay's upper directory: any tree. The input is a
 * script that builds an upper and a lower directory on the real file
 * system: records of an op byte (its low bit picks the side), a name and a
 * payload. Names are the fuzzer's bytes with "/" kept, so deep trees,
 * links, whiteouts (where this process may make a 0:0 device), FIFOs,
 * opaque and redirect xattrs, modes and odd bytes all come. Whatever the
 * tree, the reader returns an error or changes that are sorted, unique,
 * relative, within the bounds, and each classified with a reason unless
 * it applies. */
#include "face/layer.h"
#include "policy/delivery_rules.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum op { OP_DIR, OP_FILE, OP_LINK, OP_WHITEOUT, OP_FIFO, OP_OPAQUE, OP_REDIRECT, OP_EXEC, OP_N };

static char top[64];

/* Removes the entry itself: never follows a link (a payload may name any
 * host file). */
static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
        (void)st, (void)flag, (void)f;
        return remove(path);
}

static void rm_top(void)
{
        rmdir(top);
}

/* One record: what it makes at name below dir; failures are the tree's
 * business (a name through a file, say), not the harness's. */
static void apply(int dir, enum op op, const char *name, const char *payload, size_t plen)
{
        switch (op) {
        case OP_DIR:
                mkdirat(dir, name, 0755);
                break;
        case OP_FILE:
        case OP_EXEC: {
                int fd = openat(dir, name,
                                O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                                op == OP_EXEC ? 0755 : 0644);
                if (fd >= 0) {
                        (void)!write(fd, payload, plen);
                        close(fd);
                }
                break;
        }
        case OP_LINK:
                symlinkat(payload, dir, name);
                break;
        case OP_WHITEOUT:
                mknodat(dir, name, S_IFCHR | 0600, makedev(0, 0));
                break;
        case OP_FIFO:
                mkfifoat(dir, name, 0600);
                break;
        case OP_OPAQUE:
        case OP_REDIRECT: {
                int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd >= 0) {
                        const char *key =
                            op == OP_OPAQUE ? "user.overlay.opaque" : "user.overlay.redirect";
                        fsetxattr(fd, key, plen ? payload : "y", plen ? plen : 1, 0);
                        close(fd);
                }
                break;
        }
        default:
                break;
        }
}

/* Records: op, name length, name, payload length, payload (NUL-free
 * copies: names and link targets cannot hold NUL). */
static void build(int upper, int lower, const uint8_t *data, size_t size)
{
        size_t i = 0;
        for (int n = 0; n < 64 && i + 2 <= size; n++) {
                uint8_t op = data[i++];
                size_t nlen = data[i++] % 64;
                if (i + nlen + 1 > size)
                        return;
                char name[65], payload[256];
                memcpy(name, data + i, nlen);
                name[nlen] = '\0';
                i += nlen;
                size_t plen = data[i++];
                if (i + plen > size)
                        plen = size - i;
                memcpy(payload, data + i, plen);
                payload[plen] = '\0';
                i += plen;
                if (!name[0] || name[0] == '/' || strstr(name, ".."))
                        continue;
                apply(op & 1 ? lower : upper, (enum op)((op >> 1) % OP_N), name, payload,
                      strlen(payload));
        }
}

static void check(const struct layer_changes *c)
{
        for (size_t i = 0; i < c->n; i++) {
                const struct layer_change *ch = &c->v[i];
                if (!ch->path[0] || ch->path[0] == '/' || strlen(ch->path) > LAYER_PATH_MAX ||
                    ch->entry.path != ch->path)
                        abort();
                if (i && strcmp(c->v[i - 1].path, ch->path) >= 0)
                        abort(); /* sorted and unique */
                struct delivery_verdict v;
                delivery_classify(NULL, &ch->entry, &v);
                if (v.bucket != DELIVERY_APPLY && !v.reason)
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (!top[0]) {
                snprintf(top, sizeof(top), "/tmp/fuzz-layer-XXXXXX");
                if (!mkdtemp(top))
                        abort();
                atexit(rm_top);
        }
        char upper_path[128], lower_path[128];
        snprintf(upper_path, sizeof(upper_path), "%s/upper", top);
        snprintf(lower_path, sizeof(lower_path), "%s/lower", top);
        if (mkdir(upper_path, 0755) < 0 || mkdir(lower_path, 0755) < 0)
                abort();
        int upper = open(upper_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int lower = open(lower_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (upper < 0 || lower < 0)
                abort();
        build(upper, lower, data, size);
        struct layer_changes c;
        struct umw_error *err = NULL;
        if (layer_read_changes(upper, lower, &c, &err) == 0) {
                check(&c);
                layer_changes_free(&c);
        }
        umw_error_freep(&err);
        close(upper);
        close(lower);
        nftw(upper_path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        nftw(lower_path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        return 0;
}
