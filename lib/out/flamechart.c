/* flamechart.c: the --flamechart writer: every span instance in time
 * order, as a self-contained interactive SVG (svgkit.h's look and script).
 *
 * x is time since the run's start, with an axis; one lane per thread,
 * grouped under its process (by pid, then tid), the outermost spans at the
 * top of the lane and what they call below, not merged.  A span shorter
 * than one pixel of the final picture is not drawn alone.  Siblings shorter
 * than a pixel that follow each other with less than a pixel between them
 * form a run, drawn as one block labelled with their count, their name
 * (when they share it) and their busy time, so that a thread busy with many
 * short spans never looks idle; a span shorter than a pixel and in no such
 * run shows as part of its parent's frame, and the file says how many were
 * merged so.  Since a run's length only grows, a span shorter than a pixel
 * of the run so far never becomes drawable: it joins its depth's pending
 * run as soon as it ends, and a pending run too short to draw is dropped
 * when it closes, so memory stays with what can be seen even for runs of
 * many millions of spans.  Each frame's <title> holds the name, the
 * duration, when it began and whether spanstat closed it.
 *
 * A process's async spans (spanstat_async_begin) have a lane of their own
 * above its threads' ("async spans"), each span from its begin to its end
 * on the first row free then, its title saying its busy and idle times;
 * their enters are not drawn on the threads' lanes. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "spannames.h"
#include "svgkit.h"
#include "u64map.h"
#include "writer.h"

#define FC_PLOT (SVGKIT_WIDTH - 2 * SVGKIT_PAD) /* px of time */
#define FC_TOP 56				/* title and buttons */
#define FC_AXIS 26
#define FC_LABEL 16 /* a process's or thread's heading */
#define FC_GAP 6
#define FC_RUN_DEPTH 256 /* runs of siblings are formed this deep at most */

/* A drawn frame: one span, or a run of count sub-pixel siblings (count > 1)
 * whose own times add up to busy (name 0: not all of one name). */
struct fc_span {
	uint64_t b, e;
	uint32_t name, depth, flags;
	uint32_t count;
	uint64_t busy;
};

struct fc_lane {
	uint32_t pid, tid;
	uint32_t name; /* the thread's name (strtab id) or 0 */
	struct fc_span *s;
	size_t n, cap;
	uint32_t maxdepth;
	struct fc_span *run; /* the pending run at each depth (count 0: none) */
	uint32_t nrun;	     /* depths with room in run */
	unsigned long spans; /* its spans, drawn or not */
	bool async;	     /* the process's async spans (tid 0): rows, not depths */
};

struct flamechart {
	struct u64map index;	/* pid << 32 | tid -> lane + 1 */
	struct u64map procname; /* pid -> name id */
	struct fc_lane *lane;
	size_t nlane, cap;
	size_t last; /* the lane of the last event + 1 (0: none): threads take turns */
	uint64_t t0; /* 0 until the first span */
	uint64_t t1; /* the latest end of any span, drawn or dropped */
	unsigned long merged, spans;
	unsigned long inruns; /* spans drawn in runs of siblings */
	unsigned long roots;  /* outermost spans not drawn: no parent holds them */
};

static struct fc_lane *fc_lane(struct flamechart *c, uint32_t pid, uint32_t tid)
{
	if (c->last && c->lane[c->last - 1].pid == pid && c->lane[c->last - 1].tid == tid)
		return &c->lane[c->last - 1];
	uint64_t key = (uint64_t)pid << 32 | tid;
	uint64_t at = u64map_get(&c->index, key);
	if (at) {
		c->last = at;
		return &c->lane[at - 1];
	}
	if (GROW(c->lane, c->nlane + 1, c->cap, 16) < 0)
		return NULL;
	if (u64map_put(&c->index, key, c->nlane + 1) < 0)
		return NULL;
	struct fc_lane *l = &c->lane[c->nlane++];
	c->last = c->nlane;
	memset(l, 0, sizeof *l);
	l->pid = pid;
	l->tid = tid;
	return l;
}

