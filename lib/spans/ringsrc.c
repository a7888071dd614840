/* ringsrc.c: the ring reader (ringsrc.h, format in ring.h).  For each slot it
 * keeps its own read position, the running timestamp and the numbering of
 * the records it makes, all taken from the slot when it first sees the slot
 * owned; after that nothing in the file is believed beyond one word at a time,
 * and every word becomes part of a record the decoder validates.  Consumed
 * words are zeroed before `tail` moves past them; a freed ring is punched
 * out of the file (its pages return to the system, and read as zeros). */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "grow.h"
#include "encode.h"
#include "ring.h"
#include "ringsrc.h"

#define RS_MAX_WORDS ENC_EVENTS_MAX_WORDS /* event words per record made */
#define RS_ENDED_SAID 2			  /* rs_slot.ended */
#define RS_RELEASE 4096u		  /* words consumed between moves of tail */

/* What the reader knows of one slot. */
struct rs_slot {
	int active; /* seen owned, not freed yet */
	int ended;  /* its RING_CTL_EXIT was consumed (RS_ENDED_SAID: the
		     * reader said its end, the thread gone without it) */
	uint32_t pid, tid;
	uint64_t incarnation;
	uint64_t r;		     /* stream index of the next word to consume */
	uint64_t last;		     /* the timestamp the next delta is from */
	uint64_t snap;		     /* head as ringsrc_snapshot read it */
	uint32_t seq;		     /* of the next record made */
	uint32_t dropped;	     /* cumulative, as the thread last told */
	uint32_t told;		     /* `dropped` as of the last record made */
	uint32_t mode;		     /* enum ring_mode, as first seen */
	uint64_t base;		     /* the slot's base, as first seen */
	unsigned older;		     /* 1 + the slot of this thread's tid before it */
	struct ringsrc_switched *sw; /* aggregate mode: its switched spans so far */
	size_t nsw, capsw;
};

struct ringsrc {
	int fd;
	void *map;
	uint64_t size;	 /* of the file */
	unsigned nvals;	 /* values after each begin and end */
	uint64_t *tvals; /* a checked copy of a tree's values */
	struct rs_slot slot[RING_SLOTS];
	uint64_t rec[WIRE_MAX_RECORD / 8]; /* the record being made */
	size_t nwords;			   /* its event words so far */
	uint64_t base;			   /* its base timestamp */
	ringsrc_tree_fn tree_fn;
	void *tree_ctx;
	struct ring_agg_node *tnode; /* a checked copy of a tree */
	struct ring_agg_frame *tframe;
};

int ringsrc_new(struct ringsrc **out, unsigned nvals)
{
	if (nvals > 64)
		return -EINVAL;
	struct ringsrc *r = calloc(1, sizeof *r);
	if (!r)
		return -ENOMEM;
	r->nvals = nvals;
	r->size = ring_file_bytes(nvals);
	r->fd = memfd_create("spanstat-rings", MFD_CLOEXEC);
	if (r->fd < 0 || ftruncate(r->fd, (off_t)r->size) != 0) {
		int e = errno;
		if (r->fd >= 0)
			close(r->fd);
		free(r);
		return -e;
	}
	r->map = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->map == MAP_FAILED) {
		int e = errno;
		close(r->fd);
		free(r);
		return -e;
	}
	struct ring_file *f = r->map;
	f->slots = RING_SLOTS;
	f->words = RING_WORDS;
	f->vals = nvals;
	__atomic_store_n(&f->magic, RING_MAGIC, __ATOMIC_RELEASE);
	*out = r;
	return 0;
}

void ringsrc_set_layout(struct ringsrc *r, uint32_t layout)
{
	((struct ring_file *)r->map)->layout = layout;
}

void ringsrc_set_tree_fn(struct ringsrc *r, ringsrc_tree_fn fn, void *ctx)
{
	r->tree_fn = fn;
	r->tree_ctx = ctx;
}

void ringsrc_free(struct ringsrc *r)
{
	if (!r)
		return;
	free(r->tnode);
	free(r->tframe);
	free(r->tvals);
	for (unsigned i = 0; i < RING_SLOTS; i++)
		free(r->slot[i].sw);
	munmap(r->map, r->size);
	close(r->fd);
	free(r);
}

void *ringsrc_file(struct ringsrc *r)
{
	return r->map;
}

