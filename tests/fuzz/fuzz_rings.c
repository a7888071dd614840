/* fuzz_rings.c: libFuzzer target for the ring reader (lib/spans/ringsrc.c), which
 * reads memory the target can write anything into, with the decoder behind
 * it as in a real session.  Run by tests/fuzz/fuzz.mk after fuzz_decode.
 *
 * Input: RS_SLOTS slot entries (ring.h's struct ring_slot, 128 bytes each;
 * their state mapped onto FREE, OWNED, DONE, OWNED), then 8-byte words
 * for those slots' rings, RS_WORDS each, in turn (short inputs leave zeros);
 * a slot whose mode is RING_MODE_AGG gets the start of its aggregate area
 * (ring.h) after its words (which may hold its switched spans), and its
 * tree must come out as ringsrc.h promises.  The file carries RS_VALS values
 * per begin and end.  Each process named by a slot gets a HELLO, its
 * WIRE_VALUES and one name first.  Then a live
 * drain, a drain of the first slot's process as gone, and the end-of-stream
 * drain run; besides the sanitizers, every record handed over must be whole
 * (a valid header and length), and the reader must leave every slot it
 * freed FREE with tail 0. */
#include <stdint.h>
#include <string.h>

#include "decoder.h"
#include "encode.h"
#include "ring.h"
#include "ringsrc.h"

#define RS_SLOTS 4u
#define RS_WORDS 512u
#define RS_AGG_BYTES 4096u /* of each slot's aggregate area the input fills */
#define RS_VALS 2u

static struct ringsrc *fz_rings;

static int fz_record(void *ctx, const void *rec, size_t len)
{
	struct wire_hdr h;
	if (len < sizeof h)
		__builtin_trap();
	memcpy(&h, rec, sizeof h);
	if (h.len != len || h.magic != WIRE_MAGIC || h.check != wire_check(&h) || len % 8)
		__builtin_trap();
	return decoder_record(ctx, rec, len);
}

/* A tree handed over must be as ringsrc.h promises: parents earlier. */
static int fz_tree(void *ctx, const struct ringsrc_tree *t)
{
	(void)ctx;
	if (t->n < 1 || t->n > RING_AGG_NODES || t->depth > RING_AGG_DEPTH)
		__builtin_trap();
	for (uint32_t i = 1; i < t->n; i++)
		if (t->node[i].parent >= i)
			__builtin_trap();
	for (uint32_t k = 0; k < t->depth; k++)
		if (t->frame[k].node > t->n)
			__builtin_trap();
	if (t->nvals != RS_VALS || !t->vals || (t->nsw && !t->sw))
		__builtin_trap();
	uint64_t sum = 0; /* every value row and switched span readable */
	for (size_t k = 0; k < ((size_t)t->n + t->depth) * t->nvals; k++)
		sum += t->vals[k];
	for (size_t k = 0; k < t->nsw; k++)
		sum += t->sw[k].node + t->sw[k].begin + t->sw[k].end;
	return sum == 1 ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fz_rings) {
		if (ringsrc_new(&fz_rings, RS_VALS) != 0)
			return 0;
		ringsrc_set_tree_fn(fz_rings, fz_tree, NULL);
	}
	void *f = ringsrc_file(fz_rings);
	struct decoder *d = decoder_new(NULL);
	if (!d)
		return 0;
	static const uint32_t states[4] = {RING_FREE, RING_OWNED, RING_DONE, RING_OWNED};
	int followed[RS_SLOTS];
	for (unsigned i = 0; i < RS_SLOTS; i++) {
		struct ring_slot *s = ring_slot_at(f, i);
		size_t off = i * sizeof *s;
		memset(s, 0, sizeof *s);
		memset(ring_words_at(f, i), 0, RS_WORDS * 8);
		memset(ring_agg_at(f, i), 0, RS_AGG_BYTES);
		if (off < size)
			memcpy(s, data + off, size - off < sizeof *s ? size - off : sizeof *s);
		s->state = states[s->state % 4];
		s->tail = 0;
		followed[i] = s->state != RING_FREE;
		uint8_t rec[WIRE_MAX_RECORD];
		size_t n =
			enc_hello(rec, sizeof rec, s->pid, 1, WIRE_CLOCK_MONOTONIC, 1, 1, "p", 1);
		decoder_record(d, rec, n);
		struct wire_values wv = {RS_VALS, 0};
		n = enc_simple(rec, sizeof rec, WIRE_VALUES, s->pid, 0, &wv, sizeof wv);
		decoder_record(d, rec, n);
		n = enc_name(rec, sizeof rec, s->pid, 0, 1, WIRE_NAME_STRING, 0, 0, "a", 1);
		decoder_record(d, rec, n);
	}
	size_t at = RS_SLOTS * sizeof(struct ring_slot);
	for (unsigned i = 0; i < RS_SLOTS && at < size; i++) {
		/* words, then for a slot in aggregate mode its tree area */
		size_t n = size - at < RS_WORDS * 8 ? size - at : RS_WORDS * 8;
		memcpy(ring_words_at(f, i), data + at, n);
		at += n;
		if (ring_slot_at(f, i)->mode == RING_MODE_AGG && at < size) {
			n = size - at < RS_AGG_BYTES ? size - at : RS_AGG_BYTES;
			memcpy(ring_agg_at(f, i), data + at, n);
			at += n;
		}
	}
	uint32_t pid = ring_slot_at(f, 0)->pid;
	ringsrc_snapshot(fz_rings);
	ringsrc_drain_live(fz_rings, fz_record, d);
	ringsrc_drain_gone(fz_rings, pid, size ? data[0] : 0, fz_record, d);
	ringsrc_drain_gone(fz_rings, 0, 0, fz_record, d);
	decoder_finish(d);
	decoder_free(d);
	for (unsigned i = 0; i < RING_SLOTS; i++) { /* every ring freed and zero */
		struct ring_slot *s = ring_slot_at(f, i);
		if (s->state != RING_FREE || s->tail != 0)
			__builtin_trap();
		if (i < RS_SLOTS && followed[i])
			for (unsigned k = 0; k < RS_WORDS; k++)
				if (ring_words_at(f, i)[k])
					__builtin_trap();
	}
	return 0;
}
