/* compose: the closed default, read back with the runtime's own spec parser. */
#include "policy/compose.h"
#include "policy/grants.h"
#include "policy/presets.h"
#include "runtime/spec.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char W[] = "/tmp/test-compose-XXXXXX";
static const struct preset preset = {
    .name = "dev", .memory_bytes = 1ULL << 30, .cpus_milli = 1500, .pids = 512};
static const char *const args[] = {"/bin/sh", "-c", "true", NULL};
static const char *const env[] = {"PATH=/usr/bin:/bin", "TERM=xterm",       "HOME=/home/me",
                                  "GITHUB_TOKEN=ghp",   "SSH_AUTH_SOCK=/s", "LC_ALL=C",
                                  "EDITOR=vi",          "PROJECT=x",        NULL};
static const char *const extra[] = {"PROJECT", "GITHUB_TOKEN", NULL};

static void setup(void)
{
        cr_assert(mkdtemp(W));
}

static void rm_tree(void)
{
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", W);
        cr_assert_eq(system(cmd), 0);
}

TestSuite(compose, .init = setup, .fini = rm_tree);

static char *at(const char *rel)
{
        static char bufs[8][PATH_MAX];
        static unsigned next;
        char *b = bufs[next++ % 8];
        snprintf(b, PATH_MAX, "%s/%s", W, rel);
        return b;
}

static void mkfile(const char *rel)
{
        int fd = open(at(rel), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0, "create %s", rel);
        close(fd);
}

static void mkdir_rel(const char *rel)
{
        cr_assert_eq(mkdir(at(rel), 0755), 0, "mkdir %s", rel);
}

static struct compose_fds fds;

static struct compose_input input(void)
{
        compose_fds_close(&fds);
        return (struct compose_input){.preset = &preset,
                                      .workspace = W,
                                      .rootfs = "/",
                                      .hostname = "umwelt-proj",
                                      .uid = 1000,
                                      .gid = 1001,
                                      .home = "/home/me",
                                      .env = env,
                                      .env_extra = extra,
                                      .args = args,
                                      .terminal = true,
                                      .fds = &fds};
}

static struct spec *compose(const struct compose_input *in)
{
        char *json = NULL;
        struct umw_error *err = NULL;
        int r = compose_config(in, &json, &err);
        cr_assert_eq(r, 0, "compose: %s", err ? err->msg : "");
        struct spec *spec = NULL;
        r = spec_load(json, "config.json", &spec, &err);
        cr_assert_eq(r, 0, "spec_load: %s\n%s", err ? err->msg : "", json);
        free(json);
        return spec;
}

/* The index of the mount at dest, -1 when none. */
static ssize_t mount_at(const struct spec *s, const char *dest)
{
        for (size_t i = 0; i < s->n_mounts; i++)
                if (strcmp(s->mounts[i].destination, dest) == 0)
                        return (ssize_t)i;
        return -1;
}

static bool has_option(const struct spec_mount *m, const char *opt)
{
        for (size_t i = 0; i < m->n_options; i++)
                if (strcmp(m->options[i], opt) == 0)
                        return true;
        return false;
}

static const struct spec_mount *expect_mount(const struct spec *s, const char *dest,
                                             const char *type)
{
        ssize_t i = mount_at(s, dest);
        cr_assert_geq(i, 0, "no mount at %s", dest);
        cr_assert_str_eq(s->mounts[i].type, type, "type of %s", dest);
        return &s->mounts[i];
}

/* A bind's source is an fd compose opened on path (not path by name). */
static void expect_source(const struct spec_mount *m, const char *path)
{
        char target[4096];
        cr_assert_eq(strncmp(m->source, "/proc/self/fd/", 14), 0, "%s: source %s", path, m->source);
        ssize_t n = readlink(m->source, target, sizeof(target) - 1);
        cr_assert_gt(n, 0, "%s: source %s", path, m->source);
        target[n] = '\0';
        cr_assert_str_eq(target, path);
}

static void expect_ro_bind(const struct spec *s, const char *dest, bool dir)
{
        const struct spec_mount *m = expect_mount(s, dest, "bind");
        expect_source(m, dest);
        cr_assert(has_option(m, dir ? "rbind" : "bind"), "%s: bind kind", dest);
        cr_assert(has_option(m, "ro"), "%s is not read-only", dest);
}

