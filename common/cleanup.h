/* Scope-bound cleanup: a variable declared with one of these is released when
 * it goes out of scope; ownership is handed on with TAKE_PTR / TAKE_FD. */
#ifndef UMW_CLEANUP_H
#define UMW_CLEANUP_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>

static inline void umw_freep(void *p)
{
        free(*(void **)p);
}

static inline void umw_closep(int *fd)
{
        if (*fd >= 0)
                close(*fd);
}

static inline void umw_fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}

static inline void umw_closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

#define _cleanup_free_     __attribute__((cleanup(umw_freep)))
#define _cleanup_close_    __attribute__((cleanup(umw_closep)))
#define _cleanup_fclose_   __attribute__((cleanup(umw_fclosep)))
#define _cleanup_closedir_ __attribute__((cleanup(umw_closedirp)))

#define TAKE_PTR(p)                                                                                \
        ({                                                                                         \
                __typeof__(p) _taken = (p);                                                        \
                (p) = NULL;                                                                        \
                _taken;                                                                            \
        })

#define TAKE_FD(fd)                                                                                \
        ({                                                                                         \
                int _taken = (fd);                                                                 \
                (fd) = -1;                                                                         \
                _taken;                                                                            \
        })

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
