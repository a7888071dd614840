/* rec_calib.c: what one event costs the process (rec.h): measured on a
 * private thread state at connect, sampled again during the run where
 * threads aggregate, and told to spanstat (WIRE_CALIB) for --compensate. */
#include "config.h"

#include <string.h>
#include <sys/mman.h>

#include "rec.h"

#define REC_CALIB_PAIRS 200u /* per loop: fits one record, so nothing is sent */
#define REC_CALIB_LOOPS 32u  /* the fastest loop counts */
#define REC_RECAL_PAIRS 128u /* in-run: pairs per sample, after REC_RECAL_WARM */
#define REC_RECAL_WARM 8u
#define REC_RECAL_MIN 8u     /* samples below which the connect's measure stands */
uint64_t rec_calib;	     /* milli-ticks per event: at connect, then the run's */
uint64_t rec_calib_pg_extra; /* milli-ticks a -pg function's event costs more */
static volatile uint64_t rec_calib_sink;
static const char rec_calib_name[] = "spanstat-calibration";
struct rec_thread *rec_calib_t;	 /* kept for in-run samples, or NULL */
atomic_int rec_calib_busy;	 /* a thread samples on rec_calib_t */
static uint64_t rec_recal_bound; /* ticks: a longer sample was interrupted */
_Atomic uint64_t rec_recal_with, rec_recal_without, rec_recal_pairs;

/* The work between two events: two dependent multiply-adds.  Events with
 * nothing between them cost more each than in a program, whose work overlaps
 * with their timestamp reads, and longer work hides them almost entirely (8
 * multiply-adds: 1.7 ns).  One multiply-add gave 8.3 ns on an AMD EPYC VM,
 * two give 7.5, where the README demo lost 7.6 per event, a fib recursion
 * 6.6-8.2 and two sorting threads 6.6-8.0 (compensate-bench): the true cost
 * depends on the program's code around the calls, so no loop matches every
 * program; spanstat(1) gives the error. */
static REC_HOT uint64_t rec_calib_work(uint64_t x)
{
	x = x * UINT64_C(6364136223846793005) + 1442695040888963407u;
	return x * UINT64_C(6364136223846793005) + 1442695040888963407u;
}

/* What a program pays per event without spanstat: a call that does nothing
 * (glibc's __cyg_profile_func_enter, or our own entry points while nothing
 * records).  The run without spanstat pays it too, so it is not ours. */
static REC_NOI __attribute__((noinline)) void rec_calib_stub(const char *name)
{
	__asm__ volatile("" : : "r"(name) : "memory");
}

static REC_NOI void rec_calib_free(struct rec_thread *t)
{
	if (t->agg)
		munmap(t->agg, RING_AGG_BYTES);
	if (t->avals)
		munmap(t->avals, ring_vals_bytes(rec_nvals));
	rec_agg_hash_reset(t);
	recv_close(&t->vt);
	munmap(t, sizeof *t);
}

/* A private thread state that sends nothing, whose events take the path the
 * process's take (aggregate, events, filters, values), or NULL. */