static bool in_strv(const char **v, size_t n, const char *s)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i], s) == 0)
                        return true;
        return false;
}

Test(compose, root_identity_and_namespaces)
{
        struct compose_input in = input();
        struct spec *s = compose(&in);
        cr_assert_str_eq(s->root_path, "/");
        cr_assert(s->root_readonly);
        cr_assert_str_eq(s->hostname, "umwelt-proj");
        enum spec_ns fresh[] = {SPEC_NS_PID, SPEC_NS_NET,   SPEC_NS_IPC,
                                SPEC_NS_UTS, SPEC_NS_MOUNT, SPEC_NS_CGROUP};
        for (size_t i = 0; i < sizeof(fresh) / sizeof(fresh[0]); i++) {
                cr_assert(s->namespaces[fresh[i]].enabled, "%s", spec_ns_name(fresh[i]));
                cr_assert_null(s->namespaces[fresh[i]].path);
        }
        cr_assert_not(s->namespaces[SPEC_NS_USER].enabled);
        cr_assert_eq(s->n_uid_mappings, 0);
        cr_assert_eq(s->process.uid, 1000);
        cr_assert_eq(s->process.gid, 1001);
        cr_assert_str_eq(s->process.cwd, W);
        cr_assert(s->process.terminal);
        cr_assert_str_eq(s->process.args[0], "/bin/sh");
        cr_assert_str_eq(s->process.args[2], "true");
        cr_assert_null(s->process.args[3]);
        spec_free(s);
}

Test(compose, user_namespace_maps_the_user_to_itself)
{
        struct compose_input in = input();
        in.user_namespace = true;
        struct spec *s = compose(&in);
        cr_assert(s->namespaces[SPEC_NS_USER].enabled);
        cr_assert_null(s->namespaces[SPEC_NS_USER].path);
        cr_assert_eq(s->n_uid_mappings, 1);
        cr_assert_eq(s->n_gid_mappings, 1);
        cr_assert_eq(s->uid_mappings[0].container_id, 1000);
        cr_assert_eq(s->uid_mappings[0].host_id, 1000);
        cr_assert_eq(s->uid_mappings[0].size, 1);
        cr_assert_eq(s->gid_mappings[0].container_id, 1001);
        cr_assert_eq(s->gid_mappings[0].host_id, 1001);
        cr_assert_eq(s->gid_mappings[0].size, 1);
        spec_free(s);
}

Test(compose, no_privilege_seccomp_and_limits)
{
        struct compose_input in = input();
        struct spec *s = compose(&in);
        cr_assert(s->process.has_caps);
        cr_assert_eq(s->process.caps.bounding, 0);
        cr_assert_eq(s->process.caps.effective, 0);
        cr_assert_eq(s->process.caps.inheritable, 0);
        cr_assert_eq(s->process.caps.permitted, 0);
        cr_assert_eq(s->process.caps.ambient, 0);
        cr_assert(s->process.no_new_privileges);
        cr_assert_not_null(s->seccomp);
        cr_assert_eq(s->seccomp->default_action, SPEC_SCMP_ERRNO);
        cr_assert_eq(s->seccomp->default_errno_ret, ENOSYS);
        cr_assert_gt(s->seccomp->n_rules, 10);
        const char *mem[] = {"memory", "limit", NULL}, *pids[] = {"pids", "limit", NULL};
        yajl_val v = yajl_tree_get(s->resources, mem, yajl_t_number);
        cr_assert_not_null(v);
        cr_assert_eq(YAJL_GET_INTEGER(v), 1LL << 30);
        v = yajl_tree_get(s->resources, pids, yajl_t_number);
        cr_assert_not_null(v);
        cr_assert_eq(YAJL_GET_INTEGER(v), 512);
        spec_free(s);
}

