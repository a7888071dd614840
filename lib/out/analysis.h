/* analysis.h: the analysis half of a session (ARCHITECTURE "record vs
 * analyse"): what the writers see, built from facts alone.  A source of
 * facts (the live session's acquisition, or a record file read back by
 * `spanstat report`) hands it the head, interval samples, normalised span
 * events (its sink), trees a target aggregated itself, and at the end each
 * run's results; it keeps the span trees, merges them once, builds the
 * report (means and spreads over runs) and drives the writers.  It owns its
 * trees; everything else it is handed stays the caller's until
 * analysis_release. */
#ifndef SPANSTAT_ANALYSIS_H
#define SPANSTAT_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"
#include "writer.h"

struct analysis {
	struct writer *const *writers;
	size_t nwriters;
	const struct run_head *head;
	bool spans;
	struct span_trees tree;
	struct span_tree merged;
	bool have_tree, have_merged;
	struct count *count; /* the report's means, evl->n */
	struct stat_summary *stat;
	struct count *unit_count; /* the means per unit (head's aggr), or NULL */
	struct stat_summary *unit_stat;
	struct report rep;
	/* analysis_jobs: the writers that take span events, replayed to in
	 * threads of their own (analysis_parts) */
	unsigned jobs;
	bool part;		 /* a part: writers only, no tree */
	bool *fanned;		 /* by writer: a part's during the replay */
	struct analysis **partv; /* this one, then its parts */
	size_t nparts;
	struct analysis *parts;
	struct writer **partw; /* the parts' writers, part after part */
};

/* spans: span events and trees come; nval: values per span. */
int analysis_init(struct analysis *a, struct writer *const *writers, size_t nwriters, bool spans,
		  unsigned nval);
/* Threads for the replay of a record (before analysis_start; 1, the
 * default: the caller's only).  With jobs > 1 and spans, analysis_start
 * splits off parts: the writers that take span events (those writing to
 * one file, and the writers that do not stream but write there too, stay
 * together) go round jobs - 1 parts, and this analysis keeps the tree and
 * the other writers.  A source replays its events into each part as into
 * this one (recfile_replay_parts), each part in a thread of its own: every
 * writer gets the very calls it would get from one replay, so the outputs
 * are the same bytes whatever jobs is. */
void analysis_jobs(struct analysis *a, unsigned jobs);
/* This analysis and its parts (*parts[0] is a), or 0 when it has none. */
size_t analysis_parts(const struct analysis *a, struct analysis *const **parts);
/* Every sink span events go to: the tree, then each writer that streams
 * (a part's writers go to the part's, not this one's).
 * add is the source's (decoder_add_sink or a reader's); its first error
 * is returned, else 0. */
int analysis_sinks(struct analysis *a, int (*add)(void *ctx, struct span_sink sink), void *ctx);
/* Whether a writer keeps the live session's raw capture (writer.h's
 * capture_on, asked of each), and a block of it to each that does. */
bool analysis_capture_on(struct analysis *a);
void analysis_capture(struct analysis *a, const void *buf, size_t len);
/* Whether every writer keeps the raw capture (after analysis_capture_on):
 * then nothing needs the span events or the tree while the capture is
 * made. */
bool analysis_capture_only(const struct analysis *a);
/* Whether a writer takes span events one by one (it streams). */
bool analysis_streams(const struct analysis *a);
/* The per-thread span trees (NULL without spans). */
const struct span_trees *analysis_tree(const struct analysis *a);
/* The run (from 0) the threads that start from now on belong to. */
void analysis_run(struct analysis *a, unsigned run);
/* The head, before anything else: each writer's start. */
int analysis_start(struct analysis *a, const struct run_head *h);
/* A -I sample, to every writer, each stream flushed; a writer that fails
 * keeps its error (said at the end) and takes no more.  Returns 0, or
 * -ENOMEM. */
int analysis_interval(struct analysis *a, const struct interval_sample *s);
int analysis_import(struct analysis *a, const struct span_import *im);
/* The report of e's runs (runinfo.h) and ranks (several ranks of one job,
 * or NULL), built and handed to every writer (each gets it even when
 * another failed); 0, or -ENOMEM when the report could not be built.
 * *failed: the first writer whose finish failed, or NULL. */
int analysis_finish(struct analysis *a, const struct run_end *e, const struct report_ranks *ranks,
		    const struct writer **failed);
void analysis_release(struct analysis *a);
/* The means over e's runs, as the report has them: per event (cnt, st:
 * evl->n each; COUNT_UNKNOWN without runs), and rusage (rep->ru,
 * rep->elapsed, rep->span_wall_ns; 0 without runs, for unknown). */
void analysis_counts(const struct evlist *evl, const struct run_end *e, struct count *cnt,
		     struct stat_summary *st);
void analysis_rusage(const struct run_end *e, struct report *rep);

#endif
