/* face/user.c: whose sandbox this is. The sudo rule holds only for root;
 * anyone else is themselves whatever the environment says. */
#include "face/user.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>

static void sudo_env(const char *uid, const char *gid)
{
        uid ? setenv("SUDO_UID", uid, 1) : unsetenv("SUDO_UID");
        gid ? setenv("SUDO_GID", gid, 1) : unsetenv("SUDO_GID");
}

static void expect_self(const char *why)
{
        struct face_user w = face_invoking_user();
        cr_expect_eq(w.uid, getuid(), "%s", why);
        cr_expect_eq(w.gid, getgid(), "%s", why);
        cr_expect(!w.sudo, "%s", why);
}

Test(face_user, sudo_caller_only_for_root)
{
        sudo_env("1234", "5678");
        struct face_user w = face_invoking_user();
        if (geteuid() == 0) {
                cr_expect_eq(w.uid, 1234);
                cr_expect_eq(w.gid, 5678);
                cr_expect(w.sudo);
        } else {
                expect_self("a user is never its SUDO_UID");
        }
}

Test(face_user, half_or_malformed_pairs_are_ignored)
{
        sudo_env("1234", NULL);
        expect_self("SUDO_GID missing");
        sudo_env(NULL, "5678");
        expect_self("SUDO_UID missing");
        sudo_env("12x", "5678");
        expect_self("SUDO_UID not decimal");
        sudo_env("1234", "");
        expect_self("SUDO_GID empty");
        sudo_env("0", "0");
        expect_self("sudo from root is root");
        sudo_env("4294967295", "1");
        expect_self("(uid_t)-1 is no one");
}
