/* session.h: one spanstat session: run the command N times under counters
 * (and span collection), feed the writers as things happen, then hand them
 * the final report.  The caller owns the writers' files. */
#ifndef SPANSTAT_SESSION_H
#define SPANSTAT_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "attach.h"
#include "demangle.h"
#include "events.h"
#include "spanfilter.h"
#include "writer.h"

struct session_opts {
	int argc;
	char *const *argv; /* the command */
	const struct evlist *evl;
	unsigned runs;			 /* >= 1 */
	unsigned interval_ms;		 /* 0: off */
	bool spans;			 /* collect spans from the target */
	const char *preload;		 /* libspanstat.so to LD_PRELOAD when collecting */
	const struct spanfilter *filter; /* spans the target should not send, or NULL */
	enum demangle_mode demangle;	 /* how function names show */
	bool compensate;		 /* take the instrumentation's cost out of span times */
	const struct evlist *span_evl;	 /* --span-events: counted per span, or NULL */
	bool span_allocs;		 /* --span-allocs */
	bool no_off_cpu;		 /* --no-off-cpu: spans carry no off-CPU time */
	const char *alloc_preload;	 /* libspanstat-alloc.so for --span-allocs */
	bool alloc_unknown;		 /* --span-allocs cannot count the command's allocator
					  * (launch_alloc_check): the values are unknown */
	const char *python_dir;		 /* where spanstat.py is (PYTHONPATH), or NULL */
	const char *shell_helper;	 /* spanstat.bash (SPANSTAT_SH), or NULL */
	/* attach (-p, -t, -a, -C): count these tasks or CPUs instead of a command
	 * spanstat starts; argc may then be 0 */
	const struct attach *attach; /* NULL: count the command */
	struct writer *const *writers;
	size_t nwriters;
};

enum {
	SESSION_EXIT_ERROR = 125, /* spanstat's own failure */
	SESSION_EXIT_CANNOT_RUN = 126,
	SESSION_EXIT_NOT_FOUND = 127,
	SESSION_EXIT_SIGNAL = 128, /* + the signal that killed the target */
};

/* Runs the session.  Returns 0 when the command ran and the writers got its
 * report (*exit_code: the target's status, 128+N for signal N; 128+N also
 * when signal N came between two runs of -r, which ends the runs); otherwise
 * -errno with *exit_code 125, 126 or 127 and a message in *cause, or 128+N
 * when signal N came before the command started (it then never runs).
 * A writer that failed to write the report has its err set, and *cause names
 * the first such failure (then *exit_code is 125 if the target's was 0).
 * Blocks the signals of sigrelay.h while it runs; a caller that blocked them
 * first keeps them blocked, and takes those left pending with
 * sigrelay_take(). */
int session_run(const struct session_opts *o, int *exit_code, char **cause);

#endif
