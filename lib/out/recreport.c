/* recreport.c: record files into an analysis (recreport.h). */
#include "config.h"

#include "recreport.h"
#include "spanmetric.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cause.h"
#include "recfile.h"

struct rr_file {
	struct recfile *rf;
	struct span_trees tree; /* this rank's own, when merging */
	bool have_tree;
	struct span_tree merged;
	bool have_merged;
	struct count *count;
	struct stat_summary *stat;
	char *prefix;
};

/* Whether b's events and span values are a's (else their counts cannot
 * be set side by side). */
static bool rr_same(const struct run_head *a, const struct run_head *b)
{
	if (a->evl->n != b->evl->n || a->spans != b->spans || a->metrics->n != b->metrics->n)
		return false;
	for (size_t i = 0; i < a->evl->n; i++)
		if (strcmp(a->evl->ev[i].name, b->evl->ev[i].name) != 0)
			return false;
	for (unsigned i = 0; i < a->metrics->n; i++)
		if (strcmp(a->metrics->m[i].name, b->metrics->m[i].name) != 0)
			return false;
	return true;
}

/* One line of what a file lost, through o->warn (which there is). */
static __attribute__((format(printf, 2, 3))) void rr_say(const struct recreport_opts *o,
							 const char *fmt, ...)
{
	char *m = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&m, fmt, ap);
	va_end(ap);
	if (n >= 0) {
		o->warn(o->ctx, m);
		free(m);
	}
}

static void rr_damage(const struct recreport_opts *o, const char *file,
		      const struct record_damage *d)
{
	if (!o->warn)
		return;
	if (d->lost_bytes || d->bad_records || d->no_end || d->skipped_bytes) {
		char skipped[64] = "";
		if (d->skipped_bytes)
			snprintf(skipped, sizeof skipped, ", %" PRIu64 " bytes skipped",
				 d->skipped_bytes);
		rr_say(o,
		       "report: '%s' is damaged: %" PRIu64 " bad record%s (%" PRIu64
		       " of span events)%s, %" PRIu64 " bytes cut off at the end%s; "
		       "reporting what is left",
		       file, d->bad_records, d->bad_records == 1 ? "" : "s", d->lost_events,
		       skipped, d->lost_bytes, d->no_end ? ", the recording's end is missing" : "");
	}
	/* a numbered capture (format 3) says which blocks, the counts then
	 * need no line; blocks missing as many as the bad ones said above
	 * are those */
	const uint64_t *b = d->raw_blocks;
	bool blocks = b[0] || b[1] || b[2];
	if (d->raw_records[0] != d->raw_records[1] && !blocks)
		rr_say(o,
		       "report: '%s' is damaged: its capture replays %" PRIu64
		       " span records where the run took %" PRIu64
		       " (RAW blocks missing or repeated); reporting what is left",
		       file, d->raw_records[1], d->raw_records[0]);
	if (blocks && (b[1] || b[2] || b[0] > d->lost_events))
		rr_say(o,
		       "report: '%s' is damaged: of its capture's RAW blocks %" PRIu64
		       " missing (damaged or left out), %" PRIu64 " repeated and %" PRIu64
		       " out of order (these two left out); reporting what is left",
		       file, b[0], b[1], b[2]);
	/* what the blocks' loss took beyond their own spans */
	if (d->lost_procs == DECODE_UNKNOWN)
		rr_say(o,
		       "report: '%s' is damaged: processes whose every record was in its lost RAW "
		       "blocks, missing from the report, are not known (its END %s); reporting "
		       "what "
		       "is left",
		       file,
		       d->no_end ? "is missing: a recording cut short or damaged at its end"
				 : "is older than their count");
	else if (d->lost_procs)
		rr_say(o,
		       "report: '%s' is damaged: %" PRIu64 " process%s whose every record was in "
		       "its lost RAW blocks %s missing from the report; reporting what is left",
		       file, d->lost_procs, d->lost_procs == 1 ? "" : "es",
		       d->lost_procs == 1 ? "is" : "are");
	if (d->lost_answers)
		rr_say(o,
		       "report: '%s' is damaged: %" PRIu64 " answer%s the live run's decoder got "
		       "(symbol names, process starts and names, whether a process still ran) %s "
		       "missing from its capture, taken as unknown; reporting what is left",
		       file, d->lost_answers, d->lost_answers == 1 ? "" : "s",
		       d->lost_answers == 1 ? "is" : "are");
	if (d->lost_strings)
		rr_say(o,
		       "report: '%s' is damaged: %" PRIu64
		       " of its strings are missing (STRINGS records lost or damaged): what they "
		       "name shows as [lost]; reporting what is left",
		       file, d->lost_strings);
	if (d->lost_runs)
		rr_say(o, "report: '%s': the counts of %u run%s are lost", file, d->lost_runs,
		       d->lost_runs == 1 ? "" : "s");
	if (d->unknown)
		rr_say(o,
		       "report: '%s': %" PRIu64 " record%s of a type this spanstat does not know "
		       "skipped (written by a newer spanstat, or a damaged header)",
		       file, d->unknown, d->unknown == 1 ? "" : "s");
}

