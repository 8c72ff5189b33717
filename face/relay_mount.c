/* Grants attached to and detached from a running sandbox (relay_mount.h). */
#include "face/relay_mount.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/stat.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the child that did the work says back: its result, its error. */
struct child_said {
        int32_t rc, kind, errnum;
        uint64_t mnt_id;
        char msg[512];
};

struct job {
        const struct relay_target *t;
        pid_t relay; /* the parent, whose death the child's must follow */
        const char *path;
        bool is_file, rw;
        dev_t dev; /* grant: the inode checked when it was asked for */
        ino_t ino;
        uint64_t mnt_id; /* revoke: the mount to detach; grant: the one attached */
};

typedef int (*job_fn)(struct job *j, struct umw_error **err);

/* The path opened from the current root, no link followed on the way or
 * at the end, and still the inode that was checked when it was asked for
 * (a name may have been renamed over while a human decided). */
static int open_source(const struct job *j, struct umw_error **err)
{
        _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return umw_fail_errno(err, "open /");
        _cleanup_close_ int fd = umw_open_beneath(root, j->path + 1, O_PATH);
        if (fd < 0)
                return umw_fail_sys(err, -fd, "grant %s: open without following a link", j->path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return umw_fail_errno(err, "grant %s: stat", j->path);
        if (st.st_dev != j->dev || st.st_ino != j->ino ||
            (j->is_file ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode)))
                return umw_fail(err, UMW_EXIT_STATE, EXDEV,
                                "grant %s: no longer the %s it was when asked", j->path,
                                j->is_file ? "file" : "directory");
        return TAKE_FD(fd);
}

/* A user's clone: made in a mount namespace of the sandbox's user
 * namespace (the user cannot clone from the host's), from the path opened
 * there: open_source holds it to the inode the human approved. */
static int open_in_own_view(const struct job *j, struct umw_error **err)
{
        if (setns(j->t->pidfd, CLONE_NEWUSER) < 0)
                return umw_fail_errno(err, "join the sandbox's user namespace");
        if (unshare(CLONE_NEWNS) < 0)
                return umw_fail_errno(err,
                                      "make a mount namespace in the sandbox's user namespace");
        return open_source(j, err);
}

/* Root's clone is idmapped through the sandbox's user namespace, as its
 * binds at the start are: what the sandbox writes keeps the host owner. */
static int idmap_tree(const struct job *j, int tree, struct umw_error **err)
{
        char ns[64];
        snprintf(ns, sizeof(ns), "/proc/%d/ns/user", (int)j->t->pid);
        _cleanup_close_ int userns = open(ns, O_RDONLY | O_CLOEXEC);
        if (userns < 0)
                return umw_fail_errno(err, "open %s", ns);
        /* Opened by pid: the pidfd says whether that is still the init. */
        if (pidfd_send_signal(j->t->pidfd, 0, NULL, 0) < 0)
                return umw_fail_errno(err, "the sandbox's init");
        struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
        if (mount_setattr(tree, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0)
                return umw_fail_errno(err, "grant %s: idmap", j->path);
        return 0;
}

/* The detached tree of the grant, its flags set; a user's child is left
 * in the sandbox's user namespace. */
static int make_tree(const struct job *j, struct umw_error **err)
{
        _cleanup_close_ int src = j->t->rootless ? open_in_own_view(j, err) : open_source(j, err);
        if (src < 0)
                return src;
        unsigned int rec = j->is_file ? 0 : AT_RECURSIVE;
        _cleanup_close_ int tree =
            open_tree(src, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | rec);
        if (tree < 0)
                return umw_fail_errno(err, "grant %s: clone", j->path);
        int r;
        if (!j->t->rootless && (r = idmap_tree(j, tree, err)) < 0)
                return r;
        struct mount_attr a = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
        if (!j->rw || j->is_file)
                a.attr_set |= MOUNT_ATTR_RDONLY;
        if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
                return umw_fail_errno(err, "grant %s: set read-only, nosuid, nodev", j->path);
        return TAKE_FD(tree);
}

/* Joins the sandbox's mount namespace (and its user namespace, unless the
 * child is in it already): from here on, "/" is the sandbox's root. */
static int join_sandbox(const struct relay_target *t, bool in_userns, struct umw_error **err)
{
        int what = CLONE_NEWNS | (in_userns ? 0 : CLONE_NEWUSER);
        if (setns(t->pidfd, what) < 0)
                return umw_fail_errno(err, "join the sandbox's namespaces");
        /* Root's ids are not mapped in its sandbox (a mount point made as
         * them fails with EOVERFLOW): it acts as the sandbox's 0. A user's
         * map themselves. */
        if (!t->rootless && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
                return umw_fail_errno(err, "become the sandbox's 0");
        return 0;
}

/* Changing ids clears the parent-death signal: set again, and the relay
 * checked to be there still, before anything is attached. */
static int still_tied(const struct job *j, struct umw_error **err)
{
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != j->relay)
                return umw_fail(err, UMW_EXIT_FAILURE, ESRCH, "the relay ended");
        return 0;
}

/* name beneath dir, made when missing and make is set: a directory, or for
 * a file grant's last component an empty file (never through a link: a
 * name the sandbox made a link is refused by the open). */
static int step(int dir, const char *name, bool file, bool make, const char *path,
                struct umw_error **err)
{
        int fd = umw_open_beneath(dir, name, O_PATH);
        if (fd == -ENOENT && make) {
                int r = file ? openat(dir, name,
                                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)
                             : mkdirat(dir, name, 0755);
                if (r < 0 && errno != EEXIST)
                        return umw_fail_errno(err, "grant %s: make its mount point inside", path);
                if (file && r >= 0)
                        close(r);
                fd = umw_open_beneath(dir, name, O_PATH);
        }
        if (fd < 0)
                return umw_fail_sys(err, -fd, "%s: open inside without following a link", path);
        return fd;
}

/* The mount point of path inside, from the sandbox's root one component at
 * a time; *parent: its directory, to reopen the point once mounted. */
static int walk_inside(const struct job *j, bool make, int *parent, struct umw_error **err)
{
        _cleanup_free_ char *copy = strdup(j->path);
        _cleanup_close_ int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (!copy || dir < 0)
                return umw_fail_errno(err, "open the sandbox's root");
        char *save = NULL, *name = strtok_r(copy, "/", &save);
        while (name) {
                char *next = strtok_r(NULL, "/", &save);
                int fd = step(dir, name, j->is_file && !next, make, j->path, err);
                if (fd < 0)
                        return fd;
                if (!next) {
                        *parent = TAKE_FD(dir);
                        return fd;
                }
                close(dir);
                dir = fd;
                name = next;
        }
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "grant %s: not below /", j->path);
}