int ringsrc_fd(const struct ringsrc *r)
{
	return r->fd;
}

unsigned ringsrc_active(const struct ringsrc *r)
{
	unsigned n = 0;
	for (unsigned i = 0; i < RING_SLOTS; i++) {
		struct ring_slot *s = ring_slot_at(r->map, i);
		uint32_t st = __atomic_load_n(&s->state, __ATOMIC_RELAXED);
		n += st == RING_OWNED || st == RING_DONE || r->slot[i].active;
	}
	return n;
}

uint64_t ringsrc_late(const struct ringsrc *r)
{
	const struct ring_file *f = r->map;
	return __atomic_load_n(&f->late, __ATOMIC_RELAXED);
}

/* Hands the record in progress to fn (when it has words, or news of drops). */
static int rs_emit(struct ringsrc *r, struct rs_slot *q, ringsrc_fn fn, void *ctx)
{
	if (!r->nwords && q->dropped == q->told)
		return 0;
	size_t len =
		enc_events_close(r->rec, q->pid, q->tid, r->base, q->seq++, q->dropped, r->nwords);
	q->told = q->dropped;
	r->nwords = 0;
	r->base = q->last;
	return fn(ctx, r->rec, len);
}

static int rs_thread_exit(struct rs_slot *q, uint64_t ts, ringsrc_fn fn, void *ctx)
{
	uint64_t rec[3];
	size_t len = enc_simple(rec, sizeof rec, WIRE_THREAD_EXIT, q->pid, q->tid, &ts, sizeof ts);
	q->ended = 1;
	return fn(ctx, rec, len);
}

static int rs_resync(struct rs_slot *q, const struct wire_resync *rs, ringsrc_fn fn, void *ctx)
{
	uint64_t rec[4];
	size_t len = enc_simple(rec, sizeof rec, WIRE_RESYNC, q->pid, q->tid, rs, sizeof *rs);
	return fn(ctx, rec, len);
}

/* Zeroes the ring's words [from, to) (stream indexes, at most a lap). */
static void rs_zero(uint64_t *ring, uint64_t from, uint64_t to)
{
	while (from < to) {
		uint64_t i = from % RING_WORDS, n = RING_WORDS - i;
		if (n > to - from)
			n = to - from;
		memset(&ring[i], 0, n * 8);
		from += n;
	}
}

/* The slot goes back to the writers, its ring all zeros. */
static void rs_free(struct ringsrc *r, unsigned i)
{
	struct ring_slot *s = ring_slot_at(r->map, i);
	uint64_t *ring = ring_words_at(r->map, i);
	off_t off = (off_t)((char *)ring - (char *)r->map);
	if (fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
		      (off_t)RING_WORDS * 8) != 0)
		memset(ring, 0, (size_t)RING_WORDS * 8);
	if (r->slot[i].mode == RING_MODE_AGG) {
		struct ring_agg *a = ring_agg_at(r->map, i);
		off = (off_t)((char *)a - (char *)r->map);
		if (fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
			      (off_t)RING_AGG_BYTES) != 0)
			memset(a, 0, RING_AGG_BYTES);
		if (r->nvals) {
			uint64_t *v = ring_vals_at(r->map, i, r->nvals);
			off = (off_t)((char *)v - (char *)r->map);
			if (fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
				      (off_t)ring_vals_bytes(r->nvals)) != 0)
				memset(v, 0, ring_vals_bytes(r->nvals));
		}
	}
	free(r->slot[i].sw);
	__atomic_store_n(&s->mode, RING_MODE_EVENTS, __ATOMIC_RELAXED);
	__atomic_store_n(&s->tail, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->head, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->kicked, 0, __ATOMIC_RELAXED);
	memset(&r->slot[i], 0, sizeof r->slot[i]);
	__atomic_store_n(&s->state, RING_FREE, __ATOMIC_RELEASE);
}

