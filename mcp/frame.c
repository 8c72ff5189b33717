/* The worker's frames, read (frame.h). */
#include "mcp/frame.h"
#include "common/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int check(const struct mcp_frame *f, struct umw_error **err)
{
        if (f->magic != MCP_FRAME_MAGIC)
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO, "the worker sent a bad frame");
        if (f->kind < MCP_FRAME_TEXT || f->kind > MCP_FRAME_RAN)
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO, "the worker sent frame kind %u",
                                f->kind);
        if (f->len > MCP_PAYLOAD_MAX || f->len2 > MCP_PAYLOAD_MAX ||
            (f->kind != MCP_FRAME_RAN && f->len2 != 0))
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                "the worker sent a frame over its bounds");
        if (f->kind == MCP_FRAME_RAN && (f->exited < 0 || f->exited > 1 || f->timed_out < 0 ||
                                         f->timed_out > 1 || f->status < 0 || f->status > 255))
                return umw_fail(err, UMW_EXIT_FAILURE, EPROTO,
                                "the worker sent an exit status out of range");
        return 0;
}

int mcp_frames_room(struct mcp_frames *fr, size_t n, struct umw_error **err)
{
        if (fr->skip) {
                memmove(fr->buf, fr->buf + fr->skip, fr->have - fr->skip);
                fr->have -= fr->skip;
                fr->skip = 0;
        }
        if (fr->cap - fr->have >= n)
                return 0;
        size_t cap = fr->cap ? fr->cap : 65536;
        while (cap - fr->have < n)
                cap *= 2;
        char *p = realloc(fr->buf, cap);
        if (!p)
                return umw_fail_sys(err, ENOMEM, "worker frames");
        fr->buf = p;
        fr->cap = cap;
        return 0;
}

int mcp_frames_next(struct mcp_frames *fr, struct mcp_frame *f, const char **text,
                    const char **text2, struct umw_error **err)
{
        if (fr->skip) {
                memmove(fr->buf, fr->buf + fr->skip, fr->have - fr->skip);
                fr->have -= fr->skip;
                fr->skip = 0;
        }
        if (fr->have < sizeof(*f))
                return 0;
        memcpy(f, fr->buf, sizeof(*f));
        int r = check(f, err);
        if (r < 0)
                return r;
        size_t whole = sizeof(*f) + (size_t)f->len + (size_t)f->len2;
        if (fr->have < whole)
                return 0;
        *text = fr->buf + sizeof(*f);
        *text2 = *text + f->len;
        fr->skip = whole;
        return 1;
}

void mcp_frames_free(struct mcp_frames *fr)
{
        free(fr->buf);
        *fr = (struct mcp_frames){0};
}
