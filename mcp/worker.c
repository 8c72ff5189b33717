/* umwelt-mcp's worker, inside the sandbox (worker.h). */
#include "mcp/worker.h"
#include "mcp/frame.h"
#include "mcp/worker_int.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/fdio.h"
#include "common/json.h"
#include "common/proc.h"
#include "common/subreaper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define COMMANDS_MAX    16 /* bash calls running at once */
#define TIMEOUT_DEFAULT 120
#define TIMEOUT_MAX     3600
#define OUTPUT_MAX      (64u << 10) /* bytes kept of each stream of a command */
#define WORKER_NAME     "umwelt-mcp"

/* A bash call running under its supervisor. */
struct command {
        uint32_t id;
        pid_t supervisor;
        int fd; /* the supervisor's result, -1 when the slot is free */
        struct mcp_text result;
};

struct worker {
        struct command cmds[COMMANDS_MAX];
        char *in;
        size_t have;
};

/* ------------------------------------------------------------ answers */

static void send_frame(const struct mcp_frame *f, const char *text, const char *text2)
{
        if (umw_write_all(STDOUT_FILENO, f, sizeof(*f)) < 0 ||
            umw_write_all(STDOUT_FILENO, text, f->len) < 0 ||
            umw_write_all(STDOUT_FILENO, text2, f->len2) < 0)
                _exit(1); /* umwelt-mcp is gone */
}

static void send_text(uint32_t id, enum mcp_frame_kind kind, const char *text, size_t len)
{
        struct mcp_frame f = {.magic = MCP_FRAME_MAGIC, .id = id, .kind = kind};
        f.len = len > MCP_PAYLOAD_MAX ? MCP_PAYLOAD_MAX : (uint32_t)len;
        send_frame(&f, text, "");
}

static void send_refused(uint32_t id, const char *why)
{
        send_text(id, MCP_FRAME_REFUSED, why, strlen(why));
}

static void send_error(uint32_t id, const struct umw_error *err)
{
        send_refused(id, err ? err->msg : "failed");
}

/* ------------------------------------------------------------ bash */

static struct command *free_slot(struct worker *w)
{
        for (size_t i = 0; i < COMMANDS_MAX; i++)
                if (w->cmds[i].fd < 0)
                        return &w->cmds[i];
        return NULL;
}

static int bash_start(struct worker *w, uint32_t id, yajl_val args, struct umw_error **err)
{
        const char *command = NULL, *cwd = ".";
        unsigned long timeout = TIMEOUT_DEFAULT;
        int r;
        if ((r = worker_arg_str(args, "command", true, &command, err)) < 0 ||
            (r = worker_arg_str(args, "cwd", false, &cwd, err)) < 0 ||
            (r = worker_arg_uint(args, "timeout", TIMEOUT_MAX, &timeout, err)) < 0)
                return r;
        struct command *c = free_slot(w);
        if (!c)
                return umw_fail(err, UMW_EXIT_STATE, EBUSY, "%d commands run already",
                                COMMANDS_MAX);
        char *argv[] = {"/bin/sh", "-c", (char *)command, NULL};
        struct subreaper_spec spec = {.who = WORKER_NAME,
                                      .argv = argv,
                                      .env = (const char *const *)environ,
                                      .cwd = cwd,
                                      .timeout_ms = (unsigned)(timeout ? timeout : 1) * 1000,
                                      .output_limit = OUTPUT_MAX};
        if ((r = subreaper_run(&spec, &c->fd, &c->supervisor, err)) < 0)
                return r;
        c->id = id;
        c->result = (struct mcp_text){.max = sizeof(struct subreaper_result) + 2 * OUTPUT_MAX};
        return 0;
}

/* The supervisor's result is whole: the command's frame. */
static void bash_done(struct command *c)
{
        struct subreaper_result res;
        if (c->result.len < sizeof(res)) {
                send_refused(c->id, "the command was stopped");
                return;
        }
        memcpy(&res, c->result.p, sizeof(res));
        const char *out = c->result.p + sizeof(res);
        if (c->result.len != sizeof(res) + res.out_kept + res.err_kept) {
                send_refused(c->id, "the command's supervisor failed");
                return;
        }
        struct mcp_frame f = {.magic = MCP_FRAME_MAGIC,
                              .id = c->id,
                              .kind = MCP_FRAME_RAN,
                              .exited = res.exited,
                              .status = res.status,
                              .timed_out = res.timed_out,
                              .duration_ms = res.duration_ms,
                              .out_total = res.out_total,
                              .err_total = res.err_total,
                              .len = res.out_kept,
                              .len2 = res.err_kept};
        send_frame(&f, out, out + res.out_kept);
}

static void bash_read(struct command *c)
{
        char chunk[65536];
        ssize_t n = read(c->fd, chunk, sizeof(chunk));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return;
        if (n > 0 && mcp_text_add(&c->result, chunk, (size_t)n) == 0)
                return;
        umw_close_fdp(&c->fd);
        waitpid(c->supervisor, NULL, 0);
        bash_done(c);
        mcp_text_free(&c->result);
}

