/* offcpu.c: context-switch records to per-thread off-CPU time (offcpu.h).
 * A software event (PERF_COUNT_SW_DUMMY, context_switch, inherit) on the
 * child, one per CPU: the kernel refuses to map an inherited event that
 * follows a task on any CPU (all its children would write one ring), so, as
 * perf record does, each CPU gets its own, and the records of every thread
 * and child process land in the ring of the CPU they switched on.  A thread
 * that migrates switches out in one ring and back in in another, so each
 * drain gathers the records of all rings, sorts them by time and takes
 * those up to the instant the drain began (all written by then); later
 * ones wait for the next drain.  Per thread: the intervals it spent switched
 * out, in time order, with the running sum before each, so that offcpu_at()
 * is a binary search; a switch-out without its switch-in yet counts up to
 * the time asked.  A record older than its thread's last is skipped.
 * Ends are kept as they are read, in no particular order: each thread's
 * latest exit, and each process's execs in time order (on its main
 * thread's entry, the one an exec leaves: pid == tid). */
#include "config.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "cause.h"
#include "offcpu.h"
#include <sys/syscall.h>
#include "u64map.h"

#define OC_PAGES 256u /* data pages per CPU: 1 MiB, some 43,000 records */
#define OC_MAX_CPUS 1024

struct oc_interval {
	uint64_t out, in;
};

struct oc_thread {
	uint32_t pid, tid;
	struct oc_interval *iv;
	uint64_t *before; /* switched-out ns before interval i */
	size_t n, cap;
	size_t cur;	  /* offcpu_at's last answer: spans come in time order */
	uint64_t pending; /* switched out at this time, not yet back (0: running) */
	uint64_t last;	  /* the latest time taken */
	uint64_t exit;	  /* its PERF_RECORD_EXIT's time (0: none yet) */
	uint64_t *exec;	  /* main thread: the process's execs, in time order */
	size_t nexec, capexec;
};

/* One CPU's event and ring. */
struct oc_ring {
	int fd;
	struct perf_event_mmap_page *page;
	uint8_t *data;
	uint64_t data_size;
};

/* A switch read from a ring, waiting to be taken in time order. */
struct oc_rec {
	uint64_t ts;
	uint32_t pid, tid;
	uint32_t out, seq;
};

struct offcpu {
	struct oc_ring *ring;
	unsigned nring;
	size_t map_len;
	struct oc_rec *pend; /* read, not taken yet */
	size_t npend, cappend;
	uint32_t seq;
	struct u64map index; /* pid << 32 | tid -> thread + 1 */
	struct oc_thread *th;
	size_t nth, capth;
	size_t last; /* the thread found last, + 1 */
	size_t nintervals;
	struct offcpu_stats st;
	uint8_t rec[512];				     /* a record that wraps a ring's end */
	void (*tap)(void *ctx, const void *rec, size_t len); /* offcpu_set_tap */
	void *tap_ctx;
};

void offcpu_set_tap(struct offcpu *o, void (*fn)(void *ctx, const void *rec, size_t len), void *ctx)
{
	o->tap = fn;
	o->tap_ctx = ctx;
}

/* A switch about to be taken, to the tap as the record offcpu_feed takes. */
static void oc_tap_switch(struct offcpu *o, const struct oc_rec *w)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t ts;
	} r = {{PERF_RECORD_SWITCH, (uint16_t)(w->out ? PERF_RECORD_MISC_SWITCH_OUT : 0),
		(uint16_t)sizeof r},
	       w->pid,
	       w->tid,
	       w->ts};
	o->tap(o->tap_ctx, &r, sizeof r);
}

struct offcpu *offcpu_new(void)
{
	return calloc(1, sizeof(struct offcpu));
}

/* The switch-record event, disabled, user-space only; with task and exec
 * records (offcpu_open) when asked. */
static void oc_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof *a);
	a->size = sizeof *a;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->context_switch = 1;
	a->sample_id_all = 1;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

bool offcpu_probe(void)
{
	struct perf_event_attr a;
	oc_attr(&a);
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	close((int)fd);
	return true;
}

/* Closes o's events and unmaps their rings. */
static void oc_unmap(struct offcpu *o)
{
	for (unsigned i = 0; i < o->nring; i++) {
		munmap(o->ring[i].page, o->map_len);
		close(o->ring[i].fd);
	}
	free(o->ring);
	o->ring = NULL;
	o->nring = 0;
}

int offcpu_open(struct offcpu **out, pid_t pid, bool switches, char **cause)
{
	struct offcpu *o = offcpu_new();
	if (!o)
		return -ENOMEM;
	int r = offcpu_follow(o, pid, switches, cause);
	if (r < 0) {
		offcpu_close(o);
		return r;
	}
	*out = o;
	return 0;
}

