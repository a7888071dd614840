/* analysis.c: trees, the report and the writers, fed with facts (see
 * analysis.h).  The live session and `spanstat report` share it, so a live
 * run and a recorded one reported later give the same outputs. */
#include "config.h"

#include "analysis.h"
#include "spanmetric.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

int analysis_init(struct analysis *a, struct writer *const *writers, size_t nwriters, bool spans,
		  unsigned nval)
{
	memset(a, 0, sizeof *a);
	a->writers = writers;
	a->nwriters = nwriters;
	a->spans = spans;
	if (!spans)
		return 0;
	if (span_trees_init(&a->tree) < 0)
		return -ENOMEM;
	a->have_tree = true;
	return span_trees_set_values(&a->tree, nval) < 0 ? -EINVAL : 0;
}

void analysis_jobs(struct analysis *a, unsigned jobs)
{
	a->jobs = jobs;
}

size_t analysis_parts(const struct analysis *a, struct analysis *const **parts)
{
	*parts = a->partv;
	return a->nparts;
}

/* Whether writer i is a part's during the replay. */
static bool analysis_fanned(const struct analysis *a, size_t i)
{
	return a->fanned && a->fanned[i];
}

/* Writer k writes to the file of a part's writer before it: that one's
 * group. */
static bool analysis_shares(const struct analysis *a, size_t k, const unsigned *group, unsigned *g)
{
	FILE *fp = a->writers[k]->fp;
	for (size_t i = 0; fp && i < k; i++)
		if (a->fanned[i] && a->writers[i]->fp == fp) {
			*g = group[i];
			return true;
		}
	return false;
}

/* The parts (analysis_jobs): each writer that streams in a group of its
 * own, but those of one file in one, the groups round the parts. */
static int analysis_split(struct analysis *a)
{
	size_t nw = a->nwriters;
	unsigned *group = calloc(nw + 1, sizeof *group), ngroups = 0;
	a->fanned = calloc(nw + 1, sizeof *a->fanned);
	if (!group || !a->fanned) {
		free(group);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nw; i++) {
		if (!a->writers[i]->ops->span)
			continue;
		if (!analysis_shares(a, i, group, &group[i]))
			group[i] = ngroups++;
		a->fanned[i] = true;
	}
	for (size_t i = 0; i < nw; i++) {
		const struct writer_ops *o = a->writers[i]->ops;
		if (!a->fanned[i] && (o->run || o->interval) &&
		    analysis_shares(a, i, group, &group[i]))
			a->fanned[i] = true;
	}
	size_t np = ngroups < a->jobs - 1 ? ngroups : a->jobs - 1;
	int r = 0;
	if (np) {
		a->parts = calloc(np, sizeof *a->parts);
		a->partv = calloc(np + 1, sizeof *a->partv);
		a->partw = calloc(nw, sizeof *a->partw);
		r = a->parts && a->partv && a->partw ? 0 : -ENOMEM;
	}
	size_t n = 0;
	for (size_t p = 0; r == 0 && p < np; p++) {
		struct analysis *pa = &a->parts[p];
		pa->writers = a->partw + n;
		for (size_t i = 0; i < nw; i++)
			if (a->fanned[i] && group[i] % np == p)
				a->partw[n++] = a->writers[i];
		pa->nwriters = (size_t)(a->partw + n - pa->writers);
		pa->spans = true;
		pa->part = true;
		pa->head = a->head;
		a->partv[p + 1] = pa;
	}
	if (r == 0 && np) {
		a->partv[0] = a;
		a->nparts = np + 1;
	}
	free(group);
	return r;
}

int analysis_sinks(struct analysis *a, int (*add)(void *ctx, struct span_sink sink), void *ctx)
{
	if (!a->spans)
		return 0;
	int r = a->part ? 0 : add(ctx, (struct span_sink){span_trees_event, &a->tree});
	for (size_t i = 0; r == 0 && i < a->nwriters; i++) {
		struct writer *w = a->writers[i];
		if (w->ops->span && !analysis_fanned(a, i))
			r = add(ctx, (struct span_sink){w->ops->span, w});
	}
	return r;
}

