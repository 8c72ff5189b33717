/* Follows chunked framing byte by byte (the data itself is skipped, never
 * looked at or kept) so the gateway knows where a streamed request body
 * ends. Strict like the head parser: CRLF only, no folding in trailers. */
#include "netns/http_head.h"
#include "netns/http_chars.h"
#include "common/error.h"

#include <errno.h>

enum {
        C_SIZE,          /* hex digits of the chunk size */
        C_SIZE_BWS,      /* blanks after the size, before ';' */
        C_EXT,           /* chunk extensions up to CR */
        C_SIZE_LF,       /* LF ending the size line */
        C_DATA,          /* remaining data bytes */
        C_DATA_CR,       /* CR after the data */
        C_DATA_LF,       /* LF after the data */
        C_TRAILER,       /* start of a trailer line, or of the final empty line */
        C_TRAILER_NAME,  /* field name up to ':' */
        C_TRAILER_VALUE, /* field value up to CR */
        C_TRAILER_LF,    /* LF ending a trailer line */
        C_END_LF,        /* LF ending the body */
        C_DONE,
        C_FAILED,
};

void http_chunked_init(struct http_chunked *c)
{
        *c = (struct http_chunked){.state = C_SIZE};
}

static int frame_fail(struct umw_error **err, int errnum, const char *what)
{
        return umw_fail(err, UMW_EXIT_CONFIG, errnum, "chunked body: %s", what);
}

static int size_digit(struct http_chunked *c, unsigned char ch, struct umw_error **err)
{
        unsigned v = http_is_digit(ch) ? (unsigned)(ch - '0') : (unsigned)((ch | 0x20) - 'a' + 10);
        if (c->remaining > (UINT64_MAX >> 4))
                return frame_fail(err, EINVAL, "chunk size overflows 64 bits");
        c->remaining = (c->remaining << 4) | v;
        c->seen_digit = true;
        return 0;
}

static int step_size(struct http_chunked *c, unsigned char ch, struct umw_error **err)
{
        if (http_is_hex(ch))
                return size_digit(c, ch, err);
        if (!c->seen_digit)
                return frame_fail(err, EINVAL, "expected a hexadecimal chunk size");
        if (ch == '\r')
                c->state = C_SIZE_LF;
        else if (ch == ';')
                c->state = C_EXT;
        else if (http_is_blank(ch))
                c->state = C_SIZE_BWS;
        else
                return frame_fail(err, EINVAL, "bad character after the chunk size");
        return 0;
}

/* The size line and the CRLF after the data. */
static int step_chunk(struct http_chunked *c, unsigned char ch, struct umw_error **err)
{
        switch (c->state) {
        case C_SIZE:
                return step_size(c, ch, err);
        case C_SIZE_BWS:
                if (ch == ';')
                        c->state = C_EXT;
                else if (!http_is_blank(ch))
                        return frame_fail(err, EINVAL, "expected ';' after blanks");
                return 0;
        case C_EXT:
                if (ch == '\r')
                        c->state = C_SIZE_LF;
                else if (!http_is_field_vchar(ch))
                        return frame_fail(err, EINVAL, "control character in a chunk extension");
                return 0;
        case C_SIZE_LF:
                if (ch != '\n')
                        return frame_fail(err, EINVAL, "CR without LF");
                c->line_len = 0;
                c->state = c->remaining ? C_DATA : C_TRAILER;
                return 0;
        case C_DATA_CR:
                if (ch != '\r')
                        return frame_fail(err, EINVAL, "expected CRLF after the chunk data");
                c->state = C_DATA_LF;
                return 0;
        default: /* C_DATA_LF */
                if (ch != '\n')
                        return frame_fail(err, EINVAL, "CR without LF");
                http_chunked_init(c);
                return 0;
        }
}

static int trailer_line_start(struct http_chunked *c, unsigned char ch, struct umw_error **err)
{
        if (ch == '\r') {
                c->state = C_END_LF;
                return 0;
        }
        if (http_is_blank(ch))
                return frame_fail(err, EINVAL, "obsolete line folding in the trailer");
        if (!http_is_tchar(ch))
                return frame_fail(err, EINVAL, "expected a trailer field name");
        if (++c->trailer_lines > HTTP_HEADERS_MAX)
                return frame_fail(err, EMSGSIZE, "more than 100 trailer fields");
        c->state = C_TRAILER_NAME;
        return 0;
}

static int step_trailer(struct http_chunked *c, unsigned char ch, struct umw_error **err)
{
        if (++c->trailer_len > HTTP_HEAD_MAX)
                return frame_fail(err, EMSGSIZE, "trailer larger than 16 KiB");
        switch (c->state) {
        case C_TRAILER:
                return trailer_line_start(c, ch, err);
        case C_TRAILER_NAME:
                if (ch == ':')
                        c->state = C_TRAILER_VALUE;
                else if (!http_is_tchar(ch))
                        return frame_fail(err, EINVAL, "expected a trailer field name and ':'");
                return 0;
        case C_TRAILER_VALUE:
                if (ch == '\r')
                        c->state = C_TRAILER_LF;
                else if (!http_is_field_vchar(ch))
                        return frame_fail(err, EINVAL, "control character in a trailer value");
                return 0;
        case C_TRAILER_LF:
                if (ch != '\n')
                        return frame_fail(err, EINVAL, "CR without LF");
                c->line_len = 0;
                c->state = C_TRAILER;
                return 0;
        default: /* C_END_LF */
                if (ch != '\n')
                        return frame_fail(err, EINVAL, "CR without LF");
                c->state = C_DONE;
                return 0;
        }
}

static int step(struct http_chunked *c, unsigned char ch, struct umw_error **err)
{
        if (++c->line_len > HTTP_FIELD_MAX)
                return frame_fail(err, EMSGSIZE, "line longer than 8 KiB");
        if (c->state >= C_TRAILER)
                return step_trailer(c, ch, err);
        return step_chunk(c, ch, err);
}

int http_chunked_feed(struct http_chunked *c, const char *buf, size_t len, size_t *used,
                      struct umw_error **err)
{
        *used = 0;
        if (c->state == C_DONE || c->state == C_FAILED)
                return frame_fail(err, EINVAL, "fed after the end of the body");
        size_t i = 0;
        while (i < len) {
                if (c->state == C_DATA) {
                        size_t take = c->remaining < len - i ? (size_t)c->remaining : len - i;
                        i += take;
                        c->remaining -= take;
                        if (c->remaining == 0)
                                c->state = C_DATA_CR;
                        continue;
                }
                int r = step(c, (unsigned char)buf[i++], err);
                *used = i;
                if (r < 0) {
                        c->state = C_FAILED;
                        return r;
                }
                if (c->state == C_DONE)
                        return 1;
        }
        *used = len;
        return 0;
}
