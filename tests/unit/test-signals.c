#include "common/signals.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>

static int parsed(const char *s)
{
        int sig = -1;
        int r = umw_signal_parse(s, &sig);
        cr_assert_eq(r, 0, "umw_signal_parse(\"%s\") failed: %d", s, r);
        return sig;
}

static void rejected(const char *s)
{
        int sig = 12345;
        cr_assert_eq(umw_signal_parse(s, &sig), -EINVAL, "\"%s\" was accepted", s);
        cr_assert_eq(sig, 12345, "\"%s\" changed *sig on failure", s);
}

Test(signals, names_in_any_case_with_or_without_sig)
{
        cr_assert_eq(parsed("TERM"), SIGTERM);
        cr_assert_eq(parsed("SIGTERM"), SIGTERM);
        cr_assert_eq(parsed("sigterm"), SIGTERM);
        cr_assert_eq(parsed("Term"), SIGTERM);
        cr_assert_eq(parsed("KILL"), SIGKILL);
        cr_assert_eq(parsed("SIGHUP"), SIGHUP);
        cr_assert_eq(parsed("winch"), SIGWINCH);
        cr_assert_eq(parsed("SIGSYS"), SIGSYS);
        cr_assert_eq(parsed("USR2"), SIGUSR2);
}

Test(signals, aliases)
{
        cr_assert_eq(parsed("IOT"), SIGABRT);
        cr_assert_eq(parsed("SIGCLD"), SIGCHLD);
        cr_assert_eq(parsed("poll"), SIGIO);
}

Test(signals, numbers)
{
        cr_assert_eq(parsed("15"), 15);
        cr_assert_eq(parsed("1"), 1);
        cr_assert_eq(parsed("9"), SIGKILL);
        char max[16];
        snprintf(max, sizeof(max), "%d", SIGRTMAX);
        cr_assert_eq(parsed(max), SIGRTMAX);
}

Test(signals, realtime)
{
        cr_assert_eq(parsed("RTMIN"), SIGRTMIN);
        cr_assert_eq(parsed("RTMIN+3"), SIGRTMIN + 3);
        cr_assert_eq(parsed("SIGRTMAX-1"), SIGRTMAX - 1);
        cr_assert_eq(parsed("sigrtmax"), SIGRTMAX);
        cr_assert_eq(parsed("rtmin+0"), SIGRTMIN);
        char top[32];
        snprintf(top, sizeof(top), "RTMIN+%d", SIGRTMAX - SIGRTMIN);
        cr_assert_eq(parsed(top), SIGRTMAX);
}

Test(signals, rejects_unknown_and_out_of_range)
{
        const char *bad[] = {
            "",
            "SIG",
            "TERMX",
            "SIGSIGTERM",
            "FOO",
            "0",
            "65",
            "-1",
            "+15",
            " 15",
            "15 ",
            "1x",
            "99999999999999999999",
            "SIG15",
            "RTMIN+",
            "RTMIN-1",
            "RTMAX+1",
            "RTMIN+100",
            "RTMAX-100",
            "RTMIN+-1",
            "RTMINX",
            "RT",
            "TERM\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                rejected(bad[i]);
        cr_assert_eq(umw_signal_parse(NULL, &(int){0}), -EINVAL);
}

Test(signals, names)
{
        cr_assert_str_eq(umw_signal_name(SIGTERM), "TERM");
        cr_assert_str_eq(umw_signal_name(SIGKILL), "KILL");
        cr_assert_str_eq(umw_signal_name(SIGCHLD), "CHLD");
        cr_assert_str_eq(umw_signal_name(SIGRTMIN), "RTMIN");
        cr_assert_str_eq(umw_signal_name(SIGRTMIN + 3), "RTMIN+3");
        cr_assert_str_eq(umw_signal_name(SIGRTMAX), "RTMAX");
        cr_assert_str_eq(umw_signal_name(SIGRTMAX - 1), "RTMAX-1");
        cr_assert_null(umw_signal_name(0));
        cr_assert_null(umw_signal_name(-1));
        cr_assert_null(umw_signal_name(SIGRTMAX + 1));
}

/* Every name the runtime prints must parse back to the same signal. */
Test(signals, every_name_round_trips)
{
        for (int sig = 1; sig <= SIGRTMAX; sig++) {
                const char *name = umw_signal_name(sig);
                if (!name)
                        continue;
                cr_assert_eq(parsed(name), sig, "%s", name);
                char with_sig[32];
                snprintf(with_sig, sizeof(with_sig), "SIG%s", name);
                cr_assert_eq(parsed(with_sig), sig, "%s", with_sig);
        }
        for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
                cr_assert_not_null(umw_signal_name(sig), "real-time signal %d has no name", sig);
}
