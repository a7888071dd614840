/* svgkit.c: the pieces the SVG pictures share (svgkit.h).
 *
 * The script (inline, no network): a click zooms into a frame: what lies
 * in its time or value range is stretched over the full width, clipped at
 * its edges, the rest hidden ("Reset zoom" returns); "Search" (or Ctrl-F)
 * asks for a regular expression, highlights the frames whose name matches
 * and shows the share of the total they hold (a frame inside another
 * match of its lane counted once).  A URL fragment does the same on load,
 * for scripted checks: #search=REGEX, #zoom=N (frame N in the order
 * written, 0 the first), joined by '&'; the results are reflected in the
 * document (the "matched" text, each frame's data-zoomed attribute: in,
 * below (an enclosing frame), part (clipped) or out).
 *
 * Text fits: what is written here is cut to the columns SVGKIT_CHAR allows
 * (a little wider than the usual monospace fonts); on load the script
 * measures the font drawn, cuts the frames' names again if it is wider
 * still, and squeezes (textLength) any line marked with the room it has
 * (data-room) that overflows it. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "svgkit.h"
#include "utf8esc.h"

/* The character at p (left bytes from p): its length in *len, its columns
 * as returned; written escaped to fp unless fp is NULL. */
static size_t svgkit_char(FILE *fp, const unsigned char *p, size_t left, size_t *len)
{
	size_t n = utf8esc_seqlen(p, left);
	/* U+FFFE and U+FFFF are UTF-8 but no XML character: %XX each */
	if (n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe) {
		if (fp)
			fprintf(fp, "%%%02X%%%02X%%%02X", p[0], p[1], p[2]);
		*len = 3;
		return 9;
	}
	if (n > 1) { /* a whole character of more than one byte */
		if (fp)
			fwrite(p, 1, n, fp);
		*len = n;
		return n >= 3 ? 2 : 1;
	}
	*len = 1;
	/* a control byte, or one that is not UTF-8: %XX, as in folded
	 * output (XML allows neither) */
	if (!n || *p < 0x20 || *p == 0x7f) {
		if (fp)
			fprintf(fp, "%%%02X", *p);
		return 3;
	}
	if (fp) {
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
			fputc(*p, fp);
		}
	}
	return 1;
}

void svgkit_escape(FILE *fp, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0, left = strlen(s), len;
	for (; *p && n < max; n++) {
		svgkit_char(fp, p, left, &len);
		p += len;
		left -= len;
	}
	if (n == max && *p)
		fputs("..", fp);
}

size_t svgkit_cols(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t cols = 0, left = strlen(s), len;
	while (*p) {
		cols += svgkit_char(NULL, p, left, &len);
		p += len;
		left -= len;
	}
	return cols;
}

void svgkit_fit(FILE *fp, const char *s, size_t cols, bool at_end)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t total = svgkit_cols(s), left = strlen(s), len, used = 0;
	if (total <= cols) {
		svgkit_escape(fp, s, SIZE_MAX);
		return;
	}
	if (cols < 3)
		return;
	size_t tail = at_end ? 0 : (cols - 2) / 2, head = cols - 2 - tail;
	/* the start, as many whole characters as head holds */
	for (size_t c; *p && used + (c = svgkit_char(NULL, p, left, &len)) <= head; used += c) {
		svgkit_char(fp, p, left, &len);
		p += len;
		left -= len;
	}
	fputs("..", fp);
	/* the end: from the first character after which what remains fits */
	while (*p && total - used > tail) {
		used += svgkit_char(NULL, p, left, &len);
		p += len;
		left -= len;
	}
	svgkit_escape(fp, (const char *)p, SIZE_MAX);
}

void svgkit_colour(const char *name, char *buf, size_t size)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	snprintf(buf, size, "rgb(%u,%u,%u)", 205 + (h % 50), 80 + ((h >> 8) % 130),
		 40 + ((h >> 16) % 50));
}

void svgkit_time(char *buf, size_t size, double ns)
{
	if (ns >= 1e9)
		snprintf(buf, size, "%.2f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, size, "%.2f ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, size, "%.2f us", ns / 1e3);
	else
		snprintf(buf, size, "%.0f ns", ns);
}