/* Starts following slot i if it is owned and we do not yet; 1: followed. */
static int rs_follow(struct ringsrc *r, unsigned i)
{
	struct rs_slot *q = &r->slot[i];
	if (q->active)
		return 1;
	struct ring_slot *s = ring_slot_at(r->map, i);
	uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	if (st != RING_OWNED && st != RING_DONE)
		return 0;
	q->active = 1;
	q->pid = s->pid;
	q->tid = s->tid;
	q->incarnation = s->incarnation;
	q->last = q->base = s->base;
	q->mode = __atomic_load_n(&s->mode, __ATOMIC_RELAXED) == RING_MODE_AGG ? RING_MODE_AGG
									       : RING_MODE_EVENTS;
	q->r = 0; /* writers start where a freed slot's tail is: 0 */
	return 1;
}

/* Hands slot i's tree (aggregate mode) over, checked, from a copy. */
static int rs_tree(struct ringsrc *r, unsigned i)
{
	struct rs_slot *q = &r->slot[i];
	struct ring_agg *a = ring_agg_at(r->map, i);
	if (!r->tree_fn)
		return 0;
	if (!r->tnode) {
		r->tnode = malloc(RING_AGG_NODES * sizeof *r->tnode);
		r->tframe = malloc(RING_AGG_DEPTH * sizeof *r->tframe);
		if (r->nvals)
			r->tvals = malloc(ring_vals_bytes(r->nvals));
		if (!r->tnode || !r->tframe || (r->nvals && !r->tvals))
			return -ENOMEM;
	}
	struct ring_agg h;
	memcpy(&h, a, sizeof h);
	struct ringsrc_tree t = {.pid = q->pid,
				 .tid = q->tid,
				 .first_ts = q->base,
				 .last_ts = h.last_ts,
				 .instants = h.instants,
				 .counters = h.counters,
				 .unmatched = h.unmatched,
				 .untracked = h.untracked,
				 .deep = h.deep,
				 .dropped = h.dropped,
				 .args = h.args,
				 .n = h.nodes,
				 .depth = h.depth,
				 .node = r->tnode,
				 .frame = r->tframe,
				 .nvals = r->nvals,
				 .vals = r->tvals,
				 .sw = q->sw,
				 .nsw = q->nsw,
				 .ended = 0};
	t.ended = __atomic_load_n(&ring_slot_at(r->map, i)->state, __ATOMIC_ACQUIRE) == RING_DONE;
	if (t.n > RING_AGG_NODES)
		t.n = RING_AGG_NODES;
	if (t.n == 0)
		t.n = 1;
	if (t.depth > RING_AGG_DEPTH)
		t.depth = RING_AGG_DEPTH;
	memcpy(r->tnode, ring_agg_nodes(a), t.n * sizeof *r->tnode);
	memcpy(r->tframe, ring_agg_frames(a), t.depth * sizeof *r->tframe);
	if (r->nvals) { /* node rows, then the open frames' rows (and one) right after */
		const uint64_t *v = ring_vals_at(r->map, i, r->nvals);
		size_t rows = t.depth < RING_AGG_DEPTH ? t.depth + 1u : t.depth;
		memcpy(r->tvals, v, (size_t)t.n * r->nvals * 8);
		memcpy(r->tvals + (size_t)t.n * r->nvals, v + (size_t)RING_AGG_NODES * r->nvals,
		       rows * r->nvals * 8);
	}
	r->tnode[0].id = 0;
	r->tnode[0].parent = 0;
	for (uint32_t k = 1; k < t.n; k++)
		if (r->tnode[k].parent >= k) /* not as the writer makes them */
			r->tnode[k].parent = 0;
	for (uint32_t k = 0; k < t.depth; k++)
		if (r->tframe[k].node == 0 || r->tframe[k].node > t.n)
			r->tframe[k].node = t.n;
	return r->tree_fn(r->tree_ctx, &t);
}

/* Keeps a switched span of an aggregating thread for its tree. */
static int rs_switched(struct rs_slot *q, uint32_t node, uint64_t begin, uint64_t end)
{
	if (q->nsw >= (1u << 24)) /* a target filling it with garbage */
		return 0;
	if (GROW(q->sw, q->nsw + 1, q->capsw, 64) < 0)
		return -ENOMEM;
	q->sw[q->nsw++] = (struct ringsrc_switched){node, begin, end};
	return 0;
}

/* Consumes slot i's words from q->r up to `end` (stream index), stopping at
 * the first word not written yet.  Returns fn's non-zero, else 0. */
