#include "runtime/state.h"
#include "runtime/cgroup.h"
#include "runtime/spec.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/proc.h"
#include "common/fdio.h"
#include "common/paths.h"
#include "common/json.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STATE_FILE "state.json"

int state_root_open(const char *root, bool create, int *out, struct umw_error **err)
{
        if (create) {
                int r = umw_mkdir_p(root, 0755, 0700, err);
                if (r < 0)
                        return umw_error_prefix(err, "state root");
        }
        int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && !create) {
                *out = -1;
                return 0;
        }
        if (fd < 0)
                return umw_fail_errno(err, "open state root %s", root);
        *out = fd;
        return 0;
}

int state_check_id(const char *id, struct umw_error **err)
{
        size_t len = strlen(id);
        bool ok = len > 0 && len <= 1024 && id[0] != '.' && id[0] != '-';
        for (size_t i = 0; ok && i < len; i++) {
                char c = id[i];
                ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '_' || c == '.' || c == '+' || c == '-';
        }
        if (!ok)
                return umw_fail(err, UMW_EXIT_USAGE, EINVAL,
                                "invalid container id '%s': expected letters, digits, '_', '.', "
                                "'+' or '-', not starting with '.' or '-'",
                                id);
        return 0;
}

void state_config_name(const char *id, char buf[static STATE_CONFIG_NAME_MAX])
{
        snprintf(buf, STATE_CONFIG_NAME_MAX, "the " STATE_CONFIG " saved for container '%s'",
                 id ? id : "?");
}

int state_dir_create(int rootfd, const char *id, int *dirfd, struct umw_error **err)
{
        if (mkdirat(rootfd, id, 0700) < 0) {
                if (errno == EEXIST)
                        return umw_fail(err, UMW_EXIT_EXISTS, EEXIST,
                                        "container '%s' already exists", id);
                return umw_fail_errno(err, "create state directory for '%s'", id);
        }
        int fd = openat(rootfd, id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                int saved = errno;
                unlinkat(rootfd, id, AT_REMOVEDIR);
                return umw_fail_sys(err, saved, "open state directory for '%s'", id);
        }
        *dirfd = fd;
        return 0;
}

int state_dir_open(int rootfd, const char *id, int *dirfd, struct umw_error **err)
{
        int fd =
            rootfd < 0 ? -1 : openat(rootfd, id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (rootfd < 0 || errno == ENOENT)
                        return umw_fail(err, UMW_EXIT_NOTFOUND, ENOENT,
                                        "container '%s' does not exist", id);
                return umw_fail_errno(err, "open state directory for '%s'", id);
        }
        /* A directory without state.json is one whose create never finished. */
        if (faccessat(fd, STATE_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
                close(fd);
                return umw_fail(err, UMW_EXIT_NOTFOUND, ENOENT, "container '%s' does not exist",
                                id);
        }
        *dirfd = fd;
        return 0;
}

int state_dir_remove(int rootfd, const char *id, struct umw_error **err)
{
        _cleanup_close_ int fd =
            openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                return umw_fail_errno(err, "open state directory for '%s'", id);
        }
        DIR *d = fdopendir(fd);
        if (!d)
                return umw_fail_errno(err, "read state directory for '%s'", id);
        fd = -1;
        _cleanup_closedir_ DIR *dir = d;
        struct dirent *e;
        while ((e = readdir(dir))) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                if (unlinkat(dirfd(dir), e->d_name, 0) < 0 && errno != ENOENT)
                        return umw_fail_errno(err, "remove %s/%s", id, e->d_name);
        }
        if (unlinkat(rootfd, id, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return umw_fail_errno(err, "remove state directory for '%s'", id);
        return 0;
}

int state_write(int dirfd, const char *id, pid_t pid, unsigned long long start_time,
                const char *bundle, const char *rootfs, const char *cgroup,
                const struct spec_kv *annotations, size_t n_annotations, struct umw_error **err)
{
        char created[64];
        umw_format_now(created, sizeof(created));
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return umw_fail_sys(err, ENOMEM, "write state");
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "ociVersion", "1.0.2");
        umw_jgen_key_str(g, "id", id);
        umw_jgen_key_int(g, "pid", pid);
        umw_jgen_key_str(g, "bundle", bundle);
        umw_jgen_key_str(g, "rootfs", rootfs);
        umw_jgen_key_str(g, "created", created);
        umw_jgen_key_int(g, "owner", geteuid());
        umw_jgen_key_str(g, "cgroup", cgroup ? cgroup : "");
        umw_jgen_key_int(g, "startTime", (long long)start_time);
        umw_jgen_key(g, "annotations");
        yajl_gen_map_open(g);
        for (size_t i = 0; i < n_annotations; i++)
                umw_jgen_key_str(g, annotations[i].key, annotations[i].value);
        yajl_gen_map_close(g);
        yajl_gen_map_close(g);
        size_t len = 0;
        _cleanup_free_ char *text = umw_jgen_finish(g, &len);
        if (!text)
                return umw_fail_sys(err, ENOMEM, "write state");
        return umw_write_file_atomic(dirfd, STATE_FILE, text, len, 0600, err);
}

