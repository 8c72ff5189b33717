/* doctor: what a sandbox needs on this host, checked one probe at a time
 * (doctor_host.c), and with --deep the walls of a throwaway sandbox proved
 * from inside it (doctor_deep.c outside, doctor_inside.c inside). Each
 * check is one line of the report: ok, or what is missing and its fix. */
#ifndef UMW_DOCTOR_H
#define UMW_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <yajl/yajl_tree.h>

#include "runtime/container.h"

struct umw_error;

struct doctor_check {
        char *name;
        bool ok;
        bool needed; /* a failure fails the verdict; else it only limits a feature */
        char *detail;
        char *fix; /* what to do about a failure; NULL when ok */
};

struct doctor_report {
        struct doctor_check *checks;
        size_t n;
};

/* Appends a check; the detail is printf-formatted, fix may be NULL. Out of
 * memory the check is still counted, as failed, so no verdict is too kind. */
void doctor_add(struct doctor_report *r, const char *name, bool ok, bool needed, const char *fix,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Runs fn in a forked child, so that a namespace or filter it tries dies
 * with it; returns what fn returned (0 or a positive errno value, passed as
 * the exit status), or -errno when the fork failed. */
int doctor_in_child(int (*fn)(const void *), const void *arg);
/* Whether every needed check passed. */
bool doctor_report_ok(const struct doctor_report *r);
void doctor_report_print(const struct doctor_report *r, bool json);
/* Adds the checks of a --json report (as doctor_report_print writes it),
 * each name prefixed; file names the text in errors. */
int doctor_report_merge(struct doctor_report *r, const char *prefix, const char *text,
                        const char *file, struct umw_error **err);
void doctor_report_free(struct doctor_report *r);

/* The host's side: user namespaces, seccomp, nf_tables, cgroups, policy. */
void doctor_host_checks(struct doctor_report *r, const struct runtime_opts *rt);
/* --deep: runs `doctor --inside` in a throwaway sandbox and adds its checks. */
void doctor_deep_checks(struct doctor_report *r, const struct runtime_opts *rt);
/* The file in the throwaway workspace where --deep leaves the host's
 * /proc/net/unix for --inside to try each socket of. */
#define DOCTOR_HOST_SOCKETS "host-unix-sockets"
/* --inside: the walls as seen from within; workspace must be writable. */
void doctor_inside_checks(struct doctor_report *r, const char *workspace);

#endif
