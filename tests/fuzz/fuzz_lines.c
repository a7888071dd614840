/* fuzz_lines.c: libFuzzer target for the span line protocol (lib/spans/linesrc.c)
 * behind a decoder and a span tree, as in a session.  Input: the first byte
 * splits the rest into two feeds.  Besides the sanitizers: what the sinks get
 * stays balanced (every begin gets its end, every tree ends at depth 0),
 * lines taken plus lines skipped never exceed the newlines fed (plus one
 * partial line), and spans nest in time (of the first FZ_THREADS threads,
 * up to FZ_DEPTH deep): none begins before its parent began, none ends
 * before a span inside it ended. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "linesrc.h"
#include "spantree.h"

#define FZ_THREADS 16
#define FZ_DEPTH 64

/* A thread's open spans: their begins, and the latest end inside each. */
struct fz_thread {
	uint32_t pid, tid;
	uint64_t begin[FZ_DEPTH], inner[FZ_DEPTH];
};

struct fz_count {
	uint64_t begins, ends;
	struct fz_thread th[FZ_THREADS];
	unsigned nth;
};

static struct fz_thread *fz_thread(struct fz_count *c, uint32_t pid, uint32_t tid)
{
	for (unsigned i = 0; i < c->nth; i++)
		if (c->th[i].pid == pid && c->th[i].tid == tid)
			return &c->th[i];
	if (c->nth == FZ_THREADS)
		return NULL;
	c->th[c->nth] = (struct fz_thread){.pid = pid, .tid = tid};
	return &c->th[c->nth++];
}

static void fz_event(void *arg, const struct span_event *ev)
{
	struct fz_count *c = arg;
	c->begins += ev->kind == SPAN_BEGIN;
	c->ends += ev->kind == SPAN_END;
	struct fz_thread *t = ev->kind == SPAN_BEGIN || ev->kind == SPAN_END
				      ? fz_thread(c, ev->pid, ev->tid)
				      : NULL;
	if (!t || ev->depth >= FZ_DEPTH)
		return;
	uint32_t d = ev->depth;
	if (ev->kind == SPAN_BEGIN) {
		if (d > 0 && ev->ts < t->begin[d - 1])
			__builtin_trap(); /* a child before its parent */
		t->begin[d] = t->inner[d] = ev->ts;
		return;
	}
	if (ev->ts < t->inner[d])
		__builtin_trap(); /* a parent ended before a child in it did */
	if (d > 0 && t->inner[d - 1] < ev->ts)
		t->inner[d - 1] = ev->ts;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct decoder *d = decoder_new(NULL);
	struct span_trees st;
	struct fz_count c = {0, 0};
	if (!d || span_trees_init(&st) < 0)
		abort();
	decoder_add_sink(d, (struct span_sink){span_trees_event, &st});
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
	span_trees_release(&st);
	decoder_free(d);
	return 0;
}
