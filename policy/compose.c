/* compose: the closed default as an OCI config.json. Everything the sandbox
 * gets is written here as a mount, a namespace or an empty set; the runtime
 * builds it with the same code that serves podman. */
#include "policy/compose.h"
#include "policy/paths.h"
#include "policy/grants.h"
#include "policy/presets.h"
#include "policy/seccomp_profile.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Names a caller's variable may carry in whatever the project says: the
 * agent-relay, session-bus and engine sockets, and anything named like a
 * credential. env_extra cannot let these in: a project file is written by
 * whoever controls the workspace, which may be the agent itself. */
static const char *const never_names[] = {"SSH_AUTH_SOCK",
                                          "SSH_AGENT_PID",
                                          "GPG_AGENT_INFO",
                                          "DBUS_SESSION_BUS_ADDRESS",
                                          "XDG_RUNTIME_DIR",
                                          "KRB5CCNAME",
                                          "KUBECONFIG",
                                          "DOCKER_HOST",
                                          "DOCKER_AUTH_CONFIG",
                                          "CONTAINER_HOST",
                                          "GOOGLE_APPLICATION_CREDENTIALS",
                                          "NETRC",
                                          NULL};
static const char *const never_prefixes[] = {"AWS_", "AZURE_", "GOOGLE_", "VAULT_", NULL};
static const char *const never_infixes[] = {"TOKEN",  "SECRET",  "PASSWORD", "PASSWD", "CREDENTIAL",
                                            "APIKEY", "API_KEY", "PRIVATE",  NULL};
static const char *const never_suffixes[] = {"_KEY", "_PASS", "_AUTH", "_PAT", NULL};

static const char *const allowed_names[] = {"PATH", "TERM", "LANG", "HOME", "USER", "SHELL", NULL};

static bool in_list(const char *name, size_t len, const char *const *list)
{
        for (; list && *list; list++)
                if (strlen(*list) == len && strncmp(*list, name, len) == 0)
                        return true;
        return false;
}

static bool has_prefix(const char *name, size_t len, const char *prefix)
{
        size_t n = strlen(prefix);
        return len >= n && strncasecmp(name, prefix, n) == 0;
}

static bool has_suffix(const char *name, size_t len, const char *suffix)
{
        size_t n = strlen(suffix);
        return len >= n && strncasecmp(name + len - n, suffix, n) == 0;
}

static bool has_infix(const char *name, size_t len, const char *infix)
{
        for (size_t i = 0; i < len; i++)
                if (has_prefix(name + i, len - i, infix))
                        return true;
        return false;
}

static bool is_credential(const char *name, size_t len)
{
        if (in_list(name, len, never_names))
                return true;
        for (const char *const *p = never_prefixes; *p; p++)
                if (has_prefix(name, len, *p))
                        return true;
        for (const char *const *p = never_infixes; *p; p++)
                if (has_infix(name, len, *p))
                        return true;
        for (const char *const *p = never_suffixes; *p; p++)
                if (has_suffix(name, len, *p))
                        return true;
        return false;
}

bool compose_env_allowed(const char *entry, const char *const *extra)
{
        const char *eq = strchr(entry, '=');
        if (!eq || eq == entry)
                return false;
        size_t len = (size_t)(eq - entry);
        /* The credential scan only for a name that is let in otherwise:
         * most of the environment is not. */
        bool listed = in_list(entry, len, allowed_names) ||
                      (len > 3 && strncmp(entry, "LC_", 3) == 0) || in_list(entry, len, extra);
        return listed && !is_credential(entry, len);
}

/* ------------------------------------------------------------ JSON helpers */

static void gen_strv(yajl_gen g, const char *key, const char *const *v)
{
        umw_jgen_key(g, key);
        yajl_gen_array_open(g);
        for (; v && *v; v++)
                umw_jgen_str(g, *v);
        yajl_gen_array_close(g);
}