/* A --keep-last file: what it holds of the run, and what it left out. */
static void rr_window(const struct recreport_opts *o, const char *file,
		      const struct record_window *w)
{
	if (!o->warn || !w->present)
		return;
	char cut[128] = "";
	if (w->cut)
		snprintf(cut, sizeof cut,
			 "; %" PRIu64
			 " span%s cut at the window's start (begun before it) %s left out",
			 w->cut, w->cut == 1 ? "" : "s", w->cut == 1 ? "is" : "are");
	rr_say(o,
	       "report: '%s' holds the last %" PRIu64 " bytes of events (--keep-last)%s: "
	       "%" PRIu64 " span%s (%" PRIu64 " events, %" PRIu64 " messages, %" PRIu64
	       " samples, %" PRIu64 " bytes) before them were overwritten%s",
	       file, w->size,
	       w->snapshot ? " as a snapshot taken while the target ran (its counts, times "
			     "and status are unknown)"
			   : "",
	       w->spans, w->spans == 1 ? "" : "s", w->events, w->messages, w->samples, w->bytes,
	       cut);
}

/* This rank's means and merged tree, for the report's ranks. */
static int rr_rank(struct rr_file *f, struct rank_info *ri, long idx, bool compensate)
{
	const struct run_head *h = recfile_head(f->rf);
	const struct record_info *in = recfile_info(f->rf);
	struct run_end e;
	struct report tmp;
	recfile_end(f->rf, &e);
	size_t n = h->evl->n ? h->evl->n : 1;
	f->count = calloc(n, sizeof *f->count);
	f->stat = calloc(n, sizeof *f->stat);
	if (!f->count || !f->stat)
		return -ENOMEM;
	analysis_counts(h->evl, &e, f->count, f->stat);
	memset(&tmp, 0, sizeof tmp);
	analysis_rusage(&e, &tmp);
	ri->rank = in->rank >= 0 ? in->rank : idx;
	ri->host = in->host ? in->host : "";
	ri->nruns = e.nruns;
	ri->count = f->count;
	ri->damage_unknown = e.dstats_lost;
	if (e.dstats) {
		ri->dropped = e.dstats->dropped;
		ri->lost_records = e.dstats->lost_records;
		ri->gaps = e.dstats->gaps;
	}
	ri->ru = tmp.ru;
	if (f->have_tree) {
		/* as the report's own tree: --compensate takes the rank's cost out */
		if (compensate && e.event_cost_ns > 0)
			span_trees_compensate(&f->tree, e.event_cost_ns,
					      spanmetric_off_cpu(h->metrics));
		if (span_trees_merge(&f->tree, &f->merged) < 0)
			return -ENOMEM;
		f->have_merged = true;
		ri->merged = &f->merged;
	}
	return 0;
}

/* The head starts at the earliest of its files' starts. */
static void rr_earliest(struct run_head *h, const struct timespec *st, uint64_t mono)
{
	if (mono < h->start_mono)
		h->start_mono = mono;
	if (st->tv_sec < h->start.tv_sec ||
	    (st->tv_sec == h->start.tv_sec && st->tv_nsec < h->start.tv_nsec))
		h->start = *st;
}

