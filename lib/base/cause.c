/* cause.c: error messages handed back from lib/ (see cause.h). */
#include "config.h"

#include "cause.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int cause_set(char **cause, int ret, const char *fmt, ...)
{
	if (!cause)
		return ret;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(cause, fmt, ap) < 0)
		*cause = NULL;
	va_end(ap);
	return ret;
}
