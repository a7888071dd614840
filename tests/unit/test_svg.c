/* test_svg.c: the differential flame graph (lib/out/svg.c) keeps every frame
 * inside the picture, even when a damaged record's totals would overflow
 * 64 bits when summed up the stack. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spantree.h"
#include "strtab.h"
#include "svg.h"
#include "svgkit.h"
#include "tap.h"

/* The widest rect in an SVG's text, or -1 when none parses. */
static double widest(const char *svg)
{
	double w = -1;
	for (const char *p = svg; (p = strstr(p, "<rect x=\"")); p++) {
		const char *q = strstr(p, "width=\"");
		if (!q)
			break;
		double v = strtod(q + 7, NULL);
		if (v > w)
			w = v;
	}
	return w;
}

static void test_overflowing_totals(void)
{
	struct strtab names;
	is_int(strtab_init(&names), 0, "names");
	uint32_t a = strtab_intern(&names, "a", 1), b = strtab_intern(&names, "b", 1);
	/* two roots whose sum wraps 2^64: the root would come out smaller
	 * than either child, and a child wider than the whole picture */
	uint32_t parent[3] = {0, 0, 0}, name[3] = {0, a, b};
	uint64_t count[3] = {0, 1, 1}, total[3] = {0, 17000000000000000000u, 17000000000000000000u};
	uint64_t unf[3] = {0, 0, 0};
	struct span_trees st;
	is_int(span_trees_init(&st), 0, "init");
	struct span_import im = {.pid = 1,
				 .tid = 1,
				 .n = 3,
				 .parent = parent,
				 .name = name,
				 .count = count,
				 .total_ns = total,
				 .unfinished = unf};
	is_int(span_trees_import(&st, &im), 0, "import");
	const struct span_tree *t = st.thread[0];
	uint64_t old[3] = {0, 16000000000000000000u, 18000000000000000000u};
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	ok(fp != NULL, "memstream");
	is_int(svg_flamegraph_diff(fp, t, &names, old, "cmd", ""), 0, "drawn");
	fclose(fp);
	double w = widest(buf);
	ok(w > 0, "frames drawn (widest %.2f)", w);
	ok(w <= SVGKIT_WIDTH, "no frame wider than the picture (widest %.2f)", w);
	free(buf);
	span_trees_release(&st);
	strtab_release(&names);
}

int main(void)
{
	test_overflowing_totals();
	return tap_done();
}