static int rs_consume(struct ringsrc *r, unsigned i, uint64_t end, ringsrc_fn fn, void *ctx)
{
	struct rs_slot *q = &r->slot[i];
	struct ring_slot *s = ring_slot_at(r->map, i);
	uint64_t *ring = ring_words_at(r->map, i);
	uint64_t k = q->r;
	int rc = 0;
	if (end > k + RING_WORDS)
		end = k + RING_WORDS;
	r->nwords = 0;
	r->base = q->last;
	while (k < end && !q->ended) {
		uint64_t w = __atomic_load_n(&ring[k % RING_WORDS], __ATOMIC_ACQUIRE);
		if (!w)
			break;
		unsigned op = (unsigned)(w >> WIRE_OP_SHIFT);
		if (RING_IS_CTL(w)) {
			uint64_t code = w & WIRE_DELTA_MASK;
			if (code == RING_CTL_NOP) {
				k++;
				continue;
			}
			if ((code & 0xff) == RING_CTL_WAITED || (code & 0xff) == RING_CTL_POP ||
			    (code & 0xff) == RING_CTL_POPTO ||
			    (code & 0xff) == RING_CTL_ARG) { /* the decoder's: passed on */
				if (k + 2 > end || (k % RING_WORDS) + 2 > RING_WORDS)
					break;
				if (r->nwords + 2 > RS_MAX_WORDS &&
				    (rc = rs_emit(r, q, fn, ctx)) != 0)
					break;
				uint64_t *out = &r->rec[ENC_EVENTS_FIRST_WORD + r->nwords];
				out[0] = w;
				out[1] = __atomic_load_n(&ring[(k + 1) % RING_WORDS],
							 __ATOMIC_RELAXED);
				r->nwords += 2;
				k += 2;
				continue;
			}
			unsigned pl = (code & 0xff) == RING_CTL_SWITCHED ? 2 : 1;
			if (k + pl >= end || (k % RING_WORDS) + pl >= RING_WORDS)
				break; /* its payload is not there (or would wrap: bad) */
			uint64_t v = __atomic_load_n(&ring[(k + 1) % RING_WORDS], __ATOMIC_RELAXED);
			if ((code & 0xff) == RING_CTL_SWITCHED) {
				uint64_t e = __atomic_load_n(&ring[(k + 2) % RING_WORDS],
							     __ATOMIC_RELAXED);
				k += 3;
				if (q->mode == RING_MODE_AGG &&
				    rs_switched(q, (uint32_t)(code >> 8), v, e) < 0) {
					rc = -ENOMEM;
					break;
				}
				continue;
			}
			if ((rc = rs_emit(r, q, fn, ctx)) != 0)
				break;
			k += 2;
			if (code == RING_CTL_TS) {
				q->last = r->base = v;
			} else if (code == RING_CTL_DROPPED) {
				q->dropped = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
			} else if ((code & 0xff) == RING_CTL_RESYNC) {
				/* told in its own record: the next carry the same total */
				struct wire_resync rs = {(uint32_t)v, (uint32_t)(v >> 32),
							 (uint32_t)(code >> 8), 0};
				q->dropped = q->told = rs.dropped;
				if ((rc = rs_resync(q, &rs, fn, ctx)) != 0)
					break;
			} else if (code == RING_CTL_UNNAMED) { /* the tale's end */
				struct wire_resync rs = {q->told, UINT32_MAX, 0,
							 v > UINT32_MAX ? UINT32_MAX : (uint32_t)v};
				if ((rc = rs_resync(q, &rs, fn, ctx)) != 0)
					break;
			} else if (code == RING_CTL_EXIT) {
				rc = rs_thread_exit(q, v, fn, ctx);
				break;
			}
			continue; /* an unknown code: skipped with its payload */
		}
		unsigned need = op == WIRE_OP_COUNTER ? 2 : op <= WIRE_OP_END ? 1 + r->nvals : 1;
		if (need > 1 && (k + need > end || (k % RING_WORDS) + need > RING_WORDS))
			break;
		if (r->nwords + need > RS_MAX_WORDS && (rc = rs_emit(r, q, fn, ctx)) != 0)
			break;
		uint64_t *out = &r->rec[ENC_EVENTS_FIRST_WORD + r->nwords];
		out[0] = w;
		for (unsigned j = 1; j < need; j++)
			out[j] = __atomic_load_n(&ring[(k + j) % RING_WORDS], __ATOMIC_RELAXED);
		r->nwords += need;
		q->last += w & WIRE_DELTA_MASK;
		k += need;
		if (k - q->r >= RS_RELEASE) { /* a writer may be waiting for room */
			rs_zero(ring, q->r, k);
			q->r = k;
			__atomic_store_n(&s->tail, k, __ATOMIC_RELEASE);
		}
	}
	if (!rc)
		rc = rs_emit(r, q, fn, ctx);
	rs_zero(ring, q->r, k);
	q->r = k;
	__atomic_store_n(&s->tail, k, __ATOMIC_RELEASE);
	__atomic_store_n(&s->kicked, 0, __ATOMIC_RELAXED);
	return rc;
}