/* A tick step of 1, 2 or 5 times a power of ten, about 8 over span. */
static double svgkit_step(double span)
{
	double raw = span / 8, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

void svgkit_axis(FILE *fp, int y, uint64_t span_ns)
{
	fprintf(fp, "<g id=\"axis\" transform=\"translate(0,%d)\">", y);
	if (span_ns) {
		double span = (double)span_ns, step = svgkit_step(span);
		for (double t = 0; t <= span; t += step) {
			double x = SVGKIT_PAD + t / span * (SVGKIT_WIDTH - 2 * SVGKIT_PAD);
			char lbl[32];
			svgkit_time(lbl, sizeof lbl, t);
			fprintf(fp,
				"<line x1=\"%.2f\" x2=\"%.2f\" y1=\"0\" y2=\"6\" stroke=\"gray\"/>",
				x, x);
			if (x + 2 + SVGKIT_CHAR * (double)strlen(lbl) <= SVGKIT_WIDTH)
				fprintf(fp, "<text x=\"%.2f\" y=\"18\">%s</text>", x + 2, lbl);
		}
	}
	fputs("</g>\n", fp);
}

static const char svgkit_script[] =
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
	"  /* the font drawn: when wider than the writer allowed for, the labels\n"
	"     are cut again, and a line that still overflows is squeezed */\n"
	"  var NS = 'http://www.w3.org/2000/svg', p = document.createElementNS(NS, 'text');\n"
	"  p.textContent = 'MMMMMMMMMMMMMMMMMMMM'; document.documentElement.appendChild(p);\n"
	"  var ch = p.getComputedTextLength() / 20; document.documentElement.removeChild(p);\n"
	"  if (ch > CH) { CH = ch; frames.forEach(function (g) { label(g, +g.dataset.w); }); }\n"
	"  Array.prototype.forEach.call(document.querySelectorAll('text[data-room]'), function (t) "
	"{\n"
	"    var room = +t.dataset.room;\n"
	"    if (t.getComputedTextLength() > room) {\n"
	"      t.setAttribute('textLength', room); t.setAttribute('lengthAdjust', "
	"'spacingAndGlyphs'); }\n"
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
	"/* columns, as the writer counts them: a character of U+0800 up two */\n"
	"function cols(s) {\n"
	"  var k = 0; for (var c of s) k += c.codePointAt(0) >= 0x800 ? 2 : 1; return k;\n"
	"}\n"
	"function label(g, w) {\n"
	"  var t = g.querySelector('text'), n = g.dataset.n, fit = Math.floor((w - 6) / CH), s = "
	"'';\n"
	"  if (w >= 3 * CH && fit >= 3 && cols(n) <= fit) s = n;\n"
	"  else if (w >= 3 * CH && fit >= 3) {\n"
	"    var k = 0;\n"
	"    for (var c of n) { k += cols(c); if (k > fit - 2) break; s += c; }\n"
	"    s += '..';\n"
	"  }\n"
	"  t.textContent = s;\n"
	"}\n"
	"function place(g, x, w) {\n"
	"  var r = g.querySelector('rect'); r.setAttribute('x', x); r.setAttribute('width', w);\n"
	"  g.querySelector('text').setAttribute('x', x + 3); label(g, w);\n"
	"}\n"
	"function fmt(ns) {\n"
	"  return ns >= 1e9 ? (ns / 1e9).toFixed(2) + ' s' : ns >= 1e6 ? (ns / 1e6).toFixed(2) + "
	"' ms' :\n"
	"    ns >= 1e3 ? (ns / 1e3).toFixed(2) + ' us' : Math.round(ns) + ' ns';\n"
	"}\n"
	"function axis(a, b) {\n"
	"  var ax = document.getElementById('axis'), NS = 'http://www.w3.org/2000/svg';\n"
	"  if (!ax || !(b > a)) return;\n"
	"  while (ax.firstChild) ax.removeChild(ax.firstChild);\n"
	"  var raw = (b - a) / 8, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;\n"
	"  var step = (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;\n"
	"  for (var t = Math.ceil(a / step) * step; t <= b; t += step) {\n"
	"    var x = PAD + (t - a) / (b - a) * (W - 2 * PAD);\n"
	"    var l = document.createElementNS(NS, 'line');\n"
	"    l.setAttribute('x1', x); l.setAttribute('x2', x); l.setAttribute('y1', 0);\n"
	"    l.setAttribute('y2', 6); l.setAttribute('stroke', 'gray'); ax.appendChild(l);\n"
	"    var s = document.createElementNS(NS, 'text');\n"
	"    s.setAttribute('x', x + 2); s.setAttribute('y', 18); s.textContent = fmt(t);\n"
	"    if (x + 2 + CH * s.textContent.length <= W) ax.appendChild(s);\n"
	"  }\n"
	"}\n"
	"function zoom(z) {\n"
	"  var zx = +z.dataset.x, zw = +z.dataset.w, zd = +z.dataset.d, s = (W - 2 * PAD) / zw;\n"
	"  frames.forEach(function (g) {\n"
	"    var x = +g.dataset.x, w = +g.dataset.w, d = +g.dataset.d;\n"
	"    var inside = x >= zx - 1e-6 && x + w <= zx + zw + 1e-6;\n"
	"    var around = x <= zx + 1e-6 && x + w >= zx + zw - 1e-6;\n"
	"    var meets = x < zx + zw - 1e-6 && x + w > zx + 1e-6;\n"
	"    var l = Math.max(x, zx), r = Math.min(x + w, zx + zw);\n"
	"    g.dataset.zoomed = around && d < zd ? 'below' : inside ? 'in' : meets ? 'part' : "
	"'out';\n"
	"    if (g.dataset.zoomed === 'out') { g.style.display = 'none'; return; }\n"
	"    g.style.display = ''; place(g, PAD + (l - zx) * s, (r - l) * s);\n"
	"  });\n"
	"  var ns = +document.documentElement.dataset.spanNs / (W - 2 * PAD);\n"
	"  axis((zx - PAD) * ns, (zx - PAD + zw) * ns);\n"
	"  zoomed = z; document.getElementById('reset').style.opacity = 1;\n"
	"}\n"
	"function reset() {\n"
	"  frames.forEach(function (g) { g.style.display = ''; delete g.dataset.zoomed;\n"
	"    place(g, +g.dataset.x, +g.dataset.w); });\n"
	"  axis(0, +document.documentElement.dataset.spanNs);\n"
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
	"    var under = hit.some(function (o) { return o.dataset.l === g.dataset.l &&\n"
	"      +o.dataset.d < d && +o.dataset.x <= x + 1e-6 && +o.dataset.x + +o.dataset.w >= x + "
	"w - 1e-6; });\n"
	"    if (!under) total += +g.dataset.v;\n"
	"  });\n"
	"  var all = +document.documentElement.dataset.total;\n"
	"  document.getElementById('matched').textContent =\n"
	"    re === '' ? '' : 'Matched: ' + (all ? (100 * total / all).toFixed(1) : '0.0') + "
	"'%%';\n"
	"}\n"
	"window.addEventListener('load', init);\n"
	"]]></script>\n";

/* The columns of the title's pieces that may be cut get: what each holds
 * up to an equal share of what the others leave in cols, the share grown
 * by what the pieces shorter than it leave. */
static size_t svgkit_share(const struct svgkit_piece *title, size_t n, size_t cols)
{
	size_t fixed = 0, ncut = 0;
	for (size_t i = 0; i < n; i++) {
		if (title[i].cut)
			ncut++;
		else
			fixed += svgkit_cols(title[i].text);
	}
	size_t left = cols > fixed ? cols - fixed : 0, share = ncut ? left / ncut : 0;
	for (size_t prev = SIZE_MAX; ncut && share != prev;) {
		size_t small = 0, nsmall = 0;
		prev = share;
		for (size_t i = 0; i < n; i++) {
			size_t c = title[i].cut ? svgkit_cols(title[i].text) : SIZE_MAX;
			if (c <= share) {
				small += c;
				nsmall++;
			}
		}
		share = nsmall < ncut ? (left - small) / (ncut - nsmall) : left;
	}
	return share;
}

void svgkit_open(FILE *fp, int height, uint64_t total, uint64_t span_ns,
		 const struct svgkit_piece *title, size_t n, const char *hidden)
{
	fprintf(fp,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" data-total=\"%" PRIu64
		"\" data-span-ns=\"%" PRIu64 "\">\n"
		"<style>text { font-family: monospace; font-size: 12px; "
		"pointer-events: none; } g.f { cursor: pointer; } "
		"g.f:hover rect { stroke: black; stroke-width: 0.5; } "
		"#reset, #search, #title { cursor: pointer; pointer-events: all; }</style>\n",
		SVGKIT_WIDTH, height, SVGKIT_WIDTH, height, total, span_ns);
	fprintf(fp, svgkit_script, SVGKIT_WIDTH, SVGKIT_PAD, SVGKIT_CHAR);
	/* the title, centred, its pieces cut to fit; whole in its tooltip */
	int room = SVGKIT_WIDTH - 2 * SVGKIT_PAD;
	size_t share = svgkit_share(title, n, (size_t)(room / SVGKIT_TITLE));
	fprintf(fp,
		"<rect width=\"100%%\" height=\"100%%\" fill=\"rgb(250,250,240)\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\" data-room=\"%d\" "
		"style=\"font-size: 16px\"><title>",
		SVGKIT_WIDTH / 2, room);
	for (size_t i = 0; i < n; i++)
		svgkit_escape(fp, title[i].text, 4096);
	fputs("</title>", fp);
	for (size_t i = 0; i < n; i++)
		svgkit_fit(fp, title[i].text, title[i].cut ? share : SIZE_MAX, false);
	/* the grey line ends before the matched share */
	int hx = SVGKIT_PAD + 120, mx = SVGKIT_WIDTH - 260;
	fprintf(fp,
		"</text>\n"
		"<text id=\"reset\" x=\"%d\" y=\"44\" style=\"opacity: 0.3\">Reset zoom</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"44\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"44\"></text>\n"
		"<text id=\"hidden\" x=\"%d\" y=\"44\" data-room=\"%d\" style=\"fill: gray\">",
		SVGKIT_PAD, SVGKIT_WIDTH - 60, mx, hx, mx - SVGKIT_PAD - hx);
	svgkit_fit(fp, hidden, (size_t)((mx - SVGKIT_PAD - hx) / SVGKIT_CHAR), true);
	fputs("</text>\n", fp);
}

void svgkit_line(FILE *fp, int x, int y, const char *style, const char *before, const char *s,
		 const char *after)
{
	int room = SVGKIT_WIDTH - SVGKIT_PAD - x;
	size_t cols = (size_t)(room / SVGKIT_CHAR), fixed = strlen(before) + strlen(after);
	fprintf(fp, "<text x=\"%d\" y=\"%d\" data-room=\"%d\"", x, y, room);
	if (style)
		fprintf(fp, " style=\"%s\"", style);
	fprintf(fp, ">%s", before);
	svgkit_fit(fp, s, cols > fixed ? cols - fixed : 0, false);
	fprintf(fp, "%s</text>\n", after);
}

void svgkit_frame(FILE *fp, const char *name, const char *about, const char *fill, double x, int y,
		  double w, unsigned d, unsigned lane, uint64_t value)
{
	char colour[32];
	if (!fill) {
		svgkit_colour(name, colour, sizeof colour);
		fill = colour;
	}
	fprintf(fp, "<g class=\"f\" data-d=\"%u\" data-v=\"%" PRIu64 "\" data-n=\"", d, value);
	svgkit_escape(fp, name, 4096);
	fprintf(fp, "\" data-l=\"%u\"><title>", lane);
	svgkit_escape(fp, name, 4096);
	fputc(' ', fp);
	svgkit_escape(fp, about, 4096);
	fprintf(fp,
		"</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
		"rx=\"2\"/>",
		x, y, w, SVGKIT_FRAME - 1, fill);
	fprintf(fp, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + SVGKIT_FRAME - 4);
	/* columns that fit; w is compared before any conversion */
	double cols = w > 3 * SVGKIT_CHAR ? (w - 6) / SVGKIT_CHAR : 0;
	if (cols >= 3)
		svgkit_fit(fp, name, cols >= (double)SIZE_MAX ? SIZE_MAX : (size_t)cols, true);
	fputs("</text></g>\n", fp);
}
