/* errline.c: spanstat's error lines (errline.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errline.h"

/* Writes s[0, n) with control bytes escaped, so it stays one line. */
static void errline_text(const char *s, size_t n)
{
	for (const unsigned char *p = (const unsigned char *)s; n--; p++) {
		if (*p == '\n')
			fputs("\\n", stderr);
		else if (*p == '\t')
			fputs("\\t", stderr);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(stderr, "\\x%02x", *p);
		else
			fputc(*p, stderr);
	}
}

/* One error line, "spanstat: MSG": control bytes in MSG (which may echo the
 * user's arguments) are escaped so the message stays one line.  A hint that
 * lib/ appends as "\nhint: ..." (always last, its own words) gets a line of
 * its own, as git prints one. */
void errline(const char *msg)
{
	const char *hint = NULL;
	for (const char *p = msg; (p = strstr(p, "\nhint: ")); p++)
		hint = p;
	size_t n = hint ? (size_t)(hint - msg) : strlen(msg);
	fputs("spanstat: ", stderr);
	errline_text(msg, n);
	fputc('\n', stderr);
	if (hint) {
		errline_text(hint + 1, strlen(hint + 1));
		fputc('\n', stderr);
	}
	fflush(stderr);
}

void verrline(const char *fmt, va_list ap)
{
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	errline(msg ? msg : "out of memory");
	free(msg);
}

/* An error line for a failure that does not end spanstat. */
void die_soft(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verrline(fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verrline(fmt, ap);
	va_end(ap);
	exit(EXIT_SPANSTAT);
}