Test(compose, system_mounts_hide_homes_and_secrets)
{
        struct compose_input in = input();
        struct spec *s = compose(&in);
        expect_mount(s, "/proc", "proc");
        cr_assert(has_option(expect_mount(s, "/sys", "sysfs"), "ro"));
        expect_mount(s, "/dev", "tmpfs");
        expect_mount(s, "/dev/pts", "devpts");
        expect_mount(s, "/dev/shm", "tmpfs");
        expect_mount(s, "/dev/mqueue", "mqueue");
        const char *tmpfs[] = {"/tmp", "/var/tmp", "/run", "/home", "/root"};
        for (size_t i = 0; i < sizeof(tmpfs) / sizeof(tmpfs[0]); i++)
                expect_mount(s, tmpfs[i], "tmpfs");
        const struct spec_mount *home = expect_mount(s, "/home/me", "tmpfs");
        cr_assert(has_option(home, "uid=1000"));
        cr_assert(has_option(home, "gid=1001"));
        cr_assert_lt(mount_at(s, "/home"), mount_at(s, "/home/me"));
        const char *masked[] = {"/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_ed25519_key",
                                "/proc/kcore", "/proc/keys",   "/sys/firmware"};
        for (size_t i = 0; i < sizeof(masked) / sizeof(masked[0]); i++)
                cr_assert(in_strv(s->masked_paths, s->n_masked_paths, masked[i]), "%s", masked[i]);
        cr_assert(in_strv(s->readonly_paths, s->n_readonly_paths, "/proc/sys"));
        cr_assert(in_strv(s->readonly_paths, s->n_readonly_paths, "/proc/sysrq-trigger"));
        spec_free(s);
}

/* root's fresh $HOME is /root itself: it is the one mount there (the empty
 * tmpfs that hides /root for everybody else would lie under it unseen). */
Test(compose, root_home_is_the_only_mount_at_root)
{
        struct compose_input in = input();
        in.home = "/root";
        in.uid = 0;
        in.gid = 0;
        struct spec *s = compose(&in);
        size_t n = 0;
        for (size_t i = 0; i < s->n_mounts; i++)
                n += strcmp(s->mounts[i].destination, "/root") == 0;
        cr_assert_eq(n, 1);
        const struct spec_mount *home = expect_mount(s, "/root", "tmpfs");
        cr_assert(has_option(home, "uid=0"));
        cr_assert_not(has_option(home, "noexec"));
        spec_free(s);
}

/* A home that does not exist on the host (passwd's /nonexistent) gets no
 * tmpfs on the host's root, where no mount point can be made; one below a
 * directory the sandbox covers still does, and HOME names it either way. */
Test(compose, missing_home_is_not_mounted_on_the_host_root)
{
        struct compose_input in = input();
        in.home = "/nonexistent";
        in.home_missing = true;
        struct spec *s = compose(&in);
        cr_assert_eq(mount_at(s, "/nonexistent"), -1);
        bool named = false;
        for (const char **e = s->process.env; e && *e; e++)
                named |= strcmp(*e, "HOME=/nonexistent") == 0;
        cr_assert(named);
        spec_free(s);
        in = input();
        in.home_missing = true;
        s = compose(&in);
        expect_mount(s, "/home/me", "tmpfs");
        spec_free(s);
}

Test(compose, workspace_read_write_after_the_home_tmpfs)
{
        struct compose_input in = input();
        struct spec *s = compose(&in);
        const struct spec_mount *m = expect_mount(s, W, "bind");
        expect_source(m, W);
        cr_assert(has_option(m, "rbind"));
        cr_assert(has_option(m, "rw"));
        cr_assert_not(has_option(m, "ro"));
        cr_assert_gt(mount_at(s, W), mount_at(s, "/home/me"));
        cr_assert_gt(mount_at(s, W), mount_at(s, "/tmp"));
        spec_free(s);
}

/* The option of m that starts with prefix, NULL when none. */
static const char *option_with(const struct spec_mount *m, const char *prefix)
{
        for (size_t i = 0; i < m->n_options; i++)
                if (strncmp(m->options[i], prefix, strlen(prefix)) == 0)
                        return m->options[i] + strlen(prefix);
        return NULL;
}

