#include "runtime/seccomp_cache.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/fdio.h"
#include "common/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#define CACHE_DIR ".seccomp" /* no container id starts with a dot */
/* Distinct profiles are few (the sandbox's default, a runtime's default per
 * version); past this many files the cache starts over. */
#define CACHE_MAX_FILES 64

static const char cache_magic[8] = "UMWSCMP1";

struct cache_head {
        char magic[8];
        uint32_t key_len;
        uint32_t n_insns;
};

/* Decimal numbers and strings written by hand: the key is ~15 kB of them
 * at every start, and printf's format parsing was most of its cost. */
static void put_u(FILE *f, unsigned long long v)
{
        char digits[24];
        size_t i = sizeof(digits);
        do
                digits[--i] = (char)('0' + v % 10);
        while ((v /= 10) != 0);
        fwrite_unlocked(digits + i, 1, sizeof(digits) - i, f);
}

static void put_d(FILE *f, long long v)
{
        if (v < 0)
                fputc_unlocked('-', f);
        put_u(f, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v);
}

static void put_lit(FILE *f, const char *s)
{
        fputs_unlocked(s, f);
}

/* A string with its length in front: no two lists of strings print alike. */
static void put_str(FILE *f, const char *s)
{
        size_t n = strlen(s);
        put_u(f, n);
        fputc_unlocked(':', f);
        fwrite_unlocked(s, 1, n, f);
        fputc_unlocked('\n', f);
}

/* "rule ACTION HAS_ERRNO ERRNO names N", the names, "args N", then
 * "INDEX OP VALUE VALUE_TWO" for each argument. */
static void put_rule(FILE *f, const struct spec_seccomp_rule *r)
{
        put_lit(f, "rule ");
        put_d(f, (int)r->action);
        fputc_unlocked(' ', f);
        put_d(f, r->has_errno_ret);
        fputc_unlocked(' ', f);
        put_u(f, r->errno_ret);
        put_lit(f, " names ");
        put_u(f, r->n_names);
        fputc_unlocked('\n', f);
        for (size_t i = 0; i < r->n_names; i++)
                put_str(f, r->names[i]);
        put_lit(f, "args ");
        put_u(f, r->n_args);
        fputc_unlocked('\n', f);
        for (size_t i = 0; i < r->n_args; i++) {
                put_u(f, r->args[i].index);
                fputc_unlocked(' ', f);
                put_d(f, (int)r->args[i].op);
                fputc_unlocked(' ', f);
                put_u(f, r->args[i].value);
                fputc_unlocked(' ', f);
                put_u(f, r->args[i].value_two);
                fputc_unlocked('\n', f);
        }
}

