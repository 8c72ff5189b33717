/* Diagnostics go to stderr and, with --log, to a file; with --log-format json
 * each line is {"level","msg","time"}, the form conmon and podman read back. */
#ifndef UMW_LOG_H
#define UMW_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum umw_log_level { UMW_LOG_ERROR, UMW_LOG_WARNING, UMW_LOG_INFO, UMW_LOG_DEBUG };

struct umw_error;

/* The name stderr lines start with (static storage); "umwelt-run" unless
 * another program says. */
void umw_log_set_program(const char *name);
/* path NULL: stderr only. json: the line format of the log file. */
int umw_log_open(const char *path, bool json, bool debug, struct umw_error **err);
void umw_log(enum umw_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The current time as RFC 3339 in UTC with nanoseconds
 * ("2026-11-30T23:04:42.629253384Z"), as every umwelt record writes it. */
void umw_format_now(char *buf, size_t len);
/* Prints an error as one line and records it in the log file. */
void umw_log_error(const struct umw_error *err);
/* The end of a program that failed: err printed as umw_log_error does and
 * freed; the exit code of its class (never 0). */
int umw_log_exit(struct umw_error *err);
bool umw_log_debug_enabled(void);

#define umw_debug(...)                                                                             \
        do {                                                                                       \
                if (umw_log_debug_enabled())                                                       \
                        umw_log(UMW_LOG_DEBUG, __VA_ARGS__);                                       \
        } while (0)
#define umw_warn(...) umw_log(UMW_LOG_WARNING, __VA_ARGS__)

#endif