Test(compose, review_mode_workspace_is_an_overlay_over_the_layer)
{
        mkfile(".umwelt.toml");
        struct compose_input in = input();
        in.layer = "/state/umwelt/proj-1/layer";
        struct spec *s = compose(&in);
        const struct spec_mount *m = expect_mount(s, W, "overlay");
        char target[4096];
        const char *lower = option_with(m, "lowerdir=");
        ssize_t n = lower ? readlink(lower, target, sizeof(target) - 1) : -1;
        cr_assert_gt(n, 0, "a user's lowerdir is an fd compose opened: %s", lower);
        target[n] = '\0';
        cr_expect_str_eq(target, W);
        cr_expect_str_eq(option_with(m, "upperdir="), "/state/umwelt/proj-1/layer/upper");
        cr_expect_str_eq(option_with(m, "workdir="), "/state/umwelt/proj-1/layer/work");
        cr_expect(has_option(m, "userxattr"));
        cr_expect_not(has_option(m, "idmap"));
        char policy[4096];
        snprintf(policy, sizeof(policy), "%s/.umwelt.toml", W);
        cr_expect_eq(mount_at(s, policy), -1, "writes go to the layer: no protecting bind");
        spec_free(s);

        in = input();
        in.layer = "/state/umwelt/proj-1/layer";
        in.idmap_binds = in.user_namespace = in.map_root = true;
        in.root_uid = in.root_gid = 1879048192;
        s = compose(&in);
        m = expect_mount(s, W, "overlay");
        cr_expect(has_option(m, "idmap"), "root's: its layers idmapped");
        lower = option_with(m, "lowerdir=");
        n = lower ? readlink(lower, target, sizeof(target) - 1) : -1;
        cr_assert_gt(n, 0, "root's lowerdir is an fd compose opened: %s", lower);
        target[n] = '\0';
        cr_expect_str_eq(target, W);
        spec_free(s);
}

Test(compose, review_mode_refuses_a_path_an_overlay_cannot_name)
{
        struct compose_input in = input();
        in.layer = "/state/a,b/layer"; /* the workspace is named by fd: any path */
        char *json = NULL;
        struct umw_error *err = NULL;
        cr_assert_lt(compose_config(&in, &json, &err), 0);
        cr_expect(strstr(err->msg, "cannot name"), "%s", err->msg);
        umw_error_free(err);
        free(json);
}

Test(compose, protected_files_that_exist_are_read_only)
{
        mkdir_rel(".git");
        mkdir_rel(".git/hooks");
        mkfile(".git/HEAD");
        mkfile(".git/config");
        mkfile(".bashrc");
        mkfile(".umwelt.toml");
        mkdir_rel(".vscode");
        struct compose_input in = input();
        struct spec *s = compose(&in);
        expect_ro_bind(s, at(".git"), true);
        expect_ro_bind(s, at(".bashrc"), false);
        expect_ro_bind(s, at(".umwelt.toml"), false);
        expect_ro_bind(s, at(".vscode"), true);
        cr_assert_eq(mount_at(s, at(".git/config")), -1, "covered by the read-only .git");
        cr_assert_eq(mount_at(s, at(".git/hooks")), -1);
        cr_assert_eq(mount_at(s, at(".zshrc")), -1, "absent files get no mount");
        cr_assert_eq(mount_at(s, at(".idea")), -1);
        cr_assert_eq(mount_at(s, at(".gitmodules")), -1);
        cr_assert_gt(mount_at(s, at(".bashrc")), mount_at(s, W));
        spec_free(s);
}

Test(compose, absent_git_is_covered)
{
        struct compose_input in = input();
        struct spec *s = compose(&in);
        const struct spec_mount *m = expect_mount(s, at(".git"), "tmpfs");
        cr_assert(has_option(m, "ro"));
        cr_assert_gt(mount_at(s, at(".git")), mount_at(s, W));
        spec_free(s);
}

Test(compose, git_directory_that_is_no_repository_is_read_only)
{
        mkdir_rel(".git");
        struct compose_input in = input();
        struct spec *s = compose(&in);
        expect_ro_bind(s, at(".git"), true);
        cr_assert_eq(mount_at(s, at(".git/hooks")), -1);
        spec_free(s);
}