static int gen_embedded(yajl_gen g, const char *key, char *text, const char *what,
                        struct umw_error **err)
{
        _cleanup_free_ char *owned = text;
        if (!owned)
                return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "compose: cannot render the %s",
                                what);
        yajl_val tree;
        int r = umw_json_parse(owned, what, &tree, err);
        if (r < 0)
                return r;
        umw_jgen_key(g, key);
        umw_jgen_value(g, tree);
        yajl_tree_free(tree);
        return 0;
}

static void gen_mount(yajl_gen g, const char *dest, const char *type, const char *source,
                      const char *const *options)
{
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "destination", dest);
        umw_jgen_key_str(g, "type", type);
        umw_jgen_key_str(g, "source", source);
        gen_strv(g, "options", options);
        yajl_gen_map_close(g);
}

/* ------------------------------------------------------------ sources */

void compose_fds_close(struct compose_fds *f)
{
        for (size_t i = 0; i < f->n; i++)
                close(f->fd[i]);
        free(f->fd);
        *f = (struct compose_fds){0};
}

/* fd kept for the runtime; src its name there, /proc/self/fd/N. Takes fd,
 * closing it on failure. */
static int keep_fd(struct compose_fds *f, int fd, char src[static 32], struct umw_error **err)
{
        int *more = realloc(f->fd, (f->n + 1) * sizeof(*more));
        if (!more) {
                close(fd);
                return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
        }
        f->fd = more;
        f->fd[f->n++] = fd;
        snprintf(src, 32, "/proc/self/fd/%d", fd);
        return 0;
}

static void gen_bind(yajl_gen g, const char *path, const char *source, bool dir, bool ro,
                     bool idmap)
{
        const char *const opts[] = {dir ? "rbind" : "bind",
                                    ro ? "ro" : "rw",
                                    "nosuid",
                                    "nodev",
                                    idmap ? "idmap" : NULL,
                                    NULL};
        gen_mount(g, path, "bind", source, opts);
}

/* ------------------------------------------------------------ mounts */

static const char *const tmpfs_sticky[] = {"nosuid", "nodev", "mode=1777", NULL};
static const char *const tmpfs_shut[] = {"nosuid", "nodev", "noexec", "mode=755", "size=64k", NULL};
static const char *const tmpfs_sealed[] = {"nosuid",   "nodev",    "noexec",
                                           "mode=555", "size=64k", NULL};

/* The host's state, not its toolchain: on the embedded default root each of
 * these is an empty tmpfs of mode 555, so no service's data or socket there
 * (/var/lib's engines and databases, /srv, /mnt, /media) is in view. Not a
 * read-only mount: the runtime (which holds its capabilities while it
 * builds) still makes the mount points of /var/tmp and of a workspace or
 * grant below one; no process of the sandbox holds CAP_DAC_OVERRIDE, so
 * none can write there. /var keeps only /var/tmp (a sticky tmpfs, as
 * /tmp): programs write scratch files there; nothing else in /var is what a
 * program needs to run (dpkg's database, caches and logs are the host's). */
static const char *const state_dirs[] = {"/var", "/srv", "/mnt", "/media", NULL};

/* The kernel's and the host's filesystems, new or read-only, and the places
 * the host keeps people's files and sockets, hidden under empty tmpfs: /run
 * covers /run/user and the engines' sockets (/var/run is a link to it). */
