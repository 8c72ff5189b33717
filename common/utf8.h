/* Strict UTF-8 (RFC 3629): what the agent's names and text are checked and
 * printed by. */
#ifndef UMW_UTF8_H
#define UMW_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length of the well-formed UTF-8 sequence at p (at most n > 0 bytes)
 * with its code point in *cp, or 0 where there is none: no overlong form,
 * no surrogate, nothing past U+10FFFF, no truncated sequence. */
size_t umw_utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);

#endif