int offcpu_follow(struct offcpu *o, pid_t pid, bool switches, char **cause)
{
	int r = offcpu_drain(o); /* what the events told so far stays */
	oc_unmap(o);
	if (r < 0)
		return r;
	struct perf_event_attr a;
	oc_attr(&a);
	a.context_switch = switches;
	a.task = 1; /* PERF_RECORD_EXIT when a thread ends (and FORK, skipped) */
	a.comm = 1;
	a.comm_exec = 1; /* PERF_RECORD_COMM marked as an exec's */
	a.inherit = 1;
	a.enable_on_exec = 1;
	a.watermark = 1;
	a.wakeup_watermark = OC_PAGES / 2 * 4096u;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu < 1)
		ncpu = 1;
	if (ncpu > OC_MAX_CPUS)
		ncpu = OC_MAX_CPUS;
	if (!(o->ring = calloc((size_t)ncpu, sizeof *o->ring)))
		return -ENOMEM;
	long pg = sysconf(_SC_PAGESIZE);
	if (pg <= 0)
		pg = 4096;
	o->map_len = (size_t)(OC_PAGES + 1) * (size_t)pg;
	int err = 0;
	for (long cpu = 0; cpu < ncpu; cpu++) {
		long fd = syscall(SYS_perf_event_open, &a, pid, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno != ENODEV && errno != EINVAL) /* EINVAL, ENODEV: not online */
				err = -errno;
			else if (!err)
				err = -errno;
			continue;
		}
		void *m = mmap(NULL, o->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
		if (m == MAP_FAILED) {
			err = -errno;
			close((int)fd);
			continue;
		}
		struct oc_ring *r = &o->ring[o->nring++];
		r->fd = (int)fd;
		r->page = m;
		r->data_size = r->page->data_size ? r->page->data_size : o->map_len - (size_t)pg;
		r->data =
			(uint8_t *)m + (r->page->data_offset ? r->page->data_offset : (uint64_t)pg);
	}
	if (!o->nring) {
		cause_set(cause, err ? err : -ENODEV, "cannot record context switches: %s",
			  strerror(err ? -err : ENODEV));
		oc_unmap(o);
		return err ? err : -ENODEV;
	}
	return 0;
}

void offcpu_close(struct offcpu *o)
{
	if (!o)
		return;
	oc_unmap(o);
	free(o->pend);
	for (size_t i = 0; i < o->nth; i++) {
		free(o->th[i].iv);
		free(o->th[i].before);
		free(o->th[i].exec);
	}
	free(o->th);
	u64map_release(&o->index);
	free(o);
}

const struct offcpu_stats *offcpu_stats(const struct offcpu *o)
{
	return &o->st;
}

static inline uint64_t oc_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

static struct oc_thread *oc_find(struct offcpu *o, uint32_t pid, uint32_t tid)
{
	if (o->last && o->th[o->last - 1].pid == pid && o->th[o->last - 1].tid == tid)
		return &o->th[o->last - 1];
	size_t i = (size_t)u64map_get(&o->index, oc_key(pid, tid));
	if (!i)
		return NULL;
	o->last = i;
	return &o->th[i - 1];
}

static struct oc_thread *oc_thread(struct offcpu *o, uint32_t pid, uint32_t tid)
{
	struct oc_thread *t = oc_find(o, pid, tid);
	if (t)
		return t;
	if (GROW(o->th, o->nth + 1, o->capth, 16) < 0)
		return NULL;
	if (u64map_put(&o->index, oc_key(pid, tid), o->nth + 1) < 0)
		return NULL;
	t = &o->th[o->nth++];
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->tid = tid;
	o->last = o->nth;
	o->st.threads++;
	return t;
}

/* One switch of a thread: out (switched out at ts) or back in. */
static int oc_switch(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t ts, int out)
{
	struct oc_thread *t = oc_thread(o, pid, tid);
	if (!t)
		return -ENOMEM;
	if (ts < t->last || ts == 0) { /* not in this thread's order */
		o->st.bad++;
		return 0;
	}
	t->last = ts;
	o->st.records++;
	if (out) {
		if (!t->pending)
			t->pending = ts;
		return 0;
	}
	if (!t->pending) /* the first record of a thread: it was running */
		return 0;
	if (o->nintervals >= OFFCPU_MAX_INTERVALS) {
		o->st.refused++;
		t->pending = 0;
		return 0;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct oc_interval *iv = realloc(t->iv, cap * sizeof *iv);
		if (!iv)
			return -ENOMEM;
		t->iv = iv;
		uint64_t *b = realloc(t->before, cap * sizeof *b);
		if (!b)
			return -ENOMEM;
		t->before = b;
		t->cap = cap;
	}
	size_t n = t->n;
	t->before[n] = n ? t->before[n - 1] + (t->iv[n - 1].in - t->iv[n - 1].out) : 0;
	t->iv[n] = (struct oc_interval){t->pending, ts};
	t->n = n + 1;
	t->pending = 0;
	o->nintervals++;
	return 0;
}

