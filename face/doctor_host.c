/* doctor's host checks. Each is a probe of the real thing where one can be
 * made without leaving anything behind: a namespace or filter is tried in a
 * forked child, which takes it along when it exits. */
#include "face/doctor.h"
#include "face/user.h"
#include "policy/config.h"
#include "policy/host_actions.h"
#include "policy/presets.h"
#include "runtime/cgroup.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/json.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FLOOR_PATH "/etc/umwelt/floor.toml"

/* ---------------------------------------------------------------- helpers */

/* An integer sysctl, or -1 when the file does not exist on this kernel. */
static long read_knob(const char *path)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        long v = -1;
        if (f && fscanf(f, "%ld", &v) != 1)
                v = -1;
        return v;
}

/* ---------------------------------------------------------------- user namespaces */

static int become(const struct face_user *w)
{
        if (w->sudo && (setgroups(0, NULL) < 0 || setresgid(w->gid, w->gid, w->gid) < 0 ||
                        setresuid(w->uid, w->uid, w->uid) < 0))
                return errno;
        return 0;
}

static int userns_create_child(const void *arg)
{
        int e = become(arg);
        return e ? e : unshare(CLONE_NEWUSER) < 0 ? errno : 0;
}

/* AppArmor's restriction lets the namespace be made but strips what it
 * grants: making a mount and network namespace inside it tells. */
static int userns_use_child(const void *arg)
{
        int e = become(arg);
        if (e || unshare(CLONE_NEWUSER) < 0)
                return e ? e : errno;
        return unshare(CLONE_NEWNS | CLONE_NEWNET) < 0 ? errno : 0;
}

static void userns_fix(char *fix, size_t size, long max, long clone_knob, long apparmor)
{
        char exe[PATH_MAX] = "/usr/local/bin/umwelt-run";
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n > 0)
                exe[n] = '\0';
        if (max == 0)
                snprintf(fix, size,
                         "sysctl -w user.max_user_namespaces=10000 (and the same in "
                         "/etc/sysctl.d/ to keep it)");
        else if (clone_knob == 0)
                snprintf(fix, size,
                         "sysctl -w kernel.unprivileged_userns_clone=1 (and the same in "
                         "/etc/sysctl.d/ to keep it)");
        else if (apparmor == 1)
                snprintf(fix, size,
                         "allow umwelt-run user namespaces with an AppArmor profile: "
                         "/etc/apparmor.d/umwelt-run containing 'abi <abi/4.0>, include "
                         "<tunables/global> profile umwelt-run %s flags=(unconfined) { userns, }' "
                         "then apparmor_parser -r /etc/apparmor.d/umwelt-run (or, for every "
                         "program, sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)",
                         exe);
        else
                snprintf(fix, size,
                         "the kernel refuses user namespaces to this user: check CONFIG_USER_NS "
                         "and the security modules' policy");
}

