/* svg.c: the --flamegraph writer: the merged span tree as a self-contained
 * interactive SVG flame graph (no network, no external script).
 *
 * One frame per stack path, the outermost at the bottom, its width its
 * total weight (--weight, spanweight.h: the self values summed up the
 * stack), siblings sorted by name, a colour per name (a hash of the name:
 * the same name has the same colour in every graph).  Frames narrower than
 * SVG_MIN_WIDTH pixels are not drawn (the file says how many); a name that
 * does not fit its frame is elided with "..".  Each frame's <title> holds
 * its name, value, unit and share, which browsers show on hover.
 *
 * The script, zoom and search are svgkit.c's: a click zooms into a frame
 * (its ancestors stay, full width), Search highlights and gives the share
 * matched. */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spannames.h"
#include "svg.h"
#include "spantree.h"
#include "spanwalk.h"
#include "spanweight.h"
#include "stats.h"
#include "svgkit.h"
#include "writer.h"

#define SVG_WIDTH SVGKIT_WIDTH
#define SVG_FRAME SVGKIT_FRAME
#define SVG_PAD SVGKIT_PAD
#define SVG_TOP 60 /* title and buttons */
#define SVG_MIN_WIDTH 0.1

struct svg_out {
	FILE *fp;
	const struct run_head *h;
	struct spanweight weight;
	uint64_t *cum; /* per node: its total weight */
	double *x;     /* per node: its left edge */
	uint32_t maxdepth;
	uint64_t total;
	unsigned long hidden, drawn;
	int err;
	char **label;		    /* --folded-threads: the root frames' names */
	const struct strtab *names; /* a tree of its own (diff): its names */
	const uint64_t *old_self;   /* differential: per node, the old self value */
	uint64_t *old;		    /* its totals */
};

static const char *svg_name(const struct svg_out *o, uint32_t id)
{
	if (id & SPANWALK_ROOT)
		return o->label[id & ~SPANWALK_ROOT];
	if (o->names)
		return strtab_get(o->names, id);
	return o->h ? spannames_text(o->h->names, o->h->strings, id) : "";
}

/* The root frames' names, as --folded writes them: PROCNAME-PID and
 * THREADNAME-PID/TID (the thread named as its process when it has none). */
static int svg_labels(struct svg_out *o, const struct span_trees *st,
		      const struct spanwalk_roots *rt)
{
	o->label = calloc(rt->n ? rt->n : 1, sizeof *o->label);
	if (!o->label)
		return -ENOMEM;
	for (uint32_t k = 0; k < rt->n; k++) {
		const struct spanwalk_root *r = &rt->root[k];
		const struct span_tree *th = NULL;
		for (size_t i = 0; i < st->nthread && !th; i++)
			if (st->thread[i]->pid == r->pid &&
			    (!r->tid || st->thread[i]->tid == r->tid))
				th = st->thread[i];
		const char *proc = th ? svg_name(o, th->process_name) : "";
		const char *thread = th && th->thread_name ? svg_name(o, th->thread_name) : NULL;
		o->label[k] = spanwalk_root_name(proc, thread, r->pid, r->tid);
		if (!o->label[k])
			return -ENOMEM;
	}
	return 0;
}

static const char *svg_unit(const struct svg_out *o)
{
	const struct spanmetrics *ms = o->h ? o->h->metrics : NULL;
	if (o->weight.kind == SPAN_WEIGHT_ARG) /* a key's sums: no unit known */
		return "";
	if (o->weight.kind != SPAN_WEIGHT_VALUE)
		return "ns";
	const struct spanmetric *m = ms ? &ms->m[o->weight.index] : NULL;
	static const char *const units[] = {
		[SPANMETRIC_COUNT] = "", [SPANMETRIC_NS] = "ns", [SPANMETRIC_BYTES] = "bytes"};
	return m ? units[spanmetric_unit(m)] : "";
}

