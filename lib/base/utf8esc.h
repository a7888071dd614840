/* utf8esc.h: strings from outside (span, thread and process names, the
 * command line) made safe for formats that require valid UTF-8 (JSON): every
 * byte that is not part of a valid UTF-8 sequence is written as "%XX"
 * (upper-case hex), and so is '%' itself, so the encoding is reversible:
 * replacing every %XX by byte XX gives back the original bytes.  Valid UTF-8
 * other than '%' is copied unchanged.  Invalid means what RFC 3629 excludes:
 * stray continuation bytes, overlong forms, surrogates (U+D800-U+DFFF), code
 * points above U+10FFFF, 0xC0, 0xC1, 0xF5-0xFF and truncated sequences. */
#ifndef SPANSTAT_UTF8ESC_H
#define SPANSTAT_UTF8ESC_H

#include <stdbool.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
size_t utf8esc_seqlen(const unsigned char *s, size_t n);
/* Whether the NUL-terminated s is valid UTF-8 throughout. */
bool utf8esc_valid(const char *s);
/* The escaped form of the NUL-terminated s, malloc'd; NULL on ENOMEM. */
char *utf8esc_dup(const char *s);

#endif