static int fc_start(struct writer *w, const struct run_head *h)
{
	(void)h;
	struct flamechart *c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	w->priv = c;
	return 0;
}

static int fc_store(struct fc_lane *l, const struct fc_span *sp)
{
	if (GROW(l->s, l->n + 1, l->cap, 64) < 0)
		return -ENOMEM;
	l->s[l->n++] = *sp;
	return 0;
}

/* Closes the pending run at depth d: drawn when it holds two spans or more
 * and spans a pixel of the run so far, else its spans are merged. */
static int fc_run_close(struct flamechart *c, struct fc_lane *l, uint32_t d)
{
	struct fc_span *r = &l->run[d];
	int rc = 0;
	if (!r->count)
		return 0;
	if (r->count > 1 && r->e > c->t0 && (r->e - r->b) * FC_PLOT >= r->e - c->t0) {
		rc = fc_store(l, r);
		if (rc == 0)
			c->inruns += r->count;
	} else if (d) {
		c->merged += r->count;
	} else { /* outermost: no parent holds them */
		c->roots += r->count;
	}
	r->count = 0;
	return rc;
}

/* Closes the pending runs at depths from d down: their parent ended, or a
 * drawn sibling breaks the run. */
static int fc_runs_close(struct flamechart *c, struct fc_lane *l, uint32_t d)
{
	for (uint32_t k = d; k < l->nrun; k++)
		if (fc_run_close(c, l, k) != 0)
			return -ENOMEM;
	return 0;
}

/* A span shorter than a pixel of the run so far: it joins its depth's
 * pending run when it follows it within a pixel, else starts one. */
static int fc_run_add(struct flamechart *c, struct fc_lane *l, const struct span_event *ev)
{
	uint32_t d = ev->depth;
	if (d >= FC_RUN_DEPTH) {
		c->merged++;
		return 0;
	}
	if (d >= l->nrun) {
		uint32_t old = l->nrun;
		if (GROW(l->run, (size_t)d + 1, l->nrun, 8) < 0)
			return -ENOMEM;
		memset(l->run + old, 0, (l->nrun - old) * sizeof *l->run);
	}
	struct fc_span *r = &l->run[d];
	uint64_t pixel = (ev->ts - c->t0) / FC_PLOT;
	if (r->count && ev->begin_ts >= r->e && ev->begin_ts - r->e <= pixel) {
		r->e = ev->ts;
		r->busy += ev->ts - ev->begin_ts;
		r->count++;
		r->flags |= ev->flags;
		if (r->name != ev->name)
			r->name = 0;
		return 0;
	}
	if (fc_run_close(c, l, d) != 0)
		return -ENOMEM;
	*r = (struct fc_span){ev->begin_ts,	    ev->ts, ev->name, d, ev->flags, 1,
			      ev->ts - ev->begin_ts};
	return 0;
}

static void fc_end(struct writer *w, struct flamechart *c, const struct span_event *ev)
{
	c->spans++;
	if (!c->t0) {
		uint64_t t0 = w->head ? w->head->start_mono : 0;
		c->t0 = t0 && t0 <= ev->begin_ts ? t0 : ev->begin_ts;
	}
	if (ev->begin_ts < c->t0)
		c->t0 = ev->begin_ts; /* a clock that disagrees: keep every span on the axis */
	/* the axis runs to the last end of any span, dropped ones included:
	 * then a span dropped here is shorter than a pixel at the end too */
	if (ev->ts > c->t1)
		c->t1 = ev->ts;
	struct fc_lane *l = fc_lane(c, ev->pid, ev->tid);
	if (!l) {
		w->err = -ENOMEM;
		return;
	}
	l->spans++;
	/* the runs below this span are its children's: complete now */
	if (fc_runs_close(c, l, ev->depth + 1) != 0) {
		w->err = -ENOMEM;
		return;
	}
	/* shorter than a pixel of the run so far: shorter than one at its end */
	uint64_t dur = ev->ts - ev->begin_ts;
	if (ev->ts > c->t0 && dur * FC_PLOT < ev->ts - c->t0) {
		if (fc_run_add(c, l, ev) != 0)
			w->err = -ENOMEM;
		return;
	}
	struct fc_span sp = {ev->begin_ts, ev->ts, ev->name, ev->depth, ev->flags, 1, dur};
	if (fc_runs_close(c, l, ev->depth) != 0 || fc_store(l, &sp) != 0)
		w->err = -ENOMEM;
}

