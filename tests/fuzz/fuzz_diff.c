/* fuzz_diff.c: libFuzzer target for spanstat diff's reading of two JSON
 * documents (lib/diff.c), its tests, and the differential flame graph
 * drawn from them (svg.c).  Input: the OLD document, a NUL byte, the NEW
 * one (without a NUL, both are the input).  Besides the sanitizers, it
 * checks that every verdict agrees with its numbers and that the picture
 * is valid UTF-8 ending with its closing tag. */
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
	if (r == 0)
		r = diff_add(&d, 1, b, blen, &cause);
	free(cause);
	if (r == 0) {
		diff_compare(&d, 0.05, 1);
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
			if (isnan(it->p) != isnan(it->holm_p) || it->holm_p < it->p - 1e-12 ||
			    it->holm_p > 1 + 1e-9)
				abort(); /* Holm never lowers a p, nor passes 1 */
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
