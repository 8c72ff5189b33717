/* Character classes of HTTP/1.1 (RFC 9110, 9112), shared by the request head
 * parser, the forwarding helpers and the chunked framing tracker. */
#ifndef UMW_HTTP_CHARS_H
#define UMW_HTTP_CHARS_H

#include "netns/http_head.h"

#include <stdbool.h>
#include <string.h>

static inline bool http_is_tchar(unsigned char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

static inline bool http_is_digit(unsigned char c)
{
        return c >= '0' && c <= '9';
}

static inline bool http_is_hex(unsigned char c)
{
        return http_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static inline bool http_is_blank(unsigned char c)
{
        return c == ' ' || c == '\t';
}

/* A field value byte: visible ASCII, blanks and obs-text; never a control. */
static inline bool http_is_field_vchar(unsigned char c)
{
        return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* The next element of the comma-separated list v from *pos, blanks around it
 * removed (possibly empty). False when the list is used up. */
static inline bool http_list_next(struct http_span v, size_t *pos, struct http_span *elem)
{
        if (*pos > v.n)
                return false;
        size_t s = *pos, e = *pos;
        while (e < v.n && v.p[e] != ',')
                e++;
        *pos = e + 1;
        while (s < e && http_is_blank((unsigned char)v.p[s]))
                s++;
        while (e > s && http_is_blank((unsigned char)v.p[e - 1]))
                e--;
        *elem = (struct http_span){v.p + s, e - s};
        return true;
}

#endif