/* An async span, ended: kept whole for its process's async lane. */
static void fc_async(struct writer *w, struct flamechart *c, const struct span_event *ev)
{
	c->spans++;
	uint64_t b = ev->begin_ts < ev->ts ? ev->begin_ts : ev->ts;
	if (!c->t0) {
		uint64_t t0 = w->head ? w->head->start_mono : 0;
		c->t0 = t0 && t0 <= b ? t0 : b;
	}
	if (b < c->t0)
		c->t0 = b;
	if (ev->ts > c->t1)
		c->t1 = ev->ts;
	struct fc_lane *l = fc_lane(c, ev->pid, 0);
	uint64_t busy = ev->value > 0 ? (uint64_t)ev->value : 0;
	struct fc_span sp = {b, ev->ts, ev->name, 0, ev->flags, 1, busy};
	if (!l || fc_store(l, &sp) != 0) {
		w->err = -ENOMEM;
	} else {
		l->async = true;
		l->spans++;
	}
}

/* Puts the async lane's spans (in time order) on rows: each on the first
 * whose last span ended by its begin. */
static int fc_async_rows(struct fc_lane *l)
{
	uint64_t *end = NULL;
	size_t nrow = 0, cap = 0;
	for (size_t k = 0; k < l->n; k++) {
		size_t r = 0;
		while (r < nrow && end[r] > l->s[k].b)
			r++;
		if (r == nrow && GROW(end, nrow + 1, cap, 8) < 0) {
			free(end);
			return -ENOMEM;
		}
		if (r == nrow)
			nrow++;
		end[r] = l->s[k].e;
		l->s[k].depth = (uint32_t)r;
		if (r > l->maxdepth)
			l->maxdepth = (uint32_t)r;
	}
	free(end);
	return 0;
}

static void fc_span(void *arg, const struct span_event *ev)
{
	struct writer *w = arg;
	struct flamechart *c = w->priv;
	if (!c || w->err)
		return;
	struct fc_lane *l;
	switch (ev->kind) {
	case SPAN_END:
		if (ev->ts >= ev->begin_ts)
			fc_end(w, c, ev);
		break;
	case SPAN_ASYNC_END:
		fc_async(w, c, ev);
		break;
	case SPAN_THREAD:
		if ((l = fc_lane(c, ev->pid, ev->tid)) == NULL)
			w->err = -ENOMEM;
		else if (ev->name)
			l->name = ev->name;
		break;
	case SPAN_PROCESS:
		if (ev->name && u64map_put(&c->procname, ev->pid, ev->name) < 0)
			w->err = -ENOMEM;
		break;
	default:
		break;
	}
}

