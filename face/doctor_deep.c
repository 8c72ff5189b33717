/* doctor --deep: a throwaway sandbox on a fresh, empty workspace runs
 * `doctor --inside` and reports what its walls look like from within. The
 * program inside is this binary, handed in as a sealed memfd on fd 3 (the
 * host's copy may not be visible in there, and nobody can have changed a
 * sealed one); its report comes back through a memfd as its stdout. The
 * workspace, and the audit log its run writes, live in one temporary
 * directory that goes when the run is over. */
#include "face/doctor.h"
#include "face/layer.h"
#include "face/user.h"
#include "face/sandbox.h"
#include "runtime/selfexe.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define INSIDE_FD      3
#define INSIDE_OUT_MAX (1024 * 1024)

/* An fd moved aside while another takes its number, and put back after. */
struct fd_slot {
        int fd;    /* the number taken over */
        int saved; /* what was there, or -1 */
        int flags; /* its fd flags */
};

/* Moves what is at fd (if anything) aside and frees the number. */
static int slot_vacate(struct fd_slot *s, int fd, struct umw_error **err)
{
        *s = (struct fd_slot){.fd = fd, .saved = -1, .flags = fcntl(fd, F_GETFD)};
        if (s->flags < 0)
                return 0;
        if ((s->saved = fcntl(fd, F_DUPFD_CLOEXEC, 10)) < 0)
                return umw_fail_errno(err, "move fd %d aside", fd);
        close(fd);
        return 0;
}

static int slot_fill(const struct fd_slot *s, int with, int flags, struct umw_error **err)
{
        if (with == s->fd ? fcntl(with, F_SETFD, flags & O_CLOEXEC ? FD_CLOEXEC : 0) < 0
                          : dup3(with, s->fd, flags) < 0)
                return umw_fail_errno(err, "fd %d", s->fd);
        return 0;
}

static void slot_restore(struct fd_slot *s)
{
        if (s->saved >= 0) {
                dup3(s->saved, s->fd, s->flags & FD_CLOEXEC ? O_CLOEXEC : 0);
                close(s->saved);
        } else if (s->fd >= 0) {
                close(s->fd);
        }
        s->fd = s->saved = -1;
}

struct deep {
        char *top;       /* the temporary directory: workspace and state */
        char *workspace; /* TOP/doctor */
        char *old_state; /* XDG_STATE_HOME before, or NULL */
        bool state_set;  /* XDG_STATE_HOME points into TOP */
        int out;         /* memfd: the inside's stdout */
        struct fd_slot exe, stdout_slot;
};

/* The workspace belongs to whoever the sandbox runs as: the sudo caller
 * when root came through sudo. */
static int give_to_sudo_caller(const char *path, struct umw_error **err)
{
        struct face_user w = face_invoking_user();
        if (w.sudo && chown(path, w.uid, w.gid) < 0)
                return umw_fail_errno(err, "chown %s", path);
        return 0;
}

/* The host's /proc/net/unix, read here in the host's network namespace,
 * into the workspace: inside, the sandbox's own lists none of the host's. */
static int copy_host_sockets(const char *workspace, struct umw_error **err)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        _cleanup_close_ int in = open("/proc/net/unix", O_RDONLY | O_CLOEXEC);
        if (in < 0)
                return errno == ENOENT ? 0 : umw_fail_errno(err, "open /proc/net/unix");
        int ret = umw_read_fd(in, "/proc/net/unix", 64 << 20, &text, &len, err);
        _cleanup_close_ int dir = ret < 0 ? -1 : open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (ret == 0 && dir < 0)
                ret = umw_fail_errno(err, "open %s", workspace);
        if (ret == 0)
                ret = umw_write_file_atomic(dir, DOCTOR_HOST_SOCKETS, text, len, 0644, err);
        return ret;
}

static int make_dirs(struct deep *d, struct umw_error **err)
{
        const char *tmp = getenv("TMPDIR");
        if (!tmp || tmp[0] != '/')
                tmp = "/tmp";
        if (asprintf(&d->top, "%s/umwelt-doctor-XXXXXX", tmp) < 0) {
                d->top = NULL;
                return umw_fail_sys(err, ENOMEM, "doctor");
        }
        if (!mkdtemp(d->top)) {
                int e = errno;
                free(d->top);
                d->top = NULL;
                return umw_fail_sys(err, e, "create a temporary directory in %s", tmp);
        }
        char state[4096];
        snprintf(state, sizeof(state), "%s/state", d->top);
        if (asprintf(&d->workspace, "%s/doctor", d->top) < 0) {
                d->workspace = NULL;
                return umw_fail_sys(err, ENOMEM, "doctor");
        }
        if (mkdir(d->workspace, 0700) < 0 || mkdir(state, 0700) < 0)
                return umw_fail_errno(err, "create directories in %s", d->top);
        int ret = copy_host_sockets(d->workspace, err);
        if (ret == 0)
                ret = give_to_sudo_caller(d->workspace, err);
        if (ret < 0)
                return ret;
        /* The throwaway project's audit log goes with it. */
        const char *old = getenv("XDG_STATE_HOME");
        if (old && !(d->old_state = strdup(old)))
                return umw_fail_sys(err, ENOMEM, "doctor");
        if (setenv("XDG_STATE_HOME", state, 1) < 0)
                return umw_fail_errno(err, "XDG_STATE_HOME");
        d->state_set = true;
        return 0;
}

