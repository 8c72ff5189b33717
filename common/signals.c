#include "common/signals.h"
#include "common/cleanup.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Indexed by the architecture's own numbers, so the table is right wherever
 * it is built. */
static const char *const names[] = {
    [SIGHUP] = "HUP",   [SIGINT] = "INT",       [SIGQUIT] = "QUIT", [SIGILL] = "ILL",
    [SIGTRAP] = "TRAP", [SIGABRT] = "ABRT",     [SIGBUS] = "BUS",   [SIGFPE] = "FPE",
    [SIGKILL] = "KILL", [SIGUSR1] = "USR1",     [SIGSEGV] = "SEGV", [SIGUSR2] = "USR2",
    [SIGPIPE] = "PIPE", [SIGALRM] = "ALRM",     [SIGTERM] = "TERM", [SIGSTKFLT] = "STKFLT",
    [SIGCHLD] = "CHLD", [SIGCONT] = "CONT",     [SIGSTOP] = "STOP", [SIGTSTP] = "TSTP",
    [SIGTTIN] = "TTIN", [SIGTTOU] = "TTOU",     [SIGURG] = "URG",   [SIGXCPU] = "XCPU",
    [SIGXFSZ] = "XFSZ", [SIGVTALRM] = "VTALRM", [SIGPROF] = "PROF", [SIGWINCH] = "WINCH",
    [SIGIO] = "IO",     [SIGPWR] = "PWR",       [SIGSYS] = "SYS",
};

static const struct {
        const char *name;
        int sig;
} aliases[] = {
    {"IOT", SIGIOT},
    {"CLD", SIGCHLD},
    {"POLL", SIGPOLL},
};

/* Real-time signals are named from the nearer end of the range, as kill -l
 * does; the kernel has at most 33 of them. */
static const char *const rtmin_names[] = {
    "RTMIN",    "RTMIN+1",  "RTMIN+2",  "RTMIN+3",  "RTMIN+4",  "RTMIN+5",
    "RTMIN+6",  "RTMIN+7",  "RTMIN+8",  "RTMIN+9",  "RTMIN+10", "RTMIN+11",
    "RTMIN+12", "RTMIN+13", "RTMIN+14", "RTMIN+15", "RTMIN+16",
};
static const char *const rtmax_names[] = {
    "RTMAX",    "RTMAX-1",  "RTMAX-2",  "RTMAX-3",  "RTMAX-4",  "RTMAX-5",
    "RTMAX-6",  "RTMAX-7",  "RTMAX-8",  "RTMAX-9",  "RTMAX-10", "RTMAX-11",
    "RTMAX-12", "RTMAX-13", "RTMAX-14", "RTMAX-15", "RTMAX-16",
};

/* A plain decimal: digits only, no sign or blanks. Returns -1 otherwise. */
static int parse_decimal(const char *s)
{
        if (!isdigit((unsigned char)*s))
                return -1;
        long v = 0;
        for (; *s; s++) {
                if (!isdigit((unsigned char)*s))
                        return -1;
                v = v * 10 + (*s - '0');
                if (v > INT_MAX)
                        return -1;
        }
        return (int)v;
}

static int parse_realtime(const char *s, int *sig)
{
        int base, dir;
        if (strncasecmp(s, "RTMIN", 5) == 0) {
                base = SIGRTMIN;
                dir = 1;
        } else if (strncasecmp(s, "RTMAX", 5) == 0) {
                base = SIGRTMAX;
                dir = -1;
        } else {
                return -EINVAL;
        }
        s += 5;
        int offset = 0;
        if (*s) {
                if (*s != (dir > 0 ? '+' : '-'))
                        return -EINVAL;
                offset = parse_decimal(s + 1);
                if (offset < 0)
                        return -EINVAL;
        }
        int n = base + dir * offset;
        if (offset > SIGRTMAX - SIGRTMIN || n < SIGRTMIN || n > SIGRTMAX)
                return -EINVAL;
        *sig = n;
        return 0;
}

static int parse_name(const char *s, int *sig)
{
        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                if (names[i] && strcasecmp(s, names[i]) == 0) {
                        *sig = (int)i;
                        return 0;
                }
        }
        for (size_t i = 0; i < ARRAY_SIZE(aliases); i++) {
                if (strcasecmp(s, aliases[i].name) == 0) {
                        *sig = aliases[i].sig;
                        return 0;
                }
        }
        return parse_realtime(s, sig);
}

int umw_signal_parse(const char *s, int *sig)
{
        if (!s || !*s)
                return -EINVAL;
        if (isdigit((unsigned char)*s)) {
                int n = parse_decimal(s);
                if (n < 1 || n > SIGRTMAX)
                        return -EINVAL;
                *sig = n;
                return 0;
        }
        if (strncasecmp(s, "SIG", 3) == 0)
                s += 3;
        return parse_name(s, sig);
}

const char *umw_signal_name(int sig)
{
        if (sig > 0 && (size_t)sig < ARRAY_SIZE(names) && names[sig])
                return names[sig];
        if (sig < SIGRTMIN || sig > SIGRTMAX)
                return NULL;
        size_t from_min = (size_t)(sig - SIGRTMIN), from_max = (size_t)(SIGRTMAX - sig);
        if (from_min <= from_max)
                return from_min < ARRAY_SIZE(rtmin_names) ? rtmin_names[from_min] : NULL;
        return from_max < ARRAY_SIZE(rtmax_names) ? rtmax_names[from_max] : NULL;
}
