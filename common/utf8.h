/* Strict UTF-8 (RFC 3629): what the agent's names and text are checked and
 * printed by. */
#ifndef UMW_UTF8_H
#define UMW_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The length of the well-formed UTF-8 sequence at p (at most n > 0 bytes)
 * with its code point in *cp, or 0 where there is none: no overlong form,
 * no surrogate, nothing past U+10FFFF, no truncated sequence. */
size_t umw_utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);

/* Writes p (n bytes: an agent's text or name) so that it cannot steer a
 * terminal: every C0 control (but a tab where tab is true), DEL, C1
 * control and byte that is not well-formed UTF-8 as \xNN. A backslash is
 * doubled, so what is written reads back as one text. */
void umw_put_printable(FILE *out, const char *p, size_t n, bool tab);

/* The same text in a new string (malloc'd; NULL when out of memory), for
 * JSON and audit lines. */
char *umw_printable_dup(const char *p, size_t n);

#endif
