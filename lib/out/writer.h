/* writer.h: the one interface every output format implements (summary.c,
 * csv.c, json.c, folded.c, perfetto.c, pprof.c, svg.c, flamechart.c,
 * recwrite.c; output.c lists the ones an option names).  analysis.c calls
 * start once, run as each run starts, interval for each -I sample and span
 * for each span event as they happen (live from the session, or replayed
 * from a record file), then finish with the whole report.  A writer writes
 * only to w->fp; the caller owns the file (outfile.c) and turns errors into
 * messages. */
#ifndef SPANSTAT_WRITER_H
#define SPANSTAT_WRITER_H

#include <stdbool.h>
#include <stdio.h>

#include "report.h"
#include "spanev.h"
#include "spanweight.h"

struct writer_opts {
	const char *csv_sep; /* -x */
	bool spans_table;    /* --spans: summary prints the span table */
	bool spans_location; /* --spans=location: with a location column */
	bool folded_threads; /* --folded-threads: thread/process root frames */
	const char *weight;  /* --weight: what folded values count (NULL: wall) */
	/* --weight parsed once against the run's metrics, by analysis_finish
	 * before any writer's finish: the weight, or why it cannot be counted
	 * (spanweight_parse's -ENOENT, -ENOTSUP; 0: fine) */
	struct spanweight weight_by;
	int weight_err;
	/* record: keep only the last this many bytes of events, messages and
	 * samples (--keep-last; 0: everything), and the file's name for the
	 * snapshots of SIGUSR2 */
	uint64_t keep_last;
	const char *path;
	/* the session hands this writer its raw capture (capture_on said yes):
	 * span events are then not its to keep */
	bool raw;
};

struct writer;

struct writer_ops {
	const char *name;
	/* each optional but finish; return 0 or -errno */
	int (*start)(struct writer *w, const struct run_head *h);
	int (*interval)(struct writer *w, const struct interval_sample *s);
	void (*span)(void *w, const struct span_event *ev); /* a span_sink */
	void (*run)(struct writer *w, unsigned run);	    /* run `run` (-r, from 0) starts */
	/* whether it keeps the session's raw capture (rawcap.h) instead of
	 * the span events (asked once, before start; yes sets opts.raw), and
	 * each block of it, in order among the other calls */
	bool (*capture_on)(struct writer *w);
	void (*capture)(struct writer *w, const void *buf, size_t len);
	int (*finish)(struct writer *w, const struct report *r);
	void (*release)(struct writer *w);
};

struct writer {
	const struct writer_ops *ops;
	FILE *fp;
	struct writer_opts opts;
	const struct run_head *head; /* set before start */
	void *priv;		     /* the format's own state */
	int err;		     /* first error seen by a void callback */
};

extern const struct writer_ops summary_writer_ops;
extern const struct writer_ops csv_writer_ops;
extern const struct writer_ops json_writer_ops;
/* The JSON document's schema_version (spanstat-json(5)): bumped on
 * incompatible changes; diff refuses a newer one. */
#define JSON_SCHEMA_VERSION 2
extern const struct writer_ops folded_writer_ops;
extern const struct writer_ops perfetto_writer_ops;
extern const struct writer_ops pprof_writer_ops;
extern const struct writer_ops flamegraph_writer_ops;
extern const struct writer_ops flamechart_writer_ops;
extern const struct writer_ops record_writer_ops;

#endif
