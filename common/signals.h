/* Signal names as people and podman write them: `kill ID TERM`, `SIGKILL`,
 * `9`, `RTMIN+3`, and a hook "killed by signal TERM". */
#ifndef UMW_SIGNALS_H
#define UMW_SIGNALS_H

/* Accepts a name with or without "SIG" in any case ("TERM", "sigterm"), the
 * aliases IOT, CLD and POLL, a decimal number from 1 to SIGRTMAX, and
 * "RTMIN", "RTMIN+N", "RTMAX", "RTMAX-N" within the real-time range.
 * Returns 0 and sets *sig, or -EINVAL. */
int umw_signal_parse(const char *s, int *sig);

/* The name without "SIG" ("TERM", "RTMIN+3", "RTMAX-1"), or NULL for a
 * number that names no signal. */
const char *umw_signal_name(int sig);

#endif