static int fc_by_task(const void *a, const void *b)
{
	const struct fc_lane *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int fc_by_time(const void *a, const void *b)
{
	const struct fc_span *x = a, *y = b;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return (x->depth > y->depth) - (x->depth < y->depth);
}

static const char *fc_text(const struct run_head *h, uint32_t id)
{
	return h && h->strings ? spannames_text(h->names, h->strings, id) : "";
}

/* "WHAT NAME [ID]", the name cut to fit the width; a lane of small
 * spans only (nothing drawn, yet not nothing) says so after it */
static void fc_heading(FILE *fp, int y, const char *what, const char *name, uint32_t id,
		       unsigned long small)
{
	char before[32], after[96], n[32] = "";
	snprintf(before, sizeof before, "%s ", what);
	if (small)
		snprintf(n, sizeof n, "%lu", small);
	snprintf(after, sizeof after, " [%" PRIu32 "]%s%s%s", span_real_pid(id), small ? ": " : "",
		 n,
		 !small	      ? ""
		 : small == 1 ? " span, shorter than a pixel"
			      : " spans, each shorter than a pixel");
	svgkit_line(fp, SVGKIT_PAD, y + FC_LABEL - 4, "fill: rgb(80,80,80)", before,
		    name && *name ? name : "?", after);
}

static int fc_finish(struct writer *w, const struct report *r)
{
	struct flamechart *c = w->priv;
	const struct run_head *h = r && r->head ? r->head : w->head;
	if (!c)
		return -EINVAL;
	if (w->err)
		return w->err;
	/* the final pixel: what is shorter is merged into its parent */
	uint64_t t1 = c->t1 > c->t0 ? c->t1 : c->t0;
	for (size_t i = 0; i < c->nlane; i++)
		for (size_t k = 0; k < c->lane[i].n; k++)
			if (c->lane[i].s[k].e > t1)
				t1 = c->lane[i].s[k].e;
	uint64_t span = t1 > c->t0 ? t1 - c->t0 : 1;
	uint64_t total = 0;
	for (size_t i = 0; i < c->nlane; i++)
		if (fc_runs_close(c, &c->lane[i], 0) != 0)
			return -ENOMEM;
	for (size_t i = 0; i < c->nlane; i++) {
		struct fc_lane *l = &c->lane[i];
		size_t keep = 0;
		for (size_t k = 0; k < l->n; k++) {
			struct fc_span *s = &l->s[k];
			if ((s->e - s->b) * FC_PLOT < span) {
				if (s->depth) /* an outermost one has no parent */
					c->merged += s->count;
				else
					c->roots += s->count;
				if (s->count > 1)
					c->inruns -= s->count;
				continue;
			}
			if (s->depth > l->maxdepth)
				l->maxdepth = s->depth;
			if (s->depth == 0 && !l->async)
				total += s->e - s->b;
			l->s[keep++] = *s;
		}
		l->n = keep;
		if (l->n)
			qsort(l->s, l->n, sizeof *l->s, fc_by_time);
		if (l->async && fc_async_rows(l) != 0)
			return -ENOMEM;
	}
	if (c->nlane)
		qsort(c->lane, c->nlane, sizeof *c->lane, fc_by_task);
	/* the height: a heading per process, per thread, and its rows */
	int height = FC_TOP + FC_AXIS + SVGKIT_PAD;
	int64_t last = -1; /* the pid of the last lane drawn */
	for (size_t i = 0; i < c->nlane; i++) {
		if (!c->lane[i].spans)
			continue;
		if ((int64_t)c->lane[i].pid != last)
			height += FC_LABEL;
		last = c->lane[i].pid;
		height += FC_LABEL + FC_GAP;
		if (c->lane[i].n)
			height += (int)(c->lane[i].maxdepth + 1) * SVGKIT_FRAME;
	}
	FILE *fp = w->fp;
	char hidden[192];
	unsigned long small = c->merged + c->inruns + c->roots;
	snprintf(hidden, sizeof hidden,
		 "%lu of %lu spans under a pixel: %lu in runs, %lu in their parents, %lu "
		 "outermost hidden",
		 small, c->spans, c->inruns, c->merged, c->roots);
	const struct svgkit_piece title[] = {
		{"Flame chart: ", false},
		{h && h->argc ? h->argv[0] : "", true},
		{" (time)", false},
	};
	svgkit_open(fp, height, total, span, title, sizeof title / sizeof *title, hidden);
	svgkit_axis(fp, FC_TOP, span);
	fputs("<g id=\"frames\">\n", fp);
	int y = FC_TOP + FC_AXIS;
	unsigned lane = 0;
	last = -1;
	for (size_t i = 0; i < c->nlane; i++) {
		const struct fc_lane *l = &c->lane[i];
		/* a lane whose spans are all shorter than a pixel keeps its
		 * heading, which says so: no thread vanishes from the chart */
		if (!l->spans)
			continue;
		unsigned long small = l->n ? 0 : l->spans;
		if ((int64_t)l->pid != last) {
			last = l->pid;
			fc_heading(fp, y, "process",
				   fc_text(h, (uint32_t)u64map_get(&c->procname, l->pid)), l->pid,
				   0);
			y += FC_LABEL;
		}
		if (l->async)
			fc_heading(fp, y, "  async", "spans", l->pid, small);
		else
			fc_heading(fp, y, "  thread", fc_text(h, l->name), l->tid, small);
		y += FC_LABEL;
		if (!l->n) {
			y += FC_GAP;
			continue;
		}
		for (size_t k = 0; k < l->n; k++) {
			const struct fc_span *s = &l->s[k];
			char about[192], dur[32], at[32], busy[32], label[1024];
			const char *name = fc_text(h, s->name);
			svgkit_time(dur, sizeof dur, (double)(s->e - s->b));
			svgkit_time(at, sizeof at, (double)(s->b - c->t0));
			if (s->count > 1) { /* a run of siblings */
				svgkit_time(busy, sizeof busy, (double)s->busy);
				if (s->name)
					snprintf(label, sizeof label, "%s \u00d7%" PRIu32, name,
						 s->count);
				else
					snprintf(label, sizeof label, "%" PRIu32 " spans",
						 s->count);
				name = label;
				snprintf(about, sizeof about,
					 "(%" PRIu32 " spans, busy %s of %s, at %s%s)", s->count,
					 busy, dur, at,
					 s->flags & SPAN_F_UNFINISHED ? ", some unfinished" : "");
			} else if (l->async) { /* busy: entered on some thread */
				char idle[32];
				uint64_t bz = s->busy < s->e - s->b ? s->busy : s->e - s->b;
				svgkit_time(busy, sizeof busy, (double)bz);
				svgkit_time(idle, sizeof idle, (double)(s->e - s->b - bz));
				snprintf(about, sizeof about,
					 "(async %s, at %s, busy %s, idle %s%s)", dur, at, busy,
					 idle, s->flags & SPAN_F_UNFINISHED ? ", unfinished" : "");
			} else {
				snprintf(about, sizeof about, "(%s, at %s%s)", dur, at,
					 s->flags & SPAN_F_UNFINISHED ? ", unfinished" : "");
			}
			double x = SVGKIT_PAD + (double)(s->b - c->t0) / (double)span * FC_PLOT;
			double wd = (double)(s->e - s->b) / (double)span * FC_PLOT;
			svgkit_frame(fp, name, about, NULL, x, y + (int)s->depth * SVGKIT_FRAME, wd,
				     s->depth, lane, s->count > 1 ? s->busy : s->e - s->b);
		}
		y += (int)(l->maxdepth + 1) * SVGKIT_FRAME + FC_GAP;
		lane++;
	}
	fputs("</g>\n</svg>\n", fp);
	return fflush(fp) != 0 || ferror(fp) ? -EIO : 0;
}

static void fc_release(struct writer *w)
{
	struct flamechart *c = w->priv;
	if (!c)
		return;
	for (size_t i = 0; i < c->nlane; i++) {
		free(c->lane[i].s);
		free(c->lane[i].run);
	}
	free(c->lane);
	u64map_release(&c->index);
	u64map_release(&c->procname);
	free(c);
	w->priv = NULL;
}

const struct writer_ops flamechart_writer_ops = {
	.name = "flamechart",
	.start = fc_start,
	.span = fc_span,
	.finish = fc_finish,
	.release = fc_release,
};