static REC_NOI struct rec_thread *rec_calib_new(void)
{
	struct rec_thread *t =
		mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *agg = rec_agg_mode ? mmap(NULL, RING_AGG_BYTES, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
				 : NULL;
	if (t == MAP_FAILED || agg == MAP_FAILED) {
		if (t != MAP_FAILED)
			munmap(t, sizeof *t);
		return NULL;
	}
	t->calib = 1;
	t->pid = rec_pid;
	t->tid = rec_gettid();
	memset(t->cache, 0xff, sizeof t->cache);
	memset(t->fcache, 0xff, sizeof t->fcache);
	struct rec_centry *c = &t->cache[rec_hash((uintptr_t)rec_calib_name)];
	c->key = (uintptr_t)rec_calib_name;
	c->word = (uint64_t)1 << WIRE_ID_SHIFT; /* never sent: any id */
#if ARCH_HAVE_MCOUNT
	/* the -pg function's key too, unless it shares the entry */
	uint64_t pg = ((uintptr_t)rec_mcount_calib_site - 1) | REC_CODE_TAG;
	if (rec_hash(pg) != rec_hash((uintptr_t)rec_calib_name)) {
		c = &t->cache[rec_hash(pg)];
		c->key = pg;
		c->word = (uint64_t)1 << WIRE_ID_SHIFT;
	}
#endif
	if (agg) {
		t->agg = agg;
		t->anode = ring_agg_nodes(t->agg);
		t->aframe = ring_agg_frames(t->agg);
		t->agg->nodes = 1;
	}
	/* the values cost what they cost in every thread: the same reads */
	t->swmark = &rec_nomark;
	recv_close(&t->vt);
	recv_switch_close(&t->vt);
	if (rec_nvals) {
		recv_open(&rec_vspec, &t->vt, rec_alloc_fn);
		void *vals = agg ? mmap(NULL, ring_vals_bytes(rec_nvals), PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
				 : NULL;
		t->avals = vals == MAP_FAILED ? NULL : vals;
		if (agg && !t->avals) {
			rec_calib_free(t);
			return NULL;
		}
	}
	return t;
}

/* n pairs of calls, a then b, with work after each. */
static REC_HOT uint64_t rec_calib_pairs(void (*volatile a)(const char *),
					void (*volatile b)(const char *), unsigned n, uint64_t x)
{
	for (unsigned i = 0; i < n; i++) {
		a(rec_calib_name);
		x = rec_calib_work(x);
		b(rec_calib_name);
		x = rec_calib_work(x);
	}
	return x;
}

#if ARCH_HAVE_MCOUNT
/* n calls of a -pg function (its begin and end through mcount and the
 * return trampoline), each followed by the work of a pair. */
static REC_NOI uint64_t rec_calib_pg_pairs(void (*volatile f)(void), unsigned n, uint64_t x)
{
	for (unsigned i = 0; i < n; i++) {
		f();
		x = rec_calib_work(x);
		x = rec_calib_work(x);
	}
	return x;
}
#endif

/* n begin/end pairs with work between them on the calibration thread c
 * (rec_calib_self), then the same work and n pairs of calls that do nothing:
 * the ticks of each.  The marginal cost, so that what a real program
 * overlaps with the events' own work (the timestamp reads) is not counted. */
static REC_NOI void rec_calib_loop(struct rec_thread *c, unsigned n, uint64_t *with,
				   uint64_t *without)
{
	c->pos = c->rec + REC_FIRST;
	c->lim = c->rec + REC_WORDS;
	/* a sample cut short (a jump out of a handler, a fork meanwhile in
	 * another thread) may have left its guard set: nothing of it is kept */
	c->guard = 0;
	c->nq = 0;
	c->depth = c->fdone = c->adepth = 0;
	if (c->agg)
		c->agg->depth = 0;
	c->last = rec_now();
	uint64_t t0 = rec_now();
	uint64_t x = rec_calib_pairs(rec_calib_begin, rec_calib_end, n, rec_calib_sink);
	uint64_t t1 = rec_now();
	x = rec_calib_pairs(rec_calib_stub, rec_calib_stub, n, x);
	uint64_t t2 = rec_now();
	rec_calib_sink = x;
	*with = t1 - t0;
	*without = t2 - t1;
}

/* What one event costs this process, in milli-ticks (0: unknown): the
 * fastest of REC_CALIB_LOOPS loops, as TAU calibrates, run on the connecting
 * thread before it records anything.  Where threads aggregate without
 * values, the calibration thread is kept for samples during the run
 * (rec_recalibrate), and the run's mean replaces this measure at exit:
 * another tenant of the CPU's core can slow a whole run, or only the
 * moment of the connect (a run's cost read 7.5 to 20 ns here). */
REC_NOI uint64_t rec_calibrate(void)
{
	struct rec_thread *t = rec_calib_new();
	if (!t)
		return 0;
	uint64_t with = UINT64_MAX, without = UINT64_MAX;
	rec_calib_self = t;
	for (unsigned l = 0; l < REC_CALIB_LOOPS; l++) {
		uint64_t w, wo;
		rec_calib_loop(t, REC_CALIB_PAIRS, &w, &wo);
		with = w < with ? w : with;
		without = wo < without ? wo : without;
	}
#if ARCH_HAVE_MCOUNT
	/* a -pg function's begin and end: what they cost more than the others' */
	uint64_t pg = UINT64_MAX, pgkey = ((uintptr_t)rec_mcount_calib_site - 1) | REC_CODE_TAG;
	/* only with its name cached: nothing may be sent */
	rec_mcount_calib_stack(1);
	for (unsigned l = 0; t->cache[rec_hash(pgkey)].key == pgkey && l < REC_CALIB_LOOPS; l++) {
		uint64_t w, wo;
		rec_calib_loop(t, 0, &w, &wo); /* its state reset */
		uint64_t t0 = rec_now();
		rec_calib_sink =
			rec_calib_pg_pairs(rec_mcount_calib_fn, REC_CALIB_PAIRS, rec_calib_sink);
		w = rec_now() - t0;
		pg = w < pg ? w : pg;
	}
	rec_mcount_calib_stack(0);
	rec_calib_pg_extra =
		pg != UINT64_MAX && pg > with ? (pg - with) * 1000 / (2 * REC_CALIB_PAIRS) : 0;
#endif
	rec_calib_self = NULL;
	uint64_t calib = with > without ? (with - without) * 1000 / (2 * REC_CALIB_PAIRS) : 0;
	if (calib && __atomic_load_n(&rec_on, __ATOMIC_RELAXED) == REC_ON_AGG) {
		/* four times a quiet sample, warm-up included */
		rec_recal_bound =
			4 * (with + without) * (REC_RECAL_WARM + REC_RECAL_PAIRS) / REC_CALIB_PAIRS;
		rec_calib_t = t;
	} else {
		rec_calib_free(t);
	}
	return calib;
}

/* Every REC_RECAL_EVERY events of an aggregating thread t, inside its guard:
 * one sample of the event's cost now, on the calibration thread (one thread
 * at a time; the others skip theirs).  A sample the thread was switched out
 * in, or that took longer than rec_recal_bound, is not counted.  Its time is
 * ours: the spans open in t begin that much later, so no span holds it.
 * Signal handlers find t guarded meanwhile, and queue their spans. */
REC_NOI __attribute__((noinline)) void rec_recalibrate(struct rec_thread *t)
{
	struct rec_thread *c = rec_calib_t;
	if (!c || t->calib || atomic_exchange_explicit(&rec_calib_busy, 1, memory_order_acquire))
		return;
	uint32_t mark = *t->swmark;
	unsigned nq = t->nq;
	uint64_t t0 = rec_now(), w, wo;
	rec_calib_self = c;
	rec_calib_loop(c, REC_RECAL_WARM, &w, &wo); /* its lines, back in the cache */
	rec_calib_loop(c, REC_RECAL_PAIRS, &w, &wo);
	rec_calib_self = NULL;
	atomic_store_explicit(&rec_calib_busy, 0, memory_order_release);
	uint64_t d = rec_now() - t0;
	/* a handler's spans queued meanwhile hold part of it: left as it is */
	if (*t->swmark != mark || t->nq != nq || d > rec_recal_bound)
		return;
	atomic_fetch_add_explicit(&rec_recal_with, w, memory_order_relaxed);
	atomic_fetch_add_explicit(&rec_recal_without, wo, memory_order_relaxed);
	atomic_fetch_add_explicit(&rec_recal_pairs, REC_RECAL_PAIRS, memory_order_relaxed);
	for (uint32_t i = 0; i < t->adepth; i++)
		t->aframe[i].ts += d;
}

/* The run's mean cost per event, where enough samples were taken. */
REC_NOI void rec_recal_final(void)
{
	uint64_t pairs = atomic_load_explicit(&rec_recal_pairs, memory_order_relaxed);
	uint64_t with = atomic_load_explicit(&rec_recal_with, memory_order_relaxed);
	uint64_t without = atomic_load_explicit(&rec_recal_without, memory_order_relaxed);
	if (pairs >= REC_RECAL_MIN * REC_RECAL_PAIRS && with > without)
		rec_calib = (with - without) * 1000 / (2 * pairs);
}

/* Tells spanstat what an event costs this process (a new process each
 * time: after the HELLO of a connect or a fork). */
REC_NOI void rec_send_calib(void)
{
	char buf[64];
	struct wire_calib w = {rec_calib, 0};
	size_t len = enc_simple(buf, sizeof buf, WIRE_CALIB, rec_pid, 0, &w, sizeof w);
	if (len && rec_calib)
		rec_write(buf, len);
}
