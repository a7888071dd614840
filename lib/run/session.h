/* session.h: one spanstat session, the acquisition half (ARCHITECTURE
 * "acquisition captures; analysis analyses"): run the command N times under
 * counters (and span collection) and hand every fact, as it happens, to a
 * consumer the caller wires in (cmd/ wires it to analysis, lib/out): the
 * head, -I samples, span events through the consumer's sinks, trees the
 * target aggregated, and each run's results at the end.  The session never
 * names an output; the caller owns the consumer. */
#ifndef SPANSTAT_SESSION_H
#define SPANSTAT_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "attach.h"
#include "demangle.h"
#include "evlist.h"
#include "runinfo.h"
#include "spanev.h"
#include "spanfilter.h"
#include "spantree.h"

/* Where a session's facts go, in this order: init, sinks, start, then run,
 * interval and import as they come, finish once, release last (also after
 * a failure, when init was called).  Each op gets ctx. */
struct session_consumer {
	void *ctx;
	/* spans: span events and trees will come, each span carrying nval
	 * values.  0 or -errno. */
	int (*init)(void *ctx, bool spans, unsigned nval);
	/* Hands each span sink span events go to, in order, to add(actx, .);
	 * add's first error, else 0. */
	int (*sinks)(void *ctx, int (*add)(void *actx, struct span_sink sink), void *actx);
	/* Whether a sink needs the span events one by one: the target then
	 * streams them rather than aggregating its trees itself. */
	bool (*streams)(void *ctx);
	int (*start)(void *ctx, const struct run_head *h);
	/* The run (from 0) the threads that start from now on belong to. */
	void (*run)(void *ctx, unsigned run);
	int (*interval)(void *ctx, const struct interval_sample *s);
	int (*import)(void *ctx, const struct span_import *im);
	/* The span trees built so far (NULL: none), for the session's checks. */
	const struct span_trees *(*tree)(void *ctx);
	/* The end.  0, or -errno when the facts could not be taken in; *failed
	 * names what could not be written first (NULL: nothing), *failed_err
	 * its -errno. */
	int (*finish)(void *ctx, const struct run_end *e, const char **failed, int *failed_err);
	/* SIGUSR2 came and opts.snapshot_usr2 is set: write what is kept so
	 * far while the target goes on (NULL: nothing to write).  The
	 * consumer says how it went; the session goes on whatever it returns. */
	void (*snapshot)(void *ctx);
	void (*release)(void *ctx);
	/* Whether the consumer keeps the raw capture of the span inputs
	 * (rawcap.h) rather than the span events (NULL: it does not); asked
	 * once, after sinks.  If it does, capture gets the capture in blocks
	 * of whole items, each before the run start, sample or end that came
	 * after it. */
	bool (*capture_on)(void *ctx);
	void (*capture)(void *ctx, const void *buf, size_t len);
	/* After capture_on said yes: whether the capture is all it keeps of
	 * the spans (no tree, no other sink needs them).  Then the session
	 * does no work per event: the span events, the tree and what they
	 * tell (the decoder's counts, off-CPU damage, the values unknown) are
	 * the replay's.  NULL: no. */
	bool (*capture_only)(void *ctx);
};

struct session_opts {
	int argc;
	char *const *argv; /* the command */
	const struct evlist *evl;
	unsigned runs;			 /* >= 1 */
	unsigned interval_ms;		 /* 0: off */
	unsigned interval_count;	 /* -I prints at most this many per run (0: no limit);
					  * then no more, and an attached count without a
					  * command ends */
	unsigned delay_ms;		 /* counting starts this long after the run starts */
	unsigned timeout_ms;		 /* the run ends this long after it starts: the
					  * command gets SIGTERM (0: no limit) */
	const char *pre, *post;		 /* shell commands run before and after each run,
					  * uncounted; NULL: none */
	bool spans;			 /* collect spans from the target */
	const char *preload;		 /* libspanstat.so to LD_PRELOAD when collecting */
	const struct spanfilter *filter; /* spans the target should not send, or NULL */
	enum demangle_mode demangle;	 /* how function names show */
	bool compensate;		 /* take the instrumentation's cost out of span times */
	const struct evlist *span_evl;	 /* --span-events: counted per span, or NULL */
	bool span_allocs;		 /* --span-allocs */
	bool span_args;			 /* --span-args: threads never aggregate (their
					  * typed arguments need the events) */
	const char *lib_calls;		 /* --lib-calls: glob of library functions, or NULL */
	bool lib_calls_all;		 /* --lib-calls-all: every object's calls */
	bool no_off_cpu;		 /* --no-off-cpu: spans carry no off-CPU time */
	const char *alloc_preload;	 /* libspanstat-alloc.so for --span-allocs */
	bool alloc_unknown;		 /* --span-allocs cannot count the command's allocator
					  * (launch_alloc_check): the values are unknown */
	const char *python_dir;		 /* where spanstat.py is (PYTHONPATH), or NULL */
	const char *python_boot;	 /* --python: the sitecustomize.py's directory, put
					  * first in PYTHONPATH; NULL: no --python */
	bool python_c_calls;		 /* --python=c: C functions called from Python too */
	const char *shell_helper;	 /* spanstat.bash (SPANSTAT_SH), or NULL */
	/* attach (-p, -t, -a, -C): count these tasks or CPUs instead of a command
	 * spanstat starts; argc may then be 0 */
	const struct attach *attach;		 /* NULL: count the command */
	const struct aggr *aggr;		 /* rows per thread, CPU, core ... of attach's sets
						  * (aggr.h), or NULL: the totals only */
	const struct session_consumer *consumer; /* where the facts go */
	bool snapshot_usr2; /* SIGUSR2 asks the consumer for a snapshot (--keep-last),
			     * not relayed to the target */
};

enum {
	SESSION_EXIT_ERROR = 125, /* spanstat's own failure */
	SESSION_EXIT_CANNOT_RUN = 126,
	SESSION_EXIT_NOT_FOUND = 127,
	SESSION_EXIT_SIGNAL = 128, /* + the signal that killed the target */
};

/* Runs the session.  Returns 0 when the command ran and the consumer got its
 * facts (*exit_code: the target's status, 128+N for signal N; 128+N also
 * when signal N came between two runs of -r, which ends the runs); otherwise
 * -errno with *exit_code 125, 126 or 127 and a message in *cause, or 128+N
 * when signal N came before the command started (it then never runs).
 * When the consumer could not write something, *cause names the first such
 * failure (then *exit_code is 125 if the target's was 0).
 * Blocks the signals of sigrelay.h while it runs; a caller that blocked them
 * first keeps them blocked, and takes those left pending with
 * sigrelay_take(). */
int session_run(const struct session_opts *o, int *exit_code, char **cause);

#endif