/* The slot, still followed, that an earlier thread of slot i's pid and tid
 * owned (the kernel gave the tid again once that thread was gone), or -1. */
static int rs_older(struct ringsrc *r, unsigned i)
{
	struct rs_slot *q = &r->slot[i];
	if (!q->older)
		return -1;
	const struct rs_slot *o = &r->slot[q->older - 1];
	if (o->active && o->pid == q->pid && o->tid == q->tid && o->base < q->base)
		return (int)q->older - 1;
	q->older = 0; /* drained and freed since (or taken by another) */
	return -1;
}

/* Slot i, followed for the first time: the slot an earlier thread of the
 * same tid and image (an exec's are drained at its HELLO) still holds, whose
 * words come first (its THREAD_EXIT, then this thread's first record); the
 * latest such, by base. */
static void rs_link_older(struct ringsrc *r, unsigned i)
{
	struct rs_slot *q = &r->slot[i];
	for (unsigned j = 0; j < RING_SLOTS; j++) {
		const struct rs_slot *o = &r->slot[j];
		if (j == i || !o->active || o->pid != q->pid || o->tid != q->tid ||
		    o->incarnation != q->incarnation || o->base >= q->base)
			continue;
		if (!q->older || o->base > r->slot[q->older - 1].base)
			q->older = j + 1;
	}
}

/* Follows every owned slot (reading its head when `snap`), each followed
 * for the first time linked to the earlier thread of its tid. */
static void rs_follow_all(struct ringsrc *r, int snap)
{
	unsigned fresh[RING_SLOTS], nfresh = 0;
	for (unsigned i = 0; i < RING_SLOTS; i++) {
		int was = r->slot[i].active;
		if (!rs_follow(r, i))
			continue;
		if (!was)
			fresh[nfresh++] = i;
		if (snap)
			r->slot[i].snap =
				__atomic_load_n(&ring_slot_at(r->map, i)->head, __ATOMIC_ACQUIRE);
	}
	for (unsigned k = 0; k < nfresh; k++)
		rs_link_older(r, fresh[k]);
}

void ringsrc_snapshot(struct ringsrc *r)
{
	rs_follow_all(r, 1);
}

/* Slot i's words up to the head the snapshot read (an aggregating thread's
 * all of them, and its tree, once it ended); the slot is freed once its
 * thread's end was consumed. */
static int rs_drain_one(struct ringsrc *r, unsigned i, ringsrc_fn fn, void *ctx)
{
	struct rs_slot *q = &r->slot[i];
	if (q->mode == RING_MODE_AGG) {
		struct ring_slot *s = ring_slot_at(r->map, i);
		int done = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == RING_DONE;
		int rc = 0;
		if (done || q->snap > q->r)
			rc = rs_consume(r, i, done ? q->r + RING_WORDS : q->snap, fn, ctx);
		if (rc || !done)
			return rc;
		rc = rs_tree(r, i);
		rs_free(r, i);
		return rc;
	}
	if (q->snap <= q->r)
		return 0;
	int rc = rs_consume(r, i, q->snap, fn, ctx);
	if (q->ended == 1)
		rs_free(r, i);
	return rc;
}

/* Whether slot i's thread ended with words the reader has not consumed yet
 * (its head is final then: the next snapshot reads it whole). */
static int rs_unread_end(struct ringsrc *r, unsigned i)
{
	const struct ring_slot *s = ring_slot_at(r->map, i);
	return r->slot[i].active && __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == RING_DONE &&
	       __atomic_load_n(&s->head, __ATOMIC_ACQUIRE) > r->slot[i].r;
}

