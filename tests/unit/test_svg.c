/* test_svg.c: the differential flame graph (lib/out/svg.c) keeps every frame
 * inside the picture, even when a damaged record's totals would overflow
 * 64 bits when summed up the stack, and its title inside the width however
 * long the file names; svgkit's cutting of text to a number of columns. */
#include <stdbool.h>
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

/* st made and given one thread's tree of n nodes (node 0 the root). */
static void import_one(struct span_trees *st, uint32_t n, const uint32_t *parent,
		       const uint32_t *name, const uint64_t *count, const uint64_t *total,
		       const uint64_t *unf)
{
	is_int(span_trees_init(st), 0, "init");
	struct span_import im = {.pid = 1,
				 .tid = 1,
				 .n = n,
				 .parent = parent,
				 .name = name,
				 .count = count,
				 .total_ns = total,
				 .unfinished = unf};
	is_int(span_trees_import(st, &im), 0, "import");
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
	import_one(&st, 3, parent, name, count, total, unf);
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

/* What svgkit_fit writes of s in cols columns. */
static char *fit(const char *s, size_t cols, bool at_end)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	if (!fp)
		return NULL;
	svgkit_fit(fp, s, cols, at_end);
	fclose(fp);
	return buf;
}

static void is_fit(const char *s, size_t cols, bool at_end, const char *want)
{
	char *got = fit(s, cols, at_end);
	is_str(got, want, "'%s' in %zu columns, cut at its %s", s, cols, at_end ? "end" : "middle");
	free(got);
}

static void test_fit(void)
{
	is_int((int)svgkit_cols("abc"), 3, "a column per ASCII character");
	is_int((int)svgkit_cols("caf\xc3\xa9"), 4, "one for a character of two bytes");
	is_int((int)svgkit_cols("a\xe2\x86\x92"), 3, "two for one of three bytes (maybe wide)");
	is_int((int)svgkit_cols("a\x01\xff"), 7, "%%XX three");
	is_int((int)svgkit_cols("\xef\xbf\xbe"), 9, "U+FFFE nine: %%XX%%XX%%XX");
	is_fit("abcdefghij", 10, true, "abcdefghij");
	is_fit("abcdefghij", 7, true, "abcde..");
	is_fit("abcdefghij", 7, false, "abc..ij");
	is_fit("abcdefghij", 2, true, "");
	is_fit("a&b<cdefgh", 6, true, "a&amp;b&lt;..");
	is_fit("ab\xe2\x86\x92"
	       "cd",
	       5, true, "ab..");
	is_fit("ab\xe2\x86\x92"
	       "cdef",
	       6, false, "ab..ef");
	is_fit("ab\x01"
	       "defgh",
	       6, true, "ab..");
}

/* The title's text as drawn (not its tooltip), NUL-terminated in place. */
static char *title_text(char *svg)
{
	char *p = strstr(svg, "<text id=\"title\"");
	p = p ? strstr(p, "</title>") : NULL;
	char *q = p ? strstr(p, "</text>") : NULL;
	if (!q)
		return NULL;
	*q = '\0';
	return p + strlen("</title>");
}

static void test_diff_title(void)
{
	struct strtab names;
	is_int(strtab_init(&names), 0, "names");
	uint32_t a = strtab_intern(&names, "a", 1);
	uint32_t parent[2] = {0, 0}, name[2] = {0, a};
	uint64_t count[2] = {0, 1}, total[2] = {0, 1000}, unf[2] = {0, 0}, old[2] = {0, 900};
	struct span_trees st;
	import_one(&st, 2, parent, name, count, total, unf);
	char oldname[301], newname[301];
	memset(oldname, 'o', 300);
	memset(newname, 'n', 300);
	oldname[300] = newname[300] = '\0';
	memcpy(oldname + 295, ".json", 5);
	memcpy(newname + 295, ".json", 5);
	for (int longer = 0; longer < 2; longer++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *fp = open_memstream(&buf, &len);
		ok(fp != NULL, "memstream");
		is_int(svg_flamegraph_diff(fp, st.thread[0], &names, old,
					   longer ? oldname : "old.json",
					   longer ? newname : "new.json"),
		       0, "drawn");
		fclose(fp);
		ok(strstr(buf, longer ? oldname : "old.json") != NULL,
		   "the whole title in its tooltip");
		char *t = title_text(buf);
		ok(t != NULL, "a title");
		size_t cols = t ? svgkit_cols(t) : 0;
		/* what is drawn was escaped: count it back as characters */
		ok(cols * SVGKIT_TITLE <= SVGKIT_WIDTH - 2 * SVGKIT_PAD,
		   "the title fits the width (%zu columns)", cols);
		if (longer) {
			ok(t && strstr(t, "ooo..ooo") && strstr(t, "nnn..nnn") &&
				   strstr(t, ".json \xe2\x86\x92 "),
			   "each file name cut in its middle: %s", t ? t : "");
		} else {
			is_str(t,
			       "Differential flame graph: old.json \u2192 new.json (self wall "
			       "time, ns: "
			       "red grew, blue shrank)",
			       "short names whole");
		}
		free(buf);
	}
	span_trees_release(&st);
	strtab_release(&names);
}

int main(void)
{
	test_overflowing_totals();
	test_fit();
	test_diff_title();
	return tap_done();
}