/* Thread (pid, tid) ended at ts. */
static int oc_exit(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct oc_thread *t = oc_thread(o, pid, tid);
	if (!t)
		return -ENOMEM;
	if (ts > t->exit)
		t->exit = ts;
	return 0;
}

/* Process pid's image was replaced at ts: kept in time order. */
static int oc_exec(struct offcpu *o, uint32_t pid, uint64_t ts)
{
	struct oc_thread *t = oc_thread(o, pid, pid);
	if (!t)
		return -ENOMEM;
	if (t->nexec == t->capexec) {
		size_t cap = t->capexec ? 2 * t->capexec : 4;
		if (cap > OFFCPU_MAX_INTERVALS) { /* a ring full of garbage */
			o->st.refused++;
			return 0;
		}
		uint64_t *e = realloc(t->exec, cap * sizeof *e);
		if (!e)
			return -ENOMEM;
		t->exec = e;
		t->capexec = cap;
	}
	size_t i = t->nexec++;
	for (; i > 0 && t->exec[i - 1] > ts; i--)
		t->exec[i] = t->exec[i - 1];
	t->exec[i] = ts;
	return 0;
}

/* Keeps a switch read from a ring until it is taken in time order. */
static int oc_push(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t ts, int out)
{
	if (GROW(o->pend, o->npend + 1, o->cappend, 1024) < 0)
		return -ENOMEM;
	o->pend[o->npend++] = (struct oc_rec){ts, pid, tid, (uint32_t)out, o->seq++};
	return 0;
}