/* Slot i's words as rs_drain_one, after those of every earlier thread of
 * its tid (a tid given more than once: slot i may lie before them in the
 * table, as when the claims wrapped past its end).  *wait: set when an
 * earlier one's end is not consumed yet (slot i then waits a round). */
static int rs_live_one(struct ringsrc *r, unsigned i, int *wait, ringsrc_fn fn, void *ctx)
{
	/* the links go to strictly earlier bases: at most RING_SLOTS deep */
	int o = rs_older(r, i);
	if (o >= 0) {
		struct rs_slot *p = &r->slot[o];
		const struct ring_slot *ps = ring_slot_at(r->map, (unsigned)o);
		/* its thread is gone (its tid was given again) without its
		 * end (the exit system call): the words it stored after the
		 * head it last published come now, before its successor's */
		int gone = p->mode == RING_MODE_EVENTS && !p->ended &&
			   __atomic_load_n(&ps->state, __ATOMIC_ACQUIRE) == RING_OWNED;
		if (gone)
			p->snap = p->r + RING_WORDS;
		int rc = rs_live_one(r, (unsigned)o, wait, fn, ctx);
		/* and its end, where it was last seen: its successor starts a
		 * thread of its own, not a sequence gone back (a record lost);
		 * the slot stays followed until its process is gone */
		if (!rc && gone && !*wait && !p->ended &&
		    (rc = rs_thread_exit(p, p->last, fn, ctx)) == 0)
			p->ended = RS_ENDED_SAID;
		if (rc)
			return rc;
		if (*wait || rs_unread_end(r, (unsigned)o)) {
			*wait = 1;
			return 0;
		}
	}
	return rs_drain_one(r, i, fn, ctx);
}

int ringsrc_drain_live(struct ringsrc *r, ringsrc_fn fn, void *ctx)
{
	for (unsigned i = 0; i < RING_SLOTS; i++) {
		if (!r->slot[i].active)
			continue;
		/* a tid given again: the earlier threads' words (their ends
		 * among them) come first; when the head read missed one's end
		 * (it ended, so the next read has it), the later ones wait */
		int wait = 0, rc = rs_live_one(r, i, &wait, fn, ctx);
		if (rc)
			return rc;
	}
	return 0;
}

/* Slot i of a thread gone, all its words (and its tree): after those of
 * the earlier threads of its tid (`before`: it is one of those). */
static int rs_gone_one(struct ringsrc *r, unsigned i, int before, ringsrc_fn fn, void *ctx)
{
	int rc = 0;
	for (int o; !rc && (o = rs_older(r, i)) >= 0;) {
		unsigned k = (unsigned)o; /* the earliest not drained yet */
		for (int e; (e = rs_older(r, k)) >= 0;)
			k = (unsigned)e;
		rc = rs_gone_one(r, k, 1, fn, ctx);
	}
	struct rs_slot *q = &r->slot[i];
	if (!rc)
		rc = rs_consume(r, i, q->r + RING_WORDS, fn, ctx);
	if (!rc && q->mode == RING_MODE_AGG)
		rc = rs_tree(r, i);
	/* a thread before another of its tid, gone without its end (the exit
	 * system call): ended where it was last seen, as in the live drain */
	else if (!rc && before && !q->ended)
		rc = rs_thread_exit(q, q->last, fn, ctx);
	rs_free(r, i);
	return rc;
}

int ringsrc_drain_gone(struct ringsrc *r, uint32_t pid, uint64_t keep, ringsrc_fn fn, void *ctx)
{
	int rc = 0;
	rs_follow_all(r, 0);
	unsigned char before[RING_SLOTS] = {0}; /* a later thread of its tid follows */
	for (unsigned i = 0; i < RING_SLOTS; i++) {
		int o = r->slot[i].active ? rs_older(r, i) : -1;
		if (o >= 0)
			before[o] = 1;
	}
	for (unsigned i = 0; i < RING_SLOTS && !rc; i++) {
		struct rs_slot *q = &r->slot[i];
		if (!q->active)
			continue;
		/* a later image of pid (exec) may own rings already: its
		 * incarnation is no earlier than its HELLO's */
		if (pid && (q->pid != pid || (keep && q->incarnation >= keep)))
			continue;
		rc = rs_gone_one(r, i, before[i], fn, ctx);
	}
	return rc;
}
