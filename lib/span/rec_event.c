/* rec_event.c: the recording paths (rec.h).  The API's entry points
 * (spanstat_begin/end/instant/counter/thread_name, __cyg_profile_func_enter/
 * exit), the hot path behind them in each mode (events, aggregating, values,
 * filters), the slow path every event the hot path leaves takes
 * (rec_apply), and the aggregate tree's out-of-line cases: one translation
 * unit, so that the hot path inlines its helpers and calls nothing in
 * another file but its cold cases. */
#include "config.h"

#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>

#include "rec.h"

int rec_on; /* the hot-path gate: 0 or REC_ON* */
/* Mirror of rec_on for the inline check in spanstat.h (not API). */
__attribute__((visibility("default"))) int spanstat_on_;
__thread struct rec_thread *rec_self __attribute__((tls_model("initial-exec")));

/* ---- aggregate mode (ring.h) ------------------------------------------------ */

/* Past REC_AGG_SCAN siblings a node's children are found through a hash of
 * (parent, id) made on first need (a program with many names under one
 * parent would otherwise pay a scan of them all per begin): open addressing,
 * 0 empty, as node 0 (the root) is no one's child.  It indexes the slot's
 * tree, so it is emptied where the tree is (rec_agg_hash_reset). */
#define REC_AGG_SCAN 16
#define REC_AGG_HBITS 18
#define REC_AGG_HSLOTS (1u << REC_AGG_HBITS)
_Static_assert(REC_AGG_HSLOTS >= 2 * RING_AGG_NODES, "the hash stays at most half full");
#define REC_AGG_HBYTES ((size_t)REC_AGG_HSLOTS * sizeof(uint32_t))

static inline REC_NOI uint32_t rec_agg_hslot(uint32_t cur, uint32_t id)
{
	return (uint32_t)((((uint64_t)cur << 32 | id) * 0x9e3779b97f4a7c15ull) >>
			  (64 - REC_AGG_HBITS));
}

static REC_NOI void rec_agg_hput(uint32_t *h, uint32_t cur, uint32_t id, uint32_t n)
{
	uint32_t s = rec_agg_hslot(cur, id);
	while (h[s])
		s = (s + 1) & (REC_AGG_HSLOTS - 1);
	h[s] = n;
}

/* The hash of every node made so far, or NULL when there is no memory
 * for it (the scan then serves, slowly but true). */
