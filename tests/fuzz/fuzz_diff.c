/* fuzz_diff.c: libFuzzer target for spanstat diff's reading of two JSON
 * documents (lib/out/diff.c), its tests, and the differential flame graph
 * drawn from them (svg.c).  Input: the OLD document, a NUL byte, the NEW
 * one (without a NUL, both are the input); NEW is read from a stream (its
 * first 3 bytes given, the rest through fmemopen), as spanstat diff reads
 * files.  Besides the sanitizers, it checks that every verdict agrees with
 * its numbers, that no refused value got in, that the outcome follows from
 * the primary family and the gaps, that the report order puts the primary
 * family first, and that the picture is valid UTF-8 ending with its
 * closing tag. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "svg.h"
#include "utf8esc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	const char *nul = memchr(p, 0, size);
	size_t alen = nul ? (size_t)(nul - p) : size;
	const char *b = nul ? nul + 1 : p;
	size_t blen = nul ? size - alen - 1 : size;
	struct diff d;
	if (diff_init(&d) < 0)
		return 0;
	char *cause = NULL;
	int r = diff_add(&d, 0, p, alen, &cause);
	free(cause);
	cause = NULL;
	if (r == 0 && blen > 3) {
		FILE *fp = fmemopen((void *)(b + 3), blen - 3, "r");
		if (!fp)
			abort();
		r = diff_add_file(&d, 1, b, 3, fp, &cause);
		fclose(fp);
	} else if (r == 0) {
		r = diff_add(&d, 1, b, blen, &cause);
	}
	free(cause);
	struct diff_opts o = {.alpha = 0.05, .threshold_pct = 1, .primary_paths = 3};
	if (r == 0 && diff_compare(&d, &o) == 0) {
		size_t worse = 0, gaps = 0;
		for (size_t i = 0; i < d.n; i++) {
			const struct diff_item *it = &d.item[i];
			if (it->n[0] > d.runs[0] || it->n[1] > d.runs[1])
				abort();
			if (it->verdict == DIFF_WORSE &&
			    !(it->significant && it->mean[1] > it->mean[0]))
				abort();
			if (it->verdict == DIFF_BETTER &&
			    !(it->significant && it->mean[1] < it->mean[0]))
				abort();
			if (!isnan(it->welch_p) && (it->welch_p < 0 || it->welch_p > 1 + 1e-9))
				abort();
			if (isnan(it->p) != isnan(it->adj_p) || it->adj_p < it->p - 1e-12 ||
			    it->adj_p > 1 + 1e-9)
				abort(); /* an adjustment never lowers a p, nor passes 1 */
			if ((it->test == DIFF_TEST_EXACT) !=
			    (it->test != DIFF_TEST_NONE && isnan(it->p)))
				abort(); /* only exact comparisons go without a p */
			for (int s = 0; s < 2; s++)
				for (unsigned k = 0; k < d.runs[s]; k++)
					if (it->v[s][k] < 0 || it->v[s][k] > 0x1p63 * 1e6)
						abort(); /* refused when read */
			worse += it->primary && it->verdict == DIFF_WORSE;
			gaps += it->verdict == DIFF_NOT_COMPARABLE;
		}
		/* the outcome follows from the primary family and the gaps */
		if ((d.sum.outcome == DIFF_OUT_WORSE) != (worse > 0 && !d.ngap))
			abort();
		if (gaps && !d.ngap)
			abort();
		size_t *order = NULL;
		if (diff_order(&d, &order) == 0) {
			for (size_t k = 1; k < d.n; k++)
				if (d.item[order[k]].primary && !d.item[order[k - 1]].primary)
					abort(); /* primary first */
			free(order);
		}
		struct span_tree t;
		struct strtab names;
		uint64_t *old;
		if (strtab_init(&names) == 0) {
			if (diff_tree(&d, &t, &names, &old) == 0) {
				char *buf = NULL;
				size_t len = 0;
				FILE *fp = open_memstream(&buf, &len);
				if (!fp)
					abort();
				int err = svg_flamegraph_diff(fp, &t, &names, old, "new", "note");
				fclose(fp);
				static const char end[] = "</svg>\n";
				if (!err &&
				    (len < sizeof end - 1 ||
				     memcmp(buf + len - (sizeof end - 1), end, sizeof end - 1)))
					abort();
				for (size_t i = 0; !err && i < len;) {
					size_t n = utf8esc_seqlen((const unsigned char *)buf + i,
								  len - i);
					if (!n || ((unsigned char)buf[i] < 0x20 && buf[i] != '\n'))
						abort();
					i += n;
				}
				free(buf);
				free(old);
				span_tree_release(&t);
			}
			strtab_release(&names);
		}
	}
	diff_release(&d);
	return 0;
}