Test(compose, repository_without_hooks_is_read_only_whole)
{
        mkdir_rel(".git");
        mkfile(".git/HEAD");
        mkfile(".git/config");
        struct compose_input in = input();
        struct spec *s = compose(&in);
        expect_ro_bind(s, at(".git"), true);
        cr_assert_eq(mount_at(s, at(".git/hooks")), -1, "no hooks directory can be made in it");
        spec_free(s);
}

Test(compose, git_file_is_read_only)
{
        mkfile(".git");
        struct compose_input in = input();
        struct spec *s = compose(&in);
        expect_ro_bind(s, at(".git"), false);
        spec_free(s);
}

Test(compose, symlinked_protected_file_is_refused)
{
        cr_assert_eq(symlink("/etc/hostname", at(".bashrc")), 0);
        struct compose_input in = input();
        char *json = NULL;
        struct umw_error *err = NULL;
        cr_assert_lt(compose_config(&in, &json, &err), 0);
        cr_assert_null(json);
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
        cr_assert(strstr(err->msg, ".bashrc") && strstr(err->msg, "symbolic link"), "%s", err->msg);
        umw_error_free(err);
}

Test(compose, grants_in_order_around_the_workspace)
{
        mkdir_rel("data");
        mkfile(".bashrc");
        struct grant items[] = {
            {.path = "/usr", .mode = GRANT_RO, .parent = -1},
            {.path = "/usr/local", .mode = GRANT_RW, .parent = 0},
            {.path = "/etc/hostname", .mode = GRANT_RO, .is_file = true, .parent = -1},
            {.path = "/tmp", .mode = GRANT_RO, .parent = -1},
            {.path = at("data"), .mode = GRANT_RO, .parent = 3},
        };
        struct grant_list grants = {.items = items, .len = sizeof(items) / sizeof(items[0])};
        struct compose_input in = input();
        in.grants = &grants;
        struct spec *s = compose(&in);
        /* "/tmp" is both a tmpfs and a grant: the grant's bind is the later one. */
        ssize_t tmp_grant = -1;
        for (size_t i = 0; i < s->n_mounts; i++)
                if (strcmp(s->mounts[i].destination, "/tmp") == 0 &&
                    strcmp(s->mounts[i].type, "bind") == 0)
                        tmp_grant = (ssize_t)i;
        cr_assert_geq(tmp_grant, 0);
        ssize_t usr = mount_at(s, "/usr"), local = mount_at(s, "/usr/local"), ws = mount_at(s, W),
                data = mount_at(s, at("data")), rc = mount_at(s, at(".bashrc"));
        cr_assert(usr >= 0 && usr < local && local < ws,
                  "parents first, outside before the workspace");
        cr_assert_lt(tmp_grant, ws, "a grant holding the workspace must not cover it");
        cr_assert(ws < data && data < rc, "grants inside after the workspace, protection last");
        cr_assert(has_option(&s->mounts[usr], "ro"));
        cr_assert(has_option(&s->mounts[usr], "rbind"));
        cr_assert(has_option(&s->mounts[local], "rw"));
        expect_ro_bind(s, "/etc/hostname", false);
        expect_ro_bind(s, at("data"), true);
        spec_free(s);
}

Test(compose, environment_is_filtered)
{
        struct compose_input in = input();
        struct spec *s = compose(&in);
        const char **e = s->process.env;
        size_t n = 0;
        while (e[n])
                n++;
        cr_assert(in_strv(e, n, "PATH=/usr/bin:/bin"));
        cr_assert(in_strv(e, n, "TERM=xterm"));
        cr_assert(in_strv(e, n, "LC_ALL=C"));
        cr_assert(in_strv(e, n, "PROJECT=x"));
        cr_assert(in_strv(e, n, "HOME=/home/me"));
        cr_assert_not(in_strv(e, n, "GITHUB_TOKEN=ghp"), "a credential passes even when listed");
        cr_assert_not(in_strv(e, n, "SSH_AUTH_SOCK=/s"));
        cr_assert_not(in_strv(e, n, "EDITOR=vi"));
        cr_assert_eq(n, 5, "exactly the allowed ones");
        spec_free(s);
}

