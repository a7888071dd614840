/* rec_ring.c: where a thread's event words go (rec.h): the events record
 * in progress, sent through the pipe when full, or the thread's ring in
 * spanstat's ring file; the drops and waits told in the stream; the ring
 * file's slots, taken and given back.
 *
 * A thread that gets a slot in spanstat's ring file (ring.h, SPANSTAT_SHM)
 * stores its words straight into its ring, shared with spanstat, so
 * recording makes no system call and a process killed by SIGKILL loses
 * nothing it stored; the slow path publishes how far the ring is filled,
 * wakes spanstat (WIRE_KICK) when it is half full and waits as for a full
 * pipe when it is full.  A thread without a slot (no ring file, or more
 * threads than slots) fills a WIRE_EVENTS record and writes it to the pipe
 * when full.  Names, hellos, thread names and exits always take the pipe. */
#include "config.h"

#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rec.h"

_Atomic uint64_t rec_dropped; /* event words every thread dropped */
void *rec_shm;		      /* the ring file's slot table, mapped shared, or NULL */
/* The ring file is opened by its path only while a thread maps its slot:
 * the process holds no descriptor of it, so a program writing to every fd
 * cannot scribble over the slots, and none of its descriptors are ours. */
static dev_t rec_shm_dev; /* its identity, checked at every open */
static ino_t rec_shm_ino;
static char rec_shm_path[PATH_MAX]; /* SPANSTAT_SHM, to open it again */

/* ---- records ------------------------------------------------------------ */

REC_NOI void rec_drop(struct rec_thread *t, uint64_t words)
{
	t->dropped += words;
	if (t->agg) /* an aggregating thread says so in its tree */
		t->agg->dropped += words;
	atomic_fetch_add_explicit(&rec_dropped, words, memory_order_relaxed);
}

/* An event of a streaming thread is dropped while the events around it
 * get through: the reader's view of the open spans breaks.  Until the drop
 * is told (rec_ring_drops), every event takes the slow path (rec_apply), so
 * that `low` follows the fewest spans open meanwhile; the tale then says
 * which open spans stayed open (WIRE_RESYNC).  Threads under filters, and
 * those on the pipe, tell only the count: the reader closes their spans. */
static REC_NOI void rec_drop_gap(struct rec_thread *t, uint64_t words, uint64_t op, uint64_t now)
{
	rec_drop(t, words);
	if (t->agg || !t->slot || __atomic_load_n(&rec_on, __ATOMIC_RELAXED) == REC_ON_FILTERED)
		return;
	if (!t->gap) {
		t->gap = 1;
		t->low = t->depth;
	}
	if (op == REC_OP(WIRE_OP_BEGIN) && t->depth < REC_STACK)
		t->fts[t->depth] = now; /* unused without filters: its begin, for the tale */
	t->lim = t->pos;
}

