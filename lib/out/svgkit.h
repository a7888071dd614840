/* svgkit.h: what the SVG pictures share (svg.c's flame graph, flamechart.c's
 * flame chart): XML escaping, a colour per name, the document head with
 * its style and its one script (zoom, reset, search, the URL fragment's
 * commands, a time axis redrawn on zoom), and a frame. */
#ifndef SPANSTAT_SVGKIT_H
#define SPANSTAT_SVGKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SVGKIT_WIDTH 1200
#define SVGKIT_FRAME 16 /* frame height */
#define SVGKIT_PAD 10
/* What text may take: a character's advance at most, in ems of the
 * monospace font a browser picks (DejaVu Sans Mono, Liberation Mono,
 * Courier and Menlo draw 0.6-0.602), so that what is cut to fit here fits
 * there; the script measures the font and refits when it is wider. */
#define SVGKIT_EM 0.62
#define SVGKIT_CHAR (12 * SVGKIT_EM)  /* px per character at font-size 12 */
#define SVGKIT_TITLE (16 * SVGKIT_EM) /* and in the title, at 16 */

/* Writes at most max characters of s escaped for XML text and attributes
 * (a control byte, or one that is not part of valid UTF-8, as %XX, as
 * folded output writes it), ".." when cut. */
void svgkit_escape(FILE *fp, const char *s, size_t max);
/* The columns s takes as svgkit_escape writes it: a character one, one of
 * three or more UTF-8 bytes two (it may be wide: CJK, emoji), what is
 * written as %XX its length. */
size_t svgkit_cols(const char *s);
/* Writes s escaped, in at most cols columns: whole when it fits, else its
 * start and ".." (at_end) or its start, ".." and its end (else); nothing
 * when fewer than 3 columns are given for what does not fit. */
void svgkit_fit(FILE *fp, const char *s, size_t cols, bool at_end);
/* A warm colour from the name's hash, stable across pictures. */
void svgkit_colour(const char *name, char *buf, size_t size);

/* A piece of a title; one that may be cut shares the room the others leave
 * with the other such pieces (cut in its middle). */
struct svgkit_piece {
	const char *text;
	bool cut;
};

/* The document up to its content: the XML declaration, the <svg> element
 * (height px; total: what search shares are of; span_ns > 0: the time the
 * full width shows, for the axis), style, script, background, the title
 * (the n pieces one after the other, centred, cut to fit the width, whole
 * in its tooltip), the Reset zoom and Search buttons, the matched share
 * and, in grey, the line `hidden` (cut at its end to fit before the
 * share). */
void svgkit_open(FILE *fp, int height, uint64_t total, uint64_t span_ns,
		 const struct svgkit_piece *title, size_t n, const char *hidden);

/* A line of text at x, y that must fit the picture's right margin: cut to
 * fit, as svgkit_fit, with what comes before and after it whole (before
 * and after are plain text, written as they are; style may be NULL). */
void svgkit_line(FILE *fp, int x, int y, const char *style, const char *before, const char *s,
		 const char *after);

/* One frame: a group of class "f" whose data- attributes the script reads
 * (d depth, l lane, v value, n name), its <title> (name then the text
 * `about`), its rect at x, y of width w filled with fill (NULL: the name's
 * colour), and the name as far as it fits. */
void svgkit_frame(FILE *fp, const char *name, const char *about, const char *fill, double x, int y,
		  double w, unsigned d, unsigned lane, uint64_t value);

/* A readable time: "1.50 ms", "12 ns". */
void svgkit_time(char *buf, size_t size, double ns);

/* Static ticks of a time axis over [0, span_ns] across the width at y (the
 * script redraws them on zoom). */
void svgkit_axis(FILE *fp, int y, uint64_t span_ns);

#endif
