/* A container that exists, found by its id: its state, the config saved at
 * create, its hooks run from outside, and the verbs that only read or adjust
 * it (state, list, ps, pause, resume, update). create, start and run, kill
 * and delete have files of their own (container_int.h). */
#include "runtime/container.h"
#include "runtime/container_int.h"
#include "runtime/cgroup.h"
#include "runtime/hooks.h"
#include "runtime/spec.h"
#include "runtime/state.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

void ctr_found_release(struct found *f)
{
        state_release(&f->st);
        umw_close_fdp(&f->dirfd);
        umw_close_fdp(&f->rootfd);
}

int ctr_find(const struct runtime_opts *rt, const char *id, struct found *f, struct umw_error **err)
{
        *f = (struct found){.rootfd = -1, .dirfd = -1};
        int r;
        if ((r = state_check_id(id, err)) < 0 ||
            (r = state_root_open(rt->root, false, &f->rootfd, err)) < 0 ||
            (r = state_dir_open(f->rootfd, id, &f->dirfd, err)) < 0 ||
            (r = state_read(f->dirfd, &f->st, err)) < 0) {
                ctr_found_release(f);
                return r;
        }
        f->status = state_status(&f->st, f->dirfd);
        return 0;
}

int ctr_load_saved_spec(const struct found *f, struct spec **spec, struct umw_error **err)
{
        _cleanup_free_ char *text = NULL;
        char name[STATE_CONFIG_NAME_MAX];
        state_config_name(f->st.id, name);
        int r = umw_read_file_at(f->dirfd, STATE_CONFIG, CONFIG_MAX, &text, NULL, err);
        if (r < 0)
                return r;
        return spec_load(text, name, spec, err);
}

/* The container's config for its hooks: the one in memory (run created it)
 * or the copy saved at create, loaded into *owned. */
int ctr_found_spec(const struct found *f, const struct spec **spec, struct spec **owned,
                   struct umw_error **err)
{
        *owned = NULL;
        if (f->spec) {
                *spec = f->spec;
                return 0;
        }
        int r = ctr_load_saved_spec(f, owned, err);
        *spec = *owned;
        return r;
}

int ctr_run_hooks_outside(const struct found *f, const struct spec *spec, enum spec_hook_kind kind,
                          enum container_status status, struct umw_error **err)
{
        if (!spec->hooks[kind].count)
                return 0;
        size_t len = 0;
        _cleanup_free_ char *json = state_to_json(&f->st, status, false, &len);
        if (!json)
                return umw_fail_sys(err, ENOMEM, "hook state");
        return hooks_run(&spec->hooks[kind], kind, json, len, err);
}

/* The container's processes: its cgroup's, or the init alone when it has
 * none (rootless without a delegated cgroup). */
int ctr_list_processes(const struct container_state *st, pid_t **pids, size_t *n,
                       struct umw_error **err)
{
        *pids = NULL;
        *n = 0;
        int r = st->cgroup[0] ? cgroup_pids(st->cgroup, pids, n, err) : 0;
        if (r < 0 || *n > 0 || !state_pid_alive(st))
                return r;
        free(*pids);
        *pids = malloc(sizeof(pid_t));
        if (!*pids)
                return umw_fail_sys(err, ENOMEM, "process list");
        (*pids)[(*n)++] = st->pid;
        return 0;
}

int container_state(const struct runtime_opts *rt, const char *id, char **json,
                    struct umw_error **err)
{
        struct found f;
        int r = ctr_find(rt, id, &f, err);
        if (r < 0)
                return r;
        *json = state_to_json(&f.st, f.status, true, NULL);
        ctr_found_release(&f);
        return *json ? 0 : umw_fail_sys(err, ENOMEM, "state");
}

int container_list(const struct runtime_opts *rt, bool pretty, char **json, struct umw_error **err)
{
        _cleanup_close_ int rootfd = -1;
        int r = state_root_open(rt->root, false, &rootfd, err);
        if (r < 0)
                return r;
        yajl_gen g = umw_jgen_new(pretty);
        if (!g)
                return umw_fail_sys(err, ENOMEM, "list");
        yajl_gen_array_open(g);
        _cleanup_closedir_ DIR *dir = NULL;
        int fd = rootfd < 0 ? -1 : openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0 && !(dir = fdopendir(fd)))
                close(fd);
        struct dirent *e;
        while (dir && (e = readdir(dir))) {
                if (e->d_name[0] == '.')
                        continue;
                struct found f;
                _cleanup_error_ struct umw_error *skip = NULL;
                /* A container deleted while we list is simply not listed. */
                if (ctr_find(rt, e->d_name, &f, &skip) < 0)
                        continue;
                state_gen(g, &f.st, f.status);
                ctr_found_release(&f);
        }
        yajl_gen_array_close(g);
        *json = umw_jgen_finish(g, NULL);
        return *json ? 0 : umw_fail_sys(err, ENOMEM, "list");
}

/* A live container with a cgroup, in status want (or any live one). */
static int find_live(const struct runtime_opts *rt, const char *id, const char *verb,
                     enum container_status want, struct found *f, struct umw_error **err)
{
        int r = ctr_find(rt, id, f, err);
        if (r < 0)
                return r;
        bool live = f->status == STATUS_RUNNING || f->status == STATUS_PAUSED ||
                    f->status == STATUS_CREATED;
        if (want == STATUS_STOPPED ? !live : f->status != want)
                r = umw_fail(err, UMW_EXIT_STATE, EINVAL, "container '%s' is %s: cannot %s it", id,
                             state_status_name(f->status), verb);
        else if (!f->st.cgroup[0])
                r = umw_fail(err, UMW_EXIT_STATE, EOPNOTSUPP,
                             "container '%s' has no cgroup (--cgroup-manager disabled): cannot "
                             "%s it",
                             id, verb);
        if (r < 0)
                ctr_found_release(f);
        return r;
}

static int freeze(const struct runtime_opts *rt, const char *id, bool frozen,
                  struct umw_error **err)
{
        struct found f;
        int r = find_live(rt, id, frozen ? "pause" : "resume",
                          frozen ? STATUS_RUNNING : STATUS_PAUSED, &f, err);
        if (r < 0)
                return r;
        r = cgroup_freeze(f.st.cgroup, frozen, err);
        ctr_found_release(&f);
        return r;
}

int container_pause(const struct runtime_opts *rt, const char *id, struct umw_error **err)
{
        return freeze(rt, id, true, err);
}

int container_resume(const struct runtime_opts *rt, const char *id, struct umw_error **err)
{
        return freeze(rt, id, false, err);
}

int container_update(const struct runtime_opts *rt, const char *id, yajl_val resources,
                     const char *file, struct umw_error **err)
{
        struct found f;
        /* STATUS_STOPPED here means: any live status. */
        int r = find_live(rt, id, "update", STATUS_STOPPED, &f, err);
        if (r < 0)
                return r;
        r = cgroup_update(f.st.cgroup, resources, file, err);
        ctr_found_release(&f);
        return r;
}

int container_pids(const struct runtime_opts *rt, const char *id, pid_t **pids, size_t *n,
                   struct umw_error **err)
{
        struct found f;
        int r = ctr_find(rt, id, &f, err);
        if (r < 0)
                return r;
        r = ctr_list_processes(&f.st, pids, n, err);
        ctr_found_release(&f);
        return r;
}
