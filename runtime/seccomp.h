/* linux.seccomp through libseccomp. The filter is built at create time, so a
 * bad profile fails `create`, and loaded as the last step before execve. */
#ifndef UMW_SECCOMP_H
#define UMW_SECCOMP_H

struct spec_seccomp;
struct umw_error;

struct seccomp_filter; /* opaque: a built libseccomp context and its flags */

int seccomp_filter_build(const struct spec_seccomp *s, struct seccomp_filter **out,
                         struct umw_error **err);
int seccomp_filter_load(struct seccomp_filter *f, struct umw_error **err);
void seccomp_filter_free(struct seccomp_filter *f);

#endif
