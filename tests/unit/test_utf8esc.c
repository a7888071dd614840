/* test_utf8esc.c: the reversible escaping of invalid UTF-8 (utf8esc.c):
 * every class of invalid sequence, valid text kept, '%' escaped, and a round
 * trip over random bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "utf8esc.h"

static void check(const char *in, const char *want, const char *what)
{
	char *got = utf8esc_dup(in);
	is_str(got, want, "%s", what);
	free(got);
}

/* Undoes the escaping: every %XX becomes byte XX. */
static size_t unescape(const char *s, unsigned char *out)
{
	size_t o = 0;
	for (size_t i = 0; s[i];) {
		unsigned v;
		if (s[i] == '%' && sscanf(s + i + 1, "%2X", &v) == 1) {
			out[o++] = (unsigned char)v;
			i += 3;
		} else {
			out[o++] = (unsigned char)s[i++];
		}
	}
	return o;
}

/* Whether s is valid UTF-8 with no '%' left unescaped but as %XX. */
static int valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t len = utf8esc_seqlen(p + i, n - i);
		if (!len)
			return 0;
		i += len;
	}
	return 1;
}

int main(void)
{
	check("main", "main", "ASCII kept");
	check("", "", "empty kept");
	check("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5",
	      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", "2, 3 and 4-byte sequences kept");
	check("50% done", "50%25 done", "'%' escaped, so the encoding is reversible");
	check("a\x80z", "a%80z", "stray continuation byte");
	check("\xc0\xaf", "%C0%AF", "overlong 2-byte form (C0)");
	check("\xc1\xbf", "%C1%BF", "overlong 2-byte form (C1)");
	check("\xe0\x80\xaf", "%E0%80%AF", "overlong 3-byte form");
	check("\xf0\x80\x80\xaf", "%F0%80%80%AF", "overlong 4-byte form");
	check("\xed\xa0\x80", "%ED%A0%80", "surrogate U+D800");
	check("\xed\x9f\xbf", "\xed\x9f\xbf", "U+D7FF kept");
	check("\xf4\x90\x80\x80", "%F4%90%80%80", "above U+10FFFF");
	check("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf", "U+10FFFF kept");
	check("\xf5\x80\x80\x80", "%F5%80%80%80", "F5 lead byte");
	check("\xff\xfe", "%FF%FE", "FF and FE");
	check("x\xe2\x82", "x%E2%82", "truncated at the end");
	check("\xe2\x82y", "%E2%82y", "truncated by an ASCII byte");
	check("\xc3\xa9\xc3", "\xc3\xa9%C3", "valid then truncated");

	/* random bytes: always valid UTF-8 after escaping, and reversible */
	unsigned seed = 12345;
	int all_valid = 1, all_back = 1;
	for (int round = 0; round < 20000; round++) {
		unsigned char in[33], back[200];
		size_t n = 1 + (seed = seed * 1103515245u + 12345u) % 32;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			unsigned r = seed >> 16;
			/* bias towards the interesting bytes */
			in[i] = (unsigned char)(r % 3 ? 0x80 + r % 0x80 : 1 + r % 0x7f);
		}
		in[n] = 0;
		char *e = utf8esc_dup((const char *)in);
		if (!e)
			return 1;
		all_valid &= valid(e);
		size_t m = unescape(e, back);
		all_back &= m == n && memcmp(back, in, n) == 0;
		free(e);
	}
	ok(all_valid, "20,000 random strings: the escaped form is valid UTF-8");
	ok(all_back, "20,000 random strings: unescaping gives the original bytes");
	return tap_done();
}