static void gen_system_mounts(yajl_gen g, const char *home, bool host_root)
{
        gen_mount(g, "/proc", "proc", "proc",
                  (const char *const[]){"nosuid", "noexec", "nodev", NULL});
        gen_mount(g, "/dev", "tmpfs", "tmpfs",
                  (const char *const[]){"nosuid", "noexec", "strictatime", "mode=755",
                                        "size=65536k", NULL});
        gen_mount(g, "/dev/pts", "devpts", "devpts",
                  (const char *const[]){"nosuid", "noexec", "newinstance", "ptmxmode=0666",
                                        "mode=0620", NULL});
        gen_mount(
            g, "/dev/shm", "tmpfs", "shm",
            (const char *const[]){"nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL});
        gen_mount(g, "/dev/mqueue", "mqueue", "mqueue",
                  (const char *const[]){"nosuid", "noexec", "nodev", NULL});
        gen_mount(g, "/sys", "sysfs", "sysfs",
                  (const char *const[]){"nosuid", "noexec", "nodev", "ro", NULL});
        gen_mount(g, "/tmp", "tmpfs", "tmpfs", tmpfs_sticky);
        for (const char *const *d = state_dirs; host_root && *d; d++)
                gen_mount(g, *d, "tmpfs", "tmpfs", tmpfs_sealed);
        gen_mount(g, "/var/tmp", "tmpfs", "tmpfs", tmpfs_sticky);
        gen_mount(g, "/run", "tmpfs", "tmpfs", tmpfs_shut);
        gen_mount(g, "/home", "tmpfs", "tmpfs", tmpfs_shut);
        /* root's fresh $HOME covers /root whole: one tmpfs fewer to make and
         * tear down. */
        if (strcmp(home, "/root") != 0)
                gen_mount(g, "/root", "tmpfs", "tmpfs",
                          (const char *const[]){"nosuid", "nodev", "noexec", "mode=700", "size=64k",
                                                NULL});
}

static bool below_covered(const char *path);

static void gen_home(yajl_gen g, const struct compose_input *in)
{
        if (in->home_missing && strcmp(in->rootfs, "/") == 0 && !below_covered(in->home))
                return;
        char uid[32], gid[32];
        snprintf(uid, sizeof(uid), "uid=%u", (unsigned)in->uid);
        snprintf(gid, sizeof(gid), "gid=%u", (unsigned)in->gid);
        gen_mount(g, in->home, "tmpfs", "tmpfs",
                  (const char *const[]){"nosuid", "nodev", "mode=700", uid, gid, NULL});
}

/* A grant's path opened once from /, no symlink on the way (it is a
 * realpath: one there now was swapped in since), and still the type it was
 * granted as. */
static int open_grant(const struct grant *gr, char src[static 32], struct compose_fds *fds,
                      struct umw_error **err)
{
        _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        int fd = root < 0 ? -errno : umw_open_beneath(root, gr->path + 1, O_PATH);
        if (fd < 0)
                return umw_fail_sys(err, -fd, "grant %s: open without following a link", gr->path);
        struct stat st;
        if (fstat(fd, &st) < 0 || !(gr->is_file ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode))) {
                close(fd);
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "grant %s: no longer the %s it was granted as", gr->path,
                                gr->is_file ? "file" : "directory");
        }
        return keep_fd(fds, fd, src, err);
}

/* inside: the grants below the workspace (mounted after it, so they are not
 * covered by it) or the others (before it, so a grant of one of its parents
 * does not cover it). */
static int gen_grants(yajl_gen g, const struct compose_input *in, bool inside,
                      struct umw_error **err)
{
        for (size_t i = 0; in->grants && i < in->grants->len; i++) {
                const struct grant *gr = &in->grants->items[i];
                char src[32];
                if (path_strictly_below(gr->path, in->workspace) != inside)
                        continue;
                int r = open_grant(gr, src, in->fds, err);
                if (r < 0)
                        return r;
                gen_bind(g, gr->path, src, !gr->is_file, gr->mode == GRANT_RO, in->idmap_binds);
        }
        return 0;
}

/* Files in the workspace through which the host runs code later: git's
 * config and hooks, the project's own policy, editors' task and launch
 * settings, shell and direnv start-up files. */
static const char *const protected_entries[] = {
    ".umwelt.toml", ".gitmodules", ".vscode",       ".idea",       ".devcontainer",
    ".envrc",       ".bashrc",     ".bash_profile", ".bash_login", ".bash_logout",
    ".profile",     ".zshrc",      ".zshenv",       ".zprofile",   ".zlogin",
    ".zlogout",     ".cshrc",      ".tcshrc",       ".kshrc",      NULL};

static const char *const ro_empty_dir[] = {"ro",       "nosuid",  "nodev", "noexec",
                                           "mode=555", "size=4k", NULL};

