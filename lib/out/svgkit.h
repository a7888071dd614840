/* svgkit.h: what the SVG pictures share (svg.c's flame graph, flamechart.c's
 * flame chart): XML escaping, a colour per name, the document head with
 * its style and its one script (zoom, reset, search, the URL fragment's
 * commands, a time axis redrawn on zoom), and a frame. */
#ifndef SPANSTAT_SVGKIT_H
#define SPANSTAT_SVGKIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SVGKIT_WIDTH 1200
#define SVGKIT_FRAME 16 /* frame height */
#define SVGKIT_PAD 10
#define SVGKIT_CHAR 7.0 /* px per character at font-size 12 */

/* Writes at most max characters of s escaped for XML text and attributes
 * (a control byte, or one that is not part of valid UTF-8, as %XX, as
 * folded output writes it), ".." when cut. */
void svgkit_escape(FILE *fp, const char *s, size_t max);
/* A warm colour from the name's hash, stable across pictures. */
void svgkit_colour(const char *name, char *buf, size_t size);

/* The document up to its content: the XML declaration, the <svg> element
 * (height px; total: what search shares are of; span_ns > 0: the time the
 * full width shows, for the axis), style, script, background, the title
 * "KIND: COMMAND (NOTE)", the Reset zoom and Search buttons, the matched
 * share and, in grey, the line `hidden`. */
void svgkit_open(FILE *fp, int height, uint64_t total, uint64_t span_ns, const char *kind,
		 const char *command, const char *note, const char *hidden);

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
