/* The cheap way to keep the host's binary out of a container (selfexe.h):
 * instead of re-executing the whole runtime from a read-only mount before
 * create (an exec of umwelt-run and its start-up again, ~1 ms), the init
 * execs its workload through the exec trampoline (exec_trampoline.c), a
 * sealed memfd of a few hundred bytes. Then nothing inside ever runs the
 * host's binary: the workload's execve resolves /proc/self/exe to the
 * trampoline, and /proc/PID/exe of the init names the runtime only while
 * the init is undumpable and alone in its namespaces. */
#ifndef UMW_TRAMPOLINE_H
#define UMW_TRAMPOLINE_H

#include <stdbool.h>
#include <stddef.h>

struct spec;
struct umw_error;

/* The trampoline's ELF image, generated from exec_trampoline.c at build. */
extern const unsigned char trampoline_image[];
extern const size_t trampoline_image_size;

/* Whether the trampoline keeps this container's processes from the host's
 * binary as well as the re-exec would. Only when nothing but the workload's
 * own execve runs inside from the runtime's image and nothing there can
 * reach the init before it: a pid namespace of the container's own (no
 * process of another container can see the waiting init), no
 * createContainer or startContainer hook (exec'd inside from the runtime's
 * image), no pause init (an image of the runtime for the container's whole
 * life), and a seccomp filter that lets execveat through unconditionally
 * (the trampoline is exec'd with the workload's filter on). In doubt, no:
 * the re-exec stays the rule. */
bool trampoline_suffices(const struct spec *spec);
/* A sealed memfd (O_CLOEXEC) holding the trampoline, for execveat. */
int trampoline_open(int *fd, struct umw_error **err);
/* The argv that has the trampoline exec exe with argv and, when that
 * fails, report "exec <exe>" and its errno on report_fd (SYNC_EXEC_ERROR):
 * one malloc'd block, strings included, or NULL without memory. Made before
 * the workload's walls go up, so the exec itself allocates nothing. */
char **trampoline_argv(int report_fd, const char *exe, char *const argv[]);

#endif
