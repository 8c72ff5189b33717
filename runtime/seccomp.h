/* linux.seccomp through libseccomp. The filter is built at create time, so a
 * bad profile fails `create`, and loaded as the last step before execve. */
#ifndef UMW_SECCOMP_H
#define UMW_SECCOMP_H

#include <stddef.h>

struct sock_filter;
struct spec_seccomp;
struct umw_error;

/* opaque: the BPF program libseccomp compiles for a profile and the flags
 * its seccomp_load would pass to seccomp() with it */
struct seccomp_filter;

/* Compiles s with libseccomp. */
int seccomp_filter_build(const struct spec_seccomp *s, struct seccomp_filter **out,
                         struct umw_error **err);
/* The same program, taken from the cache of the state root cache_root when
 * this profile was compiled there before, else compiled and stored there
 * (seccomp_cache.h says when a cache file is trusted). */
int seccomp_filter_build_cached(const struct spec_seccomp *s, const char *cache_root,
                                struct seccomp_filter **out, struct umw_error **err);
/* seccomp(SECCOMP_SET_MODE_FILTER) with the program, as seccomp_load does. */
int seccomp_filter_load(const struct seccomp_filter *f, struct umw_error **err);
void seccomp_filter_free(struct seccomp_filter *f);
/* The program the kernel is given (*n instructions). */
const struct sock_filter *seccomp_filter_program(const struct seccomp_filter *f, size_t *n);

#endif
