/* The worker's answers to umwelt-mcp (umwelt-mcp(1), DESIGN.md "The MCP
 * server"): fixed-form binary frames, a header and at most two byte
 * strings after it. The worker runs inside the sandbox, so every byte it
 * sends is the sandbox's: the host side reads no JSON of it, only this
 * header, checked field by field before a byte after it is trusted, and
 * the strings, which it escapes itself. Free of system calls; the reader
 * is fuzzed (tests/fuzz/fuzz-mcp-frame.c). */
#ifndef UMW_MCP_FRAME_H
#define UMW_MCP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct umw_error;

#define MCP_FRAME_MAGIC 0x756d7746u /* "Fwmu" */
/* The bound on each string: a file read, a command's stream. */
#define MCP_PAYLOAD_MAX (8u << 20)

enum mcp_frame_kind {
        MCP_FRAME_TEXT = 1, /* a file tool's result: text */
        MCP_FRAME_REFUSED,  /* a tool refused or failed: text says why */
        MCP_FRAME_RAN,      /* bash: text is stdout, text2 stderr */
};

struct mcp_frame {
        uint32_t magic;
        uint32_t id;   /* the request's */
        uint32_t kind; /* enum mcp_frame_kind */
        /* MCP_FRAME_RAN: exited 1 with status the exit status, else
         * status the signal; timed_out 1 when killed at the timeout. */
        int32_t exited, status, timed_out;
        uint64_t duration_ms;
        uint64_t out_total, err_total; /* bytes the command wrote */
        uint32_t len, len2;            /* the strings' lengths */
};

/* Frames as they come in on a stream: bytes appended, whole frames taken
 * off the front. */
struct mcp_frames {
        char *buf;
        size_t have, cap;
        size_t skip; /* the frame handed out last */
};

/* Room for n more bytes at buf + have (grown up to one whole frame). */
int mcp_frames_room(struct mcp_frames *fr, size_t n, struct umw_error **err);
/* The next whole frame: 1 with *f and its strings (pointing into the
 * buffer, valid until the next call), 0 when more bytes are needed, or an
 * error for a header that is not a frame (a bad magic, kind or length:
 * the stream cannot be trusted past it). */
int mcp_frames_next(struct mcp_frames *fr, struct mcp_frame *f, const char **text,
                    const char **text2, struct umw_error **err);
void mcp_frames_free(struct mcp_frames *fr);

#endif