REC_NOI uint32_t rec_sat32(uint64_t n)
{
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static REC_NOI int rec_ring_drops(struct rec_thread *t);

/* key's cache entry, its word made (the name defined) on first use; NULL
 * when the name cannot be defined. */
static REC_HOT const struct rec_centry *rec_cached(struct rec_thread *t, uint64_t key)
{
	struct rec_centry *c = &t->cache[rec_hash(key)];
	if (c->key != key) {
		uint32_t id = rec_intern(t, key);
		if (!id)
			return NULL;
		c->key = key;
		c->word = (uint64_t)id << WIRE_ID_SHIFT;
	}
	return c;
}

/* Sends the record in progress (or an empty one when drops are unreported)
 * and starts an empty one.  Every record sent or lost takes a sequence
 * number, so the reader sees lost records as a gap. */
REC_NOI void rec_flush(struct rec_thread *t)
{
	if (t->calib) { /* the cost of filling, never of sending */
		t->pos = t->rec + REC_FIRST;
		t->base = t->last;
		return;
	}
	if (t->slot) {
		if (!t->agg) /* drops not yet told, in the ring: no system call */
			rec_ring_drops(t);
		rec_ring_publish(t);
		return;
	}
	uint64_t *end = t->pos;
	size_t n = (size_t)(end - (t->rec + REC_FIRST));
	if (n || t->dropped != t->reported) {
		uint64_t dropped = t->dropped;
		size_t len = enc_events_close(t->rec, t->pid, t->tid, t->base, t->seq++,
					      rec_sat32(dropped), n);
		if (rec_write(t->rec, len) == 0) {
			t->reported = dropped;
			t->gap = 0;
		} else
			rec_drop(t, n);
	}
	t->pos = t->rec + REC_FIRST;
	t->base = t->last;
}

/* ---- rings (ring.h) ------------------------------------------------------ */

/* The stream index of the next word this thread stores. */
static REC_HOT uint64_t rec_ring_index(const struct rec_thread *t)
{
	return t->wbase + (uint64_t)(t->pos - t->ring);
}

/* Makes every word stored so far consumable by a live reader.  Called from
 * the slow path only, after any name definition it wrote (ring.h). */
REC_NOI void rec_ring_publish(struct rec_thread *t)
{
	__atomic_store_n(&t->slot->head, rec_ring_index(t), __ATOMIC_RELEASE);
}

/* Asks spanstat to drain the rings now: a header-only WIRE_KICK, once until
 * the reader clears the flag; never waits. */
static REC_NOI void rec_ring_kick(struct rec_thread *t)
{
	if (__atomic_exchange_n(&t->slot->kicked, 1, __ATOMIC_RELAXED))
		return;
	uint64_t rec[2];
	enc_hdr(rec, WIRE_KICK, WIRE_HDR_SIZE, t->pid, t->tid);
	int fd = atomic_load_explicit(&rec_fd, memory_order_relaxed);
	if (fd >= 0 && write(fd, rec, sizeof rec) < 0) {
		/* a full pipe: the reader is busy with it and will come */
	}
}

/* A descriptor of the ring file for mapping a slot, closed by the caller
 * once mapped; -1 when the path no longer names the file. */
static REC_NOI int rec_shm_open(void)
{
	struct stat st;
	int n = rec_shm_path[0] ? open(rec_shm_path, O_RDWR | O_CLOEXEC) : -1;
	if (n >= 0 &&
	    (fstat(n, &st) != 0 || st.st_dev != rec_shm_dev || st.st_ino != rec_shm_ino)) {
		close(n);
		n = -1;
	}
	return n;
}

/* Maps slot i's parts (its ring; aggregating, its tree and value rows) for
 * t, unless t has them mapped already: the process reserves address space
 * for the slots its threads hold, not for the whole file.  A thread's
 * struct keeps its slot's mappings for the next thread that reuses it.
 * 0, or -1 when a mapping failed. */
static REC_NOI int rec_ring_map(struct rec_thread *t, unsigned i)
{
	if (t->mslot == i + 1 && (t->magg || !rec_agg_mode) &&
	    (t->mvals || !rec_agg_mode || !rec_nvals))
		return 0;
	if (t->mring)
		munmap(t->mring, RING_WORDS * 8u);
	if (t->magg)
		munmap(t->magg, RING_AGG_BYTES);
	if (t->mvals)
		munmap(t->mvals, ring_vals_bytes(rec_nvals));
	t->mslot = 0;
	t->mring = NULL;
	t->magg = NULL;
	t->mvals = NULL;
	int prot = PROT_READ | PROT_WRITE, rc = -1;
	int shm_fd = rec_shm_open();
	if (shm_fd < 0)
		return -1;
	void *r = mmap(NULL, RING_WORDS * 8u, prot, MAP_SHARED, shm_fd, (off_t)ring_words_off(i));
	if (r == MAP_FAILED)
		goto out;
	t->mring = r;
	if (rec_agg_mode) {
		void *a = mmap(NULL, RING_AGG_BYTES, prot, MAP_SHARED, shm_fd,
			       (off_t)ring_agg_off(i));
		if (a == MAP_FAILED)
			goto out;
		t->magg = a;
		if (rec_nvals) {
			void *v = mmap(NULL, ring_vals_bytes(rec_nvals), prot, MAP_SHARED, shm_fd,
				       (off_t)ring_vals_off(i, rec_nvals));
			if (v == MAP_FAILED)
				goto out;
			t->mvals = v;
		}
	}
	t->mslot = i + 1;
	rc = 0;
out:
	close(shm_fd);
	return rc;
}

/* Takes a free slot for t (its first event); -1: none, record through the pipe. */
REC_NOI int rec_ring_attach(struct rec_thread *t, uint64_t now)
{
	t->slot = NULL;
	if (!rec_shm)
		return -1;
	for (unsigned k = 0; k < RING_SLOTS; k++) {
		unsigned i = (t->tid + k) % RING_SLOTS;
		struct ring_slot *s = ring_slot_at(rec_shm, i);
		uint32_t st = RING_FREE;
		if (__atomic_load_n(&s->state, __ATOMIC_RELAXED) != RING_FREE)
			continue;
		if (rec_ring_map(t, i) != 0)
			return -1; /* no address space for it: the pipe */
		if (!__atomic_compare_exchange_n(&s->state, &st, RING_CLAIMED, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		uint64_t tail = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
		s->pid = t->pid;
		s->tid = t->tid;
		s->kicked = 0;
		s->incarnation = rec_incarnation;
		s->base = now;
		s->head = tail; /* 0: the reader resets a slot it frees */
		t->slot = s;
		t->ring = t->mring;
		t->wbase = tail - tail % RING_WORDS;
		t->pos = t->ring + tail % RING_WORDS;
		t->lim = t->pos; /* the first event goes through rec_ring_reserve */
		t->agg = NULL;
		s->mode = RING_MODE_EVENTS;
		if (rec_agg_mode) { /* the reader left the area zeroed: a root only */
			s->mode = RING_MODE_AGG;
			t->agg = t->magg;
			t->anode = ring_agg_nodes(t->agg);
			t->aframe = ring_agg_frames(t->agg);
			t->agg->nodes = 1;
			rec_agg_hash_reset(t);
			t->agg->last_ts = now;
			t->adepth = t->aover = 0;
			t->avals = t->mvals;
		}
		__atomic_store_n(&s->state, RING_OWNED, __ATOMIC_RELEASE);
		/* the first pages the thread's spans write, faulted in now: the
		 * setup's cost, not its first span's */
		if (t->agg) {
			t->aframe[0].ts = 0;
			t->anode[1].count = 0;
			if (t->avals)
				t->avals[(uint64_t)RING_AGG_NODES * rec_nvals] = 0;
		} else {
			__atomic_store_n(t->pos, 0, __ATOMIC_RELAXED); /* beyond head: unread */
		}
		return 0;
	}
	return -1;
}

/* Makes room for `need` (1 or 2) contiguous words at t->pos and moves t->lim
 * so that the hot path comes back here when the ring gets half full (time to
 * kick the reader) or reaches its end.  A full ring is waited on as a full
 * pipe is (rec_write); returns -1 when the words must be dropped. */
static REC_NOI int rec_ring_reserve(struct rec_thread *t, unsigned need)
{
	uint64_t deadline = 0, since = 0, cpu = 0;
	unsigned spins = 0;
	rec_ring_publish(t);
	for (;;) {
		if (t->pos >= t->ring + RING_WORDS) {
			t->wbase += RING_WORDS;
			t->pos = t->ring;
		}
		uint64_t w = rec_ring_index(t);
		uint64_t tail = __atomic_load_n(&t->slot->tail, __ATOMIC_ACQUIRE);
		uint64_t avail = tail <= w && w - tail <= RING_WORDS ? tail + RING_WORDS - w : 0;
		uint64_t contiguous = (uint64_t)(t->ring + RING_WORDS - t->pos);
		if (avail >= need && contiguous < need) { /* a two-word item never wraps */
			__atomic_store_n(t->pos, RING_CTL(RING_CTL_NOP), __ATOMIC_RELEASE);
			t->pos++;
			continue;
		}
		if (avail >= need) {
			uint64_t chunk = avail < contiguous ? avail : contiguous;
			if (avail > RING_WORDS / 2 + need) {
				if (chunk > avail - RING_WORDS / 2)
					chunk = avail - RING_WORDS / 2;
			} else {
				rec_ring_kick(t);
			}
			t->lim = t->pos + chunk;
			if (unlikely(atomic_load_explicit(&rec_nowait, memory_order_relaxed)))
				atomic_store(&rec_nowait, 0);
			rec_waited_since(since, cpu, 1);
			return 0;
		}
		/* full: wait for the reader as rec_write waits for a full pipe */
		t->lim = t->pos;
		rec_ring_kick(t);
		uint64_t now;
		if (rec_wait_round(&deadline, &now) != 0) {
			rec_waited_since(since, cpu, 0);
			return -1;
		}
		if (!since) {
			since = now;
			cpu = rec_thread_cpu();
		}
		if (++spins < REC_SPINS) { /* the reader is draining: it frees room in us */
			sched_yield();	   /* and may need this very core to do it */
			continue;
		}
		struct timespec nap = {0, 20000};
		nanosleep(&nap, NULL);
	}
}

/* Stores one item (a word and n payload words) in the ring; reports the
 * thread's drops first when some are unreported.  0, or -1: dropped. */
static REC_NOI int rec_ring_drops(struct rec_thread *t)
{
	if (t->dropped == t->reported)
		return 0;
	if (t->agg || __atomic_load_n(&rec_on, __ATOMIC_RELAXED) == REC_ON_FILTERED) {
		if (rec_ring_reserve(t, 2) != 0)
			return -1;
		t->pos[1] = t->dropped;
		__atomic_store_n(t->pos, RING_CTL(RING_CTL_DROPPED), __ATOMIC_RELEASE);
		t->pos += 2;
		t->reported = t->dropped;
		return 0;
	}
	/* the tale of the drop (rec_drop_gap): the spans still open below
	 * `low`, then begins for those opened among the dropped events, in
	 * pieces of at most REC_RESYNC_WORDS words, all reserved at once so
	 * that the reader hears all of it or none (pieces after the first keep
	 * every open span: low UINT32_MAX); then how many more are open whose
	 * names are not known (beyond REC_STACK, or not definable), so that
	 * the reader takes their ends without closing a span it knows */
	unsigned low = t->gap && t->low < t->depth ? t->low : t->depth;
	unsigned top = t->depth < REC_STACK ? t->depth : REC_STACK;
	unsigned per = 1u + rec_nvals, n = low < top ? top - low : 0;
	unsigned piece = (REC_RESYNC_WORDS - 2) / per, pieces = n ? (n + piece - 1) / piece : 1;
	unsigned beyond = t->depth - (low > top ? low : top);
	if (rec_ring_reserve(t, 2 * pieces + n * per + 2) != 0)
		return -1;
	uint64_t v[RECV_MAX];
	if (rec_nvals)
		recv_read(&rec_vspec, &t->vt, v);
	uint64_t last = t->last;
	unsigned k = 0, stop = 0;
	do {
		uint64_t *ctl = t->pos, *w = ctl + 2;
		unsigned first = k;
		for (; k < n && k - first < piece; k++, w += per) { /* at their own times */
			uint64_t key = t->stk[low + k], at = t->fts[low + k];
			const struct rec_centry *c = rec_cached(t, key);
			if (!c) { /* this one and those above stay unknown */
				stop = 1;
				break;
			}
			uint64_t delta = (int64_t)(at - last) > 0 ? at - last : 0;
			if (delta >> WIRE_DELTA_BITS)
				delta = 0; /* too far: at the previous time */
			last += delta;
			w[0] = c->word | REC_OP(WIRE_OP_BEGIN) | delta;
			for (unsigned j = 0; j < rec_nvals; j++)
				w[1 + j] = v[j];
		}
		ctl[1] = rec_sat32(t->dropped) | (uint64_t)(first ? UINT32_MAX : low) << 32;
		__atomic_store_n(ctl, RING_CTL(RING_CTL_RESYNC | (uint64_t)(k - first) << 8),
				 __ATOMIC_RELEASE);
		t->pos = w;
	} while (k < n && !stop);
	if (beyond + (n - k)) {
		t->pos[1] = beyond + (n - k);
		__atomic_store_n(t->pos, RING_CTL(RING_CTL_UNNAMED), __ATOMIC_RELEASE);
		t->pos += 2;
	}
	t->last = last;
	t->reported = t->dropped;
	t->gap = 0;
	return 0;
}

REC_NOI int rec_ring_putn(struct rec_thread *t, uint64_t word, const uint64_t *pl, unsigned n)
{
	if (rec_ring_drops(t) != 0)
		return -1;
	if (t->pos + 1 + n > t->lim && rec_ring_reserve(t, 1u + n) != 0)
		return -1;
	for (unsigned i = 0; i < n; i++)
		t->pos[1 + i] = pl[i];
	__atomic_store_n(t->pos, word, __ATOMIC_RELEASE);
	t->pos += 1 + n;
	return 0;
}

static REC_NOI int rec_ring_put(struct rec_thread *t, uint64_t word, int has_val, uint64_t val)
{
	return rec_ring_putn(t, word, &val, (unsigned)has_val);
}

/* A control word the decoder reads in the events (RING_CTL_WAITED, _POP)
 * and its payload word, into the thread's ring or record: 0, or -1 when the
 * ring had no room. */
static REC_NOI int rec_put_ctl(struct rec_thread *t, uint64_t word, uint64_t payload)
{
	if (t->slot)
		return rec_ring_putn(t, word, &payload, 1);
	if (t->pos + 2 > t->rec + REC_WORDS)
		rec_flush(t);
	t->pos[0] = word;
	t->pos[1] = payload;
	t->pos += 2;
	return 0;
}

/* Tells the thread's stream that it waited for room right after its last
 * event (rec_waited_since): a control word with the wait's on-CPU part in
 * microseconds, then its length in ns.  A note that finds no room is lost
 * with the event words; the process's WIRE_WAITED total still has it. */
static REC_NOI void rec_put_waited(struct rec_thread *t)
{
	uint64_t ns = t->wpend_ns, us = t->wpend_cpu / 1000;
	t->wpend_ns = t->wpend_cpu = 0;
	/* only after an event timed before the wait (not one timed after it,
	 * as when defining its name waited) */
	if (t->agg || t->calib || (int64_t)(t->last - t->wpend_end) > 0)
		return;
	/* on the pipe, a full record is sent first: told after the next event */
	rec_put_ctl(t, RING_CTL(RING_CTL_WAITED | (us > UINT32_MAX ? UINT32_MAX : us) << 8), ns);
}

/* A typed argument of the thread's innermost open span (RING_CTL_ARG):
 * key's id and the type in the control word, the value in its payload (a
 * string's: the id of skey, its kept text).  An aggregating thread's tree
 * has no room for it: counted there.  The caller holds t->busy. */
REC_NOI void rec_emit_arg(struct rec_thread *t, uint64_t key, unsigned type, uint64_t val,
			  uint64_t skey)
{
	if (t->agg) {
		t->agg->args++;
		return;
	}
	const struct rec_centry *c = rec_cached(t, key);
	uint64_t id = c ? c->word >> WIRE_ID_SHIFT : 0;
	if (c && skey) { /* may take key's cache entry: id is read */
		const struct rec_centry *s = rec_cached(t, skey);
		c = s;
		val = s ? s->word >> WIRE_ID_SHIFT : 0;
	}
	if (!c) {
		rec_drop(t, 2);
		return;
	}
	if (t->slot && unlikely(t->dropped != t->reported) && rec_ring_drops(t) != 0) {
		rec_drop_gap(t, 2, REC_OP(WIRE_OP_INSTANT), t->last);
		return;
	}
	if (rec_put_ctl(t, RING_CTL(RING_CTL_ARG | id << 8 | (uint64_t)type << WIRE_ARG_TYPE_SHIFT),
			val))
		rec_drop_gap(t, 2, REC_OP(WIRE_OP_INSTANT), t->last);
}

/* The thread ended its n innermost open spans at now without their names
 * (RING_CTL_POP), or with `to`, every span open above depth n
 * (RING_CTL_POPTO); the caller holds t->busy. */
REC_NOI void rec_emit_pop(struct rec_thread *t, uint64_t n, uint64_t now, int to)
{
	if (t->slot && unlikely(t->dropped != t->reported) && rec_ring_drops(t) != 0) {
		rec_drop_gap(t, 2, REC_OP(WIRE_OP_END), now);
		return;
	}
	uint64_t delta = (int64_t)(now - t->last) > 0 ? now - t->last : 0;
	if (delta >> WIRE_DELTA_BITS)
		delta = 0; /* too far: at the last event's time */
	if (rec_put_ctl(t,
			RING_CTL((to ? RING_CTL_POPTO : RING_CTL_POP) |
				 (n > UINT32_MAX ? UINT32_MAX : n) << 8),
			delta))
		rec_drop_gap(t, 2, REC_OP(WIRE_OP_END), now);
	else
		t->last += delta;
}

/* The thread ends: its last word, then the slot goes back to the reader. */
REC_NOI void rec_ring_detach(struct rec_thread *t, uint64_t ts)
{
	rec_ring_put(t, RING_CTL(RING_CTL_EXIT), 1, ts);
	rec_ring_publish(t);
	__atomic_store_n(&t->slot->state, RING_DONE, __ATOMIC_RELEASE);
	t->slot = NULL;
}

/* Maps the ring file spanstat named (ring.h); NULL: every thread uses the pipe. */
REC_NOI void *rec_map_rings(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *m = MAP_FAILED;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size >= ring_file_bytes(rec_nvals))
		m = mmap(NULL, RING_DATA_OFF, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	const struct ring_file *f = m;
	/* the values it was made for must be ours, or words would not frame
	 * (their count), or would be summed under other names (their layout:
	 * the pipe's decoder tells the session they are not its values) */
	if (f->magic != RING_MAGIC || f->slots != RING_SLOTS || f->words != RING_WORDS ||
	    f->vals != rec_nvals || f->layout != rec_vlayout) {
		munmap(m, RING_DATA_OFF);
		close(fd);
		return NULL;
	}
	rec_shm_dev = st.st_dev;
	rec_shm_ino = st.st_ino;
	close(fd);
	if (strlen(path) >= sizeof rec_shm_path) { /* cannot be opened again: no slots */
		munmap(m, RING_DATA_OFF);
		return NULL;
	}
	strcpy(rec_shm_path, path);
	return m;
}

REC_NOI __attribute__((noinline)) void rec_late_event(uint64_t key)
{
	struct ring_file *f = rec_shm;
	if (f && key && key != REC_CODE_TAG) /* a NULL name is no event */
		__atomic_fetch_add(&f->late, 1, __ATOMIC_RELAXED);
}

/* ---- appending an event -------------------------------------------------- */

/* Appends one event for key at `now` (no earlier than t->last) to the
 * thread's ring or record; the caller holds t->busy. */
REC_NOI void rec_emit(struct rec_thread *t, uint64_t key, uint64_t op, uint64_t now, int has_val,
		      int64_t val, const uint64_t *v)
{
	uint64_t own[RECV_MAX];
	unsigned nv = 0;
	if (rec_nvals && (op == REC_OP(WIRE_OP_BEGIN) || op == REC_OP(WIRE_OP_END))) {
		if (!v) { /* the values now */
			recv_read(&rec_vspec, &t->vt, own);
			v = own;
		}
		nv = rec_nvals;
	} else {
		v = NULL;
	}
	const struct rec_centry *c = rec_cached(t, key);
	if (!c) {
		rec_drop_gap(t, 1u + (unsigned)has_val + nv, op, now);
		return;
	}
	if (t->agg) {
		rec_agg_op(t, key, (uint32_t)(c->word >> WIRE_ID_SHIFT), op, now, v, *t->swmark);
		return;
	}
	/* a drop's tale first: it may move t->last (rec_ring_drops) */
	if (t->slot && unlikely(t->dropped != t->reported) && rec_ring_drops(t) != 0) {
		rec_drop_gap(t, 1u + (unsigned)has_val + nv, op, now);
		return;
	}
	if ((int64_t)(now - t->last) < 0) /* another CPU's TSC a little behind */
		now = t->last;
	uint64_t delta = now - t->last;
	if (t->slot) {
		if (delta >> WIRE_DELTA_BITS) { /* deltas restart at an absolute ts */
			if (rec_ring_put(t, RING_CTL(RING_CTL_TS), 1, now) != 0) {
				rec_drop_gap(t, 1u + (unsigned)has_val + nv, op, now);
				return;
			}
			t->last = now;
			delta = 0;
		}
		uint64_t u;
		memcpy(&u, &val, sizeof u);
		if (rec_ring_putn(t, c->word | op | delta, v ? v : &u,
				  v ? nv : (unsigned)has_val) != 0)
			rec_drop_gap(t, 1u + (unsigned)has_val + nv, op, now);
		else
			t->last = now;
		if (unlikely(t->wpend_ns))
			rec_put_waited(t);
		return;
	}
	if ((delta >> WIRE_DELTA_BITS) || t->pos + 1 + has_val + nv > t->rec + REC_WORDS) {
		rec_flush(t);
		t->base = t->last = now;
		delta = 0;
	}
	uint64_t *p = t->pos;
	p[0] = c->word | op | delta;
	if (has_val)
		memcpy(&p[1], &val, sizeof val);
	if (nv)
		memcpy(&p[1], v, nv * sizeof *v);
	t->pos = p + 1 + has_val + nv;
	t->last = now;
	if (unlikely(t->wpend_ns))
		rec_put_waited(t);
}
