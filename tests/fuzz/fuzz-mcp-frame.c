/* libFuzzer harness for umwelt-mcp's reader of the worker's frames: the
 * worker runs inside the sandbox, so these bytes are the sandbox's. Fed
 * in pieces of any size, the stream gives whole frames whose strings lie
 * inside what was read and within their bounds, or one error after
 * which nothing is read; never a read past the buffer. */
#include "mcp/frame.h"
#include "common/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every whole frame taken; false after an error. */
static bool drain(struct mcp_frames *fr)
{
        struct mcp_frame f;
        const char *text, *text2;
        struct umw_error *err = NULL;
        int r;
        while ((r = mcp_frames_next(fr, &f, &text, &text2, &err)) > 0) {
                if (f.len > MCP_PAYLOAD_MAX || f.len2 > MCP_PAYLOAD_MAX || text < fr->buf ||
                    text2 + f.len2 > fr->buf + fr->have)
                        abort();
                /* Touch every byte handed out. */
                volatile char sum = 0;
                for (size_t i = 0; i < f.len; i++)
                        sum ^= text[i];
                for (size_t i = 0; i < f.len2; i++)
                        sum ^= text2[i];
        }
        if (r < 0 && (!err || strchr(err->msg, '\n')))
                abort();
        umw_error_free(err);
        return r == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct mcp_frames fr = {0};
        /* The first byte sets the piece size, as reads would cut them. */
        size_t piece = size ? (size_t)data[0] % 97 + 1 : 1;
        struct umw_error *err = NULL;
        for (size_t at = size ? 1 : 0; at < size; at += piece) {
                size_t n = size - at < piece ? size - at : piece;
                if (mcp_frames_room(&fr, n, &err) < 0)
                        abort();
                memcpy(fr.buf + fr.have, data + at, n);
                fr.have += n;
                if (!drain(&fr))
                        break;
        }
        mcp_frames_free(&fr);
        return 0;
}
