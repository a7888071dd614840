/* fuzz_lines.c: libFuzzer target for the span line protocol (lib/lines.c)
 * behind a decoder and a span tree, as in a session.  Input: the first byte
 * splits the rest into two feeds.  Besides the sanitizers: what the sinks get
 * stays balanced (every begin gets its end, every tree ends at depth 0), and
 * lines taken plus lines skipped never exceed the newlines fed (plus one
 * partial line). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "lines.h"
#include "spantree.h"

struct fz_count {
	uint64_t begins, ends;
};

static void fz_event(void *arg, const struct span_event *ev)
{
	struct fz_count *c = arg;
	c->begins += ev->kind == SPAN_BEGIN;
	c->ends += ev->kind == SPAN_END;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct decoder *d = decoder_new(NULL);
	struct spantree st;
	struct fz_count c = {0, 0};
	if (!d || spantree_init(&st) < 0)
		abort();
	decoder_add_sink(d, (struct span_sink){spantree_event, &st});
	decoder_add_sink(d, (struct span_sink){fz_event, &c});
	struct linesrc *ls = linesrc_new(d, 1000000000);
	if (!ls)
		abort();
	size_t n = size - 1, cut = n * data[0] / 256;
	linesrc_feed(ls, data + 1, cut, 5);
	linesrc_feed(ls, data + 1 + cut, n - cut, 6);
	linesrc_finish(ls);
	decoder_finish(d);
	size_t newlines = 0;
	for (size_t i = 1; i < size; i++)
		newlines += data[i] == '\n';
	const struct lines_stats *ls_st = linesrc_stats(ls);
	if (c.begins != c.ends || ls_st->lines + ls_st->bad > newlines + 1)
		__builtin_trap();
	for (size_t i = 0; i < st.nthread; i++)
		if (st.thread[i]->depth != 0)
			__builtin_trap();
	linesrc_free(ls);
	spantree_release(&st);
	decoder_free(d);
	return 0;
}
