/* test_ringsrc.c: the ring reader (lib/spans/ringsrc.c) against rings written the
 * way libspanstat writes them (ring.h): published words only while the
 * process lives, every word once it is gone, records split at absolute
 * timestamps, drops and thread exits, wrap-around, freeing, images told apart
 * by incarnation, and garbage that must never crash it. */
#include "config.h"
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "ringsrc.h"
#include "tap.h"

/* What the callback saw. */
struct seen {
	unsigned n;
	uint8_t type[64];
	uint32_t pid[64], tid[64];
	uint64_t base[64];
	uint32_t seq[64], dropped[64];
	size_t nwords[64];
	uint64_t word0[64];
	uint64_t all; /* every event word seen */
};

static int record(void *ctx, const void *rec, size_t len)
{
	struct seen *s = ctx;
	struct wire_hdr h;
	memcpy(&h, rec, sizeof h);
	if (h.len != len || h.check != wire_check(&h))
		return 0;
	const uint64_t *w = rec;
	if (h.type == WIRE_EVENTS)
		s->all += len / 8 - 4;
	if (s->n >= 64)
		return 0;
	unsigned i = s->n++;
	s->type[i] = h.type;
	s->pid[i] = h.pid;
	s->tid[i] = h.tid;
	s->base[i] = w[2];
	if (h.type == WIRE_EVENTS) {
		s->seq[i] = (uint32_t)w[3];
		s->dropped[i] = (uint32_t)(w[3] >> 32);
		s->nwords[i] = len / 8 - 4;
		s->word0[i] = len > 32 ? w[4] : 0;
	}
	return 0;
}

static uint64_t ev(enum wire_op op, uint32_t id, uint64_t delta)
{
	return wire_event(op, id, delta);
}

/* Claims slot i for (pid, tid) as a writer does. */
static uint64_t *claim(void *f, unsigned i, uint32_t pid, uint32_t tid, uint64_t inc, uint64_t base)
{
	struct ring_slot *s = ring_slot_at(f, i);
	s->pid = pid;
	s->tid = tid;
	s->incarnation = inc;
	s->base = base;
	s->head = 0;
	__atomic_store_n(&s->state, RING_OWNED, __ATOMIC_RELEASE);
	return ring_words_at(f, i);
}

/* What the tree callback saw. */
struct tseen {
	unsigned calls;
	struct ringsrc_tree t;
	struct ring_agg_node node[4];
	struct ring_agg_frame frame[2];
};

static int tree(void *ctx, const struct ringsrc_tree *t)
{
	struct tseen *ts = ctx;
	ts->calls++;
	ts->t = *t;
	memcpy(ts->node, t->node, (t->n < 4 ? t->n : 4) * sizeof *t->node);
	memcpy(ts->frame, t->frame, (t->depth < 2 ? t->depth : 2) * sizeof *t->frame);
	return 0;
}

static void live(struct ringsrc *r, struct seen *s)
{
	ringsrc_snapshot(r);
	ringsrc_drain_live(r, record, s);
}

