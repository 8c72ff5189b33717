/* An overlay with idmapped layers, made by umwelt-run for the init to
 * attach (mounts.h): how root's sandbox sees its workspace in review mode,
 * the project read-only below and the sandbox's writes in a layer of its
 * own. overlayfs itself cannot be idmapped, its layers can: the lower
 * directory and the one holding upperdir and workdir are cloned and
 * idmapped through the container's user namespace, so the container's ids
 * read and write them as its binds do. The overlay is created by a child
 * that joined that user namespace as its 0, in a mount namespace of its
 * own where the layers are attached for the moment it takes (overlayfs
 * takes private clones of them): its creator is the container's root, with
 * userxattr, as a rootless overlay is, and never the host's. */
#include "runtime/mounts.h"
#include "runtime/spec.h"
#include "runtime/sync.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Where the child attaches the layers: a tmpfs of its own over /tmp, in
 * its own mount namespace, which ends with it. */
#define STAGE       "/tmp"
#define STAGE_LOWER STAGE "/lower"
#define STAGE_LAYER STAGE "/layer"

struct overlay_dirs {
        char *lower, *upper, *work; /* the mount's options, as given */
        char *layer;                /* the directory holding upper and work */
        const char *upper_name, *work_name;
};

static void dirs_free(struct overlay_dirs *d)
{
        free(d->lower);
        free(d->upper);
        free(d->work);
        free(d->layer);
}
#define _cleanup_dirs_ __attribute__((cleanup(dirs_free)))

/* lowerdir, upperdir and workdir from the data; upper and work side by
 * side. Anything else is refused: it could not be honoured as written. */
static int parse_dirs(const struct spec_mount *m, const char *data, struct overlay_dirs *d,
                      struct umw_error **err)
{
        _cleanup_free_ char *copy = data ? strdup(data) : NULL;
        char *save = NULL;
        for (char *opt = copy ? strtok_r(copy, ",", &save) : NULL; opt;
             opt = strtok_r(NULL, ",", &save)) {
                char **slot = strncmp(opt, "lowerdir=", 9) == 0   ? &d->lower
                              : strncmp(opt, "upperdir=", 9) == 0 ? &d->upper
                              : strncmp(opt, "workdir=", 8) == 0  ? &d->work
                                                                  : NULL;
                if (strcmp(opt, "userxattr") == 0)
                        continue;
                if (!slot || *slot)
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "mounts[%s]: an idmapped overlay takes one lowerdir, "
                                        "upperdir and workdir not \"%s\"",
                                        m->destination, opt);
                if (!(*slot = strdup(strchr(opt, '=') + 1)))
                        return umw_fail_sys(err, ENOMEM, "overlay options");
        }
        if (!d->lower || !d->upper || !d->work || strchr(d->lower, ':'))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "mounts[%s]: an idmapped overlay needs one lowerdir, an upperdir "
                                "and a workdir",
                                m->destination);
        _cleanup_free_ char *up = strdup(d->upper), *wk = strdup(d->work);
        if (!up || !wk || !(d->layer = strdup(dirname(up))))
                return umw_fail_sys(err, ENOMEM, "overlay options");
        if (strcmp(d->layer, dirname(wk)) != 0)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "mounts[%s]: upperdir and workdir must be in one directory",
                                m->destination);
        d->upper_name = strrchr(d->upper, '/') + 1;
        d->work_name = strrchr(d->work, '/') + 1;
        return 0;
}

/* Reached again by the path the fd has, no link followed on the way, and
 * refused unless it is the very directory the fd holds: a rename between
 * the two looks must not choose what the sandbox sees as its workspace. */
int mounts_overlay_layer_here(const char *value, int *fd, char here[static 32],
                              struct umw_error **err)
{
        int n, len = 0;
        *fd = -1;
        if (sscanf(value, "/proc/self/fd/%d%n", &n, &len) != 1 || value[len] || n < 0)
                return 0;
        char path[PATH_MAX];
        ssize_t l = readlink(value, path, sizeof(path) - 1);
        if (l < 0)
                return umw_fail_errno(err, "overlay layer %s", value);
        path[l] = '\0';
        _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        int dir = root < 0 || path[0] != '/'
                      ? -ENOENT
                      : umw_open_beneath(root, path + 1, O_PATH | O_DIRECTORY);
        struct stat want, got;
        if (dir < 0)
                return umw_fail_sys(err, -dir, "overlay layer %s: reach %s here", value, path);
        if (fstat(n, &want) < 0 || fstat(dir, &got) < 0) {
                close(dir);
                return umw_fail_errno(err, "overlay layer %s", value);
        }
        if (want.st_dev != got.st_dev || want.st_ino != got.st_ino) {
                close(dir);
                return umw_fail(err, UMW_EXIT_FAILURE, ESTALE,
                                "overlay layer %s: %s is another directory now (renamed "
                                "while the sandbox started)",
                                value, path);
        }
        snprintf(here, 32, "/proc/self/fd/%d", dir);
        *fd = dir;
        return 0;
}

