/* errline.h: how the command line tools say what went wrong: one line
 * "spanstat: MSG" on stderr, control bytes escaped, and (die) exit 125. */
#ifndef SPANSTAT_ERRLINE_H
#define SPANSTAT_ERRLINE_H

#include <stdarg.h>

#include "session.h"

enum { EXIT_SPANSTAT = SESSION_EXIT_ERROR };

void errline(const char *msg);
void verrline(const char *fmt, va_list ap);
/* An error line for a failure that does not end spanstat. */
__attribute__((format(printf, 1, 2))) void die_soft(const char *fmt, ...);
/* An error line, then exit 125. */
__attribute__((format(printf, 1, 2), noreturn)) void die(const char *fmt, ...);

#endif
