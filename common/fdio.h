/* Whole reads and writes on fds, and the write-temp-then-rename that every
 * state file goes through so that no reader ever sees half a file. */
#ifndef UMW_FDIO_H
#define UMW_FDIO_H

#include <stddef.h>
#include <sys/types.h>

struct umw_error;

/* Loops over short writes and EINTR. Returns 0 or -errno. */
int umw_write_all(int fd, const void *buf, size_t len);
/* Reads until EOF or len bytes; returns the count or -errno. */
ssize_t umw_read_all(int fd, void *buf, size_t len);
/* Reads fd to its end into a NUL-terminated malloc'd buffer; name is for
 * messages, max bounds the size. */
int umw_read_fd(int fd, const char *name, size_t max, char **out, size_t *len,
                struct umw_error **err);
/* Reads a whole file (relative to dirfd, or AT_FDCWD) into a NUL-terminated
 * malloc'd buffer. max bounds the size: larger is an error. */
int umw_read_file_at(int dirfd, const char *path, size_t max, char **out, size_t *len,
                     struct umw_error **err);
/* Writes name in dirfd through ".name.tmp" + rename, mode as given. */
int umw_write_file_atomic(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
                          struct umw_error **err);
/* The bare decimal pid in path, written atomically (conmon reads it while
 * it may be written); NULL path: nothing to do. */
int umw_write_pid_file(const char *path, pid_t pid, struct umw_error **err);
/* name opened beneath dir_fd (openat2: no "..", no absolute path, no
 * symlink or magic link on the way or at the end), with flags plus
 * O_NOFOLLOW|O_CLOEXEC. Returns the fd or -errno. */
int umw_open_beneath(int dir_fd, const char *name, int flags);
/* Closes *fd if open and marks it closed. */
void umw_close_fdp(int *fd);
/* Closes every fd >= lowfd except the ones listed. */
int umw_close_fds_from(int lowfd, const int *keep, size_t nkeep);

#endif