static int idmapped_clone(const char *path, int userns_fd, struct umw_error **err)
{
        _cleanup_close_ int fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (fd < 0)
                return umw_fail_errno(err, "overlay layer %s", path);
        struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns_fd};
        if (mount_setattr(fd, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0)
                return umw_fail_errno(err, "idmap overlay layer %s", path);
        return TAKE_FD(fd);
}

static int fs_set(int fs, const char *key, const char *value)
{
        return fsconfig(fs, value ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key, value, 0);
}

/* In the child: the overlay, as the container's 0, or -errno. */
static int child_overlay(const struct overlay_dirs *d, int userns_fd, int lower, int layer)
{
        char upper[64], work[64];
        if (setns(userns_fd, CLONE_NEWUSER) < 0 || setresgid(0, 0, 0) < 0 ||
            setresuid(0, 0, 0) < 0 || unshare(CLONE_NEWNS) < 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("tmpfs", STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=700") < 0 ||
            mkdir(STAGE_LOWER, 0700) < 0 || mkdir(STAGE_LAYER, 0700) < 0 ||
            move_mount(lower, "", AT_FDCWD, STAGE_LOWER, MOVE_MOUNT_F_EMPTY_PATH) < 0 ||
            move_mount(layer, "", AT_FDCWD, STAGE_LAYER, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        if (snprintf(upper, sizeof(upper), STAGE_LAYER "/%s", d->upper_name) >=
                (int)sizeof(upper) ||
            snprintf(work, sizeof(work), STAGE_LAYER "/%s", d->work_name) >= (int)sizeof(work))
                return -ENAMETOOLONG;
        _cleanup_close_ int fs = fsopen("overlay", FSOPEN_CLOEXEC);
        if (fs < 0 || fs_set(fs, "userxattr", NULL) < 0 ||
            fs_set(fs, "lowerdir", STAGE_LOWER) < 0 || fs_set(fs, "upperdir", upper) < 0 ||
            fs_set(fs, "workdir", work) < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return -errno;
        int mnt = fsmount(fs, FSMOUNT_CLOEXEC, 0);
        return mnt < 0 ? -errno : mnt;
}

__attribute__((noreturn)) static void run_child(int sock, const struct overlay_dirs *d,
                                                int userns_fd, int lower, int layer)
{
        _cleanup_error_ struct umw_error *err = NULL;
        int mnt = child_overlay(d, userns_fd, lower, layer);
        if (mnt < 0) {
                umw_fail_sys(&err, -mnt, "create the overlay of %s", d->lower);
                _exit(sync_send(sock, SYNC_ERROR, -mnt, &err) < 0 ? 1 : 0);
        }
        _exit(sync_send_fds(sock, SYNC_TREES, &mnt, 1, &err) < 0 ? 1 : 0);
}

/* The one tree the child sends, or its error. */
static int receive_tree(int sock, struct umw_error **err)
{
        int fds[SYNC_MAX_FDS];
        size_t n = 0;
        int r = sync_expect_fds(sock, SYNC_TREES, "the overlay", fds, &n, err);
        if (r < 0)
                return r;
        if (n == 1)
                return fds[0];
        for (size_t i = 0; i < n; i++)
                close(fds[i]);
        return umw_fail(err, UMW_EXIT_FAILURE, EPROTO, "overlay: %zu trees, not 1", n);
}

int mounts_overlay_tree(const struct spec_mount *m, const char *data, int userns_fd,
                        struct umw_error **err)
{
        _cleanup_dirs_ struct overlay_dirs d = {0};
        int r = parse_dirs(m, data, &d, err);
        if (r < 0)
                return r;
        _cleanup_close_ int lower = idmapped_clone(d.lower, userns_fd, err);
        if (lower < 0)
                return lower;
        _cleanup_close_ int layer = idmapped_clone(d.layer, userns_fd, err);
        if (layer < 0)
                return layer;
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return umw_fail_errno(err, "socketpair");
        pid_t pid = fork();
        if (pid == 0) {
                close(sv[0]);
                run_child(sv[1], &d, userns_fd, lower, layer);
        }
        close(sv[1]);
        _cleanup_close_ int sock = sv[0];
        if (pid < 0)
                return umw_fail_errno(err, "fork for the overlay on %s", m->destination);
        r = receive_tree(sock, err);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        return r < 0 ? umw_error_prefix(err, "mounts[%s]", m->destination) : r;
}