static REC_NOI uint32_t *rec_agg_hash(struct rec_thread *t)
{
	if (!t->ahash) {
		void *m = mmap(NULL, REC_AGG_HBYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		t->ahash = m;
		t->ahash_nodes = 1;
	}
	const struct ring_agg_node *nd = t->anode;
	for (uint32_t n = t->ahash_nodes; n < t->agg->nodes; n++)
		rec_agg_hput(t->ahash, nd[n].parent, nd[n].id, n);
	t->ahash_nodes = t->agg->nodes;
	return t->ahash;
}

REC_NOI void rec_agg_hash_reset(struct rec_thread *t)
{
	if (t->ahash)
		munmap(t->ahash, REC_AGG_HBYTES);
	t->ahash = NULL;
	t->ahash_nodes = 0;
}

/* The child of node cur named id, created when new; REC_AGG_NONE when the
 * tree is full (the span is then not kept: untracked). */
REC_NOI __attribute__((noinline)) uint32_t rec_agg_child(struct rec_thread *t, uint32_t cur,
							 uint32_t id)
{
	struct ring_agg_node *nd = t->anode;
	uint32_t *h = t->ahash;
	if (h) {
		for (uint32_t s = rec_agg_hslot(cur, id); h[s]; s = (s + 1) & (REC_AGG_HSLOTS - 1))
			if (nd[h[s]].parent == cur && nd[h[s]].id == id)
				return h[s];
	} else {
		uint32_t seen = 0;
		for (uint32_t c = nd[cur].first_child; c; c = nd[c].next_sibling, seen++)
			if (nd[c].id == id)
				return c;
		if (seen > REC_AGG_SCAN)
			h = rec_agg_hash(t); /* every node so far; the new one below */
	}
	uint32_t n = t->agg->nodes;
	if (n >= RING_AGG_NODES)
		return REC_AGG_NONE;
	nd[n].id = id;
	nd[n].parent = cur;
	nd[n].next_sibling = nd[cur].first_child;
	nd[cur].first_child = n;
	t->agg->nodes = n + 1; /* after the node: a reader never sees it half made */
	if (h) {
		rec_agg_hput(h, cur, id, n);
		t->ahash_nodes = n + 1;
	}
	return n;
}

/* A span the thread was switched out in (its switch mark moved): spanstat
 * gets its node and times to join with the kernel's switch records. */
REC_NOI __attribute__((noinline)) void rec_agg_switched(struct rec_thread *t, uint32_t node,
							uint64_t begin, uint64_t end)
{
	uint64_t pl[2] = {begin, end};
	if (rec_ring_putn(t, RING_CTL(RING_CTL_SWITCHED | (uint64_t)node << 8), pl, 2) == 0)
		rec_ring_publish(t);
	else if (t->anode[node].swlost != UINT32_MAX) /* never silently */
		t->anode[node].swlost++;
}

/* Whether keys a and b name the same span: the same key, or (as spanstat
 * matches names by their text) two strings with the same text. */
static REC_NOI int rec_same_key(uint64_t a, uint64_t b)
{
	if (a == b)
		return 1;
	if ((a | b) & REC_CODE_TAG)
		return 0;
	if (atomic_load_explicit(&rec_ngone, memory_order_relaxed) &&
	    (rec_text_gone(a) || rec_text_gone(b)))
		return 0; /* an unloaded object's string: not read */
	return strcmp((const char *)(uintptr_t)a, (const char *)(uintptr_t)b) == 0;
}

/* Whether open span k (0: outermost) has the name of the end of key, id:
 * the same id, or a name at another address with the same text. */
static REC_NOI int rec_agg_same(const struct rec_thread *t, uint32_t k, uint64_t key, uint32_t id)
{
	if (t->aframe[k].id == id)
		return 1;
	if (k >= REC_STACK || t->depth != t->adepth)
		return 0;
	return rec_same_key(t->stk[k], key);
}

/* An end that does not name the innermost open span by id: the spans inside
 * the one it names close unfinished, or it is counted unmatched. */
REC_NOI __attribute__((noinline)) void
rec_agg_mismatch(struct rec_thread *t, uint64_t key, uint32_t id, uint64_t now, const uint64_t *v)
{
	uint32_t k = t->adepth;
	while (k > 0 && !rec_agg_same(t, k - 1, key, id))
		k--;
	if (k == 0) {
		t->agg->unmatched++;
		return;
	}
	for (uint32_t d = t->adepth; d > k; d--)
		rec_agg_close(t, &t->aframe[d - 1], now, 1, v);
	rec_agg_close(t, &t->aframe[k - 1], now, 0, v);
	t->adepth = k - 1;
	t->agg->depth = k - 1;
}

/* ---- the slow path ------------------------------------------------------- */

/* The shadow stack: which spans are open in this thread, innermost last, so
 * that a longjmp can end the spans it skips (rec_unwind). */
static REC_HOT void rec_push(struct rec_thread *t, uint64_t key)
{
	unsigned d = t->depth++;
	if (likely(d < REC_STACK))
		t->stk[d] = key;
}

/* An end that does not name the innermost open span: as the reader does
 * (norm_mismatch, rec_agg_mismatch), it closes the spans inside the one it
 * names too, or nothing when it names none open. */
static REC_NOI __attribute__((noinline)) void rec_pop_mismatch(struct rec_thread *t, uint64_t key)
{
	unsigned k = t->depth;
	while (k > 0 && !rec_same_key(t->stk[k - 1], key))
		k--;
	if (k)
		t->depth = k - 1;
}

/* An end: the shadow stack closes what the reader closes, so that a drop's
 * tale and a longjmp's ends name the spans the reader has open (beyond
 * REC_STACK the names are not kept: one frame). */
static REC_HOT void rec_pop(struct rec_thread *t, uint64_t key)
{
	unsigned d = t->depth;
	if (likely(d > REC_STACK || (d && t->stk[d - 1] == key)))
		t->depth = d - 1;
	else if (d)
		rec_pop_mismatch(t, key);
}

/* Follows an event on the shadow stack. */
static REC_HOT void rec_track(struct rec_thread *t, uint64_t key, uint64_t op)
{
	if (op == REC_OP(WIRE_OP_BEGIN))
		rec_push(t, key);
	else if (op == REC_OP(WIRE_OP_END))
		rec_pop(t, key);
}

/* Another thread holds t busy: it flushes t's buffers (an exec or exit in
 * it).  The event waits a little for the flush to end, since a drop here
 * is not one the thread can tell (the flush owns its stack): 0 with busy
 * taken, or -1 (it stays another's). */
static REC_NOI __attribute__((noinline)) int rec_busy_wait(struct rec_thread *t)
{
	for (unsigned i = 0; i < REC_BUSY_SPINS; i++) {
		sched_yield();
		if (!atomic_exchange(&t->busy, 1))
			return 0;
	}
	return -1;
}

/* Everything the hot path does not handle, and every event of a nested call
 * replayed from the queue: `now` was read on entry (fresh: a live event,
 * whose time may be read again after setup) or when queued, v holds the
 * values read then (NULL: read them here).  The caller holds the guard. */
REC_NOI __attribute__((noinline)) void rec_apply(struct rec_thread *t, uint64_t key, uint64_t op,
						 uint64_t now, int fresh, int has_val, int64_t val,
						 const uint64_t *v)
{
	if (unlikely(!t->pid) && rec_new_process(t) != 0)
		return;
	if (atomic_exchange(&t->busy, 1) && rec_busy_wait(t) != 0) {
		rec_drop(t, 1u + (unsigned)has_val);
		return;
	}
	struct rec_centry *c = &t->cache[rec_hash(key)];
	uint64_t fresh_v[RECV_MAX];
	if (fresh && op == REC_OP(WIRE_OP_BEGIN) && c->key != key) {
		/* a name's first use: defining it (a write, a symbol lookup) is the
		 * recorder's setup, not the span's, which begins after it */
		uint32_t id = rec_intern(t, key);
		if (id) {
			c->key = key;
			c->word = (uint64_t)id << WIRE_ID_SHIFT;
			now = rec_now();
			if (v) { /* the values too: read at a begin after its time */
				recv_read(&rec_vspec, &t->vt, fresh_v);
				v = fresh_v;
			}
		}
	}
	rec_emit(t, key, op, now, has_val, val, v);
	rec_track(t, key, op);
	if (unlikely(t->gap) && t->depth < t->low)
		t->low = t->depth;
	atomic_store(&t->busy, 0);
}

/* ---- each mode's path ---------------------------------------------------- */

/* Every event while filters are on.  A span they keep out costs its
 * decision and a push or pop: no timestamp, no lock, nothing written. */
static REC_HOT void rec_event_filtered_body(struct rec_thread *t, uint64_t key, uint64_t op,
					    int has_val, int64_t val, uint64_t now)
{
	if (unlikely(!t->pid) && rec_new_process(t) != 0)
		return;
	unsigned d = t->depth;
	if (op == REC_OP(WIRE_OP_BEGIN)) {
		if (d >= REC_STACK) { /* too deep to follow: not sent */
			t->depth = d + 1;
			return;
		}
		unsigned fl = rec_filter_flags(t, d, key);
		t->stk[d] = key;
		t->ffl[d] = (uint8_t)fl;
		if (t->fdone > d)
			t->fdone = d;
		t->depth = d + 1;
		if (!(fl & REC_F_SEND))
			return;
	} else if (op == REC_OP(WIRE_OP_END)) {
		if (d == 0 || (d <= REC_STACK && !(t->ffl[d - 1] & (REC_F_SENT | REC_F_PENDING)))) {
			if (d) {
				t->depth = d - 1;
				if (t->fdone > d - 1)
					t->fdone = d - 1;
			}
			return;
		}
	} else {
		/* an instant or counter goes where the span it is in goes
		 * (outside every span: unless only --filter matches are kept) */
		int send =
			d == 0 ? !rec_filter.nfilter
			       : d <= REC_STACK && (t->ffl[d - 1] & (REC_F_SENT | REC_F_PENDING));
		if (!send)
			return;
	}
	if (!now)
		now = rec_now();
	if (atomic_exchange(&t->busy, 1)) {
		rec_drop(t, 1u + (unsigned)has_val);
		return;
	}
	if (op == REC_OP(WIRE_OP_BEGIN)) {
		rec_filter_begin(t, d, now);
	} else if (op == REC_OP(WIRE_OP_END)) {
		rec_filter_end(t, now);
	} else {
		rec_filter_flush(t, d);
		rec_emit(t, key, op, now, has_val, val, NULL);
	}
	atomic_store(&t->busy, 0);
}

REC_NOI __attribute__((noinline)) void rec_event_filtered(struct rec_thread *t, uint64_t key,
							  uint64_t op, int has_val, int64_t val,
							  uint64_t now)
{
	rec_event_filtered_body(t, key, op, has_val, val, now);
}

/* An event whose begins and ends carry values (REC_ON_VALUES): read at the
 * begin after its timestamp, at the end before it, so that the span's own
 * values include as little of the reading as can be. */
static REC_NOI __attribute__((noinline)) void rec_event_values(struct rec_thread *t, uint64_t key,
							       uint64_t op)
{
	uint64_t v[RECV_MAX], now;
	/* the mark before the begin's time: a switch after it is the span's
	 * (no mark in a _Fork child, whose wiped page has no tree either) */
	uint32_t mark = t->agg ? *t->swmark : 0;
	if (op == REC_OP(WIRE_OP_END)) {
		recv_read(&rec_vspec, &t->vt, v);
		now = rec_now();
	} else {
		now = rec_now();
		if (op == REC_OP(WIRE_OP_BEGIN))
			recv_read(&rec_vspec, &t->vt, v);
	}
	if (likely(t->agg != NULL)) { /* a known name into the tree, as rec_event_agg */
		const struct rec_centry *c = &t->cache[rec_hash(key)];
		if (likely(c->key == key)) {
			rec_agg_op(t, key, (uint32_t)(c->word >> WIRE_ID_SHIFT), op, now, v, mark);
			rec_track(t, key, op);
			return;
		}
	}
	rec_apply(t, key, op, now, 1, 0, 0,
		  op == REC_OP(WIRE_OP_BEGIN) || op == REC_OP(WIRE_OP_END) ? v : NULL);
}

/* An event while threads aggregate (REC_ON_AGG): into the thread's tree,
 * or through rec_apply (a new name, a thread without a slot). */
static REC_HOT void rec_event_agg(struct rec_thread *t, uint64_t key, uint64_t op)
{
	if (likely(t->agg != NULL)) { /* NULL in a _Fork child: its wiped page */
		/* the mark before the begin's time: a switch after it is the span's */
		uint32_t mark = *t->swmark;
		uint64_t now = rec_now();
		const struct rec_centry *c = &t->cache[rec_hash(key)];
		if (likely(c->key == key)) {
			rec_agg_op(t, key, (uint32_t)(c->word >> WIRE_ID_SHIFT), op, now, NULL,
				   mark);
			rec_track(t, key, op);
			return;
		}
		rec_apply(t, key, op, now, 1, 0, 0, NULL);
		return;
	}
	rec_apply(t, key, op, rec_now(), 1, 0, 0, NULL);
}

/* An event while every event is sent (REC_ON): one word into the ring or
 * record, or through rec_apply. */
static REC_HOT void rec_event_stream(struct rec_thread *t, uint64_t key, uint64_t op)
{
	uint64_t now = rec_now();
	const struct rec_centry *c = &t->cache[rec_hash(key)];
	uint64_t delta = now - t->last;
	uint64_t *p = t->pos;
	if (likely(c->key == key && !(delta >> WIRE_DELTA_BITS) && p < t->lim)) {
		*p = c->word | op | delta;
		t->pos = p + 1;
		t->last = now;
		rec_track(t, key, op);
		return;
	}
	rec_apply(t, key, op, now, 1, 0, 0, NULL);
}

/* The filters' path, its guard included, so that the hot path reaches it
 * by a tail call: a span they keep out costs its decision and the guard. */
static REC_NOI __attribute__((noinline)) void rec_event_filtered_guarded(struct rec_thread *t,
									 uint64_t key, uint64_t op)
{
	char mark;
	rec_guard_set(t, &mark);
	rec_event_filtered_body(t, key, op, 0, 0, 0);
	rec_guard_clear(t);
}

/* ---- the entry points ---------------------------------------------------- */

__thread volatile int rec_starting __attribute__((tls_model("initial-exec")));

/* Every event the hot path leaves: a thread's first, a nested call, a queue
 * to apply first, a value (counters), a thread whose process forked. */
static REC_NOI __attribute__((noinline)) void rec_event_cold(uint64_t key, uint64_t op, int has_val,
							     int64_t val)
{
	int on = __atomic_load_n(&rec_on, __ATOMIC_RELAXED);
	if (!on) {
		rec_late_maybe(key);
		return;
	}
	if (!key || key == REC_CODE_TAG)
		return;		     /* NULL name */
	if (unlikely(rec_vforked)) { /* a vfork child's (rec_vfork.c): counted */
		atomic_fetch_add_explicit(&rec_dropped, 1u + (unsigned)has_val,
					  memory_order_relaxed);
		return;
	}
	struct rec_thread *t = rec_self;
	if (!t) {
		if (rec_starting) { /* a handler interrupted the thread's start */
			atomic_fetch_add_explicit(&rec_dropped, 1, memory_order_relaxed);
			return;
		}
		rec_starting = 1;
		t = rec_thread_start();
		rec_starting = 0;
		if (!t) { /* no memory for it (or a refused mmap): counted, said at exit */
			if (!rec_self_done)
				atomic_fetch_add_explicit(&rec_dropped, 1u + (unsigned)has_val,
							  memory_order_relaxed);
			return;
		}
	}
	if (t->guard) {
		rec_queue(t, key, op, has_val, val);
		return;
	}
	char mark;
	rec_guard_set(t, &mark);
	if (t->nq)
		rec_drain(t, on);
	if (on == REC_ON_FILTERED)
		rec_event_filtered(t, key, op, has_val, val, 0);
	else if (on == REC_ON_VALUES && !has_val)
		rec_event_values(t, key, op);
	else
		rec_apply(t, key, op, rec_now(), 1, has_val, val, NULL);
	rec_guard_clear(t);
}

/* In-run calibration (rec_recalibrate): every REC_RECAL_EVERY events of an
 * aggregating thread, a few pairs timed on the calibration thread. */
#define REC_RECAL_EVERY 65536u

/* The calibration's own thread state, on the thread that calibrates: its
 * events take the same path as the program's, with the same thread-local
 * read, while rec_self stays the thread's own (a signal handler meanwhile
 * finds it guarded, and queues). */
__thread struct rec_thread *rec_calib_self __attribute__((tls_model("initial-exec")));

static REC_HOT void rec_event_in(struct rec_thread *t, uint64_t key, uint64_t op)
{
	int on = __atomic_load_n(&rec_on, __ATOMIC_RELAXED);
	if (unlikely(!on || !t || (t->guard | t->nq))) {
		if (on)
			rec_event_cold(key, op, 0, 0);
		else
			rec_late_maybe(key);
		return;
	}
	if (on == REC_ON_FILTERED) { /* a tail call: it holds the guard itself */
		rec_event_filtered_guarded(t, key, op);
		return;
	}
	char mark;
	rec_guard_set(t, &mark);
	if (likely(on == REC_ON_AGG)) {
		rec_event_agg(t, key, op);
		if (unlikely(!(++t->nev % REC_RECAL_EVERY)))
			rec_recalibrate(t);
	} else if (on == REC_ON) {
		rec_event_stream(t, key, op);
	} else {
		rec_event_values(t, key, op);
	}
	rec_guard_clear(t);
}

static REC_HOT void rec_event(uint64_t key, uint64_t op)
{
	rec_event_in(rec_self, key, op);
}

REC_API void spanstat_begin(const char *name)
{
	rec_event((uintptr_t)name, REC_OP(WIRE_OP_BEGIN));
}

/* Our own spanstat_begin, whichever copy the program's calls bind to. */
extern void rec_own_begin(const char *name)
	__attribute__((alias("spanstat_begin"), visibility("hidden")));

REC_API void spanstat_end(const char *name)
{
	rec_event((uintptr_t)name, REC_OP(WIRE_OP_END));
}

/* A name by text: its kept copy's address is the name from here on. */
static REC_HOT void rec_event_text(const char *text, size_t len, uint64_t op)
{
	if (!__atomic_load_n(&rec_on, __ATOMIC_RELAXED) || !text) {
		rec_late_maybe((uintptr_t)text);
		return;
	}
	struct rec_thread *t = rec_self;
	const char *name = rec_text_name(t, text, len);
	if (likely(name != NULL))
		rec_event_in(t, (uintptr_t)name, op);
	else
		atomic_fetch_add_explicit(&rec_dropped, 1, memory_order_relaxed);
}

REC_API void spanstat_begin_text(const char *text, size_t len)
{
	rec_event_text(text, len, REC_OP(WIRE_OP_BEGIN));
}

REC_API void spanstat_end_text(const char *text, size_t len)
{
	rec_event_text(text, len, REC_OP(WIRE_OP_END));
}

REC_API void spanstat_instant(const char *name)
{
	rec_event((uintptr_t)name, REC_OP(WIRE_OP_INSTANT));
}

REC_API void spanstat_counter(const char *name, int64_t value)
{
	rec_event_cold((uintptr_t)name, REC_OP(WIRE_OP_COUNTER), 1, value);
}

/* A call beside the spans (a thread's name, a category, a message): the
 * thread, guarded (mark: a stack address of the caller's) and busy, or NULL
 * when it cannot record now: no thread state, or a signal handler that
 * interrupted the recorder, or a fork child's first word. */
static REC_NOI struct rec_thread *rec_side_enter(const void *mark)
{
	struct rec_thread *t = rec_self;
	if (rec_vforked || (!t && (rec_starting || !(t = rec_thread_start()))))
		return NULL; /* a vfork child's call: its parent's state */
	if (t->guard || !t->pid || atomic_exchange(&t->busy, 1))
		return NULL;
	rec_guard_set(t, mark);
	return t;
}

/* rec_side_enter for a call that is an event of its own (a category, a
 * message): when it cannot record now, one event is counted dropped. */
static REC_NOI struct rec_thread *rec_side_enter_counted(const void *mark)
{
	struct rec_thread *t = rec_side_enter(mark);
	if (!t)
		atomic_fetch_add_explicit(&rec_dropped, 1, memory_order_relaxed);
	return t;
}

static REC_NOI void rec_side_leave(struct rec_thread *t)
{
	rec_guard_clear(t);
	atomic_store(&t->busy, 0);
}

REC_API void spanstat_thread_name(const char *name)
{
	if (!__atomic_load_n(&rec_on, __ATOMIC_RELAXED) || !name)
		return;
	char mark = 0; /* its address only */
	struct rec_thread *t = rec_side_enter(&mark);
	if (!t)
		return;
	rec_send_thread_name(t, name);
	rec_side_leave(t);
}

REC_API void spanstat_category(const char *name, const char *category)
{
	if (!__atomic_load_n(&rec_on, __ATOMIC_RELAXED) || !name || !category || !category[0]) {
		if (category && category[0])
			rec_late_maybe((uintptr_t)name);
		return;
	}
	char mark = 0; /* its address only */
	struct rec_thread *t = rec_side_enter_counted(&mark);
	if (!t)
		return;
	rec_cat_declare(t, name, category);
	rec_side_leave(t);
}

REC_API void spanstat_message_text(const char *text, size_t len)
{
	if (!__atomic_load_n(&rec_on, __ATOMIC_RELAXED) || !text) {
		rec_late_maybe((uintptr_t)text);
		return;
	}
	char mark = 0; /* its address only */
	struct rec_thread *t = rec_side_enter_counted(&mark);
	if (!t)
		return;
	size_t n = strnlen(text, len < WIRE_MESSAGE_MAX ? len : WIRE_MESSAGE_MAX);
	size_t w = enc_message(t->scratch, sizeof t->scratch, t->pid, t->tid, rec_now(), text, n);
	if (!w || rec_write(t->scratch, w) != 0) /* lost: counted, said at exit */
		atomic_fetch_add_explicit(&rec_dropped, 1, memory_order_relaxed);
	rec_side_leave(t);
}

/* An async span's event: one WIRE_ASYNC record on the pipe, at once. */
static void rec_async(uint64_t id, enum wire_async_op op, const char *name)
{
	if (!__atomic_load_n(&rec_on, __ATOMIC_RELAXED) || !id) {
		rec_late_maybe(id);
		return;
	}
	char mark = 0; /* its address only */
	struct rec_thread *t = rec_side_enter(&mark);
	if (!t) { /* not now (a handler inside the recorder): counted */
		atomic_fetch_add_explicit(&rec_dropped, 1, memory_order_relaxed);
		return;
	}
	size_t n = name ? strnlen(name, WIRE_ASYNC_NAME_MAX) : 0;
	size_t w = enc_async(t->scratch, sizeof t->scratch, t->pid, t->tid, rec_now(), id, op, name,
			     n);
	if (!w || rec_write(t->scratch, w) != 0) /* lost: counted, said at exit */
		atomic_fetch_add_explicit(&rec_dropped, 1, memory_order_relaxed);
	rec_side_leave(t);
}

REC_API void spanstat_async_begin(const char *name, uint64_t id)
{
	if (name)
		rec_async(id, WIRE_ASYNC_BEGIN, name);
}

REC_API void spanstat_async_enter(uint64_t id)
{
	rec_async(id, WIRE_ASYNC_ENTER, NULL);
}

REC_API void spanstat_async_exit(uint64_t id)
{
	rec_async(id, WIRE_ASYNC_EXIT, NULL);
}

REC_API void spanstat_async_end(uint64_t id)
{
	rec_async(id, WIRE_ASYNC_END, NULL);
}

REC_API void spanstat_message(const char *text)
{
	spanstat_message_text(text, SIZE_MAX);
}

/* A typed argument (spanstat_arg_*) of the calling thread's innermost open
 * span: into its events beside them, where the filters send it only with
 * the span (as an instant).  skey: a string value's kept text, else 0. */
static REC_NOI void rec_arg(const char *key, unsigned type, uint64_t val, const char *s, size_t len)
{
	int on = __atomic_load_n(&rec_on, __ATOMIC_RELAXED);
	if (!on || !key) {
		rec_late_maybe((uintptr_t)key);
		return;
	}
	char mark = 0; /* its address only */
	struct rec_thread *t = rec_side_enter(&mark);
	if (!t) {
		atomic_fetch_add_explicit(&rec_dropped, 2, memory_order_relaxed);
		return;
	}
	uint64_t skey = 0;
	if (s) {
		const char *k =
			rec_text_name(t, s, len < WIRE_ARG_STR_MAX ? len : WIRE_ARG_STR_MAX);
		if (!k) {
			rec_drop(t, 2);
			rec_side_leave(t);
			return;
		}
		skey = (uintptr_t)k;
	}
	if (on == REC_ON_FILTERED) {
		unsigned d = t->depth;
		int send =
			d == 0 ? !rec_filter.nfilter
			       : d <= REC_STACK && (t->ffl[d - 1] & (REC_F_SENT | REC_F_PENDING));
		if (!send) {
			rec_side_leave(t);
			return;
		}
		rec_filter_flush(t, d);
	}
	rec_emit_arg(t, (uintptr_t)key, type, val, skey);
	rec_side_leave(t);
}

REC_API void spanstat_arg_i64(const char *key, int64_t value)
{
	uint64_t u;
	memcpy(&u, &value, sizeof u);
	rec_arg(key, WIRE_ARG_I64, u, NULL, 0);
}

REC_API void spanstat_arg_u64(const char *key, uint64_t value)
{
	rec_arg(key, WIRE_ARG_U64, value, NULL, 0);
}

REC_API void spanstat_arg_f64(const char *key, double value)
{
	uint64_t u;
	memcpy(&u, &value, sizeof u);
	rec_arg(key, WIRE_ARG_F64, u, NULL, 0);
}

REC_API void spanstat_arg_bool(const char *key, int value)
{
	rec_arg(key, WIRE_ARG_BOOL, value != 0, NULL, 0);
}

REC_API void spanstat_arg_str(const char *key, const char *s, size_t len)
{
	if (s)
		rec_arg(key, WIRE_ARG_STR, 0, s, len);
}

REC_API void __cyg_profile_func_enter(void *fn, void *call_site)
{
	(void)call_site;
	rec_event((uintptr_t)fn | REC_CODE_TAG, REC_OP(WIRE_OP_BEGIN));
}

REC_API void __cyg_profile_func_exit(void *fn, void *call_site)
{
	(void)call_site;
	rec_event((uintptr_t)fn | REC_CODE_TAG, REC_OP(WIRE_OP_END));
}

/* A lib call's begin or end (rec_plt.c), through the same hot path. */
REC_NOI void rec_lib_event(uint64_t key, uint64_t op)
{
	rec_event(key, op);
}

/* ---- -pg and -mfentry builds (rec_mcount.c) ------------------------------ */

/* A function of a -pg build was entered: site is an address in it (after
 * its call of mcount or __fentry__), slot holds its return address.  Its
 * span begins and its return is hijacked, its own address kept on the
 * thread's stack (made at its first); past REC_MSTACK open functions, or
 * with no stack (a vfork child's, or no memory), neither (counted as
 * dropped: the begin and the end).  A function tail-called by a hijacked
 * one finds the trampoline in the slot: kept as its return address, so
 * that its end and then its caller's come through the trampoline in turn.
 * The entry is claimed before it is filled and the slot written last, so
 * that a signal handler's functions meanwhile take the entries above. */
__attribute__((used)) REC_NOI void rec_mcount_enter(uintptr_t site, uintptr_t *slot)
{
	struct rec_mstack *m = rec_mstkp;
	if (unlikely(!m) && !(m = rec_mstack_get())) { /* a vfork child's, or no memory */
		atomic_fetch_add_explicit(&rec_dropped, 2, memory_order_relaxed);
		return;
	}
	unsigned d = m->depth;
	if (unlikely(m->restored)) /* an exception in flight: its frames below */
		d = rec_mcount_unwound(m, (uintptr_t)slot);
	if (unlikely(d >= REC_MSTACK)) {
		atomic_fetch_add_explicit(&rec_dropped, 2, memory_order_relaxed);
		return;
	}
	/* site - 1: in the call instruction, so in the function even when the
	 * call ends it; a stable key per function, which the reader names by
	 * the function that holds it, as it names -finstrument-functions' */
	uint64_t key = (uint64_t)(site - 1) | REC_CODE_TAG;
	struct rec_thread *c = rec_calib_self;
	if (unlikely(c != NULL)) { /* the calibration's (rec_calib.c) */
		rec_event_in(c, key, REC_OP(WIRE_OP_BEGIN));
	} else {
		if (unlikely(!rec_mcount_used))
			rec_mcount_used = 1;
		rec_event(key, REC_OP(WIRE_OP_BEGIN));
	}
	m->depth = d + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	m->f[d].slot = slot;
	m->f[d].ret = *slot;
	m->f[d].key = key;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*slot = (uintptr_t)rec_mcount_return;
}

/* An end of a -pg function's span, for rec_mcount.c. */
REC_NOI void rec_mcount_end(uint64_t key)
{
	rec_event(key, REC_OP(WIRE_OP_END));
}

/* The return trampoline's: the function whose return address was in slot
 * returned.  Its span ends and its own return address comes back.  Entries
 * above its own are of functions that left without returning (a jump the
 * setjmp wrappers did not see, a throw caught outside the ones
 * __cxa_begin_catch sees): their spans end first, innermost first.  A slot
 * on no entry cannot happen while this library is the only one hijacking
 * returns; there is no address to go on to then. */
__attribute__((used)) REC_NOI uintptr_t rec_mcount_exit(uintptr_t *slot)
{
	struct rec_mstack *m = rec_mstkp;
	unsigned d = m ? m->depth : 0, k = d;
	while (k > 0 && m->f[k - 1].slot != slot)
		k--;
	if (unlikely(k == 0))
		abort();
	while (unlikely(d > k)) {
		d--;
		rec_event(m->f[d].key, REC_OP(WIRE_OP_END));
		m->depth = d;
	}
	uintptr_t ret = m->f[k - 1].ret;
	struct rec_thread *c = rec_calib_self;
	rec_event_in(unlikely(c != NULL) ? c : rec_self, m->f[k - 1].key, REC_OP(WIRE_OP_END));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	m->depth = k - 1;
	return ret;
}

/* spanstat_begin and spanstat_end, on the calibration thread. */
REC_NOI __attribute__((noinline)) void rec_calib_begin(const char *name)
{
	rec_event_in(rec_calib_self, (uintptr_t)name, REC_OP(WIRE_OP_BEGIN));
}

REC_NOI __attribute__((noinline)) void rec_calib_end(const char *name)
{
	rec_event_in(rec_calib_self, (uintptr_t)name, REC_OP(WIRE_OP_END));
}