Test(compose, env_table)
{
        static const char *const proj[] = {"EDITOR", "AWS_REGION", "DEPLOY_KEY", "CI", NULL};
        static const struct {
                const char *entry;
                bool allowed;
        } cases[] = {
            {"PATH=/bin", true},
            {"TERM=dumb", true},
            {"LANG=C.UTF-8", true},
            {"LC_CTYPE=C", true},
            {"HOME=/x", true},
            {"USER=me", true},
            {"SHELL=/bin/sh", true},
            {"EDITOR=vi", true},
            {"CI=1", true},
            {"PATHX=1", false},
            {"LC_=1", false},
            {"DISPLAY=:0", false},
            {"PATH", false},
            {"=x", false},
            {"SSH_AUTH_SOCK=/s", false},
            {"GITHUB_TOKEN=x", false},
            {"NPM_TOKEN=x", false},
            {"GH_TOKEN=x", false},
            {"AWS_REGION=eu", false},
            {"AWS_SECRET_ACCESS_KEY=x", false},
            {"DEPLOY_KEY=x", false},
            {"DB_PASSWORD=x", false},
            {"CLIENT_SECRET_ID=x", false},
            {"my_token=x", false},
            {"DOCKER_HOST=unix://", false},
            {"DBUS_SESSION_BUS_ADDRESS=x", false},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                cr_assert_eq(compose_env_allowed(cases[i].entry, proj), cases[i].allowed, "%s",
                             cases[i].entry);
        cr_assert_not(compose_env_allowed("EDITOR=vi", NULL));
}

Test(compose, bad_input_is_refused)
{
        struct compose_input in = input();
        in.workspace = "relative/dir";
        char *json = NULL;
        struct umw_error *err = NULL;
        cr_assert_lt(compose_config(&in, &json, &err), 0);
        cr_assert_eq(err->kind, UMW_EXIT_CONFIG);
        cr_assert(strstr(err->msg, "workspace"), "%s", err->msg);
        umw_error_free(err);
        err = NULL;
        in = input();
        static const char *const none[] = {NULL};
        in.args = none;
        cr_assert_lt(compose_config(&in, &json, &err), 0);
        cr_assert(strstr(err->msg, "args"), "%s", err->msg);
        umw_error_free(err);
        cr_assert_null(json);
}

/* /proc/net/unix lines: the path of a pathname socket, spaces kept; none
 * for the header, an unnamed, abstract or relative one. */
Test(compose, unix_socket_path_from_proc_net_unix)
{
        char named[] = "0000000012345678: 00000002 00000000 00010000 0001 01 4242 /srv/a b/s\n";
        char header[] = "Num       RefCount Protocol Flags    Type St Inode Path\n";
        char unnamed[] = "0000000012345678: 00000002 00000000 00000000 0002 01 4243\n";
        char abstract[] = "0000000012345678: 00000002 00000000 00010000 0001 01 4244 @x\n";
        char relative[] = "0000000012345678: 00000002 00000000 00010000 0001 01 4245 s.sock\n";
        cr_assert_str_eq(compose_unix_socket_path(named), "/srv/a b/s");
        cr_assert_null(compose_unix_socket_path(header));
        cr_assert_null(compose_unix_socket_path(unnamed));
        cr_assert_null(compose_unix_socket_path(abstract));
        cr_assert_null(compose_unix_socket_path(relative));
}

/* On the host's root the host's state directories are empty tmpfs (/var
 * with a fresh /var/tmp); an image's own /var is left alone. */
Test(compose, host_state_directories_hidden_on_the_host_root)
{
        struct compose_input in = input();
        struct spec *s = compose(&in);
        static const char *const dirs[] = {"/var", "/srv", "/mnt", "/media", "/var/tmp"};
        for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
                expect_mount(s, dirs[i], "tmpfs");
        cr_assert_lt(mount_at(s, "/var"), mount_at(s, "/var/tmp"), "/var/tmp on top of /var");
        spec_free(s);
        in = input();
        in.rootfs = "/tmp";
        s = compose(&in);
        cr_assert_lt(mount_at(s, "/var"), 0, "an image's /var is its own");
        spec_free(s);
}