static void check_userns(struct doctor_report *r)
{
        struct face_user w = face_invoking_user();
        long max = read_knob("/proc/sys/user/max_user_namespaces");
        long clone_knob = read_knob("/proc/sys/kernel/unprivileged_userns_clone");
        long apparmor = read_knob("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
        bool root = geteuid() == 0;
        const char *why = root ? "; root's sandboxes need none" : "";
        char knobs[160], clone_text[48] = "", apparmor_text[64] = "";
        if (clone_knob >= 0)
                snprintf(clone_text, sizeof(clone_text), ", kernel.unprivileged_userns_clone=%ld",
                         clone_knob);
        if (apparmor >= 0)
                snprintf(apparmor_text, sizeof(apparmor_text),
                         ", kernel.apparmor_restrict_unprivileged_userns=%ld", apparmor);
        snprintf(knobs, sizeof(knobs), "user.max_user_namespaces=%ld%s%s", max, clone_text,
                 apparmor_text);
        int e = doctor_in_child(userns_create_child, &w);
        const char *step = "unshare(CLONE_NEWUSER)";
        if (e == 0) {
                e = doctor_in_child(userns_use_child, &w);
                step = "a mount and network namespace inside a new user namespace";
        }
        char fix[512];
        userns_fix(fix, sizeof(fix), max, clone_knob, apparmor);
        if (e == 0)
                doctor_add(r, "user namespaces", true, !root, NULL,
                           "uid %u can create and use them (%s)%s", (unsigned)w.uid, knobs, why);
        else
                doctor_add(r, "user namespaces", false, !root, fix, "%s as uid %u: %s (%s)%s", step,
                           (unsigned)w.uid, strerror(e < 0 ? -e : e), knobs, why);
}

/* ---------------------------------------------------------------- seccomp */

/* A filter that makes getppid fail with EPERM, loaded the way the runtime
 * loads the sandbox's (no_new_privs, then the filter), and tried. */
static int seccomp_child(const void *arg)
{
        struct sock_filter code[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {.len = ARRAY_SIZE(code), .filter = code};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                return errno;
        if (syscall(SYS_getppid) >= 0)
                return ENOTSUP; /* loaded, yet the call went through */
        return errno == EPERM ? 0 : errno;
}

static bool has_word(const char *list, const char *word)
{
        size_t len = strlen(word);
        for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
                if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\n' || !p[len]))
                        return true;
        return false;
}

static void check_seccomp(struct doctor_report *r)
{
        const char *fix = "a kernel built with CONFIG_SECCOMP and CONFIG_SECCOMP_FILTER";
        char actions[256] = "";
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/seccomp/actions_avail", "re");
        if (!f || !fgets(actions, sizeof(actions), f)) {
                doctor_add(r, "seccomp", false, true, fix,
                           "/proc/sys/kernel/seccomp/actions_avail: %s",
                           f ? "empty" : strerror(errno));
                return;
        }
        actions[strcspn(actions, "\n")] = '\0';
        if (!has_word(actions, "errno") || !has_word(actions, "allow") ||
            (!has_word(actions, "kill_process") && !has_word(actions, "kill_thread"))) {
                doctor_add(r, "seccomp", false, true, fix,
                           "the profile needs the actions errno, allow and kill; this kernel "
                           "offers: %s",
                           actions);
                return;
        }
        int e = doctor_in_child(seccomp_child, NULL);
        if (e == 0)
                doctor_add(r, "seccomp", true, true, NULL,
                           "a filter loads and denies a call with EPERM (actions: %s)", actions);
        else
                doctor_add(r, "seccomp", false, true, fix, "loading a test filter: %s",
                           strerror(e < 0 ? -e : e));
}

/* ---------------------------------------------------------------- nf_tables */

/* Asks nf_tables for its ruleset generation over netlink, as the code that
 * installs a sandbox's ruleset talks to it, in a network namespace of our
 * own (through a user namespace for a user). */
static int nftables_child(const void *arg)
{
        int flags = geteuid() == 0 ? CLONE_NEWNET : CLONE_NEWUSER | CLONE_NEWNET;
        if (unshare(flags) < 0)
                return errno;
        _cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
        if (fd < 0)
                return errno;
        struct {
                struct nlmsghdr nh;
                struct nfgenmsg nf;
        } req = {
            .nh = {.nlmsg_len = sizeof(req),
                   .nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETGEN,
                   .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
                   .nlmsg_seq = 1},
            .nf = {.nfgen_family = AF_UNSPEC, .version = NFNETLINK_V0},
        };
        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
        if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
                return errno;
        char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n < 0)
                return errno;
        const struct nlmsghdr *nh = (const struct nlmsghdr *)buf;
        if (!NLMSG_OK(nh, (size_t)n))
                return EPROTO;
        if (nh->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(nh);
                return e->error ? -e->error : EPROTO;
        }
        return nh->nlmsg_type == ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWGEN) ? 0 : EPROTO;
}

static void check_nftables(struct doctor_report *r)
{
        int e = doctor_in_child(nftables_child, NULL);
        if (e == 0)
                doctor_add(r, "nf_tables", true, false, NULL,
                           "answers over netlink in a fresh network namespace (egress rules "
                           "can be installed)");
        else
                doctor_add(r, "nf_tables", false, false,
                           "modprobe nf_tables (and list it in /etc/modules-load.d/ to keep it)",
                           "no answer over netlink in a fresh network namespace: %s; needed "
                           "for egress only, a sandbox without egress starts without it",
                           strerror(e < 0 ? -e : e));
}

/* ---------------------------------------------------------------- policy */

static const char *invoking_home(const struct face_user *w)
{
        const char *home = getenv("HOME");
        struct passwd *pw = getpwuid(w->uid);
        if (w->sudo || !home || home[0] != '/')
                home = pw ? pw->pw_dir : NULL;
        return home;
}

/* The floor and the user's config, loaded as sandbox run loads them; the
 * project layer is left empty (doctor checks the host, not a project):
 * nothing can be created in /proc/self, so that file never exists. On
 * success *pc holds the policy. */
static bool check_policy(struct doctor_report *r, struct policy_config *pc)
{
        struct face_user w = face_invoking_user();
        const char *home = invoking_home(&w);
        struct policy_paths paths = {.floor = FLOOR_PATH, .project = "/proc/self/.umwelt.toml"};
        _cleanup_error_ struct umw_error *err = NULL;
        if (!home || policy_load(&paths, home, pc, &err) < 0) {
                bool owner = err && (err->errnum == EPERM || err->errnum == ELOOP);
                doctor_add(r, "policy", false, true,
                           owner ? "make " FLOOR_PATH " a regular file and it and /etc/umwelt "
                                   "owned by root and writable by root alone (chown root:root, "
                                   "chmod go-w), or remove it to fall back to the built-in floor"
                                 : "correct the file at the place the message names",
                           "%s", err ? err->msg : "no home directory for the invoking user");
                return false;
        }
        struct stat st;
        bool present = lstat(FLOOR_PATH, &st) == 0;
        doctor_add(r, "policy", true, true, NULL,
                   "%s; user config read; default preset %s, limits best-effort: %s",
                   present ? "floor " FLOOR_PATH " is root-owned and valid"
                           : "no " FLOOR_PATH ": the built-in floor holds",
                   pc->preset, pc->limits_best_effort ? "allowed" : "no");
        return true;
}

