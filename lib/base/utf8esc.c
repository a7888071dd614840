/* utf8esc.c: reversible percent-escaping of bytes that are not valid UTF-8
 * (utf8esc.h). */
#include "config.h"

#include "utf8esc.h"

#include <stdlib.h>
#include <string.h>

size_t utf8esc_seqlen(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* no overlongs */
		else if (c == 0xed)
			hi = 0x9f; /* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* no overlongs */
		else if (c == 0xf4)
			hi = 0x8f; /* nothing above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

bool utf8esc_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0, len; i < n; i += len)
		if (!(len = utf8esc_seqlen(p + i, n - i)))
			return false;
	return true;
}

char *utf8esc_dup(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	char *out = malloc(3 * n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t len = p[i] == '%' ? 0 : utf8esc_seqlen(p + i, n - i);
		if (len) {
			memcpy(out + o, p + i, len);
			o += len;
			i += len;
		} else {
			out[o++] = '%';
			out[o++] = hex[p[i] >> 4];
			out[o++] = hex[p[i] & 15];
			i++;
		}
	}
	out[o] = '\0';
	return out;
}