struct ws {
        int fd;
        const char *path;
        bool idmap;
        struct compose_fds *fds;
};

/* How name in the workspace is: 0 absent, S_IFDIR, S_IFREG, with *fd open on
 * it (O_PATH, -1 when absent); a symlink (at its end or on the way) or
 * another type is refused, since a bind would follow it out of the place the
 * host later reads. The bind is made from *fd, so the agent's renames after
 * this look cannot change what is mounted. */
static int entry_open(const struct ws *ws, const char *name, mode_t *type, int *fd,
                      struct umw_error **err)
{
        struct stat st;
        *type = 0;
        *fd = umw_open_beneath(ws->fd, name, O_PATH);
        if (*fd == -ENOENT) {
                *fd = -1;
                return 0;
        }
        if (*fd < 0 || fstat(*fd, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
                bool link = *fd == -ELOOP || (*fd >= 0 && S_ISLNK(st.st_mode));
                int errnum = *fd < 0 ? -*fd : errno;
                if (*fd >= 0)
                        close(*fd);
                *fd = -1;
                if (errnum && !link)
                        return umw_fail_sys(err, errnum, "open %s/%s", ws->path, name);
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                "%s/%s: expected a file or directory that can be made read-only, "
                                "found a %s",
                                ws->path, name, link ? "symbolic link" : "special file");
        }
        *type = st.st_mode & S_IFMT;
        return 0;
}

static int protect_entry(yajl_gen g, const struct ws *ws, const char *name, bool placeholder,
                         struct umw_error **err)
{
        mode_t type;
        int fd;
        int r = entry_open(ws, name, &type, &fd, err);
        if (r < 0)
                return r;
        char src[32];
        if (type && (r = keep_fd(ws->fds, fd, src, err)) < 0)
                return r;
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/%s", ws->path, name) < 0)
                return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
        if (type)
                gen_bind(g, path, src, type == S_IFDIR, true, ws->idmap);
        else if (placeholder)
                gen_mount(g, path, "tmpfs", "tmpfs", ro_empty_dir);
        return 0;
}

/* Direct mode's .git: the whole of it read-only, bound from its fd, in
 * whatever form it has (a repository, a directory that is none, a
 * worktree's .git file, which then cannot be pointed elsewhere). Read-only
 * config and hooks alone left the rest of .git writable, and through it
 * commondir, objects/info/alternates, refs and the index, which host git
 * trusts as much. The bind is a mount point, so it cannot be renamed
 * aside either (EBUSY) and a new .git planted in its place. An absent .git
 * is covered by an empty read-only directory, so no repository can be
 * planted there. Trade-off: the runtime creates that mount point through
 * the workspace bind, so an absent .git is left behind on the host as an
 * empty directory; git's discovery passes over it (it is no repository),
 * and the next sandbox covers it again. */
static int protect_git(yajl_gen g, const struct ws *ws, struct umw_error **err)
{
        return protect_entry(g, ws, ".git", true, err);
}

/* The agent's repository over the overlay's .git (a mount point: it
 * cannot be renamed away), and the host's objects read-only below it,
 * both from fds opened here. */
