#include "common/log.h"
#include "common/error.h"
#include "common/json.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int log_fd = -1;
static const char *log_program = "umwelt-run";
static bool log_json;
static bool log_debug;

static const char *level_name(enum umw_log_level level)
{
        static const char *const names[] = {"error", "warning", "info", "debug"};
        return names[level];
}

int umw_log_open(const char *path, bool json, bool debug, struct umw_error **err)
{
        log_json = json;
        log_debug = debug;
        if (!path)
                return 0;
        log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (log_fd < 0)
                return umw_fail_errno(err, "open log file %s", path);
        return 0;
}

void umw_log_set_program(const char *name)
{
        log_program = name;
}

bool umw_log_debug_enabled(void)
{
        return log_debug;
}

void umw_format_now(char *buf, size_t len)
{
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf + n, len - n, ".%09ldZ", ts.tv_nsec);
}

static void write_file_line(enum umw_log_level level, const char *msg)
{
        char stamp[64];
        umw_format_now(stamp, sizeof(stamp));

        char *line = NULL;
        if (log_json) {
                char *quoted = umw_json_quote(msg);
                if (!quoted)
                        return;
                if (asprintf(&line, "{\"level\":\"%s\",\"msg\":%s,\"time\":\"%s\"}\n",
                             level_name(level), quoted, stamp) < 0)
                        line = NULL;
                free(quoted);
        } else if (asprintf(&line, "%s %s: %s\n", stamp, level_name(level), msg) < 0) {
                line = NULL;
        }
        if (line) {
                /* One write per line so concurrent writers never interleave. */
                if (write(log_fd, line, strlen(line)) < 0) {
                        /* nowhere left to report it */
                }
                free(line);
        }
}

static void emit(enum umw_log_level level, const char *msg)
{
        if (level == UMW_LOG_DEBUG && !log_debug)
                return;
        if (log_fd >= 0)
                write_file_line(level, msg);
        if (level != UMW_LOG_INFO)
                dprintf(STDERR_FILENO, "%s: %s%s\n", log_program,
                        level == UMW_LOG_ERROR     ? ""
                        : level == UMW_LOG_WARNING ? "warning: "
                                                   : "debug: ",
                        msg);
}

void umw_log(enum umw_log_level level, const char *fmt, ...)
{
        char *msg = NULL;
        va_list ap;
        va_start(ap, fmt);
        int r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                return;
        emit(level, msg);
        free(msg);
}

void umw_log_error(const struct umw_error *err)
{
        if (err)
                emit(UMW_LOG_ERROR, err->msg);
}

int umw_log_exit(struct umw_error *err)
{
        umw_log_error(err);
        int code = !err || err->kind == UMW_EXIT_OK ? UMW_EXIT_FAILURE : (int)err->kind;
        umw_error_free(err);
        return code;
}
