/* The project's own policy file, .umwelt.toml. Whoever writes the
 * workspace writes it: the agent inside a sandbox, or a git pull. Applied
 * as it is, it would let the agent widen its own walls at the user's next
 * start (grants, credential variables passed in, ports published), so it
 * is applied only as the user last accepted it, byte for byte. The
 * accepted copy lives in the project's state directory, outside the
 * workspace and outside every sandbox (direnv's allow is the model; a copy
 * rather than a hash, so that policy diff can show what changed). The file
 * is read once, without following a link, and the bytes compared are the
 * bytes parsed. */
#include "face/project_policy.h"
#include "face/sandbox_int.h"
#include "common/audit.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/paths.h"
#include "policy/config.h"
#include "policy/toml.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROJECT_FILE  ".umwelt.toml"
#define ACCEPTED_FILE "accepted.umwelt.toml"

void project_policy_free(struct project_policy *p)
{
        free(p->text);
        free(p->accepted);
        free(p->state_dir);
        free(p->file);
        *p = (struct project_policy){0};
}

/* name in dirfd, a regular file of at most TOML_MAX_FILE_SIZE bytes, into
 * *text (NULL when absent); a link or another type is refused: a link
 * would make the policy whatever it points at. */
static int read_regular(int dirfd, const char *name, const char *path, char **text, size_t *len,
                        struct umw_error **err)
{
        *text = NULL;
        *len = 0;
        /* O_NONBLOCK: a FIFO planted under the name must not hang the open. */
        _cleanup_close_ int fd =
            openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                return 0;
        if (fd < 0 && errno == ELOOP)
                return umw_fail(err, UMW_EXIT_CONFIG, ELOOP,
                                "%s: is a symbolic link: a project's policy must be a file of "
                                "its own",
                                path);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return umw_fail_errno(err, "open %s", path);
        if (!S_ISREG(st.st_mode))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "%s: expected a regular file", path);
        return umw_read_fd(fd, path, TOML_MAX_FILE_SIZE, text, len, err);
}

static int read_accepted(struct project_policy *p, struct umw_error **err)
{
        _cleanup_close_ int dirfd = open(p->state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0 && errno == ENOENT)
                return 0;
        if (dirfd < 0)
                return umw_fail_errno(err, "open %s", p->state_dir);
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/%s", p->state_dir, ACCEPTED_FILE) < 0)
                return umw_fail_sys(err, ENOMEM, "accepted policy");
        size_t len;
        int r = read_regular(dirfd, ACCEPTED_FILE, path, &p->accepted, &len, err);
        p->has_accepted = r >= 0 && p->accepted;
        p->accepted_len = len;
        return r;
}

int project_policy_read(const char *workspace, const char *project_id, struct project_policy *p,
                        struct umw_error **err)
{
        *p = (struct project_policy){0};
        if (asprintf(&p->file, "%s/%s", workspace, PROJECT_FILE) < 0) {
                p->file = NULL;
                return umw_fail_sys(err, ENOMEM, "project policy");
        }
        int r = umw_state_dir(project_id, &p->state_dir, err);
        if (r < 0)
                return r;
        _cleanup_close_ int ws = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (ws < 0)
                return umw_fail_errno(err, "open workspace %s", workspace);
        if ((r = read_regular(ws, PROJECT_FILE, p->file, &p->text, &p->len, err)) < 0)
                return r;
        p->present = p->text != NULL;
        return read_accepted(p, err);
}

bool project_policy_is_accepted(const struct project_policy *p)
{
        return !p->present || (p->has_accepted && p->accepted_len == p->len &&
                               memcmp(p->accepted, p->text, p->len) == 0);
}

int project_policy_refuse(const struct project_policy *p, const char *workspace,
                          struct umw_error **err)
{
        return umw_fail(err, UMW_EXIT_CONFIG, EPERM,
                        "%s: %s, so not applied: look at it with 'umwelt-run policy diff -p %s', "
                        "then accept it with 'umwelt-run policy accept -p %s'",
                        p->file,
                        p->has_accepted ? "changed since it was accepted" : "never accepted",
                        workspace, workspace);
}