static int oc_cmp(const void *a, const void *b)
{
	const struct oc_rec *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Takes the kept switches up to cutoff, in time order. */
static int oc_take(struct offcpu *o, uint64_t cutoff)
{
	if (!o->npend)
		return 0;
	qsort(o->pend, o->npend, sizeof *o->pend, oc_cmp);
	size_t k = 0;
	int r = 0;
	for (; k < o->npend && o->pend[k].ts <= cutoff && r == 0; k++) {
		if (o->tap)
			oc_tap_switch(o, &o->pend[k]);
		r = oc_switch(o, o->pend[k].pid, o->pend[k].tid, o->pend[k].ts,
			      (int)o->pend[k].out);
	}
	memmove(o->pend, o->pend + k, (o->npend - k) * sizeof *o->pend);
	o->npend -= k;
	return r;
}

/* One whole record (its header's size bytes at p). */
static int oc_record(struct offcpu *o, const uint8_t *p, size_t size)
{
	struct perf_event_header h;
	memcpy(&h, p, sizeof h);
	if (h.type == PERF_RECORD_SWITCH) {
		uint32_t id[2];
		uint64_t ts;
		if (size < sizeof h + 16) {
			o->st.bad++;
			return 0;
		}
		memcpy(id, p + sizeof h, sizeof id);
		memcpy(&ts, p + sizeof h + 8, sizeof ts);
		return oc_push(o, id[0], id[1], ts, !!(h.misc & PERF_RECORD_MISC_SWITCH_OUT));
	}
	if (h.type == PERF_RECORD_LOST) {
		uint64_t lost;
		if (size < sizeof h + 16) {
			o->st.bad++;
			return 0;
		}
		memcpy(&lost, p + sizeof h + 8, sizeof lost);
		o->st.lost = o->st.lost + lost < lost ? UINT64_MAX : o->st.lost + lost;
	}
	if (h.type == PERF_RECORD_EXIT) { /* u32 pid, ppid, tid, ptid; u64 time */
		uint32_t id[4];
		uint64_t ts;
		if (size < sizeof h + 24) {
			o->st.bad++;
			return 0;
		}
		memcpy(id, p + sizeof h, sizeof id);
		memcpy(&ts, p + sizeof h + 16, sizeof ts);
		if (ts && o->tap)
			o->tap(o->tap_ctx, p, size);
		return ts ? oc_exit(o, id[0], id[2], ts) : 0;
	}
	if (h.type == PERF_RECORD_COMM && (h.misc & PERF_RECORD_MISC_COMM_EXEC)) {
		/* u32 pid, tid; the name; then sample_id, whose time ends it */
		uint32_t id[2];
		uint64_t ts;
		if (size < sizeof h + 8 + 16) {
			o->st.bad++;
			return 0;
		}
		memcpy(id, p + sizeof h, sizeof id);
		memcpy(&ts, p + size - sizeof ts, sizeof ts);
		if (ts && o->tap)
			o->tap(o->tap_ctx, p, size);
		return ts ? oc_exec(o, id[0], ts) : 0;
	}
	return 0; /* other records (FORK, a rename's COMM): not asked for, skipped */
}

int offcpu_feed(struct offcpu *o, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int r = 0;
	while (len >= sizeof(struct perf_event_header) && r == 0) {
		struct perf_event_header h;
		memcpy(&h, p, sizeof h);
		if (h.size < sizeof h || h.size > len) {
			o->st.bad++;
			len = 0;
			break;
		}
		r = oc_record(o, p, h.size);
		p += h.size;
		len -= h.size;
	}
	if (len && r == 0)
		o->st.bad++;
	return r ? r : oc_take(o, UINT64_MAX);
}

/* Reads every record ring r holds into the kept switches. */
static int oc_read_ring(struct offcpu *o, struct oc_ring *rg)
{
	uint64_t head = __atomic_load_n(&rg->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = rg->page->data_tail;
	int r = 0;
	if (head - tail > rg->data_size) { /* cannot be: start over from head */
		o->st.bad++;
		tail = head;
	}
	while (tail + sizeof(struct perf_event_header) <= head && r == 0) {
		uint64_t off = tail % rg->data_size;
		struct perf_event_header h;
		uint8_t *p = rg->data + off;
		if (off + sizeof h <= rg->data_size) {
			memcpy(&h, p, sizeof h);
		} else {
			size_t first = (size_t)(rg->data_size - off);
			memcpy(&h, p, first);
			memcpy((uint8_t *)&h + first, rg->data, sizeof h - first);
		}
		if (h.size < sizeof h || h.size > head - tail) {
			o->st.bad++;
			tail = head;
			break;
		}
		if (off + h.size > rg->data_size) { /* wraps: copy it out */
			if (h.size <= sizeof o->rec) {
				size_t first = (size_t)(rg->data_size - off);
				memcpy(o->rec, p, first);
				memcpy(o->rec + first, rg->data, h.size - first);
				r = oc_record(o, o->rec, h.size);
			}
		} else {
			r = oc_record(o, p, h.size);
		}
		tail += h.size;
	}
	__atomic_store_n(&rg->page->data_tail, tail, __ATOMIC_RELEASE);
	return r;
}

int offcpu_drain(struct offcpu *o)
{
	if (!o)
		return 0;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	uint64_t cutoff = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	int r = 0;
	for (unsigned i = 0; i < o->nring && r == 0; i++)
		r = oc_read_ring(o, &o->ring[i]);
	return r ? r : oc_take(o, cutoff);
}

static uint64_t oc_end(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t after,
		       bool alive_then)
{
	if (!o)
		return 0;
	struct oc_thread *t = oc_find(o, pid, tid);
	uint64_t end = t && t->exit >= after ? t->exit : 0, last = t ? t->last : 0;
	struct oc_thread *m = tid == pid ? t : oc_find(o, pid, pid);
	for (size_t i = 0; m && i < m->nexec; i++) /* the first exec from then on */
		if (m->exec[i] >= after) {
			if (!end || m->exec[i] < end)
				end = m->exec[i];
			break;
		}
	return end ? end : alive_then && last >= after ? last : 0;
}

uint64_t offcpu_end(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t after)
{
	return oc_end(o, pid, tid, after, true);
}

uint64_t offcpu_ended(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t after)
{
	return oc_end(o, pid, tid, after, false);
}

uint64_t offcpu_at(struct offcpu *o, uint32_t pid, uint32_t tid, uint64_t ns)
{
	struct oc_thread *t = oc_find(o, pid, tid);
	if (!t)
		return 0;
	/* the first interval that starts after ns: where the last one was,
	 * as a thread's events come in time order, else a binary search */
	size_t lo = t->cur, hi = t->n;
	if (lo > hi || (lo && t->iv[lo - 1].out > ns) || (lo < hi && t->iv[lo].out <= ns)) {
		lo = 0;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (t->iv[mid].out <= ns)
				lo = mid + 1;
			else
				hi = mid;
		}
		t->cur = lo;
	}
	uint64_t off = 0;
	if (lo) {
		const struct oc_interval *v = &t->iv[lo - 1];
		off = t->before[lo - 1] + (ns < v->in ? ns - v->out : v->in - v->out);
	}
	if (lo == t->n && t->pending && ns > t->pending)
		off += ns - t->pending;
	return off;
}
