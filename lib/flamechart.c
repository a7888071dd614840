/* flamechart.c: the --flamechart writer: every span instance in time
 * order, as a self-contained interactive SVG (svgkit.h's look and script).
 *
 * x is time since the run's start, with an axis; one lane per thread,
 * grouped under its process (by pid, then tid), the outermost spans at the
 * top of the lane and what they call below, not merged.  A span shorter
 * than one pixel of the final picture is not drawn: it shows as part of its
 * parent's frame, and the file says how many were merged so.  Since a
 * run's length only grows, a span shorter than a pixel of the run so far
 * is dropped as soon as it ends, so memory stays with what can be seen
 * even for runs of many millions of spans.  Each frame's <title> holds the
 * name, the duration, when it began and whether spanstat closed it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spannames.h"
#include "svgkit.h"
#include "u64map.h"
#include "writer.h"

#define FC_PLOT (SVGKIT_WIDTH - 2 * SVGKIT_PAD) /* px of time */
#define FC_TOP 56				/* title and buttons */
#define FC_AXIS 26
#define FC_LABEL 16 /* a process's or thread's heading */
#define FC_GAP 6

struct fc_span {
	uint64_t b, e;
	uint32_t name, depth, flags;
};

struct fc_lane {
	uint32_t pid, tid;
	uint32_t name; /* the thread's name (strtab id) or 0 */
	struct fc_span *s;
	size_t n, cap;
	uint32_t maxdepth;
};

struct flamechart {
	struct u64map index;	/* pid << 32 | tid -> lane + 1 */
	struct u64map procname; /* pid -> name id */
	struct fc_lane *lane;
	size_t nlane, cap;
	uint64_t t0; /* 0 until the first span */
	uint64_t t1; /* the latest end of any span, drawn or dropped */
	unsigned long merged, spans;
};

static struct fc_lane *fc_lane(struct flamechart *c, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	uint64_t at = u64map_get(&c->index, key);
	if (at)
		return &c->lane[at - 1];
	if (c->nlane == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct fc_lane *l = realloc(c->lane, cap * sizeof *l);
		if (!l)
			return NULL;
		c->lane = l;
		c->cap = cap;
	}
	if (u64map_put(&c->index, key, c->nlane + 1) < 0)
		return NULL;
	struct fc_lane *l = &c->lane[c->nlane++];
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
	/* shorter than a pixel of the run so far: shorter than one at its end */
	uint64_t dur = ev->ts - ev->begin_ts;
	if (ev->ts > c->t0 && dur * FC_PLOT < ev->ts - c->t0) {
		c->merged++;
		return;
	}
	struct fc_lane *l = fc_lane(c, ev->pid, ev->tid);
	if (!l) {
		w->err = -ENOMEM;
		return;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct fc_span *s = realloc(l->s, cap * sizeof *s);
		if (!s) {
			w->err = -ENOMEM;
			return;
		}
		l->s = s;
		l->cap = cap;
	}
	l->s[l->n++] = (struct fc_span){ev->begin_ts, ev->ts, ev->name, ev->depth, ev->flags};
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
	return h && h->strings ? span_names_text(h->names, h->strings, id) : "";
}

static void fc_heading(FILE *fp, int y, const char *what, const char *name, uint32_t id)
{
	fprintf(fp, "<text x=\"%d\" y=\"%d\" style=\"fill: rgb(80,80,80)\">%s ", SVGKIT_PAD,
		y + FC_LABEL - 4, what);
	svgkit_escape(fp, name && *name ? name : "?", 200);
	fprintf(fp, " [%" PRIu32 "]</text>\n", id);
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
	for (size_t i = 0; i < c->nlane; i++) {
		struct fc_lane *l = &c->lane[i];
		size_t keep = 0;
		for (size_t k = 0; k < l->n; k++) {
			struct fc_span *s = &l->s[k];
			if ((s->e - s->b) * FC_PLOT < span) {
				c->merged++;
				continue;
			}
			if (s->depth > l->maxdepth)
				l->maxdepth = s->depth;
			if (s->depth == 0)
				total += s->e - s->b;
			l->s[keep++] = *s;
		}
		l->n = keep;
		if (l->n)
			qsort(l->s, l->n, sizeof *l->s, fc_by_time);
	}
	if (c->nlane)
		qsort(c->lane, c->nlane, sizeof *c->lane, fc_by_task);
	/* the height: a heading per process, per thread, and its rows */
	int height = FC_TOP + FC_AXIS + SVGKIT_PAD;
	int64_t last = -1; /* the pid of the last lane drawn */
	for (size_t i = 0; i < c->nlane; i++) {
		if (!c->lane[i].n)
			continue;
		if ((int64_t)c->lane[i].pid != last)
			height += FC_LABEL;
		last = c->lane[i].pid;
		height += FC_LABEL + (int)(c->lane[i].maxdepth + 1) * SVGKIT_FRAME + FC_GAP;
	}
	FILE *fp = w->fp;
	char hidden[128];
	snprintf(hidden, sizeof hidden, "%lu span%s of %lu shorter than a pixel, merged into %s",
		 c->merged, c->merged == 1 ? "" : "s", c->spans,
		 c->merged == 1 ? "its parent" : "their parents");
	svgkit_open(fp, height, total, span, "Flame chart", h && h->argc ? h->argv[0] : "", "time",
		    hidden);
	svgkit_axis(fp, FC_TOP, span);
	fputs("<g id=\"frames\">\n", fp);
	int y = FC_TOP + FC_AXIS;
	unsigned lane = 0;
	last = -1;
	for (size_t i = 0; i < c->nlane; i++) {
		const struct fc_lane *l = &c->lane[i];
		if (!l->n)
			continue;
		if ((int64_t)l->pid != last) {
			last = l->pid;
			fc_heading(fp, y, "process",
				   fc_text(h, (uint32_t)u64map_get(&c->procname, l->pid)), l->pid);
			y += FC_LABEL;
		}
		fc_heading(fp, y, "  thread", fc_text(h, l->name), l->tid);
		y += FC_LABEL;
		for (size_t k = 0; k < l->n; k++) {
			const struct fc_span *s = &l->s[k];
			char about[128], dur[32], at[32];
			svgkit_time(dur, sizeof dur, (double)(s->e - s->b));
			svgkit_time(at, sizeof at, (double)(s->b - c->t0));
			snprintf(about, sizeof about, "(%s, at %s%s)", dur, at,
				 s->flags & SPAN_F_UNFINISHED ? ", closed by spanstat" : "");
			double x = SVGKIT_PAD + (double)(s->b - c->t0) / (double)span * FC_PLOT;
			double wd = (double)(s->e - s->b) / (double)span * FC_PLOT;
			svgkit_frame(fp, fc_text(h, s->name), about, NULL, x,
				     y + (int)s->depth * SVGKIT_FRAME, wd, s->depth, lane,
				     s->e - s->b);
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
	for (size_t i = 0; i < c->nlane; i++)
		free(c->lane[i].s);
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
