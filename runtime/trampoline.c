#include "runtime/trampoline.h"
#include "runtime/init.h"
#include "runtime/selfexe.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020
#endif

/* Every rule that names execveat allows it outright, or none does and the
 * default allows: then the trampoline's exec passes whatever its
 * arguments. A conditional rule is not evaluated here: in doubt, no. */
static bool allows_execveat(const struct spec_seccomp *s)
{
        bool named = false;
        for (size_t i = 0; i < s->n_rules; i++) {
                const struct spec_seccomp_rule *rule = &s->rules[i];
                for (size_t k = 0; k < rule->n_names; k++) {
                        if (strcmp(rule->names[k], "execveat") != 0)
                                continue;
                        if (rule->action != SPEC_SCMP_ALLOW || rule->n_args > 0)
                                return false;
                        named = true;
                }
        }
        return named || s->default_action == SPEC_SCMP_ALLOW;
}

bool trampoline_suffices(const struct spec *spec)
{
        const struct spec_namespace *pid = &spec->namespaces[SPEC_NS_PID];
        return pid->enabled && !pid->path && spec->hooks[SPEC_HOOK_CREATE_CONTAINER].count == 0 &&
               spec->hooks[SPEC_HOOK_START_CONTAINER].count == 0 &&
               !spec_annotation(spec, INIT_ANNOTATION) &&
               (!spec->seccomp || allows_execveat(spec->seccomp));
}

int trampoline_open(int *out, struct umw_error **err)
{
        _cleanup_close_ int fd = selfexe_memfd("umwelt-trampoline");
        if (fd < 0)
                return umw_fail_errno(err, "memfd for the exec trampoline");
        if (write(fd, trampoline_image, trampoline_image_size) != (ssize_t)trampoline_image_size)
                return umw_fail_errno(err, "write the exec trampoline");
        /* Sealed against writes and, where the kernel knows the seal,
         * against a chmod that would take its exec bit away. */
        if (fcntl(fd, F_ADD_SEALS, SELFEXE_SEALS | F_SEAL_EXEC) < 0 &&
            (errno != EINVAL || fcntl(fd, F_ADD_SEALS, SELFEXE_SEALS) < 0))
                return umw_fail_errno(err, "seal the exec trampoline");
        *out = TAKE_FD(fd);
        return 0;
}

char **trampoline_argv(int report_fd, const char *exe, char *const argv[])
{
        size_t n = 0;
        while (argv[n])
                n++;
        char fd[16];
        int fdlen = snprintf(fd, sizeof(fd), "%d", report_fd) + 1;
        size_t exelen = strlen(exe) + 1, vec = (n + 4) * sizeof(char *);
        char **out = malloc(vec + (size_t)fdlen + sizeof("exec ") - 1 + exelen);
        if (!out)
                return NULL;
        char *strings = (char *)out + vec;
        out[0] = memcpy(strings, fd, (size_t)fdlen);
        out[1] = strings + fdlen;
        memcpy(out[1], "exec ", sizeof("exec ") - 1);
        memcpy(out[1] + sizeof("exec ") - 1, exe, exelen);
        out[2] = (char *)exe;
        memcpy(out + 3, argv, (n + 1) * sizeof(*out));
        return out;
}