int project_policy_accept(struct project_policy *p, int audit_fd, struct umw_error **err)
{
        int r = umw_mkdir_p(p->state_dir, 0700, 0700, err);
        if (r < 0)
                return r;
        _cleanup_close_ int dirfd = open(p->state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return umw_fail_errno(err, "open %s", p->state_dir);
        if (!p->present) {
                if (unlinkat(dirfd, ACCEPTED_FILE, 0) < 0 && errno != ENOENT)
                        return umw_fail_errno(err, "remove %s/%s", p->state_dir, ACCEPTED_FILE);
        } else if ((r = umw_write_file_atomic(dirfd, ACCEPTED_FILE, p->text, p->len, 0600, err)) <
                   0) {
                return r;
        }
        char bytes[32];
        snprintf(bytes, sizeof(bytes), "%zu", p->len);
        const char *kv[] = {"file", p->file, "bytes", p->present ? bytes : "0 (no file)", NULL};
        return audit_append(audit_fd, "policy-accept", kv, err);
}

/* The layers with the project's as pp read it. */
static int load_layers(struct sandbox *s, const struct project_policy *pp, struct umw_error **err)
{
        struct policy_paths paths = {.project = pp->file,
                                     .project_given = true,
                                     .project_text = pp->text,
                                     .project_len = pp->len};
        int r = policy_load(&paths, s->project.who.home, &s->view.policy, err);
        if (r < 0)
                return r;
        s->view.loaded = true;
        return 0;
}

int sandbox_user_policy_read(struct sandbox *s, struct umw_error **err)
{
        static const struct project_policy none = {0};
        int r = s->project.who.home ? 0 : sandbox_identity_get(&s->project.who, err);
        return r < 0 ? r : load_layers(s, &none, err);
}

int sandbox_policy_read(struct sandbox *s, struct umw_error **err)
{
        _cleanup_project_policy_ struct project_policy pp = {0};
        int r;
        if ((!s->project.who.home && (r = sandbox_identity_get(&s->project.who, err)) < 0) ||
            (r = project_policy_read(s->project.workspace, s->project.id, &pp, err)) < 0)
                return r;
        if (project_policy_is_accepted(&pp))
                return load_layers(s, &pp, err);
        r = project_policy_refuse(&pp, s->project.workspace, err);
        const char *kv[] = {"policy", pp.file, "error", (*err)->msg, NULL};
        sandbox_audit(s, "refusal", kv);
        return r;
}

int sandbox_policy_diff(const char *project, struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        _cleanup_project_policy_ struct project_policy pp = {0};
        int r;
        if ((r = sandbox_locate(&s, project, err)) < 0 ||
            (r = project_policy_read(s.project.workspace, s.project.id, &pp, err)) < 0)
                return r;
        if (!project_policy_is_accepted(&pp))
                return project_policy_diff(&pp, stdout, err);
        printf("%s: %s\n", pp.file, pp.present ? "accepted as it is" : "absent: nothing to accept");
        return 0;
}

int sandbox_policy_accept(const char *project, struct umw_error **err)
{
        _cleanup_sandbox_ struct sandbox s = SANDBOX_INIT;
        _cleanup_project_policy_ struct project_policy pp = {0};
        int r;
        if ((r = sandbox_locate(&s, project, err)) < 0 ||
            (r = sandbox_identity_get(&s.project.who, err)) < 0 ||
            (r = project_policy_read(s.project.workspace, s.project.id, &pp, err)) < 0)
                return r;
        /* What does not read as policy is refused now, not at the next start. */
        if ((r = load_layers(&s, &pp, err)) < 0)
                return umw_error_prefix(err, "not accepted");
        if ((r = sandbox_open_audit(&s, err)) < 0 ||
            (r = project_policy_accept(&pp, s.project.audit_fd, err)) < 0)
                return r;
        printf("%s: %s\n", pp.file, pp.present ? "accepted" : "absent: none accepted");
        return 0;
}