static int mount_id_of(int fd, uint64_t *id, bool *is_root, struct umw_error **err)
{
        struct statx sx;
        if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0)
                return umw_fail_errno(err, "statx");
        *id = sx.stx_mnt_id;
        *is_root = sx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
        return 0;
}

static int grant_job(struct job *j, struct umw_error **err)
{
        _cleanup_close_ int tree = make_tree(j, err);
        if (tree < 0)
                return tree;
        int r = join_sandbox(j->t, j->t->rootless, err);
        if (r < 0 || (r = still_tied(j, err)) < 0)
                return r;
        _cleanup_close_ int parent = -1;
        _cleanup_close_ int point = walk_inside(j, true, &parent, err);
        if (point < 0)
                return point;
        struct stat st;
        if (fstat(point, &st) < 0 || (j->is_file ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode)))
                return umw_fail(err, UMW_EXIT_STATE, ENOTDIR, "grant %s: inside it is not a %s",
                                j->path, j->is_file ? "file" : "directory");
        if (move_mount(tree, "", point, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return umw_fail_errno(err, "grant %s: attach inside", j->path);
        const char *last = strrchr(j->path, '/') + 1;
        _cleanup_close_ int mounted = umw_open_beneath(parent, last, O_PATH);
        bool is_root = false;
        if (mounted < 0)
                return umw_fail_sys(err, -mounted, "grant %s: reopen inside", j->path);
        return mount_id_of(mounted, &j->mnt_id, &is_root, err);
}

static int revoke_job(struct job *j, struct umw_error **err)
{
        int r = join_sandbox(j->t, false, err);
        if (r < 0)
                return r;
        _cleanup_close_ int parent = -1;
        _cleanup_close_ int point = walk_inside(j, false, &parent, err);
        if (point < 0)
                return point;
        uint64_t id;
        bool is_root;
        if ((r = mount_id_of(point, &id, &is_root, err)) < 0)
                return r;
        if (id != j->mnt_id || !is_root)
                return umw_fail(err, UMW_EXIT_STATE, ESTALE,
                                "revoke %s: the mount there is not the one granted", j->path);
        /* The point's own mount, reached through the fd: "." is the mount's
         * root once the child stands in it. */
        if (fchdir(point) < 0 || umount2(".", MNT_DETACH) < 0)
                return umw_fail_errno(err, "revoke %s: detach", j->path);
        return 0;
}

/* The child's half: the job done, its result written to out, then gone.
 * It dies with the relay: a grant the relay did not see finish is not
 * attached after it is gone. */
__attribute__((noreturn)) static void child(job_fn fn, struct job *j, pid_t parent, int out)
{
        struct child_said said = {0};
        struct umw_error *e = NULL;
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(127);
        said.rc = fn(j, &e);
        said.mnt_id = j->mnt_id;
        if (e) {
                said.kind = e->kind;
                said.errnum = e->errnum;
                snprintf(said.msg, sizeof(said.msg), "%s", e->msg);
        }
        _exit(umw_write_all(out, &said, sizeof(said)) < 0 ? 126 : 0);
}

static int run_job(job_fn fn, struct job *j, struct umw_error **err)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return umw_fail_errno(err, "pipe");
        pid_t self = getpid(), pid = fork();
        j->relay = self;
        if (pid == 0) {
                close(p[0]);
                child(fn, j, self, p[1]);
        }
        close(p[1]);
        _cleanup_close_ int in = p[0];
        if (pid < 0)
                return umw_fail_errno(err, "fork");
        struct child_said said;
        ssize_t n = umw_read_all(in, &said, sizeof(said));
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        if (n != (ssize_t)sizeof(said))
                return umw_fail(err, UMW_EXIT_FAILURE, EPIPE, "%s: the relay's child died",
                                j->path);
        said.msg[sizeof(said.msg) - 1] = '\0';
        if (said.rc < 0)
                return umw_fail(err, (enum umw_exit)said.kind, said.errnum, "%s", said.msg);
        j->mnt_id = said.mnt_id;
        return 0;
}

int relay_mount_grant(const struct relay_target *t, const struct relay_source *src,
                      uint64_t *mnt_id, struct umw_error **err)
{
        struct job j = {.t = t,
                        .path = src->path,
                        .is_file = src->is_file,
                        .rw = src->rw,
                        .dev = src->dev,
                        .ino = src->ino};
        int r = run_job(grant_job, &j, err);
        if (r < 0)
                return r;
        *mnt_id = j.mnt_id;
        return 0;
}

int relay_mount_revoke(const struct relay_target *t, const char *path, uint64_t mnt_id,
                       struct umw_error **err)
{
        struct job j = {.t = t, .path = path, .mnt_id = mnt_id};
        return run_job(revoke_job, &j, err);
}