/* The binary on fd 3, the capture on stdout. A --log file that sat on
 * fd 3 gets no lines while the sandbox runs; stderr still does. */
static int take_fds(struct deep *d, struct umw_error **err)
{
        _cleanup_close_ int exe = -1;
        int ret = slot_vacate(&d->exe, INSIDE_FD, err);
        if (ret == 0)
                ret = selfexe_sealed_copy(&exe, err);
        /* The runtime clears close-on-exec of the fds it is told to pass. */
        if (ret == 0)
                ret = slot_fill(&d->exe, exe, O_CLOEXEC, err);
        if (exe == INSIDE_FD)
                exe = -1;
        if (ret < 0)
                return ret;
        d->out = memfd_create("doctor-inside", MFD_CLOEXEC);
        if (d->out < 0)
                return umw_fail_errno(err, "memfd for the report from inside");
        fflush(stdout);
        ret = slot_vacate(&d->stdout_slot, STDOUT_FILENO, err);
        return ret < 0 ? ret : slot_fill(&d->stdout_slot, d->out, 0, err);
}

static void deep_release(struct deep *d)
{
        slot_restore(&d->stdout_slot);
        slot_restore(&d->exe);
        umw_close_fdp(&d->out);
        if (d->state_set && (d->old_state ? setenv("XDG_STATE_HOME", d->old_state, 1)
                                          : unsetenv("XDG_STATE_HOME")) < 0)
                fprintf(stderr, "umwelt-run: doctor: cannot restore XDG_STATE_HOME\n");
        _cleanup_error_ struct umw_error *err = NULL;
        if (d->top && layer_remove_tree(AT_FDCWD, d->top, &err) < 0)
                fprintf(stderr, "umwelt-run: doctor: remove %s: %s\n", d->top, err->msg);
        free(d->top);
        free(d->workspace);
        free(d->old_state);
}

static int read_output(int fd, char **text, struct umw_error **err)
{
        if (lseek(fd, 0, SEEK_SET) < 0)
                return umw_fail_errno(err, "read the report from inside");
        return umw_read_fd(fd, "the report from inside", INSIDE_OUT_MAX, text, NULL, err);
}

/* The report's checks, and one more when the sandbox did not run or the
 * check inside ended without a report that explains its status. */
static void add_inside_report(struct doctor_report *r, const char *text, int status)
{
        _cleanup_error_ struct umw_error *err = NULL;
        size_t before = r->n;
        if (doctor_report_merge(r, "inside: ", text, "doctor --inside's report", &err) < 0)
                doctor_add(r, "inside", false, true, NULL, "%s (exit status %d)", err->msg, status);
        bool failed = false;
        for (size_t i = before; i < r->n; i++)
                failed |= !r->checks[i].ok;
        if (status != 0 && !failed)
                doctor_add(r, "inside", false, true, NULL,
                           "doctor --inside exited with status %d and reported no failed check",
                           status);
}

void doctor_deep_checks(struct doctor_report *r, const struct runtime_opts *rt)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct deep d = {
            .out = -1, .exe = {.fd = -1, .saved = -1}, .stdout_slot = {.fd = -1, .saved = -1}};
        _cleanup_free_ char *text = NULL;
        int status = -1;
        int ret = make_dirs(&d, &err);
        if (ret == 0)
                ret = take_fds(&d, &err);
        if (ret == 0) {
                char *args[] = {"/proc/self/fd/3", "doctor",    "--inside", "--json",
                                "--workspace",     d.workspace, NULL};
                struct sandbox_opts o = {.project = d.workspace, .args = args, .preserve_fds = 1};
                ret = sandbox_run(rt, &o, &status, &err);
        }
        slot_restore(&d.stdout_slot);
        if (ret == 0)
                ret = read_output(d.out, &text, &err);
        deep_release(&d);
        if (ret < 0)
                doctor_add(r, "inside", false, true, NULL, "a throwaway sandbox did not run: %s",
                           err->msg);
        else
                add_inside_report(r, text, status);
}