static void bash_cancel(struct worker *w, uint32_t id)
{
        for (size_t i = 0; i < COMMANDS_MAX; i++)
                if (w->cmds[i].fd >= 0 && w->cmds[i].id == id)
                        kill(w->cmds[i].supervisor, SIGTERM);
}

/* ------------------------------------------------------------ requests */

typedef int (*tool_fn)(yajl_val args, struct mcp_text *out, struct umw_error **err);

static const struct {
        const char *name;
        tool_fn fn;
} file_tools[] = {
    {"read", worker_read}, {"write", worker_write}, {"edit", worker_edit},
    {"ls", worker_ls},     {"glob", worker_glob},   {"grep", worker_grep},
};

static int run_tool(struct worker *w, uint32_t id, const char *tool, yajl_val args,
                    struct umw_error **err)
{
        if (!YAJL_IS_OBJECT(args))
                return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "arguments: expected an object");
        if (strcmp(tool, "bash") == 0)
                return bash_start(w, id, args, err);
        for (size_t i = 0; i < ARRAY_SIZE(file_tools); i++) {
                if (strcmp(tool, file_tools[i].name) != 0)
                        continue;
                struct mcp_text out = {.max = MCP_PAYLOAD_MAX};
                int r = file_tools[i].fn(args, &out, err);
                if (r >= 0)
                        send_text(id, MCP_FRAME_TEXT, out.p ? out.p : "", out.len);
                mcp_text_free(&out);
                return r;
        }
        return umw_fail(err, UMW_EXIT_CONFIG, EINVAL, "no tool %s", tool);
}

/* One request line. A line that is not one is answered under id 0. */
static void handle(struct worker *w, const char *line)
{
        yajl_val t = NULL;
        _cleanup_error_ struct umw_error *err = NULL;
        if (umw_json_parse(line, "request", &t, &err) < 0) {
                send_error(0, err);
                return;
        }
        yajl_val id = umw_json_member(t, "id"), cancel = umw_json_member(t, "cancel");
        const char *tool = umw_json_member_str(t, "tool", NULL);
        if (!YAJL_IS_INTEGER(id) || YAJL_GET_INTEGER(id) <= 0 || YAJL_GET_INTEGER(id) > UINT32_MAX)
                send_refused(0, "request: .id: expected a number");
        else if (YAJL_IS_INTEGER(cancel))
                bash_cancel(w, (uint32_t)YAJL_GET_INTEGER(cancel));
        else if (!tool || run_tool(w, (uint32_t)YAJL_GET_INTEGER(id), tool,
                                   umw_json_member(t, "arguments"), &err) < 0)
                send_error((uint32_t)YAJL_GET_INTEGER(id), err);
        yajl_tree_free(t);
}

/* Every whole line in the buffer handled; false once a line is over the
 * bound (umwelt-mcp never sends one). */
static bool take_lines(struct worker *w)
{
        char *start = w->in, *nl;
        while ((nl = memchr(start, '\n', w->have - (size_t)(start - w->in)))) {
                *nl = '\0';
                handle(w, start);
                start = nl + 1;
        }
        w->have -= (size_t)(start - w->in);
        memmove(w->in, start, w->have);
        return w->have < MCP_REQUEST_MAX;
}

static bool read_requests(struct worker *w)
{
        ssize_t n = read(STDIN_FILENO, w->in + w->have, MCP_REQUEST_MAX - w->have);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return true;
        if (n <= 0)
                return false;
        w->have += (size_t)n;
        return take_lines(w);
}

/* ------------------------------------------------------------ the loop */

static void serve(struct worker *w)
{
        for (;;) {
                struct pollfd p[COMMANDS_MAX + 1] = {{.fd = STDIN_FILENO, .events = POLLIN}};
                for (size_t i = 0; i < COMMANDS_MAX; i++)
                        p[i + 1] = (struct pollfd){.fd = w->cmds[i].fd, .events = POLLIN};
                if (poll(p, ARRAY_SIZE(p), -1) < 0 && errno != EINTR)
                        return;
                for (size_t i = 0; i < COMMANDS_MAX; i++)
                        if (p[i + 1].revents && w->cmds[i].fd >= 0)
                                bash_read(&w->cmds[i]);
                if (p[0].revents && !read_requests(w))
                        return;
        }
}

int mcp_worker_main(void)
{
        _cleanup_error_ struct umw_error *err = NULL;
        struct worker w = {0};
        for (size_t i = 0; i < COMMANDS_MAX; i++)
                w.cmds[i].fd = -1;
        signal(SIGPIPE, SIG_IGN);
        /* Nothing else in the sandbox may ptrace us or write to our
         * pipes through /proc/PID/fd: the answers are ours alone. */
        if (umw_make_undumpable(&err) < 0 || umw_close_fds_from(3, NULL, 0) < 0 ||
            !(w.in = malloc(MCP_REQUEST_MAX))) {
                fprintf(stderr, "%s worker: %s\n", WORKER_NAME, err ? err->msg : "out of memory");
                return 1;
        }
        serve(&w);
        /* umwelt-mcp is gone: nothing it started goes on. */
        for (size_t i = 0; i < COMMANDS_MAX; i++)
                if (w.cmds[i].fd >= 0)
                        kill(w.cmds[i].supervisor, SIGTERM);
        free(w.in);
        return 0;
}