bool analysis_capture_on(struct analysis *a)
{
	bool any = false;
	for (size_t i = 0; a->spans && i < a->nwriters; i++) {
		struct writer *w = a->writers[i];
		if (w->ops->capture_on && w->ops->capture_on(w))
			any = true;
	}
	return any;
}

void analysis_capture(struct analysis *a, const void *buf, size_t len)
{
	for (size_t i = 0; i < a->nwriters; i++) {
		struct writer *w = a->writers[i];
		if (w->opts.raw && w->ops->capture && !w->err)
			w->ops->capture(w, buf, len);
	}
}

bool analysis_capture_only(const struct analysis *a)
{
	for (size_t i = 0; i < a->nwriters; i++)
		if (!a->writers[i]->opts.raw)
			return false;
	return a->spans && a->nwriters && !a->nparts;
}

bool analysis_streams(const struct analysis *a)
{
	for (size_t i = 0; a->spans && i < a->nwriters; i++)
		if (a->writers[i]->ops->span)
			return true;
	return false;
}

const struct span_trees *analysis_tree(const struct analysis *a)
{
	return a->have_tree ? &a->tree : NULL;
}

void analysis_run(struct analysis *a, unsigned run)
{
	a->tree.run = run;
	for (size_t i = 0; i < a->nwriters; i++)
		if (a->writers[i]->ops->run && !analysis_fanned(a, i))
			a->writers[i]->ops->run(a->writers[i], run);
}

int analysis_start(struct analysis *a, const struct run_head *h)
{
	a->head = h;
	for (size_t i = 0; i < a->nwriters; i++) {
		struct writer *w = a->writers[i];
		w->head = h;
		int r = w->ops->start ? w->ops->start(w, h) : 0;
		if (r < 0)
			return r;
	}
	return a->jobs > 1 && a->spans ? analysis_split(a) : 0;
}

/* A writer that fails at a sample (a full disk, standard output's reader
 * gone) keeps its error for the end, where it is said, and takes no more
 * samples; the others go on, as for a failure anywhere else: one bad
 * output never costs the others, nor the target's status.  Each stream is
 * flushed, as perf stat's lines are: a FIFO or a pipe shows each sample as
 * it comes (a file is put in place at the end anyway).  Only want of
 * memory stops it all. */
int analysis_interval(struct analysis *a, const struct interval_sample *s)
{
	for (size_t i = 0; i < a->nwriters; i++) {
		struct writer *w = a->writers[i];
		if (w->err || !w->ops->interval || analysis_fanned(a, i))
			continue;
		errno = 0;
		int r = w->ops->interval(w, s);
		if (r == -ENOMEM)
			return r;
		if (r == 0 && w->fp && fflush(w->fp) != 0)
			r = -EIO;
		if (r < 0) /* a stream's own errno (EPIPE) over its EIO */
			w->err = r == -EIO && errno ? -errno : r;
	}
	return 0;
}

int analysis_import(struct analysis *a, const struct span_import *im)
{
	return span_trees_import(&a->tree, im);
}

/* Run k's counts: its totals, or the row of unit u (units) */
static const struct count *analysis_row(const struct run_end *e, unsigned k, bool units, size_t u,
					size_t n)
{
	if (!units)
		return e->run[k].counts;
	return e->run[k].units ? e->run[k].units + u * n : NULL;
}

/* The mean over runs, per event: state, value, raw, enabled and running;
 * of the totals, or of unit u's row (units). */
