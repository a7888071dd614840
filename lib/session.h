/* session.h: one spanstat session: run the command N times under counters
 * (and span collection), feed the writers as things happen, then hand them
 * the final report.  The caller owns the writers' files. */
#ifndef SPANSTAT_SESSION_H
#define SPANSTAT_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "demangle.h"
#include "events.h"
#include "writer.h"

struct session_opts {
	int argc;
	char *const *argv; /* the command */
	const struct evlist *evl;
	unsigned runs;		     /* >= 1 */
	unsigned interval_ms;	     /* 0: off */
	bool spans;		     /* collect spans from the target */
	const char *preload;	     /* libspanstat.so to LD_PRELOAD when collecting */
	enum demangle_mode demangle; /* how function names show */
	struct writer *const *writers;
	size_t nwriters;
};

enum {
	SESSION_EXIT_ERROR = 125, /* spanstat's own failure */
	SESSION_EXIT_CANNOT_RUN = 126,
	SESSION_EXIT_NOT_FOUND = 127,
	SESSION_EXIT_SIGNAL = 128, /* + the signal that killed the target */
};

/* Runs the session.  Returns 0 when the command ran and every writer got its
 * report (*exit_code: the target's status, 128+N for signal N); otherwise
 * -errno with *exit_code 125, 126 or 127 and a message in *cause. */
int session_run(const struct session_opts *o, int *exit_code, char **cause);

#endif
