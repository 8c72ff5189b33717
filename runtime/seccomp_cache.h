/* Compiled seccomp programs kept between runs of the runtime, so that a
 * profile libseccomp has compiled once (0.85 ms to build, 1.7 ms to compile
 * the sandbox's default) loads from a file the next time.
 *
 * Whoever can write a cache file decides the filter of the next container
 * with that profile: a file is trusted only where nobody but the runtime's
 * own user (and root) can have written it. The cache is STATE_ROOT/.seccomp,
 * a directory opened without following a symlink and used only when it is
 * owned by our effective uid and has no group or other permission; a file in
 * it only when it is a regular file with one link, owned by us, not writable
 * by group or others, and exactly as long as its header says. Such a file
 * can only have come from this uid, which also writes every container's
 * config.json in the same root (the profile exec loads), so the cache adds
 * no one who can choose a container's filter. Each file holds the whole
 * key: every input of the compilation (the profile, libseccomp's version
 * and API level, the native architecture, the kernel release), compared byte
 * for byte, so no hash collision can hand one profile another's program.
 * Anything in doubt is a miss: the program is compiled as without a cache. */
#ifndef UMW_SECCOMP_CACHE_H
#define UMW_SECCOMP_CACHE_H

#include <linux/filter.h>
#include <stddef.h>

struct spec_seccomp;

/* Everything the program libseccomp compiles for s depends on, as bytes
 * (malloc'd, *len of them); NULL on ENOMEM. */
char *seccomp_cache_key(const struct spec_seccomp *s, size_t *len);
/* The cache directory of the state root, created if missing; -1 when
 * there is none we may trust (or root is NULL). */
int seccomp_cache_open(const char *root);
/* The program stored under key, malloc'd (*n instructions); NULL on a miss. */
struct sock_filter *seccomp_cache_get(int dirfd, const char *key, size_t len, size_t *n);
/* Stores the program under key; a failure only costs the next run a
 * compilation. */
void seccomp_cache_put(int dirfd, const char *key, size_t len, const struct sock_filter *prog,
                       size_t n);

#endif