int recreport_run(const struct recreport_opts *o, const struct writer **failed, char **cause)
{
	size_t n = o->nfiles;
	*failed = NULL;
	if (n == 0 || n > RECREPORT_MAX_FILES)
		return cause_set(cause, -EINVAL, "report: expected 1 to %d record files",
				 RECREPORT_MAX_FILES);
	struct strtab strings;
	struct spannames names;
	struct analysis an;
	bool have_an = false;
	struct rr_file *f = calloc(n, sizeof *f);
	struct rank_info *ri = calloc(n, sizeof *ri);
	struct run_result *runs = NULL;
	struct run_head head;
	struct decode_stats ds;
	memset(&ds, 0, sizeof ds);
	int r = strtab_init(&strings);
	if (r < 0 || !f || !ri) {
		free(f);
		free(ri);
		if (r == 0)
			strtab_release(&strings);
		return cause_set(cause, -ENOMEM, "report: %s", strerror(ENOMEM));
	}
	spannames_init(&names, &strings);
	for (size_t i = 0; i < n; i++) {
		r = recfile_open(&f[i].rf, o->files[i], &strings, &names, o->stop, cause);
		if (r < 0)
			goto out;
		if (i && !rr_same(recfile_head(f[0].rf), recfile_head(f[i].rf))) {
			r = cause_set(cause, -EINVAL,
				      "report: '%s' counted other events or span values than '%s': "
				      "report them apart",
				      o->files[i], o->files[0]);
			goto out;
		}
		/* two files of one rank: one rank run twice, or a file given twice */
		long rank = recfile_info(f[i].rf)->rank;
		for (size_t k = 0; rank >= 0 && k < i && o->warn; k++) {
			char *m = NULL;
			if (recfile_info(f[k].rf)->rank != rank)
				continue;
			if (asprintf(&m,
				     "report: '%s' and '%s' both hold rank %ld: the ranks compared "
				     "may not be the job's",
				     o->files[k], o->files[i], rank) >= 0)
				o->warn(o->ctx, m);
			free(m);
			break;
		}
	}
	/* the report's head: the first file's, its runs all the files' (those
	 * asked for, from the heads: not the runs found) and its start the
	 * earliest, on the first file's clock */
	const struct record_info *i0 = recfile_info(f[0].rf);
	head = *recfile_head(f[0].rf);
	unsigned nruns = 0, requested = 0;
	int64_t *shift = calloc(n, sizeof *shift);
	if (!shift) {
		r = cause_set(cause, -ENOMEM, "report: %s", strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct record_info *in = recfile_info(f[i].rf);
		const struct run_head *h = recfile_head(f[i].rf);
		bool same_boot = in->boot_id && i0->boot_id && *in->boot_id &&
				 strcmp(in->boot_id, i0->boot_id) == 0;
		/* in unsigned arithmetic: a damaged clock may be any number */
		shift[i] = same_boot ? 0
				     : (int64_t)((in->real_ns - in->mono_ns) -
						 (i0->real_ns - i0->mono_ns));
		struct run_end e;
		recfile_end(f[i].rf, &e);
		nruns += e.nruns;
		requested += h->runs;
		rr_earliest(&head, &h->start, h->start_mono + (uint64_t)shift[i]);
	}
	head.runs = requested;
	runs = calloc(nruns ? nruns : 1, sizeof *runs);
	r = runs ? analysis_init(&an, o->writers, o->nwriters, head.spans, head.metrics->n)
		 : -ENOMEM;
	have_an = runs != NULL;
	/* several files (ranks): their process names take the rank's prefix,
	 * interned now into the shared string table, file after file, so that
	 * replays at once (-j) only read it; a file whose END does not list
	 * its process names (older, or lost) interns them as its replay meets
	 * them, which only one replay at a time may do */
	bool settled = true;
	for (size_t i = 0; r == 0 && n > 1 && i < n; i++) {
		const struct record_info *in = recfile_info(f[i].rf);
		if (asprintf(&f[i].prefix, "rank %ld (%s)", in->rank >= 0 ? in->rank : (long)i,
			     in->host ? in->host : "") < 0) {
			f[i].prefix = NULL;
			r = -ENOMEM;
			break;
		}
		int k = recfile_prefix(f[i].rf, f[i].prefix);
		if (k < 0)
			r = k;
		settled &= k > 0;
	}
	if (r == 0)
		analysis_jobs(&an, settled ? o->jobs : 1);
	if (r == 0)
		r = analysis_start(&an, &head);
	/* the first run's start, as the live run knows it once run 0 started */
	for (size_t i = 0; i < n; i++) {
		struct timespec st;
		uint64_t mono;
		recfile_start(f[i].rf, &st, &mono);
		if (i == 0) {
			head.start = st;
			head.start_mono = mono;
		}
		rr_earliest(&head, &st, mono + (uint64_t)shift[i]);
	}
	/* runs found so far (nbase), and asked for (base: the threads of file i
	 * are of runs base + k, whatever runs lost their results) */
	unsigned base = 0, nbase = 0, ncost = 0, lost = 0;
	double cost = 0;
	bool dstats_lost = false;
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct record_replay how = {.ts_shift = shift[i], .run_base = base};
		struct span_sink extra;
		if (n > 1) {
			how.pid_base = (uint32_t)(i + 1) << SPAN_PID_BITS;
			how.prefix = f[i].prefix;
			if (head.spans) {
				if (span_trees_init(&f[i].tree) < 0) {
					r = -ENOMEM;
					break;
				}
				f[i].have_tree = true;
				span_trees_set_values(&f[i].tree, head.metrics->n);
				extra = (struct span_sink){span_trees_event, &f[i].tree};
				how.extra = &extra;
			}
		}
		struct analysis *const *parts;
		size_t nparts = analysis_parts(&an, &parts);
		r = nparts ? recfile_replay_parts(f[i].rf, parts, nparts, &how)
			   : recfile_replay(f[i].rf, &an, &how);
		/* after the replay, which finds the blocks that do not decode */
		rr_damage(o, o->files[i], recfile_damage(f[i].rf));
		rr_window(o, o->files[i], recfile_window(f[i].rf));
		struct run_end e;
		recfile_end(f[i].rf, &e);
		memcpy(runs + nbase, e.run, e.nruns * sizeof *runs);
		for (unsigned k = 0; k < e.nruns; k++) /* numbered as their threads */
			runs[nbase + k].index += base;
		nbase += e.nruns;
		base += recfile_head(f[i].rf)->runs;
		lost += e.lost_runs;
		if (e.dstats) {
			uint64_t *d = (uint64_t *)&ds;
			const uint64_t *s = (const uint64_t *)e.dstats;
			for (size_t k = 0; k < sizeof ds / sizeof(uint64_t); k++)
				d[k] = d[k] == DECODE_UNKNOWN || s[k] == DECODE_UNKNOWN
					       ? DECODE_UNKNOWN
					       : d[k] + s[k];
		}
		/* one file's unknown counts make the sum unknown */
		dstats_lost |= e.dstats_lost;
		/* the mean over the files that know their cost (0: unknown) */
		if (e.event_cost_ns > 0) {
			cost += e.event_cost_ns;
			ncost++;
		}
		if (r == 0 && n > 1)
			r = rr_rank(&f[i], &ri[i], (long)i, o->compensate);
		ri[i].file = o->files[i];
	}
	free(shift);
	if (r < 0 && r != -EINTR)
		r = cause_set(cause, r, "report: cannot make the report: %s", strerror(-r));
	if (r < 0)
		goto out;
	struct report_ranks ranks = {(unsigned)n, ri};
	/* the windows of the files, summed: the spans are theirs */
	struct record_window win = {.files = (unsigned)n};
	for (size_t i = 0; i < n; i++) {
		const struct record_window *w = recfile_window(f[i].rf);
		if (!w->present)
			continue;
		win.present = true;
		win.snapshot |= w->snapshot;
		win.windows++;
		win.size += w->size;
		win.events += w->events;
		win.spans += w->spans;
		win.messages += w->messages;
		win.samples += w->samples;
		win.bytes += w->bytes;
		win.cut += w->cut;
		win.cut_args += w->cut_args;
	}
	struct run_end end = {.window = win.present ? &win : NULL,
			      .run = runs,
			      .nruns = nruns,
			      .dstats = head.spans ? &ds : NULL,
			      .dstats_lost = head.spans && dstats_lost,
			      .event_cost_ns = ncost ? cost / ncost : 0,
			      .compensate = o->compensate,
			      .lost_runs = lost};
	r = analysis_finish(&an, &end, n > 1 ? &ranks : NULL, failed);
	if (r < 0)
		r = cause_set(cause, r, "report: cannot make the report: %s", strerror(-r));
out:
	if (have_an)
		analysis_release(&an);
	for (size_t i = 0; i < n; i++) {
		recfile_close(f[i].rf);
		if (f[i].have_tree)
			span_trees_release(&f[i].tree);
		if (f[i].have_merged)
			span_tree_release(&f[i].merged);
		free(f[i].count);
		free(f[i].stat);
		free(f[i].prefix);
	}
	free(f);
	free(ri);
	free(runs);
	spannames_release(&names);
	strtab_release(&strings);
	return r;
}