char *seccomp_cache_key(const struct spec_seccomp *s, size_t *len)
{
        struct utsname u;
        if (uname(&u) < 0)
                return NULL;
        char *buf = NULL;
        FILE *f = open_memstream(&buf, len);
        if (!f)
                return NULL;
        const struct scmp_version *v = seccomp_version();
        /* 2: programs built as a binary tree (seccomp_build_ctx). */
        fprintf(f, "umwelt seccomp cache 2\nlibseccomp %u.%u.%u api %u native %u\n", v->major,
                v->minor, v->micro, seccomp_api_get(), seccomp_arch_native());
        put_str(f, u.release);
        put_str(f, u.version);
        fprintf(f, "default %d %d %u\narchitectures %zu\n", (int)s->default_action,
                s->has_default_errno_ret, s->default_errno_ret, s->n_architectures);
        for (size_t i = 0; i < s->n_architectures; i++)
                put_str(f, s->architectures[i]);
        fprintf(f, "flags %zu\n", s->n_flags);
        for (size_t i = 0; i < s->n_flags; i++)
                put_str(f, s->flags[i]);
        fprintf(f, "rules %zu\n", s->n_rules);
        for (size_t i = 0; i < s->n_rules; i++)
                put_rule(f, &s->rules[i]);
        bool failed = ferror(f);
        if (fclose(f) != 0 || failed) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* FNV-1a: only names the file; the key inside decides. */
static void cache_name(const char *key, size_t len, char name[17])
{
        uint64_t h = 0xcbf29ce484222325ULL;
        for (size_t i = 0; i < len; i++)
                h = (h ^ (unsigned char)key[i]) * 0x100000001b3ULL;
        snprintf(name, 17, "%016llx", (unsigned long long)h);
}

static bool owned_by_us_only(const struct stat *st, mode_t forbidden)
{
        return st->st_uid == geteuid() && (st->st_mode & forbidden) == 0;
}

int seccomp_cache_open(const char *root)
{
        if (!root)
                return -1;
        _cleanup_close_ int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0 || (mkdirat(rootfd, CACHE_DIR, 0700) < 0 && errno != EEXIST))
                return -1;
        _cleanup_close_ int fd =
            openat(rootfd, CACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return -1;
        if (!owned_by_us_only(&st, 077)) {
                umw_debug("seccomp cache %s/" CACHE_DIR " not used: owner %u, mode %03o", root,
                          (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
                return -1;
        }
        return TAKE_FD(fd);
}

/* The whole file at name when nobody but us can have written it. */
static char *read_trusted(int dirfd, const char *name, size_t max, size_t *size)
{
        _cleanup_close_ int fd =
            openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return NULL;
        if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || !owned_by_us_only(&st, 022) ||
            st.st_size <= 0 || (size_t)st.st_size > max) {
                umw_debug("seccomp cache file %s not used", name);
                return NULL;
        }
        _cleanup_free_ char *buf = malloc((size_t)st.st_size);
        if (!buf || umw_read_all(fd, buf, (size_t)st.st_size) != st.st_size)
                return NULL;
        *size = (size_t)st.st_size;
        return TAKE_PTR(buf);
}

struct sock_filter *seccomp_cache_get(int dirfd, const char *key, size_t len, size_t *n)
{
        char name[17];
        cache_name(key, len, name);
        size_t max = sizeof(struct cache_head) + len + BPF_MAXINSNS * sizeof(struct sock_filter);
        size_t size = 0;
        _cleanup_free_ char *buf = read_trusted(dirfd, name, max, &size);
        if (!buf)
                return NULL;
        struct cache_head h;
        if (size < sizeof(h))
                return NULL;
        memcpy(&h, buf, sizeof(h));
        if (memcmp(h.magic, cache_magic, sizeof(h.magic)) != 0 || h.key_len != len ||
            h.n_insns == 0 || h.n_insns > BPF_MAXINSNS ||
            size != sizeof(h) + len + h.n_insns * sizeof(struct sock_filter) ||
            memcmp(buf + sizeof(h), key, len) != 0)
                return NULL;
        struct sock_filter *prog = malloc(h.n_insns * sizeof(*prog));
        if (!prog)
                return NULL;
        memcpy(prog, buf + sizeof(h) + len, h.n_insns * sizeof(*prog));
        *n = h.n_insns;
        return prog;
}

/* Starts over when the cache is full (stale temporary files go too). */
static void evict_if_full(int dirfd)
{
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_closedir_ DIR *dir = fd < 0 ? NULL : fdopendir(fd);
        if (!dir) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        size_t count = 0;
        struct dirent *e;
        while ((e = readdir(dir)))
                count += e->d_type == DT_REG;
        if (count < CACHE_MAX_FILES)
                return;
        rewinddir(dir);
        while ((e = readdir(dir)))
                if (e->d_type == DT_REG)
                        unlinkat(dirfd, e->d_name, 0);
}

void seccomp_cache_put(int dirfd, const char *key, size_t len, const struct sock_filter *prog,
                       size_t n)
{
        if (n == 0 || n > BPF_MAXINSNS)
                return;
        evict_if_full(dirfd);
        char name[17], tmp[64];
        cache_name(key, len, name);
        snprintf(tmp, sizeof(tmp), ".tmp.%d.%s", (int)getpid(), name);
        _cleanup_close_ int fd =
            openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return;
        struct cache_head h = {.key_len = (uint32_t)len, .n_insns = (uint32_t)n};
        memcpy(h.magic, cache_magic, sizeof(h.magic));
        struct iovec iov[] = {
            {&h, sizeof(h)}, {(void *)key, len}, {(void *)prog, n * sizeof(*prog)}};
        size_t total = iov[0].iov_len + iov[1].iov_len + iov[2].iov_len;
        ssize_t w = writev(fd, iov, 3);
        if (w != (ssize_t)total || renameat(dirfd, tmp, dirfd, name) < 0) {
                umw_debug("seccomp cache file %s not written: %s", name,
                          w < 0 ? strerror(errno) : "short write or rename failed");
                unlinkat(dirfd, tmp, 0);
        }
}
