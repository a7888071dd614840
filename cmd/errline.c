/* errline.c: spanstat's error lines (errline.h). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "errline.h"

/* One error line, "spanstat: MSG": control bytes in MSG (which may echo the
 * user's arguments) are escaped so the message stays one line. */
void errline(const char *msg)
{
	fputs("spanstat: ", stderr);
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		if (*p == '\n')
			fputs("\\n", stderr);
		else if (*p == '\t')
			fputs("\\t", stderr);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(stderr, "\\x%02x", *p);
		else
			fputc(*p, stderr);
	}
	fputc('\n', stderr);
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