/* Totals, bottom up (a parent's index is below its children's). */
static int svg_totals(struct svg_out *o, const struct span_tree *t)
{
	o->cum = calloc(t->n, sizeof *o->cum);
	o->x = calloc(t->n, sizeof *o->x);
	if (!o->cum || !o->x)
		return -ENOMEM;
	if (o->old_self && !(o->old = calloc(t->n, sizeof *o->old)))
		return -ENOMEM;
	/* Sums saturate: a damaged record's weights near 2^64 must not wrap
	 * a parent below its child (a frame wider than the picture). */
	for (uint32_t i = t->n; i-- > 1;) {
		o->cum[i] = stats_sat_add(o->cum[i], spanweight_self(&o->weight, t, i));
		uint32_t p = t->node[i].parent;
		o->cum[p] = stats_sat_add(o->cum[p], o->cum[i]);
		if (o->old) {
			o->old[i] = stats_sat_add(o->old[i], o->old_self[i]);
			o->old[p] = stats_sat_add(o->old[p], o->old[i]);
		}
	}
	o->total = o->cum[0];
	return 0;
}

/* qsort's view of the tree whose children it sorts by name. */
static const struct svg_out *svg_sort_o;
static const struct span_tree *svg_sort_t;
static int svg_by_name(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(svg_name(svg_sort_o, svg_sort_t->node[x].name),
		       svg_name(svg_sort_o, svg_sort_t->node[y].name));
	return c ? c : (x > y) - (x < y);
}

/* Left edges: each child starts where its elder sibling (by name) ends,
 * the first at its parent's edge. */
static int svg_layout(struct svg_out *o, const struct span_tree *t)
{
	uint32_t *kids = malloc((t->n ? t->n : 1) * sizeof *kids);
	if (!kids)
		return -ENOMEM;
	double scale = o->total ? (double)(SVG_WIDTH - 2 * SVG_PAD) / (double)o->total : 0;
	svg_sort_o = o;
	svg_sort_t = t;
	o->x[0] = SVG_PAD;
	for (uint32_t p = 0; p < t->n; p++) {
		uint32_t k = 0;
		for (uint32_t c = t->node[p].first_child; c && c < t->n;
		     c = t->node[c].next_sibling)
			kids[k++] = c;
		qsort(kids, k, sizeof *kids, svg_by_name);
		double x = o->x[p];
		for (uint32_t j = 0; j < k; j++) {
			o->x[kids[j]] = x;
			x += (double)o->cum[kids[j]] * scale;
		}
	}
	free(kids);
	return 0;
}

static int svg_frame(void *ctx, const struct span_tree *t, uint32_t i, uint32_t d)
{
	struct svg_out *o = ctx;
	double scale = o->total ? (double)(SVG_WIDTH - 2 * SVG_PAD) / (double)o->total : 0;
	double w = (double)o->cum[i] * scale;
	if (!o->cum[i])
		return 0;
	if (w < SVG_MIN_WIDTH) {
		o->hidden++;
		return 0;
	}
	if (d + 1 > o->maxdepth)
		o->maxdepth = d + 1;
	const char *name = svg_name(o, t->node[i].name);
	char about[160], fill[32];
	if (o->old) {
		/* red grew, blue shrank, white stayed: as much as the change */
		double nw = (double)o->cum[i], od = (double)o->old[i];
		double r = (nw - od) / (nw > od ? nw : od);
		int v = 255 - (int)(200 * (r < 0 ? -r : r));
		snprintf(fill, sizeof fill, r > 0 ? "rgb(255,%d,%d)" : "rgb(%d,%d,255)", v, v);
		if (od > 0)
			snprintf(about, sizeof about,
				 "(old %" PRIu64 ", new %" PRIu64 " %s, %+.2f%%)", o->old[i],
				 o->cum[i], svg_unit(o), 100 * (nw - od) / od);
		else
			snprintf(about, sizeof about, "(old 0, new %" PRIu64 " %s, new)", o->cum[i],
				 svg_unit(o));
	} else {
		snprintf(about, sizeof about, "(%" PRIu64 " %s, %.2f%%)", o->cum[i], svg_unit(o),
			 o->total ? 100.0 * (double)o->cum[i] / (double)o->total : 0.0);
	}
	svgkit_frame(o->fp, name, about, o->old ? fill : NULL, o->x[i], -(int)(d + 1) * SVG_FRAME,
		     w, d, 0, o->cum[i]);
	o->drawn++;
	return 0;
}

/* Lays out and writes the picture of t (o set up, fp its file) under the
 * title's n pieces. */