int main(void)
{
	struct ringsrc *r;
	if (ringsrc_new(&r, 0) != 0) {
		ok(0, "ringsrc_new");
		return tap_done();
	}
	void *f = ringsrc_file(r);
	is_int(((struct ring_file *)f)->magic == RING_MAGIC, 1, "the file says what it is");
	is_int(ringsrc_active(r), 0, "no ring in use at first");

	/* published words only, while the process lives */
	struct seen s = {0};
	uint64_t *w = claim(f, 3, 100, 101, 7, 1000);
	struct ring_slot *slot = ring_slot_at(f, 3);
	w[0] = ev(WIRE_OP_BEGIN, 1, 10);
	w[1] = ev(WIRE_OP_END, 1, 5);
	w[2] = ev(WIRE_OP_BEGIN, 2, 1); /* stored, not published */
	slot->head = 2;
	live(r, &s);
	is_int(s.n, 1, "one record for the published words");
	is_int(s.type[0], WIRE_EVENTS, "an events record");
	is_int(s.pid[0] == 100 && s.tid[0] == 101, 1, "of the slot's thread");
	is_int(s.base[0], 1000, "based at the slot's base");
	is_int(s.nwords[0], 2, "with the two published words");
	is_int(s.word0[0] == ev(WIRE_OP_BEGIN, 1, 10), 1, "verbatim");
	is_int(slot->tail, 2, "tail moved past them");
	is_int(w[0] == 0 && w[1] == 0 && w[2] != 0, 1, "consumed words zeroed, the rest kept");
	is_int(ringsrc_active(r), 1, "one ring in use");

	/* an absolute timestamp splits records; drops come with the next one */
	w[3] = 7; /* the payload first, as the writer stores it */
	w[2 + 0] = ev(WIRE_OP_BEGIN, 2, 1);
	w[4] = ev(WIRE_OP_END, 2, 3);
	w[5] = RING_CTL(RING_CTL_TS);
	w[6] = 5000;
	w[7] = ev(WIRE_OP_INSTANT, 3, 2);
	w[8] = RING_CTL(RING_CTL_DROPPED);
	w[9] = 9;
	w[10] = ev(WIRE_OP_COUNTER, 4, 1);
	w[11] = (uint64_t)-5;
	slot->head = 12;
	memset(&s, 0, sizeof s);
	live(r, &s);
	/* w[2] BEGIN 2, w[3] = 7 is not a word of its own: it is garbage here,
	 * read as an event (id 0) and left to the decoder to refuse */
	is_int(s.n, 3, "three records: before the ts, after it, after the drop news");
	is_int(s.base[1], 5000, "the second starts at the absolute ts");
	is_int(s.seq[0] + 1 == s.seq[1] && s.seq[1] + 1 == s.seq[2], 1, "numbered in order");
	is_int(s.dropped[2], 9, "the drops come with the next record");
	is_int(s.nwords[2], 2, "a counter keeps its value word");

	/* the thread ends: a thread-exit record, the slot goes back */
	w[12] = RING_CTL(RING_CTL_EXIT);
	w[13] = 6000;
	slot->head = 14;
	__atomic_store_n(&slot->state, RING_DONE, __ATOMIC_RELEASE);
	memset(&s, 0, sizeof s);
	live(r, &s);
	is_int(s.n, 1, "one record at the thread's end");
	is_int(s.type[0], WIRE_THREAD_EXIT, "a thread exit");
	is_int(s.base[0], 6000, "at the exit's ts");
	is_int(slot->state, RING_FREE, "the slot is free again");
	is_int(slot->tail == 0 && w[12] == 0 && w[13] == 0, 1, "zeroed, tail reset");
	is_int(ringsrc_active(r), 0, "no ring in use");

	/* a ring that wraps: NOP at the end, the next lap from the start */
	w = claim(f, 5, 200, 201, 9, 0);
	slot = ring_slot_at(f, 5);
	for (unsigned i = 0; i + 1 < RING_WORDS; i += 2) {
		w[i] = ev(WIRE_OP_BEGIN, 1, 1);
		w[i + 1] = ev(WIRE_OP_END, 1, 1);
	}
	w[RING_WORDS - 2] = RING_CTL(RING_CTL_NOP);
	w[RING_WORDS - 1] = RING_CTL(RING_CTL_NOP);
	slot->head = RING_WORDS;
	memset(&s, 0, sizeof s);
	live(r, &s);
	is_int(s.all, RING_WORDS - 2, "a whole lap, the NOPs skipped");
	w[1] = 42;
	w[0] = ev(WIRE_OP_COUNTER, 5, 1);
	slot->head = RING_WORDS + 2;
	memset(&s, 0, sizeof s);
	live(r, &s);
	is_int(s.all, 2, "the next lap from the start");
	is_int(slot->tail, RING_WORDS + 2, "tail counts laps");

	/* unpublished words arrive once the process is gone */
	w[2] = ev(WIRE_OP_BEGIN, 1, 1);
	w[3] = ev(WIRE_OP_END, 1, 1);
	memset(&s, 0, sizeof s);
	live(r, &s);
	is_int(s.all, 0, "not while it lives");
	ringsrc_drain_gone(r, 200, 0, record, &s);
	is_int(s.all, 2, "all of them when it is gone (SIGKILL)");
	is_int(slot->state, RING_FREE, "and the slot is free");

	/* exec: a new image's HELLO drains the older image's rings only */
	claim(f, 7, 300, 300, 10, 0)[0] = ev(WIRE_OP_BEGIN, 1, 1);
	claim(f, 8, 300, 300, 20, 0)[0] = ev(WIRE_OP_BEGIN, 1, 1);
	memset(&s, 0, sizeof s);
	ringsrc_drain_gone(r, 300, 20, record, &s);
	is_int(s.all, 1, "the old image's word");
	is_int(ring_slot_at(f, 7)->state == RING_FREE && ring_slot_at(f, 8)->state == RING_OWNED, 1,
	       "the old image's ring freed, the new one's kept");
	ringsrc_drain_gone(r, 0, 0, record, &s);
	is_int(ring_slot_at(f, 8)->state, RING_FREE, "the end of the stream frees every ring");

	/* a tid given again: the ended thread's slot (a later one) is drained,
	 * its end among them, before its successor's first record */
	w = claim(f, 20, 400, 401, 30, 1000);
	slot = ring_slot_at(f, 20);
	w[0] = ev(WIRE_OP_BEGIN, 1, 1);
	slot->head = 1;
	memset(&s, 0, sizeof s);
	live(r, &s);
	w[1] = ev(WIRE_OP_END, 1, 1);
	w[2] = RING_CTL(RING_CTL_EXIT);
	w[3] = 1500;
	uint64_t *w2 = claim(f, 19, 400, 401, 30, 2000);
	w2[0] = ev(WIRE_OP_BEGIN, 2, 1);
	ring_slot_at(f, 19)->head = 1;
	ringsrc_snapshot(r); /* its head read before the earlier thread's end */
	slot->head = 4;
	__atomic_store_n(&slot->state, RING_DONE, __ATOMIC_RELEASE);
	ringsrc_drain_live(r, record, &s);
	is_int(s.n, 1, "the later thread waits while the earlier one's end is unread");
	live(r, &s);
	is_int(s.n, 4, "then the earlier thread's record, its exit, the later thread's");
	is_int(s.type[2] == WIRE_THREAD_EXIT && s.type[3] == WIRE_EVENTS && s.base[3] == 2000, 1,
	       "the earlier thread ends before the later one's first record");
	is_int(s.seq[3], 0, "which starts its own sequence");
	is_int(slot->state, RING_FREE, "the earlier slot is free");
	/* once gone, each slot of the tid comes in the order they were taken */
	w2[1] = ev(WIRE_OP_END, 2, 1);
	claim(f, 22, 400, 401, 30, 3000)[0] = ev(WIRE_OP_BEGIN, 3, 1);
	claim(f, 23, 400, 401, 30, 2500)[0] = ev(WIRE_OP_BEGIN, 4, 1);
	memset(&s, 0, sizeof s);
	ringsrc_drain_gone(r, 400, 0, record, &s);
	unsigned k23 = 0, k22 = 0;
	for (unsigned k = 0; k < s.n; k++) {
		k23 = s.type[k] == WIRE_EVENTS && s.base[k] == 2500 ? k + 1 : k23;
		k22 = s.type[k] == WIRE_EVENTS && s.base[k] == 3000 ? k + 1 : k22;
	}
	is_int(s.n == 5 && s.base[0] == 2001, 1, "gone: the slot taken first, first");
	is_int(k23 && k22 && k23 < k22, 1, "and each slot before the one claimed after it");
	is_int(s.type[1] == WIRE_THREAD_EXIT && s.type[k23] == WIRE_THREAD_EXIT, 1,
	       "each thread gone without its end before its successor is ended there");

	/* live, a thread gone without its end (the exit system call: its slot
	 * stays owned), its tid given again: its words stored after the head it
	 * published, then its end where it was last seen, then its successor's */
	w = claim(f, 41, 600, 601, 50, 100);
	w[0] = ev(WIRE_OP_BEGIN, 1, 1);
	ring_slot_at(f, 41)->head = 1;
	memset(&s, 0, sizeof s);
	live(r, &s);
	w[1] = ev(WIRE_OP_END, 1, 4); /* stored, never published */
	claim(f, 40, 600, 601, 50, 900)[0] = ev(WIRE_OP_BEGIN, 2, 1);
	ring_slot_at(f, 40)->head = 1;
	live(r, &s);
	is_int(s.n, 4, "gone without its end: its last words, its end, its successor's");
	is_int(s.nwords[1] == 1 && s.type[2] == WIRE_THREAD_EXIT && s.base[2] == 105 &&
		       s.base[3] == 900 && s.seq[3] == 0,
	       1, "ended where it was last seen, before its successor's first record");
	live(r, &s);
	is_int(s.n, 4, "its end said once");
	ringsrc_drain_gone(r, 600, 0, record, &s);
	is_int(ring_slot_at(f, 41)->state == RING_FREE && ring_slot_at(f, 40)->state == RING_FREE,
	       1, "both slots free once the process is gone");

	/* a tid given three times before a read, the slots taken in an order
	 * the table's does not follow (the claims wrapped past its end): each
	 * thread's words and end come before its successor's, not only before
	 * its immediate successor's */
	static const unsigned tslot[3] = {30, 29, 28}; /* taken in that order */
	for (unsigned k = 0; k < 3; k++) {
		uint64_t *t = claim(f, tslot[k], 500, 501, 40, 100 * (k + 1));
		t[0] = ev(WIRE_OP_BEGIN, 1, 1);
		t[1] = ev(WIRE_OP_END, 1, 1);
		t[2] = RING_CTL(RING_CTL_EXIT);
		t[3] = 100 * (k + 1) + 50;
		ring_slot_at(f, tslot[k])->head = 4;
		__atomic_store_n(&ring_slot_at(f, tslot[k])->state, RING_DONE, __ATOMIC_RELEASE);
	}
	memset(&s, 0, sizeof s);
	live(r, &s);
	is_int(s.n, 6, "three threads of one tid: a record and an end each");
	is_int(s.base[0] == 100 && s.type[1] == WIRE_THREAD_EXIT && s.base[2] == 200 &&
		       s.type[3] == WIRE_THREAD_EXIT && s.base[4] == 300,
	       1, "in the order the tid was given, the first one's end before the second's words");
	is_int(ring_slot_at(f, 28)->state == RING_FREE && ring_slot_at(f, 30)->state == RING_FREE,
	       1, "their slots free");

	/* aggregate mode: the thread's tree, handed over once it ended */
	struct tseen ts = {0};
	ringsrc_set_tree_fn(r, tree, &ts);
	claim(f, 9, 400, 401, 1, 10);
	ring_slot_at(f, 9)->mode = RING_MODE_AGG;
	struct ring_agg *a = ring_agg_at(f, 9);
	struct ring_agg_node *nd = ring_agg_nodes(a);
	nd[1] = (struct ring_agg_node){.id = 1, .parent = 0, .count = 5, .total = 100};
	nd[2] = (struct ring_agg_node){
		.id = 2, .parent = 1, .count = 3, .total = 30, .unfinished = 1};
	nd[3] = (struct ring_agg_node){.id = 3, .parent = 7, .count = 1}; /* a bad parent */
	ring_agg_frames(a)[0] = (struct ring_agg_frame){.node = 1, .id = 1, .ts = 50};
	ring_agg_frames(a)[1] = (struct ring_agg_frame){.node = 99, .id = 1, .ts = 60};
	a->nodes = 4;
	a->depth = 2;
	a->last_ts = 90;
	a->instants = 2;
	memset(&s, 0, sizeof s);
	live(r, &s);
	is_int(ts.calls, 0, "no tree while the thread runs");
	__atomic_store_n(&ring_slot_at(f, 9)->state, RING_DONE, __ATOMIC_RELEASE);
	live(r, &s);
	is_int(ts.calls, 1, "the tree once the thread ended");
	is_int(ts.t.pid == 400 && ts.t.tid == 401 && ts.t.n == 4 && ts.t.depth == 2, 1,
	       "of its thread, every node and open span");
	is_int(ts.t.first_ts == 10 && ts.t.last_ts == 90 && ts.t.instants == 2, 1,
	       "its extent and instants");
	is_int(ts.node[2].count == 3 && ts.node[2].total == 30 && ts.node[2].unfinished == 1, 1,
	       "node values as the target left them");
	is_int(ts.node[3].parent, 0, "a parent that is not earlier becomes the root");
	is_int(ts.frame[1].node, 4, "a frame naming no node is marked untracked (n)");
	is_int(s.n, 0, "and no event record");
	is_int(ring_slot_at(f, 9)->state == RING_FREE && a->nodes == 0 && nd[1].count == 0, 1,
	       "the slot free, its tree zeroed");
	is_int(ts.t.ended, 1, "a thread that said it ended: its last ts is its end");
	/* a thread gone with its process, never said it ended */
	claim(f, 9, 400, 402, 1, 10);
	ring_slot_at(f, 9)->mode = RING_MODE_AGG;
	a->nodes = 1;
	a->last_ts = 20;
	ringsrc_drain_gone(r, 400, 0, record, &s);
	is_int(ts.calls == 2 && ts.t.tid == 402 && !ts.t.ended, 1,
	       "a thread gone with its process: not ended by itself");
	ringsrc_set_tree_fn(r, NULL, NULL);

	/* garbage: random slot tables and words never crash the reader, and
	 * every record it makes is whole */
	srand(1);
	for (int round = 0; round < 200; round++) {
		for (unsigned i = 0; i < 4; i++) {
			struct ring_slot *g = ring_slot_at(f, i);
			uint64_t *gw = ring_words_at(f, i);
			for (unsigned k = 0; k < 64; k++)
				gw[(unsigned)rand() % RING_WORDS] = ((uint64_t)rand() << 33) ^
								    ((uint64_t)rand() << 11) ^
								    (uint64_t)rand();
			g->head = ((uint64_t)rand() << 20) ^ (uint64_t)rand();
			g->pid = (uint32_t)rand();
			g->state = (uint32_t)rand() % 5;
		}
		memset(&s, 0, sizeof s);
		live(r, &s);
		if (round % 7 == 0)
			ringsrc_drain_gone(r, 0, 0, record, &s);
	}
	ok(1, "200 rounds of garbage survived");
	ringsrc_free(r);
	return tap_done();
}
