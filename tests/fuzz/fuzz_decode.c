/* fuzz_decode.c: libFuzzer target for the span wire decoder (lib/decode.c)
 * with the aggregation (spantree.c) and the folded writer behind it.
 * Run by tests/fuzz/fuzz.mk (`make fuzz`, FUZZ_SECONDS=30 by default) over
 * the seed corpus in tests/fuzz/corpus/, made by mkcorpus.c from encode.h.
 *
 * Input: 3 control bytes, then the byte stream.  Control byte 0: bits 0-1
 * the number of extra cuts (0-2, so 1-3 feeds), bit 2 a valid TSC clock,
 * bit 3 folded thread roots; bytes 1 and 2 place the cuts (n * byte / 256).
 * Besides the sanitizers, it checks that what the decoder emits is balanced:
 * every begin at the thread's depth, every end closing the innermost span
 * and never before its begin, and as many ends as begins at the end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "spantree.h"
#include "writer.h"

#define FUZZ_SLOTS 4096

struct fuzz_check {
	uint64_t key[FUZZ_SLOTS];
	uint32_t depth[FUZZ_SLOTS];
	uint64_t begins, ends;
};

static uint32_t *fuzz_depth(struct fuzz_check *c, uint32_t pid, uint32_t tid)
{
	uint64_t k = ((uint64_t)pid << 32 | tid) + 1;
	for (uint32_t i = (uint32_t)(k * 0x9e3779b97f4a7c15u >> 52), n = 0; n < FUZZ_SLOTS;
	     i = (i + 1) % FUZZ_SLOTS, n++) {
		if (c->key[i] == k)
			return &c->depth[i];
		if (!c->key[i]) {
			c->key[i] = k;
			return &c->depth[i];
		}
	}
	return NULL;
}

static void fuzz_event(void *arg, const struct span_event *ev)
{
	struct fuzz_check *c = arg;
	if (ev->kind != SPAN_BEGIN && ev->kind != SPAN_END)
		return;
	uint32_t *d = fuzz_depth(c, ev->pid, ev->tid);
	if (ev->kind == SPAN_BEGIN) {
		c->begins++;
		if (d && ev->depth != (*d)++)
			abort();
	} else {
		c->ends++;
		if (ev->ts < ev->begin_ts || (d && (*d == 0 || ev->depth != --*d)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	unsigned flags = data[0];
	size_t n = size - 3, cut[4] = {0, n * data[1] / 256, n * data[2] / 256, n};
	if (cut[1] > cut[2]) {
		size_t t = cut[1];
		cut[1] = cut[2];
		cut[2] = t;
	}
	if ((flags & 3) == 0)
		cut[1] = cut[2] = n;
	else if ((flags & 3) == 1)
		cut[2] = n;
	const uint8_t *p = data + 3;

	struct span_clock clk = {
		.tsc0 = 1000, .mono0 = 1000000, .mult = 3u << 29, .shift = 31, .valid = 1};
	struct decoder *d = decoder_new(flags & 4 ? &clk : NULL);
	struct spantree st;
	struct fuzz_check *check = calloc(1, sizeof *check);
	if (!d || !check || spantree_init(&st) < 0)
		abort();
	decoder_add_sink(d, (struct span_sink){spantree_event, &st});
	decoder_add_sink(d, (struct span_sink){fuzz_event, check});
	for (int k = 0; k < 3; k++)
		decoder_feed(d, p + cut[k], cut[k + 1] - cut[k]);
	decoder_finish(d);
	const struct decode_stats *s = decoder_stats(d);
	if (check->begins != check->ends || check->ends != s->spans)
		abort();
	for (size_t i = 0; i < st.nthread; i++)
		if (st.thread[i]->depth != 0)
			abort();

	FILE *fp = fopen("/dev/null", "w");
	if (fp) {
		struct run_head h = {.strings = decoder_strings(d), .spans = true};
		struct report r = {.head = &h, .spans = &st, .dstats = s};
		struct writer w = {.ops = &folded_writer_ops, .fp = fp, .head = &h};
		w.opts.folded_threads = flags & 8;
		w.ops->finish(&w, &r);
		fclose(fp);
	}
	spantree_release(&st);
	decoder_free(d);
	free(check);
	return 0;
}