static long long int_member(yajl_val tree, const char *key)
{
        yajl_val v = umw_json_member(tree, key);
        return YAJL_IS_INTEGER(v) ? v->u.number.i : 0;
}

int state_read(int dirfd, struct container_state *st, struct umw_error **err)
{
        _cleanup_free_ char *text = NULL;
        int r = umw_read_file_at(dirfd, STATE_FILE, 1 << 20, &text, NULL, err);
        if (r < 0)
                return r;
        yajl_val tree;
        r = umw_json_parse(text, STATE_FILE, &tree, err);
        if (r < 0)
                return r;
        *st = (struct container_state){
            .tree = tree,
            .id = umw_json_member_str(tree, "id", ""),
            .pid = (pid_t)int_member(tree, "pid"),
            .start_time = (unsigned long long)int_member(tree, "startTime"),
            .bundle = umw_json_member_str(tree, "bundle", ""),
            .rootfs = umw_json_member_str(tree, "rootfs", ""),
            .created = umw_json_member_str(tree, "created", ""),
            .owner = (uid_t)int_member(tree, "owner"),
            .cgroup = umw_json_member_str(tree, "cgroup", ""),
            .annotations = umw_json_member(tree, "annotations"),
        };
        return 0;
}

void state_release(struct container_state *st)
{
        if (st->tree)
                yajl_tree_free(st->tree);
        st->tree = NULL;
}

unsigned long long state_pid_start_time(pid_t pid)
{
        return umw_proc_start_time(pid, NULL);
}

bool state_pid_alive(const struct container_state *st)
{
        bool zombie = false;
        if (st->pid <= 0)
                return false;
        unsigned long long t = umw_proc_start_time(st->pid, &zombie);
        return t != 0 && t == st->start_time && !zombie;
}

enum container_status state_status(const struct container_state *st, int dirfd)
{
        if (!state_pid_alive(st))
                return STATUS_STOPPED;
        if (faccessat(dirfd, STATE_START_SOCKET, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                return STATUS_CREATED;
        if (st->cgroup[0] && cgroup_is_frozen(st->cgroup))
                return STATUS_PAUSED;
        return STATUS_RUNNING;
}

const char *state_status_name(enum container_status s)
{
        static const char *const names[] = {"creating", "created", "running", "paused", "stopped"};
        return names[s];
}

void state_gen(void *gen, const struct container_state *st, enum container_status status)
{
        yajl_gen g = gen;
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "ociVersion", "1.0.2");
        umw_jgen_key_str(g, "id", st->id);
        umw_jgen_key_str(g, "status", state_status_name(status));
        umw_jgen_key_int(g, "pid", status == STATUS_STOPPED ? 0 : st->pid);
        umw_jgen_key_str(g, "bundle", st->bundle);
        umw_jgen_key_str(g, "rootfs", st->rootfs);
        umw_jgen_key_str(g, "created", st->created);
        umw_jgen_key_int(g, "owner", st->owner);
        umw_jgen_key(g, "annotations");
        yajl_gen_map_open(g);
        if (YAJL_IS_OBJECT(st->annotations)) {
                for (size_t i = 0; i < st->annotations->u.object.len; i++) {
                        yajl_val v = st->annotations->u.object.values[i];
                        if (YAJL_IS_STRING(v))
                                umw_jgen_key_str(g, st->annotations->u.object.keys[i], v->u.string);
                }
        }
        yajl_gen_map_close(g);
        yajl_gen_map_close(g);
}

char *state_to_json(const struct container_state *st, enum container_status status, bool pretty,
                    size_t *len)
{
        yajl_gen g = umw_jgen_new(pretty);
        if (!g)
                return NULL;
        state_gen(g, st, status);
        return umw_jgen_finish(g, len);
}