static void analysis_mean(const struct evlist *evl, const struct run_end *e, bool units, size_t u,
			  struct count *cnt, struct stat_summary *st)
{
	bool known = e->nruns > 0;
	for (unsigned k = 0; k < e->nruns; k++)
		known &= analysis_row(e, k, units, u, evl->n) != NULL;
	for (size_t i = 0; i < evl->n; i++) {
		struct stats sv;
		double raw = 0, ena = 0, run = 0;
		unsigned ok = 0, counted = 0, zero = 0;
		stats_init(&sv);
		if (!known) { /* a record whose results are all lost */
			cnt[i] = (struct count){.state = COUNT_UNKNOWN};
			st[i] = (struct stat_summary){0, 0, 0};
			continue;
		}
		cnt[i] = analysis_row(e, 0, units, u, evl->n)[i];
		for (unsigned k = 0; k < e->nruns; k++) {
			const struct count *c = &analysis_row(e, k, units, u, evl->n)[i];
			if (c->state == COUNT_NOT_SUPPORTED)
				continue;
			counted++;
			ena += (double)c->enabled;
			run += (double)c->running;
			/* a count that never ran in this run (threads asleep
			 * throughout: nothing enabled) counted 0 there, as
			 * perf averages it, and as the run's total has a
			 * unit's */
			if (c->state == COUNT_NOT_COUNTED && c->enabled == 0) {
				stats_add(&sv, 0);
				zero++;
				continue;
			}
			if (c->state != COUNT_OK)
				continue;
			ok++;
			raw += (double)c->raw;
			stats_add(&sv, c->value);
		}
		st[i] = stats_summary(&sv);
		if (ok) {
			ok += zero;
			cnt[i].state = COUNT_OK;
			cnt[i].value = sv.mean;
			cnt[i].raw = stats_sat_u64(raw / ok + 0.5);
		}
		if (counted) {
			cnt[i].enabled = stats_sat_u64(ena / counted + 0.5);
			cnt[i].running = stats_sat_u64(run / counted + 0.5);
		}
	}
}

void analysis_counts(const struct evlist *evl, const struct run_end *e, struct count *cnt,
		     struct stat_summary *st)
{
	analysis_mean(evl, e, false, 0, cnt, st);
}

/* The mean rusage over runs, and the spread of the wall time. */
void analysis_rusage(const struct run_end *e, struct report *rep)
{
	if (!e->nruns) { /* unknown: the writers say so, as nruns is 0 */
		memset(&rep->ru, 0, sizeof rep->ru);
		rep->elapsed = (struct stat_summary){0, 0, 0};
		rep->span_wall_ns = 0;
		return;
	}
	struct stats el;
	stats_init(&el);
	double u = 0, sy = 0, rss = 0, mi = 0, ma = 0, vc = 0, ic = 0, w = 0, sw = 0;
	for (unsigned k = 0; k < e->nruns; k++) {
		const struct rusage_info *ri = &e->run[k].ru;
		stats_add(&el, (double)ri->elapsed_ns / 1e9);
		w += (double)ri->elapsed_ns;
		/* the spans cover the whole run, the delay of -D too */
		sw += (double)(e->run[k].wall_ns ? e->run[k].wall_ns : ri->elapsed_ns);
		u += (double)ri->utime_ns;
		sy += (double)ri->stime_ns;
		rss += (double)ri->maxrss_kb;
		mi += (double)ri->minflt;
		ma += (double)ri->majflt;
		vc += (double)ri->nvcsw;
		ic += (double)ri->nivcsw;
	}
	double k = e->nruns;
	rep->ru = (struct rusage_info){stats_sat_u64(w / k + 0.5),   stats_sat_u64(u / k + 0.5),
				       stats_sat_u64(sy / k + 0.5),  stats_sat_long(rss / k + 0.5),
				       stats_sat_long(mi / k + 0.5), stats_sat_long(ma / k + 0.5),
				       stats_sat_long(vc / k + 0.5), stats_sat_long(ic / k + 0.5)};
	rep->elapsed = stats_summary(&el);
	/* a damaged record's runs: any sum; with runs lost, the spans hold
	 * time the known runs' walls do not: their share is unknown */
	rep->span_wall_ns = e->lost_runs ? 0 : stats_sat_u64(sw);
}