static int svg_draw(struct svg_out *o, const struct span_tree *t, const struct svgkit_piece *title,
		    size_t n)
{
	FILE *fp0 = o->fp;
	int err = 0;
	if (!err && t->n)
		err = svg_totals(o, t);
	if (!err && t->n)
		err = svg_layout(o, t);
	if (!err) {
		/* the frames first, into a buffer: the height comes from them */
		char *body = NULL;
		size_t blen = 0;
		FILE *mem = open_memstream(&body, &blen);
		if (!mem) {
			err = -ENOMEM;
		} else {
			o->fp = mem;
			if (t->n)
				err = spanwalk(t, svg_frame, o);
			if (fclose(mem) != 0 && !err)
				err = -ENOMEM;
			o->fp = fp0;
		}
		if (!err) {
			int height = SVG_TOP + (int)(o->maxdepth + 1) * SVG_FRAME + 2 * SVG_PAD;
			FILE *fp = fp0;
			char hidden[96];
			snprintf(hidden, sizeof hidden, "%lu frame%s of %lu too narrow to draw",
				 o->hidden, o->hidden == 1 ? "" : "s", o->hidden + o->drawn);
			svgkit_open(fp, height, o->total, 0, title, n, hidden);
			fprintf(fp, "<g id=\"frames\" transform=\"translate(0,%d)\">\n",
				height - SVG_PAD);
			if (blen && fwrite(body, 1, blen, fp) != blen)
				err = -EIO;
			fputs("</g>\n</svg>\n", fp);
			if (!err && (fflush(fp) != 0 || ferror(fp)))
				err = -EIO;
		}
		free(body);
	}
	return err;
}

static int svg_finish(struct writer *w, const struct report *r)
{
	const struct run_head *h = r && r->head ? r->head : w->head;
	struct svg_out o;
	memset(&o, 0, sizeof o);
	o.fp = w->fp;
	o.h = h;
	int err = w->opts.weight_err;
	if (err)
		return err;
	o.weight = w->opts.weight_by;
	struct span_tree scratch;
	struct spanwalk_roots roots;
	memset(&scratch, 0, sizeof scratch);
	memset(&roots, 0, sizeof roots);
	const struct span_tree *t = NULL;
	if (r && r->spans && w->opts.folded_threads) {
		err = spanwalk_rooted(r->spans, &roots);
		if (!err)
			err = svg_labels(&o, r->spans, &roots);
		t = err ? NULL : &roots.tree;
	} else if (r) {
		t = report_merged(r, &scratch, &err);
	}
	struct span_tree empty;
	memset(&empty, 0, sizeof empty);
	if (!t && !err) {
		t = &empty;
		empty.n = 0;
	}
	if (!err) {
		char note[128];
		snprintf(note, sizeof note, "%s, %s", w->opts.weight ? w->opts.weight : "wall",
			 svg_unit(&o));
		const struct svgkit_piece title[] = {
			{"Flame graph: ", false},
			{h && h->argc ? h->argv[0] : "", true},
			{" (", false},
			{note, true},
			{")", false},
		};
		err = svg_draw(&o, t, title, sizeof title / sizeof *title);
	}
	if (r)
		span_tree_release(&scratch);
	for (uint32_t k = 0; o.label && k < roots.n; k++)
		free(o.label[k]);
	free(o.label);
	spanwalk_roots_release(&roots);
	free(o.cum);
	free(o.x);
	free(o.old);
	return err;
}

int svg_flamegraph_diff(FILE *fp, const struct span_tree *t, const struct strtab *names,
			const uint64_t *old_self, const char *old, const char *new)
{
	struct svg_out o;
	memset(&o, 0, sizeof o);
	o.fp = fp;
	o.names = names;
	o.old_self = old_self;
	o.weight.kind = SPAN_WEIGHT_WALL;
	/* the file names share what the rest leaves of the width */
	const struct svgkit_piece title[] = {
		{"Differential flame graph: ", false},
		{old, true},
		{" \u2192 ", false},
		{new, true},
		{" (self wall time, ns: red grew, blue shrank)", false},
	};
	int err = svg_draw(&o, t, title, sizeof title / sizeof *title);
	free(o.cum);
	free(o.x);
	free(o.old);
	return err;
}

const struct writer_ops flamegraph_writer_ops = {
	.name = "flamegraph",
	.finish = svg_finish,
};
