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
 * The script (inline): a click zooms into a frame (its ancestors stay, full
 * width), "Reset zoom" returns; "Search" (or Ctrl-F) asks for a regular
 * expression, highlights the frames whose name matches and shows the
 * share they hold (counted once per stack).  A URL fragment does the same
 * on load, for scripted checks: #search=REGEX, #zoom=N (frame N, in the
 * order written, 0 the first), both joined by '&'; the results are
 * reflected in the document (the "matched" text and each frame's
 * data-zoomed attribute). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spannames.h"
#include "spantree.h"
#include "spanwalk.h"
#include "spanweight.h"
#include "writer.h"

#define SVG_WIDTH 1200
#define SVG_FRAME 16 /* frame height */
#define SVG_PAD 10
#define SVG_TOP 60 /* title and buttons */
#define SVG_MIN_WIDTH 0.1
#define SVG_CHAR 7.0 /* px per character at font-size 12 */

struct svg_out {
	FILE *fp;
	const struct run_head *h;
	struct span_weight weight;
	uint64_t *cum; /* per node: its total weight */
	double *x;     /* per node: its left edge */
	uint32_t maxdepth;
	uint64_t total;
	unsigned long hidden, drawn;
	int err;
};

static const char *svg_name(const struct svg_out *o, uint32_t id)
{
	return o->h ? span_names_text(o->h->names, o->h->strings, id) : "";
}

/* Writes s escaped for XML text and attributes. */
static void svg_escape(FILE *fp, const char *s, size_t max)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p && n < max; p++, n++) {
		switch (*p) {
		case '&':
			fputs("&amp;", fp);
			break;
		case '<':
			fputs("&lt;", fp);
			break;
		case '>':
			fputs("&gt;", fp);
			break;
		case '"':
			fputs("&quot;", fp);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(fp, "%%%02X", *p); /* as in folded output */
			else
				fputc(*p, fp);
		}
	}
	if (n == max && s[n])
		fputs("..", fp);
}

/* A warm colour from the name's hash, stable across graphs. */
static void svg_colour(const char *name, char *buf, size_t size)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	snprintf(buf, size, "rgb(%u,%u,%u)", 205 + (h % 50), 80 + ((h >> 8) % 130),
		 40 + ((h >> 16) % 50));
}

static const char *svg_unit(const struct svg_out *o)
{
	const struct spanmetrics *ms = o->h ? o->h->metrics : NULL;
	if (o->weight.kind != SPAN_WEIGHT_VALUE)
		return "ns";
	const struct spanmetric *m = ms ? &ms->m[o->weight.index] : NULL;
	if (m && m->kind == SPANMETRIC_ALLOC_BYTES)
		return "bytes";
	return m && m->time ? "ns" : "";
}