static int gen_agent_repo(yajl_gen g, const struct compose_input *in, int ws_fd,
                          struct umw_error **err)
{
        char repo_src[32], objects_src[32];
        int repo = open(in->agent_repo, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int r = repo < 0 ? umw_fail_errno(err, "open %s", in->agent_repo)
                         : keep_fd(in->fds, repo, repo_src, err);
        if (r < 0)
                return r;
        int objects = umw_open_beneath(ws_fd, ".git/objects", O_PATH | O_DIRECTORY);
        r = objects < 0 ? umw_fail_sys(err, -objects, "open %s/.git/objects", in->workspace)
                        : keep_fd(in->fds, objects, objects_src, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *git = NULL, *host_objects = NULL;
        if (asprintf(&git, "%s/.git", in->workspace) < 0 ||
            asprintf(&host_objects, "%s/.git/%s", in->workspace, AGENT_REPO_OBJECTS) < 0)
                return umw_fail_sys(err, ENOMEM, "review mode");
        gen_bind(g, git, repo_src, true, false, in->idmap_binds);
        gen_bind(g, host_objects, objects_src, true, true, in->idmap_binds);
        return 0;
}

/* Review mode: the workspace is an overlay, the project as its read-only
 * lower directory and the layer taking every write, so nothing the agent
 * writes there reaches the host's tree (rw grants below it stay direct:
 * they are mounted after it). The project is named by the fd opened here:
 * root's overlay has its layers idmapped by the runtime, a user's is made
 * in the sandbox's user namespace, on the same directory reached again
 * there (runtime/mount_overlay.c). The layer, in umwelt's state directory,
 * is named by its path, which overlayfs's options cannot quote. */
static int gen_review_workspace(yajl_gen g, const struct compose_input *in, struct umw_error **err)
{
        for (const char *p = in->layer; *p; p++)
                if (*p == ',' || *p == ':' || *p == '\\')
                        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL,
                                        "review mode: the layer %s has a ',', ':' or '\\' in "
                                        "its path, which an overlay cannot name (use direct mode)",
                                        in->layer);
        char src[32];
        int fd = open(in->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int r = fd < 0 ? umw_fail_errno(err, "open workspace %s", in->workspace)
                       : keep_fd(in->fds, fd, src, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *lower = NULL, *upper = NULL, *work = NULL;
        if (asprintf(&lower, "lowerdir=%s", src) < 0 ||
            asprintf(&upper, "upperdir=%s/upper", in->layer) < 0 ||
            asprintf(&work, "workdir=%s/work", in->layer) < 0)
                return umw_fail_sys(err, ENOMEM, "review mode");
        const char *const opts[] = {
            "nosuid", "nodev", lower, upper, work, in->idmap_binds ? "idmap" : "userxattr", NULL};
        gen_mount(g, in->workspace, "overlay", "overlay", opts);
        if (in->agent_repo && (r = gen_agent_repo(g, in, fd, err)) < 0)
                return r;
        return gen_grants(g, in, true, err);
}

static int gen_workspace(yajl_gen g, const struct compose_input *in, struct umw_error **err)
{
        if (in->layer)
                return gen_review_workspace(g, in, err);
        int fd = open(in->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return umw_fail_errno(err, "open workspace %s", in->workspace);
        char src[32];
        int r = keep_fd(in->fds, fd, src, err);
        if (r < 0)
                return r;
        struct ws ws = {.fd = fd, .path = in->workspace, .idmap = in->idmap_binds, .fds = in->fds};
        gen_bind(g, in->workspace, src, true, false, in->idmap_binds);
        r = gen_grants(g, in, true, err);
        if (r >= 0)
                r = protect_git(g, &ws, err);
        for (const char *const *p = protected_entries; r >= 0 && *p; p++)
                r = protect_entry(g, &ws, *p, false, err);
        return r;
}

/* The sandbox's own read-only binds (host directories of the sandbox face),
 * opened here once like every other source. */
static int gen_extra_mounts(yajl_gen g, const struct compose_input *in, struct umw_error **err)
{
        for (size_t i = 0; i < in->n_ro_binds; i++) {
                bool idmap = in->idmap_binds && !in->ro_binds[i].plain;
                const char *const ro_opts[] = {
                    "rbind", "ro", "nosuid", "nodev", "noexec", idmap ? "idmap" : NULL, NULL};
                char src[32];
                int fd = open(in->ro_binds[i].source, O_PATH | O_DIRECTORY | O_CLOEXEC);
                int r = fd < 0 ? umw_fail_errno(err, "open %s", in->ro_binds[i].source)
                               : keep_fd(in->fds, fd, src, err);
                if (r < 0)
                        return r;
                gen_mount(g, in->ro_binds[i].destination, "bind", src, ro_opts);
        }
        return 0;
}

static int gen_mounts(yajl_gen g, const struct compose_input *in, struct umw_error **err)
{
        umw_jgen_key(g, "mounts");
        yajl_gen_array_open(g);
        gen_system_mounts(g, in->home, strcmp(in->rootfs, "/") == 0);
        gen_home(g, in);
        int r = gen_grants(g, in, false, err);
        if (r >= 0)
                r = gen_workspace(g, in, err);
        if (r >= 0)
                r = gen_extra_mounts(g, in, err);
        yajl_gen_array_close(g);
        return r;
}

/* ------------------------------------------------------------ process */

/* Whether entry's name is one the sandbox sets itself. */
static bool env_overridden(const char *entry, const char *const *set)
{
        size_t len = strcspn(entry, "=");
        for (; set && *set; set++)
                if (strncmp(*set, entry, len) == 0 && (*set)[len] == '=')
                        return true;
        return false;
}

static void gen_env(yajl_gen g, const struct compose_input *in)
{
        umw_jgen_key(g, "env");
        yajl_gen_array_open(g);
        for (const char *const *e = in->env; e && *e; e++)
                if (strncmp(*e, "HOME=", 5) != 0 && compose_env_allowed(*e, in->env_extra) &&
                    !env_overridden(*e, in->env_set))
                        umw_jgen_str(g, *e);
        for (const char *const *e = in->env_set; e && *e; e++)
                umw_jgen_str(g, *e);
        _cleanup_free_ char *home = NULL;
        if (asprintf(&home, "HOME=%s", in->home) >= 0)
                umw_jgen_str(g, home);
        yajl_gen_array_close(g);
}

static void gen_process(yajl_gen g, const struct compose_input *in)
{
        umw_jgen_key(g, "process");
        yajl_gen_map_open(g);
        umw_jgen_key_bool(g, "terminal", in->terminal);
        umw_jgen_key(g, "user");
        yajl_gen_map_open(g);
        umw_jgen_key_int(g, "uid", in->uid);
        umw_jgen_key_int(g, "gid", in->gid);
        yajl_gen_map_close(g);
        gen_strv(g, "args", in->args);
        gen_env(g, in);
        umw_jgen_key_str(g, "cwd", in->workspace);
        umw_jgen_key(g, "capabilities");
        yajl_gen_map_open(g);
        static const char *const sets[] = {"bounding", "effective", "inheritable", "permitted",
                                           "ambient"};
        for (size_t i = 0; i < ARRAY_SIZE(sets); i++)
                gen_strv(g, sets[i], NULL);
        yajl_gen_map_close(g);
        umw_jgen_key_bool(g, "noNewPrivileges", true);
        yajl_gen_map_close(g);
}

/* ------------------------------------------------------------ linux */

static void gen_idmap_entry(yajl_gen g, unsigned id, unsigned host)
{
        yajl_gen_map_open(g);
        umw_jgen_key_int(g, "containerID", id);
        umw_jgen_key_int(g, "hostID", host);
        umw_jgen_key_int(g, "size", 1);
        yajl_gen_map_close(g);
}

/* id to itself; with map_root, 0 to root (root's runtime: the init creates
 * the container's files as 0, which must be mapped, but never to the host's
 * 0), ascending. */
static void gen_idmap(yajl_gen g, const char *key, unsigned id, bool map_root, unsigned root)
{
        umw_jgen_key(g, key);
        yajl_gen_array_open(g);
        if (map_root)
                gen_idmap_entry(g, 0, root);
        if (!map_root || id != 0)
                gen_idmap_entry(g, id, id);
        yajl_gen_array_close(g);
}

static void gen_namespaces(yajl_gen g, const struct compose_input *in)
{
        static const char *const types[] = {"pid", "network", "ipc", "uts", "mount", "cgroup"};
        umw_jgen_key(g, "namespaces");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < ARRAY_SIZE(types) + in->user_namespace; i++) {
                yajl_gen_map_open(g);
                umw_jgen_key_str(g, "type", i < ARRAY_SIZE(types) ? types[i] : "user");
                yajl_gen_map_close(g);
        }
        yajl_gen_array_close(g);
        if (in->user_namespace) {
                gen_idmap(g, "uidMappings", (unsigned)in->uid, in->map_root,
                          (unsigned)in->root_uid);
                gen_idmap(g, "gidMappings", (unsigned)in->gid, in->map_root,
                          (unsigned)in->root_gid);
        }
}

/* The kernel's interfaces that tell about or act on the host, and the host's
 * secrets in /etc. A fixed list: the runtime skips the ones a host lacks. */
static const char *const masked_paths[] = {"/proc/acpi",
                                           "/proc/kcore",
                                           "/proc/keys",
                                           "/proc/latency_stats",
                                           "/proc/timer_list",
                                           "/proc/timer_stats",
                                           "/proc/sched_debug",
                                           "/proc/scsi",
                                           "/sys/firmware",
                                           "/sys/fs/selinux",
                                           "/sys/dev/block",
                                           "/etc/shadow",
                                           "/etc/shadow-",
                                           "/etc/gshadow",
                                           "/etc/gshadow-",
                                           "/etc/security/opasswd",
                                           "/etc/ssh/ssh_host_rsa_key",
                                           "/etc/ssh/ssh_host_dsa_key",
                                           "/etc/ssh/ssh_host_ecdsa_key",
                                           "/etc/ssh/ssh_host_ed25519_key",
                                           NULL};
static const char *const readonly_paths[] = {
    "/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL};

/* Directories the sandbox covers with a tmpfs of its own on the host's root,
 * so a socket below one is out of view unless a bind brings it back. */
static const char *const covered_dirs[] = {"/tmp", "/var",   "/run", "/home", "/root", "/srv",
                                           "/mnt", "/media", "/dev", "/proc", "/sys",  NULL};

static bool below_covered(const char *path)
{
        for (const char *const *d = covered_dirs; *d; d++)
                if (path_strictly_below(path, *d))
                        return true;
        return false;
}

/* Whether the sandbox may see path on the host's root: not below a covered
 * directory or the fresh home, or below the workspace or a grant (binds of
 * the host's own files, sockets included). */
static bool in_view(const struct compose_input *in, const char *path)
{
        if (path_strictly_below(path, in->workspace))
                return true;
        for (size_t i = 0; in->grants && i < in->grants->len; i++)
                if (path_strictly_below(path, in->grants->items[i].path))
                        return true;
        return !path_strictly_below(path, in->home) && !below_covered(path);
}

const char *compose_unix_socket_path(char *line)
{
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
                line[len - 1] = '\0';
        /* Num RefCount Protocol Flags Type St Inode Path */
        char *path = line;
        for (int field = 0; path && field < 7; field++) {
                path += strspn(path, " ");
                path = strchr(path, ' ');
        }
        return path && (path += strspn(path, " "))[0] == '/' ? path : NULL;
}

/* Every pathname socket bound in the caller's network namespace (the
 * host's: compose runs before the sandbox's exist) that the sandbox would
 * see, masked: connect() needs only search and write permission, which a
 * read-only mount does not take away, so a service listening under /etc,
 * /opt or the workspace would be one connect() from the sandbox.
 * /proc/net/unix ends each line with the path as bound; abstract ones (@)
 * are the sandbox's network namespace's own, relative ones cannot be placed
 * (left out). A host without /proc/net/unix has no socket to list. Known
 * gap: the table prints a path's bytes raw, so one holding a newline spans
 * two lines and is masked under a wrong name (only a host process can bind
 * such a name where the sandbox looks; reading the sockets over sock_diag,
 * exact bytes, would close it). */
static int gen_host_sockets(yajl_gen g, const struct compose_input *in, struct umw_error **err)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/net/unix", "re");
        if (!f)
                return errno == ENOENT ? 0 : umw_fail_errno(err, "read /proc/net/unix");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while ((n = getline(&line, &cap, f)) > 0) {
                const char *path = compose_unix_socket_path(line);
                if (path && in_view(in, path))
                        umw_jgen_str(g, path);
        }
        return ferror(f) ? umw_fail_errno(err, "read /proc/net/unix") : 0;
}

static int gen_linux(yajl_gen g, const struct compose_input *in, struct umw_error **err)
{
        umw_jgen_key(g, "linux");
        yajl_gen_map_open(g);
        gen_namespaces(g, in);
        int r = gen_embedded(g, "resources", preset_resources_json(in->preset), "preset resources",
                             err);
        _cleanup_free_ char *profile = r >= 0 ? seccomp_profile_json() : NULL;
        if (r >= 0 && !profile)
                r = umw_fail(err, UMW_EXIT_FAILURE, EINVAL,
                             "compose: cannot render the seccomp profile");
        if (r >= 0) {
                /* The rendered object goes in as it is (yajl_gen_number
                 * writes its text verbatim, as one value): 29 kB that a
                 * round trip through a tree would parse and write again. */
                umw_jgen_key(g, "seccomp");
                yajl_gen_number(g, profile, strlen(profile));
        }
        /* The hidden directories too: masked after every mount, so that no
         * workspace or grant bound before can uncover them, and skipped
         * where the container's root cannot reach them at all (root's
         * state directory, 0700, from root's sandbox). */
        umw_jgen_key(g, "maskedPaths");
        yajl_gen_array_open(g);
        for (const char *const *m = masked_paths; *m; m++)
                umw_jgen_str(g, *m);
        for (const char *const *h = in->hidden; h && *h; h++)
                umw_jgen_str(g, *h);
        if (r >= 0 && strcmp(in->rootfs, "/") == 0)
                r = gen_host_sockets(g, in, err);
        yajl_gen_array_close(g);
        gen_strv(g, "readonlyPaths", readonly_paths);
        yajl_gen_map_close(g);
        return r;
}

/* ------------------------------------------------------------ document */

static int check_input(const struct compose_input *in, struct umw_error **err)
{
        const char *bad = !in->workspace || in->workspace[0] != '/' ? "workspace: an absolute path"
                          : !in->home || in->home[0] != '/'         ? "home: an absolute path"
                          : !in->rootfs || !in->rootfs[0]           ? "rootfs: a directory"
                          : !in->hostname || !in->hostname[0]       ? "hostname: a name"
                          : !in->args || !in->args[0]               ? "args: a command"
                          : !in->preset                             ? "preset: a resolved preset"
                          : !in->fds                                ? "fds: a place for sources"
                                                                    : NULL;
        if (bad)
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "compose: expected %s", bad);
        return 0;
}

int compose_config(const struct compose_input *in, char **json, struct umw_error **err)
{
        int r = check_input(in, err);
        if (r < 0)
                return r;
        yajl_gen g = umw_jgen_new(false);
        if (!g)
                return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "ociVersion", "1.0.2");
        umw_jgen_key(g, "root");
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "path", in->rootfs);
        umw_jgen_key_bool(g, "readonly", true);
        yajl_gen_map_close(g);
        umw_jgen_key_str(g, "hostname", in->hostname);
        /* The runtime's nftables default-drop in the sandbox's network
         * namespace (umwelt-run(1), ANNOTATIONS). */
        umw_jgen_key(g, "annotations");
        yajl_gen_map_open(g);
        umw_jgen_key_str(g, "run.umwelt.net", "default-drop");
        for (const char *const *kv = in->annotations; kv && kv[0]; kv += 2)
                umw_jgen_key_str(g, kv[0], kv[1]);
        yajl_gen_map_close(g);
        gen_process(g, in);
        r = gen_mounts(g, in, err);
        if (r >= 0)
                r = gen_linux(g, in, err);
        yajl_gen_map_close(g);
        _cleanup_free_ char *text = umw_jgen_finish(g, NULL);
        if (r < 0)
                return umw_error_prefix(err, "compose %s", in->workspace);
        if (!text)
                return umw_fail(err, UMW_EXIT_FAILURE, ENOMEM, "out of memory");
        *json = TAKE_PTR(text);
        return 0;
}