/* The table of host actions the relay may run (umwelt.toml(5)): a broken
 * one refuses every action, which limits that feature alone. */
static void check_host_actions(struct doctor_report *r)
{
        struct host_actions t;
        _cleanup_error_ struct umw_error *err = NULL;
        if (host_actions_load(&t, &err) < 0) {
                doctor_add(r, "host actions", false, false,
                           "keep " HOST_ACTIONS_FILE " and /etc/umwelt root's and writable by "
                           "root alone, and correct the file where the message says",
                           "%s", err->msg);
                return;
        }
        struct stat st;
        if (lstat(HOST_ACTIONS_FILE, &st) == 0)
                doctor_add(r, "host actions", true, false, NULL, "%zu in %s, root-owned and valid",
                           t.n, HOST_ACTIONS_FILE);
        else
                doctor_add(r, "host actions", true, false, NULL, "no %s: no host action is offered",
                           HOST_ACTIONS_FILE);
        host_actions_free(&t);
}

/* ---------------------------------------------------------------- cgroups */

/* As systemd tells them apart: what is mounted at /sys/fs/cgroup. */
static const char *cgroup_engine(void)
{
        struct statfs fs;
        if (statfs("/sys/fs/cgroup", &fs) < 0)
                return "none";
        if (fs.f_type == CGROUP2_SUPER_MAGIC)
                return "v2";
        if (fs.f_type != TMPFS_MAGIC)
                return "unknown";
        if (statfs("/sys/fs/cgroup/unified", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
                return "hybrid";
        return "v1";
}

/* Plans the preset's cgroup the way create does, which checks every
 * controller and, for a user, that each hierarchy is delegated; a plan
 * creates nothing. */
static int plan_preset(const struct runtime_opts *rt, const char *name, struct umw_error **err)
{
        struct machine_size m;
        struct preset p;
        int ret = presets_machine_size_read(&m, err);
        if (ret == 0)
                ret = preset_resolve(name, &m, &p, err);
        if (ret < 0)
                return ret;
        _cleanup_free_ char *json = preset_resources_json(&p);
        _cleanup_free_ char *path = NULL, *id = NULL;
        if (!json || asprintf(&id, "umwelt-doctor-%d", getpid()) < 0)
                return umw_fail_sys(err, ENOMEM, "doctor");
        yajl_val res = NULL;
        if ((ret = umw_json_parse(json, "the preset", &res, err)) < 0)
                return ret;
        ret = cgroup_path_resolve(NULL, id, rt->cgroup_manager, &path, err);
        struct cgroup_plan *plan = NULL;
        if (ret == 0) {
                struct cgroup_request req = {.path = path,
                                             .resources = res,
                                             .file = "the preset",
                                             .strict = geteuid() == 0 && !rt->rootless};
                ret = cgroup_plan_new(&req, &plan, err);
        }
        cgroup_plan_free(plan);
        yajl_tree_free(res);
        return ret;
}

static void check_cgroup(struct doctor_report *r, const struct runtime_opts *rt,
                         const struct policy_config *pc)
{
        const char *engine = cgroup_engine();
        const char *preset = pc ? pc->preset : "dev";
        if (rt->cgroup_manager == CGROUP_MANAGER_DISABLED) {
                doctor_add(r, "cgroup", true, true, NULL,
                           "cgroup %s; --cgroup-manager disabled: sandboxes start without limits",
                           engine);
                return;
        }
        _cleanup_error_ struct umw_error *err = NULL;
        if (plan_preset(rt, preset, &err) == 0) {
                doctor_add(r, "cgroup", true, true, NULL,
                           "cgroup %s; the %s preset's limits can be set%s", engine, preset,
                           geteuid() == 0 ? "" : " (a delegated cgroup)");
                return;
        }
        bool best_effort = geteuid() != 0 && pc && pc->limits_best_effort;
        char fix[256];
        snprintf(fix, sizeof(fix),
                 "delegate a cgroup to uid %u (systemd: Delegate=yes), or allow "
                 "limits_best_effort = true in " FLOOR_PATH ", or run with --cgroup-manager "
                 "disabled",
                 (unsigned)geteuid());
        doctor_add(r, "cgroup", best_effort, true, fix, "cgroup %s; the %s preset's limits: %s%s",
                   engine, preset, err ? err->msg : "cannot be set",
                   best_effort ? " (the floor allows limits best-effort: sandboxes start "
                                 "without them)"
                               : "");
}

void doctor_host_checks(struct doctor_report *r, const struct runtime_opts *rt)
{
        struct policy_config pc = {0};
        check_userns(r);
        check_seccomp(r);
        check_nftables(r);
        bool have_policy = check_policy(r, &pc);
        check_host_actions(r);
        check_cgroup(r, rt, have_policy ? &pc : NULL);
        if (have_policy)
                policy_config_free(&pc);
}