/* Totals, bottom up (a parent's index is below its children's). */
static int svg_totals(struct svg_out *o, const struct span_tree *t)
{
	o->cum = calloc(t->n, sizeof *o->cum);
	o->x = calloc(t->n, sizeof *o->x);
	if (!o->cum || !o->x)
		return -ENOMEM;
	for (uint32_t i = t->n; i-- > 1;) {
		o->cum[i] += span_weight_self(&o->weight, t, i);
		o->cum[t->node[i].parent] += o->cum[i];
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
	char fill[32];
	svg_colour(name, fill, sizeof fill);
	FILE *fp = o->fp;
	fprintf(fp, "<g class=\"f\" data-d=\"%u\" data-v=\"%" PRIu64 "\" data-n=\"", d, o->cum[i]);
	svg_escape(fp, name, 4096);
	fputs("\"><title>", fp);
	svg_escape(fp, name, 4096);
	fprintf(fp, " (%" PRIu64 " %s, %.2f%%)</title>", o->cum[i], svg_unit(o),
		o->total ? 100.0 * (double)o->cum[i] / (double)o->total : 0.0);
	fprintf(fp, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>",
		o->x[i], -(int)(d + 1) * SVG_FRAME, w, SVG_FRAME - 1, fill);
	fprintf(fp, "<text x=\"%.2f\" y=\"%d\">", o->x[i] + 3, -(int)d * SVG_FRAME - 4);
	size_t fit = w > 3 * SVG_CHAR ? (size_t)((w - 6) / SVG_CHAR) : 0;
	if (fit >= 3)
		svg_escape(fp, name, fit - 2 >= strlen(name) ? strlen(name) : fit - 2);
	fputs("</text></g>\n", fp);
	o->drawn++;
	return 0;
}

/* The script: zoom, reset, search, and the fragment's commands. */
static const char svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var W = %d, PAD = %d, CH = %.1f, frames = [], zoomed = null;\n"
	"function init() {\n"
	"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
	"  frames.forEach(function (g, i) {\n"
	"    var r = g.querySelector('rect');\n"
	"    g.dataset.x = r.getAttribute('x'); g.dataset.w = r.getAttribute('width');\n"
	"    g.dataset.i = i; g.addEventListener('click', function () { zoom(g); });\n"
	"  });\n"
	"  document.getElementById('reset').addEventListener('click', reset);\n"
	"  document.getElementById('search').addEventListener('click', function () {\n"
	"    var re = prompt('Search frames (regular expression)', '');\n"
	"    if (re !== null) search(re);\n"
	"  });\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault();\n"
	"      var re = prompt('Search frames (regular expression)', ''); if (re !== null) "
	"search(re); }\n"
	"  });\n"
	"  var h = decodeURIComponent((location.hash || '').slice(1));\n"
	"  h.split('&').forEach(function (kv) {\n"
	"    var m = kv.match(/^(search|zoom)=(.*)$/); if (!m) return;\n"
	"    if (m[1] === 'search') search(m[2]); else if (frames[+m[2]]) zoom(frames[+m[2]]);\n"
	"  });\n"
	"}\n"
	"function label(g, w) {\n"
	"  var t = g.querySelector('text'), n = g.dataset.n, fit = Math.floor((w - 6) / CH);\n"
	"  t.textContent = w < 3 * CH || fit < 3 ? '' : (n.length <= fit ? n : n.slice(0, fit - 2) "
	"+ '..');\n"
	"}\n"
	"function place(g, x, w) {\n"
	"  var r = g.querySelector('rect'); r.setAttribute('x', x); r.setAttribute('width', w);\n"
	"  g.querySelector('text').setAttribute('x', x + 3); label(g, w);\n"
	"}\n"
	"function zoom(z) {\n"
	"  var zx = +z.dataset.x, zw = +z.dataset.w, zd = +z.dataset.d, s = (W - 2 * PAD) / zw;\n"
	"  frames.forEach(function (g) {\n"
	"    var x = +g.dataset.x, w = +g.dataset.w, d = +g.dataset.d;\n"
	"    var inside = x >= zx - 1e-6 && x + w <= zx + zw + 1e-6;\n"
	"    var below = d < zd && x <= zx + 1e-6 && x + w >= zx + zw - 1e-6;\n"
	"    if (inside && d >= zd) { g.style.display = ''; g.dataset.zoomed = 'in';\n"
	"      place(g, PAD + (x - zx) * s, w * s); }\n"
	"    else if (below) { g.style.display = ''; g.dataset.zoomed = 'below'; place(g, PAD, W - "
	"2 * PAD); }\n"
	"    else { g.style.display = 'none'; g.dataset.zoomed = 'out'; }\n"
	"  });\n"
	"  zoomed = z; document.getElementById('reset').style.opacity = 1;\n"
	"}\n"
	"function reset() {\n"
	"  frames.forEach(function (g) { g.style.display = ''; delete g.dataset.zoomed;\n"
	"    place(g, +g.dataset.x, +g.dataset.w); });\n"
	"  zoomed = null; document.getElementById('reset').style.opacity = 0.3;\n"
	"}\n"
	"function search(re) {\n"
	"  var rx; try { rx = new RegExp(re); } catch (e) { return; }\n"
	"  var total = 0, hit = [];\n"
	"  frames.forEach(function (g) {\n"
	"    var r = g.querySelector('rect'), m = re !== '' && rx.test(g.dataset.n);\n"
	"    if (!r.dataset.fill) r.dataset.fill = r.getAttribute('fill');\n"
	"    r.setAttribute('fill', m ? 'rgb(230,0,230)' : r.dataset.fill);\n"
	"    if (m) hit.push(g);\n"
	"  });\n"
	"  /* a stack's value counts once: skip matches inside another match */\n"
	"  hit.forEach(function (g) {\n"
	"    var x = +g.dataset.x, w = +g.dataset.w, d = +g.dataset.d;\n"
	"    var under = hit.some(function (o) { return +o.dataset.d < d && +o.dataset.x <= x + "
	"1e-6 &&\n"
	"      +o.dataset.x + +o.dataset.w >= x + w - 1e-6; });\n"
	"    if (!under) total += +g.dataset.v;\n"
	"  });\n"
	"  var all = +document.documentElement.dataset.total;\n"
	"  document.getElementById('matched').textContent =\n"
	"    re === '' ? '' : 'Matched: ' + (all ? (100 * total / all).toFixed(1) : '0.0') + "
	"'%%';\n"
	"}\n"
	"window.addEventListener('load', init);\n"
	"]]></script>\n";

static int svg_finish(struct writer *w, const struct report *r)
{
	const struct run_head *h = r && r->head ? r->head : w->head;
	struct svg_out o;
	memset(&o, 0, sizeof o);
	o.fp = w->fp;
	o.h = h;
	int err = span_weight_parse(w->opts.weight, h ? h->metrics : NULL, &o.weight);
	if (err)
		return err;
	struct span_tree scratch;
	const struct span_tree *t = r ? report_merged(r, &scratch, &err) : NULL;
	struct span_tree empty;
	memset(&empty, 0, sizeof empty);
	if (!t && !err) {
		t = &empty;
		empty.n = 0;
	}
	if (!err && t->n)
		err = svg_totals(&o, t);
	if (!err && t->n)
		err = svg_layout(&o, t);
	if (!err) {
		/* the frames first, into a buffer: the height comes from them */
		char *body = NULL;
		size_t blen = 0;
		FILE *mem = open_memstream(&body, &blen);
		if (!mem) {
			err = -ENOMEM;
		} else {
			o.fp = mem;
			if (t->n)
				err = spanwalk(t, svg_frame, &o);
			if (fclose(mem) != 0 && !err)
				err = -ENOMEM;
			o.fp = w->fp;
		}
		if (!err) {
			int height = SVG_TOP + (int)(o.maxdepth + 1) * SVG_FRAME + 2 * SVG_PAD;
			FILE *fp = w->fp;
			fprintf(fp,
				"<?xml version=\"1.0\" standalone=\"no\"?>\n"
				"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
				"width=\"%d\" "
				"height=\"%d\" viewBox=\"0 0 %d %d\" data-total=\"%" PRIu64 "\">\n"
				"<style>text { font-family: monospace; font-size: 12px; "
				"pointer-events: none; } g.f { cursor: pointer; } "
				"g.f:hover rect { stroke: black; stroke-width: 0.5; } "
				"#reset, #search { cursor: pointer; }</style>\n",
				SVG_WIDTH, height, SVG_WIDTH, height, o.total);
			fprintf(fp, svg_script, SVG_WIDTH, SVG_PAD, SVG_CHAR);
			fprintf(fp,
				"<rect width=\"100%%\" height=\"100%%\" "
				"fill=\"rgb(250,250,240)\"/>\n"
				"<text x=\"%d\" y=\"24\" style=\"font-size: 16px\">Flame graph: ",
				SVG_WIDTH / 2 - 200);
			svg_escape(fp, h && h->argc ? h->argv[0] : "", 80);
			fprintf(fp,
				" (%s, %s)</text>\n"
				"<text id=\"reset\" x=\"%d\" y=\"44\" style=\"opacity: 0.3\">Reset "
				"zoom</text>\n"
				"<text id=\"search\" x=\"%d\" y=\"44\">Search</text>\n"
				"<text id=\"matched\" x=\"%d\" y=\"%d\"></text>\n"
				"<text id=\"hidden\" x=\"%d\" y=\"%d\" style=\"fill: gray\">%lu "
				"frame%s of %lu too narrow to draw</text>\n"
				"<g id=\"frames\" transform=\"translate(0,%d)\">\n",
				w->opts.weight ? w->opts.weight : "wall", svg_unit(&o), SVG_PAD,
				SVG_WIDTH - 60, SVG_WIDTH - 260, 44, SVG_PAD + 120, 44, o.hidden,
				o.hidden == 1 ? "" : "s", o.hidden + o.drawn, height - SVG_PAD);
			if (blen && fwrite(body, 1, blen, fp) != blen)
				err = -EIO;
			fputs("</g>\n</svg>\n", fp);
			if (!err && (fflush(fp) != 0 || ferror(fp)))
				err = -EIO;
		}
		free(body);
	}
	if (r)
		span_tree_release(&scratch);
	free(o.cum);
	free(o.x);
	return err;
}

const struct writer_ops flamegraph_writer_ops = {
	.name = "flamegraph",
	.finish = svg_finish,
};
