#include "runtime/caps.h"
#include "runtime/process.h"
#include "runtime/spec.h"
#include "common/error.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIT(cap) (UINT64_C(1) << (cap))

static void expect_cap(const char *name, int want)
{
        int cap = -1;
        cr_assert_eq(caps_from_name(name, &cap), 0, "\"%s\" refused", name);
        cr_assert_eq(cap, want, "\"%s\" -> %d, expected %d", name, cap, want);
}

static void expect_bad(const char *name)
{
        int cap = 12345;
        cr_assert_eq(caps_from_name(name, &cap), -EINVAL, "\"%s\" accepted", name);
        cr_assert_eq(cap, 12345, "\"%s\" changed *cap", name);
}

Test(caps, names)
{
        expect_cap("CAP_SYS_ADMIN", CAP_SYS_ADMIN);
        expect_cap("SYS_ADMIN", CAP_SYS_ADMIN);
        expect_cap("CAP_CHOWN", CAP_CHOWN);
        expect_cap("cap_net_bind_service", CAP_NET_BIND_SERVICE);
        expect_cap("CAP_CHECKPOINT_RESTORE", CAP_CHECKPOINT_RESTORE);
}

Test(caps, bad_names)
{
        expect_bad("");
        expect_bad("CAP_");
        expect_bad("CAP_NOT_A_CAPABILITY");
        expect_bad("21");
        expect_bad("CAP_21");
        expect_bad("CAP_SYS_ADMIN_AND_A_VERY_LONG_TAIL_THAT_DOES_NOT_FIT_ANY_BUFFER_AT_ALL");
}

/* The hex mask on the "Field:" line of /proc/self/status. */
static int status_mask(const char *field, uint64_t *out)
{
        FILE *f = fopen("/proc/self/status", "re");
        if (!f)
                return -1;
        char line[256];
        size_t n = strlen(field);
        int r = -1;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, field, n) == 0 && line[n] == ':' &&
                    sscanf(line + n + 1, "%" SCNx64, out) == 1) {
                        r = 0;
                        break;
                }
        fclose(f);
        return r;
}

static void skip_unless_root(void)
{
        if (geteuid() != 0)
                cr_skip_test("needs root (CI runs as root)");
}

static int wait_child(pid_t pid)
{
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status), "child died, status 0x%x", status);
        return WEXITSTATUS(status);
}

static int drop_and_check(uint64_t keep)
{
        uint64_t before, after;
        struct umw_error *err = NULL;
        struct spec_caps caps = {.bounding = keep};
        if (status_mask("CapBnd", &before) < 0)
                return 10;
        if (caps_drop_bounding(&caps, &err) < 0) {
                fprintf(stderr, "%s\n", err->msg);
                return 11;
        }
        if (status_mask("CapBnd", &after) < 0)
                return 12;
        return after == (before & keep) ? 0 : 13;
}

Test(caps, drop_bounding)
{
        skip_unless_root();
        /* CAP_SETPCAP kept too, so a second drop in the same child works. */
        uint64_t keep = BIT(CAP_CHOWN) | BIT(CAP_KILL) | BIT(CAP_SETPCAP);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int r = drop_and_check(keep);
                if (r == 0)
                        r = drop_and_check(BIT(CAP_KILL));
                _exit(r);
        }
        cr_assert_eq(wait_child(pid), 0);
}

static int switch_and_check(void)
{
        struct umw_error *err = NULL;
        struct spec_process p = {.uid = 65534, .gid = 65534};
        struct spec_caps caps = {
            .effective = BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_KILL),
            .permitted = BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_KILL) | BIT(CAP_CHOWN),
            .inheritable = BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_CHOWN),
            /* CAP_KILL is not inheritable: skipped with a warning */
            .ambient = BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_KILL),
        };
        if (process_set_user(&p, &err) < 0 || caps_apply(&caps, &err) < 0) {
                fprintf(stderr, "%s\n", err->msg);
                return 10;
        }
        uint64_t eff, prm, inh, amb;
        if (status_mask("CapEff", &eff) < 0 || status_mask("CapPrm", &prm) < 0 ||
            status_mask("CapInh", &inh) < 0 || status_mask("CapAmb", &amb) < 0)
                return 11;
        if (getuid() != 65534 || geteuid() != 65534)
                return 12;
        if (eff != caps.effective)
                return 13;
        if (prm != caps.permitted)
                return 14;
        if (inh != caps.inheritable)
                return 15;
        if (amb != BIT(CAP_NET_BIND_SERVICE))
                return 16;
        return 0;
}

/* The init's order: the user switch keeps the permitted set, then
 * caps_apply() sets exactly the spec's sets. */
Test(caps, apply_after_user_switch)
{
        skip_unless_root();
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(switch_and_check());
        cr_assert_eq(wait_child(pid), 0);
}

static int apply_empty_and_check(void)
{
        struct umw_error *err = NULL;
        struct spec_caps none = {0};
        if (caps_apply(&none, &err) < 0)
                return 10;
        uint64_t eff, prm, amb;
        if (status_mask("CapEff", &eff) < 0 || status_mask("CapPrm", &prm) < 0 ||
            status_mask("CapAmb", &amb) < 0)
                return 11;
        return eff == 0 && prm == 0 && amb == 0 ? 0 : 12;
}

/* Dropping everything needs no privilege at all. */
Test(caps, apply_empty_set_drops_everything)
{
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(apply_empty_and_check());
        cr_assert_eq(wait_child(pid), 0);
}