static int analysis_report(struct analysis *a, const struct run_end *e,
			   const struct report_ranks *ranks)
{
	struct report *rep = &a->rep;
	const struct evlist *evl = a->head->evl;
	size_t n = evl->n ? evl->n : 1;
	a->count = calloc(n, sizeof *a->count);
	a->stat = calloc(n, sizeof *a->stat);
	if (!a->count || !a->stat)
		return -ENOMEM;
	analysis_counts(evl, e, a->count, a->stat);
	if (run_head_aggregated(a->head)) {
		size_t nu = a->head->aggr->n;
		a->unit_count = calloc(nu * n, sizeof *a->unit_count);
		a->unit_stat = calloc(nu * n, sizeof *a->unit_stat);
		if (!a->unit_count || !a->unit_stat)
			return -ENOMEM;
		for (size_t u = 0; u < nu; u++)
			analysis_mean(evl, e, true, u, a->unit_count + u * evl->n,
				      a->unit_stat + u * evl->n);
		rep->unit_count = a->unit_count;
		rep->unit_stat = a->unit_stat;
	}
	analysis_rusage(e, rep);
	rep->head = a->head;
	rep->nruns = e->nruns;
	rep->run = e->run;
	rep->count = a->count;
	rep->stat = a->stat;
	rep->exit_code = e->nruns ? e->run[e->nruns - 1].exit_code : 0;
	rep->ranks = ranks;
	if (!a->spans) {
		rep->span_wall_ns = 0;
		return 0;
	}
	rep->spans = &a->tree;
	rep->window = e->window;
	rep->dstats = e->dstats;
	rep->dstats_lost = e->dstats_lost;
	rep->event_cost_ns = e->event_cost_ns;
	if (e->compensate && rep->event_cost_ns > 0) {
		rep->removed_ns = span_trees_compensate(&a->tree, rep->event_cost_ns,
							spanmetric_off_cpu(a->head->metrics));
		rep->compensated = true;
	}
	/* the merged tree, once, for every writer */
	if (span_trees_merge(&a->tree, &a->merged) < 0)
		return -ENOMEM;
	a->have_merged = true;
	rep->merged = &a->merged;
	return 0;
}

int analysis_finish(struct analysis *a, const struct run_end *e, const struct report_ranks *ranks,
		    const struct writer **failed)
{
	*failed = NULL;
	int r = analysis_report(a, e, ranks);
	/* --weight, once for every writer (each has the caller's same name) */
	const char *wname = NULL;
	struct spanweight wt = {SPAN_WEIGHT_WALL, 0, 0};
	int werr = 0;
	for (size_t i = 0; r == 0 && i < a->nwriters; i++) {
		struct writer *w = a->writers[i];
		if (w->opts.weight && (!wname || strcmp(wname, w->opts.weight) != 0)) {
			wname = w->opts.weight;
			werr = spanweight_parse(wname, a->head->metrics, a->head->strings, &wt);
			/* a text the run knew (a span's name, a string value)
			 * is no key without a number argument of it */
			if (werr == 0 && wt.kind == SPAN_WEIGHT_ARG &&
			    !span_args_has_number(a->have_merged ? a->merged.args : NULL, wt.key))
				werr = -ENOENT;
		}
		w->opts.weight_by =
			w->opts.weight ? wt : (struct spanweight){SPAN_WEIGHT_WALL, 0, 0};
		w->opts.weight_err = w->opts.weight ? werr : 0;
	}
	/* Every writer gets the report even when another failed: one bad
	 * output never costs the others, nor the target's status. */
	for (size_t i = 0; r == 0 && i < a->nwriters; i++) {
		struct writer *w = a->writers[i];
		if (!w->err)
			w->err = w->ops->finish(w, &a->rep);
		if (w->err < 0 && !*failed)
			*failed = w;
	}
	return r;
}

void analysis_release(struct analysis *a)
{
	free(a->fanned);
	free(a->parts);
	free(a->partv);
	free(a->partw);
	free(a->count);
	free(a->stat);
	free(a->unit_count);
	free(a->unit_stat);
	if (a->have_tree)
		span_trees_release(&a->tree);
	if (a->have_merged)
		span_tree_release(&a->merged);
	memset(a, 0, sizeof *a);
}
