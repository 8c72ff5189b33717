/* Remembered grants (face/remembered.h). */
#include "face/remembered.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILE_MAX (REMEMBERED_MAX * (PATH_MAX + 4))

static int state_of(const char *project_id, char **dir, struct umw_error **err)
{
        int r = umw_state_dir(project_id, dir, err);
        return r < 0 ? r : umw_mkdir_p(*dir, 0700, 0700, err);
}

static int parse(struct remembered *out, const char *file, struct umw_error **err)
{
        char *save = NULL;
        size_t lineno = 0;
        for (char *line = strtok_r(out->text, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
                lineno++;
                bool rw = strncmp(line, "rw /", 4) == 0;
                if ((!rw && strncmp(line, "ro /", 4) != 0) || out->n == REMEMBERED_MAX)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "%s:%zu: expected \"ro PATH\" or \"rw PATH\" (at most %d)",
                                        file, lineno, REMEMBERED_MAX);
                out->rw[out->n] = rw;
                out->path[out->n++] = line + 3;
        }
        return 0;
}

int remembered_read(const char *project_id, struct remembered *out, struct umw_error **err)
{
        _cleanup_free_ char *dir = NULL, *file = NULL;
        *out = (struct remembered){0};
        int r = umw_state_dir(project_id, &dir, err);
        if (r < 0)
                return r;
        if (asprintf(&file, "%s/%s", dir, REMEMBERED_FILE) < 0) {
                file = NULL;
                return umw_fail_sys(err, ENOMEM, "remembered grants");
        }
        _cleanup_error_ struct umw_error *missing = NULL;
        r = umw_read_file_at(AT_FDCWD, file, FILE_MAX, &out->text, NULL, &missing);
        if (r < 0 && missing->errnum == ENOENT)
                return 0;
        if (r < 0) {
                *err = TAKE_PTR(missing);
                return r;
        }
        if ((r = parse(out, file, err)) < 0)
                remembered_free(out);
        return r;
}

void remembered_free(struct remembered *r)
{
        free(r->text);
        *r = (struct remembered){0};
}

int remembered_add(const char *project_id, const char *path, bool rw, struct umw_error **err)
{
        struct remembered had;
        _cleanup_free_ char *dir = NULL, *text = NULL;
        int r;
        if ((r = remembered_read(project_id, &had, err)) < 0)
                return r;
        size_t n = 0, cap = (had.n + 1) * (PATH_MAX + 4);
        if ((r = state_of(project_id, &dir, err)) < 0 || !(text = malloc(cap))) {
                remembered_free(&had);
                return r < 0 ? r : umw_fail_sys(err, ENOMEM, "remembered grants");
        }
        for (size_t i = 0; i < had.n; i++)
                if (strcmp(had.path[i], path) != 0)
                        n += (size_t)snprintf(text + n, cap - n, "%s %s\n", had.rw[i] ? "rw" : "ro",
                                              had.path[i]);
        n += (size_t)snprintf(text + n, cap - n, "%s %s\n", rw ? "rw" : "ro", path);
        remembered_free(&had);
        _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return umw_fail_errno(err, "%s", dir);
        return umw_write_file_atomic(dfd, REMEMBERED_FILE, text, n, 0600, err);
}
