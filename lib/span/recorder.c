/* recorder.c: libspanstat, the span recorder that runs inside the target.  It
 * owns the connection to spanstat's pipe (found through the SPANSTAT_*
 * environment of spanenv.h), per-thread event buffers, name interning and
 * the process's life cycle on the wire (hello, thread names and exits, fork,
 * fatal signals, exit).  It never prints, never exits, and never allocates or
 * takes a lock on the recording path after a thread's first event.
 *
 * Hot path (spanstat_begin/end, __cyg_profile_func_enter/exit): one test of
 * rec_on and of the thread's guard and queue, the guard set, a timestamp, a
 * lookup in the thread's direct-mapped name cache, one 8-byte store below
 * t->lim (or the thread's tree, aggregating), the guard cleared.
 * Everything else (first event of a thread, a name not in the cache, a full
 * record or half-full ring, a delta that does not fit 40 bits, a fork child)
 * goes through rec_apply(); a call made by a signal handler that interrupted
 * another is queued (see "signal handlers" below).
 *
 * Where the words go: a thread that gets a slot in spanstat's ring file
 * (ring.h, SPANSTAT_SHM) stores them straight into its ring, shared with
 * spanstat, so recording makes no system call and a process killed by
 * SIGKILL loses nothing it stored; the slow path publishes how far the ring
 * is filled, wakes spanstat (WIRE_KICK) when it is half full and waits as for
 * a full pipe when it is full.  A thread without a slot (no ring file, or
 * more threads than slots) fills a WIRE_EVENTS record and writes it to the
 * pipe when full.  Names, hellos, thread names and exits always take the
 * pipe.
 *
 * Connection: the inherited write end (SPANSTAT_FD) is checked against
 * SPANSTAT_PIPE_ID; we reopen the pipe as a private non-blocking write end
 * (and a read end we never read, so that a dead spanstat makes our writes fail
 * with EAGAIN instead of raising SIGPIPE), both close-on-exec at high fd
 * numbers.  Every write first checks with fstat() that the fd still is our
 * pipe and reconnects through SPANSTAT_PIPE when the target closed or reused
 * it.  That check is one fcntl(F_GETFL) (our description carries the unusual
 * flag set O_NONBLOCK|O_APPEND|O_NOATIME) and, every REC_STAT_EVERY writes of
 * a thread, an fstat() of the pipe's identity: fstat costs twice as much and
 * the flush is a tenth of the per-pair budget.
 *
 * Once connected, the inherited write end is made close-on-exec: an exec'd
 * image gets a descriptor of the pipe (at the number SPANSTAT_FD names) only
 * from the exec wrappers, and only when the environment it is given still
 * names our pipe.  A process that dropped the variables passes nothing on.
 *
 * Privileged processes (AT_SECURE: setuid, setgid, file capabilities): the
 * library stays off entirely.  It reads no variable, opens and writes
 * nothing, installs no handler, and its exec wrappers only call through, so
 * that nobody can have such a process send its spans and load addresses to a
 * pipe of their choosing. */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "encode.h"
#include "filter.h"
#include "ring.h"
#include "spanenv.h"
#define SPANSTAT_NO_INLINE /* we define the functions the wrappers call */
#include "spanstat.h"
#include "values.h"
#include "wire.h"

#define REC_NOI __attribute__((no_instrument_function))
#define REC_API __attribute__((visibility("default"), no_instrument_function))
#define REC_HOT __attribute__((always_inline, no_instrument_function)) inline
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define REC_WORDS (WIRE_MAX_RECORD / 8u) /* a whole record, header included */
#define REC_FIRST ENC_EVENTS_FIRST_WORD	 /* first event word */
#define REC_CACHE 256u			 /* per-thread name cache entries */
#define REC_TABLE_SIZE (1u << 18)	 /* global intern table slots */
#define REC_PROBES 128u			 /* probes before "table full" */
#define REC_CODE_TAG (UINT64_C(1) << 63) /* key of a code address, not a string */
#define REC_WAIT_MS 100			 /* longest wait on a full pipe per write */
#define REC_EXIT_WAIT_MS 1000		 /* longest wait for the final records, in all */
#define REC_STAT_EVERY 64u		 /* writes between full identity checks */
#define REC_FL_MASK (O_ACCMODE | O_NONBLOCK | O_APPEND | O_NOATIME)
#define REC_OP(op) ((uint64_t)(op) << WIRE_OP_SHIFT)
#define REC_ALTSTACK (64u << 10)    /* per-thread signal stack: a stack overflow still flushes */
#define REC_STACK 1024u		    /* open spans followed per thread */
#define REC_RESYNC_WORDS 512u	    /* the most words a drop's tale takes in a ring */
#define REC_JMPS 8u		    /* setjmp buffers remembered per thread */
#define REC_SPINS 2000u		    /* a full ring: yields to the reader before naps */
#define REC_QLEN 1024u		    /* events queued by signal handlers per thread */
#define REC_QENDS 64u		    /* of which kept for ends, so that begun spans can end */
#define REC_ON 1		    /* rec_on: recording */
#define REC_ON_FILTERED 2	    /* rec_on: recording through the filters */
#define REC_ON_AGG 3		    /* rec_on: aggregating in the thread's tree (ring.h) */
#define REC_ON_VALUES 4		    /* rec_on: begins and ends carry values (values.h) */
#define REC_AGG_NONE RING_AGG_NODES /* a frame of a span the tree had no room for */
#ifdef HAVE_SECURE_GETENV
#define rec_getenv secure_getenv /* a second line: rec_connect checked AT_SECURE */
#else
#define rec_getenv getenv
#endif

/* One direct-mapped cache entry: key (name pointer, or code address with
 * REC_CODE_TAG) and its id already shifted into place in an event word. */
struct rec_centry {
	uint64_t key;
	uint64_t word;
};

/* A setjmp buffer, the thread's span depth when it was filled, and the
 * stack pointer of setjmp's caller (where a longjmp to it resumes). */
struct rec_jmp {
	const void *env;
	uintptr_t sp;
	unsigned depth;
	uint32_t adepth, aover; /* aggregating: the tree's open spans then */
};

/* What the filters say of a name (filter.h's RECF_*). */
struct rec_fcentry {
	uint64_t key;
	unsigned cls;
};

/* Filter state of an open span. */
#define REC_F_SENT 1u	 /* its begin was sent */
#define REC_F_PENDING 2u /* it is sent if it lasts --min-duration */
#define REC_F_INSIDE 4u	 /* inside a --filter match (or no --filter) */
#define REC_F_BLOCKED 8u /* an --exclude match or under one */
#define REC_F_SEND 16u	 /* the filters let it through */
#define REC_F_ROOT 0u	 /* what the outermost span's missing parent says */

/* An event that came while the thread was inside the recorder (a signal
 * handler interrupted it): applied, in order, by the thread's next call. */
struct rec_qev {
	uint64_t key, op, ts;
	int64_t val;
	uint32_t has_val, nv;
};

/* A thread's recording state.  Buffers are mmap'd once, kept on a global
 * list forever and reused by later threads once their thread has ended.
 * The first page holds what belongs to one process (position, ownership of
 * a ring slot, the entry guard) and is wiped in a child made by any fork,
 * _Fork() or clone() without CLONE_VM (MADV_WIPEONFORK): the child's next
 * event finds pid 0, lim and agg NULL, and starts a process of its own
 * (rec_new_process) instead of writing into its parent's ring. */
struct rec_thread {
	/* -- wiped on fork (REC_WIPED bytes) -- */
	uint64_t *pos;		/* next free event word: in rec, or in the ring */
	uint64_t *lim;		/* the hot path writes below this */
	uint64_t last;		/* timestamp of the previous event (or the base) */
	uint64_t base;		/* base timestamp of the record in progress */
	uintptr_t guard;	/* inside the recorder (a stack address of the call), else 0 */
	unsigned nq;		/* events queued by nested calls (q), applied by the next call */
	unsigned qskip;		/* begins the full queue refused: their ends are dropped too */
	uint64_t dropped;	/* event words this thread dropped, in all */
	uint64_t reported;	/* `dropped` as of the last record that got through */
	unsigned gap;		/* 1: a dropped event broke the stream's stack (rec_drop_gap) */
	uint64_t wpend_ns;	/* a wait for room not yet told in the stream (rec_put_waited) */
	uint64_t wpend_cpu;	/* of it, ns on the CPU */
	uint64_t wpend_end;	/* rec_now() when it ended */
	unsigned low;		/* since then, the fewest spans open: those below stayed open */
	uint32_t pid, tid;	/* pid 0: a fork child that has not started yet */
	uint32_t seq;		/* sequence number of the next events record */
	atomic_int busy;	/* slow path / flush in progress: a try-lock, never waited on */
	struct ring_slot *slot; /* ring mode (ring.h): our slot; NULL: the pipe */
	struct ring_agg *agg;	/* aggregate mode: the slot's tree; NULL: events */
	struct ring_agg_node *anode;
	struct ring_agg_frame *aframe;
	uint32_t adepth;		 /* open spans in the tree (agg->depth, private copy) */
	uint32_t aover;			 /* open spans beyond RING_AGG_DEPTH */
	uint64_t *ring;			 /* the slot's words */
	uint64_t *avals;		 /* aggregate mode with values: the slot's value rows */
	const volatile uint32_t *swmark; /* off-CPU: moves when the thread was switched out */
	uint32_t swflip;		 /* 1: no mark here, every span counts as switched */
	uint64_t wbase;			 /* stream index of ring[0] in the current lap */
	uint32_t nev;			 /* aggregated events, modulo: rec_recalibrate */
	/* -- kept on fork: from the second page on -- */
	_Alignas(4096) atomic_int live; /* owned by a running thread */
	unsigned mslot;			/* slot + 1 whose parts are mapped below; 0: none */
	uint64_t *mring;		/* its ring */
	struct ring_agg *magg;		/* its aggregate area, or NULL */
	uint64_t *mvals;		/* its value rows, or NULL */
	struct rec_thread *next;
	void *altstack;		      /* REC_ALTSTACK bytes for the fatal-signal handler, or NULL */
	unsigned depth;		      /* spans open in this thread (the shadow stack) */
	unsigned fdone;		      /* filters: frames below this have no begin to send */
	uint64_t stk[REC_STACK];      /* the open spans' keys, outermost first */
	struct rec_jmp jmp[REC_JMPS]; /* setjmp buffers seen, and the depth then */
	unsigned njmp;		      /* next jmp entry to replace */
	uint64_t fts[REC_STACK];      /* filters: each open span's begin ts */
	uint32_t fmark[REC_STACK];    /* filters: its switch mark at its begin */
	uint8_t ffl[REC_STACK];	      /* filters: REC_F_* of each open span */
	struct rec_fcentry fcache[REC_CACHE]; /* filters: classification cache */
	struct recv_thread vt;		      /* its counters (values.h) */
	int calib;			      /* rec_calibrate's scratch thread: sends nothing */
	uint64_t fval[REC_STACK][RECV_MAX];   /* filters: each open span's begin values */
	struct rec_centry cache[REC_CACHE];
	struct rec_qev q[REC_QLEN];	 /* events of nested calls (signal handlers) */
	uint64_t qv[REC_QLEN][RECV_MAX]; /* their values */
	uint64_t rec[REC_WORDS];	 /* the events record in progress */
	char scratch[WIRE_MAX_RECORD];	 /* other records of this thread */
};

/* The part of a thread's state a fork child must not inherit (see above). */
#define REC_WIPED offsetof(struct rec_thread, live)
_Static_assert(REC_WIPED == 4096, "the wiped part is the first page");

/* Global intern table: key 0 is empty; id 0 means claimed, not yet defined. */
struct rec_slot {
	_Atomic uint64_t key;
	_Atomic uint32_t id;
	uint32_t pad;
};

static int rec_on;		   /* the hot-path gate: 0 or REC_ON* */
static struct recv_spec rec_vspec; /* SPANSTAT_VALUES: what begins and ends carry */
static unsigned rec_nvals;	   /* rec_vspec.n */
static int rec_offcpu;		   /* SPANSTAT_OFFCPU: aggregating threads mark switched spans */
static const uint32_t rec_nomark;  /* the switch mark of threads that need none */
static const uint64_t *(*rec_alloc_fn)(void); /* libspanstat-alloc's counts */
static int rec_agg_mode;		      /* SPANSTAT_AGG: threads with a slot aggregate */
static int rec_filtering;		      /* SPANSTAT_FILTER set some filter */
static struct recf_spec rec_filter;	      /* the filters */
/* Mirror of rec_on for the inline check in spanstat.h (not API). */
__attribute__((visibility("default"))) int spanstat_on_;
static int rec_fl;		/* F_GETFL & REC_FL_MASK of our write end */
static int rec_tsc;		/* timestamps are TSC ticks, else CLOCK_MONOTONIC ns */
static atomic_int rec_fd = -1;	/* private write end */
static atomic_int rec_rfd = -1; /* private read end, never read */
static dev_t rec_dev;
static ino_t rec_ino;
static char rec_pipe_path[256]; /* SPANSTAT_PIPE, to reconnect */
static char rec_exe[PATH_MAX];	/* /proc/self/exe at connect */
static uintptr_t rec_main_base; /* dladdr base of the main program */
static uint32_t rec_pid;
static atomic_int rec_nowait; /* a write timed out: no waiting until one succeeds */
static atomic_int rec_exiting;
static _Atomic uint64_t rec_exit_deadline; /* rec_finish: wait for room until then */
static _Atomic uint64_t rec_dropped;	   /* event words every thread dropped */
static _Atomic uint64_t rec_waited;	   /* ns threads waited for room (WIRE_WAITED) */
static int rec_connected;		   /* the constructor installed handlers and the key */
static atomic_uint rec_next_id = 1;
static struct rec_slot *rec_table;
static _Atomic(struct rec_thread *) rec_threads;
static void *rec_shm; /* the ring file's slot table, mapped shared, or NULL */
/* The ring file is opened by its path only while a thread maps its slot:
 * the process holds no descriptor of it, so a program writing to every fd
 * cannot scribble over the slots, and none of its descriptors are ours. */
static dev_t rec_shm_dev; /* its identity, checked at every open */
static ino_t rec_shm_ino;
static char rec_shm_path[PATH_MAX]; /* SPANSTAT_SHM, to open it again */
static uint64_t rec_incarnation;    /* the ts of our latest WIRE_HELLO */
static pthread_key_t rec_key;
/* One page wiped in a fork child (MADV_WIPEONFORK): pid 0 there. */
struct rec_proc {
	uint32_t pid;
};
static struct rec_proc *rec_procp;

static __thread struct rec_thread *rec_self __attribute__((tls_model("initial-exec")));
static __thread int rec_self_done __attribute__((tls_model("initial-exec")));
static __thread unsigned rec_writes __attribute__((tls_model("initial-exec")));

static const int rec_fatal[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL, SIGABRT,
				SIGINT,	 SIGTERM, SIGHUP, SIGQUIT};

static REC_NOI uint64_t rec_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static REC_HOT uint64_t rec_now(void)
{
#if ARCH_HAVE_TSC
	if (likely(rec_tsc))
		return arch_tsc();
#endif
	return rec_mono();
}

static REC_HOT unsigned rec_hash(uint64_t key)
{
	return (unsigned)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 56);
}

static REC_NOI uint32_t rec_gettid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* ---- the pipe ----------------------------------------------------------- */

static REC_NOI int rec_is_pipe(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_ino == rec_ino &&
	       st.st_dev == rec_dev;
}

/* Moves fd to a high number (close-on-exec) out of the target's way. */
static REC_NOI int rec_move_high(int fd)
{
	static const int floors[] = {1000, 200, 20};
	for (unsigned i = 0; i < sizeof floors / sizeof floors[0]; i++) {
		if (fd >= floors[i])
			return fd;
		int h = fcntl(fd, F_DUPFD_CLOEXEC, floors[i]);
		if (h >= 0) {
			close(fd);
			return h;
		}
	}
	return fd;
}

/* Opens a new description of the pipe that fd refers to, in `mode`. */
static REC_NOI int rec_reopen_fd(int fd, int mode)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int n = open(path, mode | O_NONBLOCK | O_CLOEXEC);
	if (n >= 0 && !rec_is_pipe(n)) {
		close(n);
		n = -1;
	}
	return n;
}

/* Makes sure we hold a read end of our pipe (so that writes never SIGPIPE). */
static REC_NOI void rec_ensure_read_end(int wfd)
{
	int old = atomic_load(&rec_rfd);
	if (rec_is_pipe(old))
		return;
	int r = rec_reopen_fd(wfd, O_RDONLY);
	if (r < 0)
		return;
	r = rec_move_high(r);
	if (!atomic_compare_exchange_strong(&rec_rfd, &old, r))
		close(r);
}

/* A private write end, from the inherited fd or else from SPANSTAT_PIPE. */
static REC_NOI int rec_open_write_end(int inherited)
{
	int fd = -1;
	if (rec_is_pipe(inherited)) {
		fd = rec_reopen_fd(inherited, O_WRONLY);
		if (fd < 0) { /* no /proc: share the inherited description */
			fd = fcntl(inherited, F_DUPFD_CLOEXEC, 0);
			if (fd >= 0)
				fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		}
	}
	if (fd < 0 && rec_pipe_path[0]) {
		fd = open(rec_pipe_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 && !rec_is_pipe(fd)) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		return -1;
	fd = rec_move_high(fd);
	rec_ensure_read_end(fd);
	/* Mark our description (pipes ignore both flags) for rec_get_fd(). */
	if (fcntl(fd, F_SETFL, O_NONBLOCK | O_APPEND | O_NOATIME) != 0)
		fcntl(fd, F_SETFL, O_NONBLOCK | O_APPEND);
	rec_fl = fcntl(fd, F_GETFL) & REC_FL_MASK;
	return fd;
}

static REC_NOI void rec_set_on(int on)
{
	if (on)
		on = rec_filtering  ? REC_ON_FILTERED
		     : rec_nvals    ? REC_ON_VALUES
		     : rec_agg_mode ? REC_ON_AGG
				    : REC_ON;
	__atomic_store_n(&rec_on, on, __ATOMIC_RELEASE);
	__atomic_store_n(&spanstat_on_, on, __ATOMIC_RELEASE);
}

/* Our write fd, reconnecting if the target closed or reused it; -1: gone. */
static REC_NOI int rec_get_fd(void)
{
	int fd = atomic_load_explicit(&rec_fd, memory_order_relaxed);
	if (likely(++rec_writes % REC_STAT_EVERY)) {
		int fl = fcntl(fd, F_GETFL);
		if (likely(fl >= 0 && (fl & REC_FL_MASK) == rec_fl))
			return fd;
	} else if (rec_is_pipe(fd)) {
		return fd;
	}
	int n = rec_open_write_end(-1);
	if (n < 0) { /* spanstat is gone: stop recording for good */
		rec_set_on(0);
		return -1;
	}
	/* Never close the old number: it is closed already or the target's now. */
	if (!atomic_compare_exchange_strong(&rec_fd, &fd, n)) {
		close(n);
		return fd;
	}
	return n;
}

/* One round of waiting for room in a full pipe or ring: -1 when the caller
 * must give up (an earlier wait timed out and nothing got through since, or
 * *deadline passed), else 0 with the time in *now.  The first round sets
 * *deadline: REC_WAIT_MS away, or while the process is ending, the end of the
 * wait for its final records (bounded for the whole exit). */
static REC_NOI int rec_wait_round(uint64_t *deadline, uint64_t *now)
{
	uint64_t final = atomic_load_explicit(&rec_exit_deadline, memory_order_relaxed);
	if (!final && atomic_load_explicit(&rec_nowait, memory_order_relaxed))
		return -1;
	*now = rec_mono();
	if (!*deadline)
		*deadline = final ? final : *now + REC_WAIT_MS * UINT64_C(1000000);
	if (*now >= *deadline) {
		atomic_store(&rec_nowait, 1);
		return -1;
	}
	return 0;
}

/* The calling thread's CPU time, ns (0 when unknown). */
static REC_NOI uint64_t rec_thread_cpu(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* A wait for room that began at `since` (rec_mono), with the thread's CPU
 * time `cpu` then, is over: the target's time spent on the transport, for
 * the instrumentation line.  One that got room (`got`) is the thread's to
 * tell in its stream right after the event that waited (rec_put_waited), so
 * that --compensate takes it out of the spans open meanwhile; one that gave
 * up starts a drop, whose spans the reader cannot place it in.  Waits while
 * the process exits come after its spans and are not counted. */
static REC_NOI void rec_waited_since(uint64_t since, uint64_t cpu, int got)
{
	if (!since || atomic_load_explicit(&rec_exiting, memory_order_relaxed))
		return;
	uint64_t wall = rec_mono() - since;
	atomic_fetch_add_explicit(&rec_waited, wall, memory_order_relaxed);
	struct rec_thread *t = rec_self;
	/* not placed where handlers' spans ran inside it (their time would be
	 * taken out twice), nor where the filters send begins late */
	if (got && t && !t->calib && !t->nq &&
	    __atomic_load_n(&rec_on, __ATOMIC_RELAXED) != REC_ON_FILTERED) {
		uint64_t now = rec_thread_cpu();
		t->wpend_ns += wall;
		t->wpend_cpu += now > cpu && cpu ? now - cpu : 0;
		t->wpend_end = rec_now();
	}
}

/* Writes one whole record.  A full pipe is waited on for at most REC_WAIT_MS
 * in all, and not at all after a timeout until some write succeeds again;
 * while the process exits, until rec_exit_deadline whatever happened before.
 * Returns 0, or -1 when the record was not written. */
static REC_NOI int rec_write(const void *buf, size_t len)
{
	int fd = rec_get_fd();
	uint64_t deadline = 0, since = 0, cpu = 0;
	int retried = 0;
	while (fd >= 0) {
		ssize_t n = write(fd, buf, len);
		if (n == (ssize_t)len) {
			if (unlikely(atomic_load_explicit(&rec_nowait, memory_order_relaxed)))
				atomic_store(&rec_nowait, 0);
			rec_waited_since(since, cpu, 1);
			return 0;
		}
		if (n >= 0) /* cannot happen for a pipe and <= PIPE_BUF */
			break;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			uint64_t now;
			if (rec_wait_round(&deadline, &now) != 0)
				break;
			if (!since) {
				since = now;
				cpu = rec_thread_cpu();
			}
			struct pollfd p = {fd, POLLOUT, 0};
			int ms = (int)((deadline - now + 999999) / 1000000);
			if (poll(&p, 1, ms) < 0 && errno != EINTR)
				break;
			continue;
		}
		if ((errno == EBADF || errno == EPIPE) && !retried++) {
			fd = rec_get_fd();
			continue;
		}
		break;
	}
	rec_waited_since(since, cpu, 0);
	return -1;
}

/* ---- records ------------------------------------------------------------ */

static REC_NOI void rec_drop(struct rec_thread *t, uint64_t words)
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

static REC_NOI uint32_t rec_sat32(uint64_t n)
{
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static REC_NOI void rec_ring_publish(struct rec_thread *t);
static REC_NOI int rec_ring_drops(struct rec_thread *t);
static REC_NOI uint32_t rec_intern(struct rec_thread *t, uint64_t key);

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
static REC_NOI void rec_flush(struct rec_thread *t)
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
static REC_NOI void rec_ring_publish(struct rec_thread *t)
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
static REC_NOI int rec_ring_attach(struct rec_thread *t, uint64_t now)
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
	 * every open span: low UINT32_MAX) */
	unsigned low = t->gap && t->low < t->depth ? t->low : t->depth;
	unsigned top = t->depth < REC_STACK ? t->depth : REC_STACK;
	unsigned per = 1u + rec_nvals, n = low < top ? top - low : 0;
	unsigned piece = (REC_RESYNC_WORDS - 2) / per, pieces = n ? (n + piece - 1) / piece : 1;
	if (rec_ring_reserve(t, 2 * pieces + n * per) != 0)
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
	t->last = last;
	t->reported = t->dropped;
	t->gap = 0;
	return 0;
}

static REC_NOI int rec_ring_putn(struct rec_thread *t, uint64_t word, const uint64_t *pl,
				 unsigned n)
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
	uint64_t word = RING_CTL(RING_CTL_WAITED | (us > UINT32_MAX ? UINT32_MAX : us) << 8);
	if (t->slot) {
		rec_ring_putn(t, word, &ns, 1);
		return;
	}
	if (t->pos + 2 > t->rec + REC_WORDS)
		rec_flush(t); /* a wait here is told after the next event */
	t->pos[0] = word;
	t->pos[1] = ns;
	t->pos += 2;
}

/* The thread ends: its last word, then the slot goes back to the reader. */
static REC_NOI void rec_ring_detach(struct rec_thread *t, uint64_t ts)
{
	rec_ring_put(t, RING_CTL(RING_CTL_EXIT), 1, ts);
	rec_ring_publish(t);
	__atomic_store_n(&t->slot->state, RING_DONE, __ATOMIC_RELEASE);
	t->slot = NULL;
}

static REC_NOI void rec_send_thread_name(struct rec_thread *t, const char *name)
{
	size_t len = enc_thread_name(t->scratch, sizeof t->scratch, t->pid, t->tid, name,
				     strnlen(name, 255));
	if (len)
		rec_write(t->scratch, len);
}

static REC_NOI void rec_send_comm(struct rec_thread *t)
{
	char comm[32];
	if (pthread_getname_np(pthread_self(), comm, sizeof comm) == 0 && comm[0])
		rec_send_thread_name(t, comm);
}

static REC_NOI void rec_hello(void)
{
	char buf[512];
	uint64_t ts = rec_now(), mono = rec_mono();
	const char *name = program_invocation_short_name;
	if (!name || !name[0])
		name = program_invocation_name ? program_invocation_name : "";
	size_t n = strnlen(name, 256);
	size_t len = enc_hello(buf, sizeof buf, rec_pid, (uint32_t)getppid(),
			       rec_tsc ? WIRE_CLOCK_TSC : WIRE_CLOCK_MONOTONIC, ts, mono, name, n);
	rec_incarnation = ts; /* our slots say which image they belong to */
	if (len)
		rec_write(buf, len);
	if (rec_nvals) {
		struct wire_values wv = {rec_nvals, 0};
		len = enc_simple(buf, sizeof buf, WIRE_VALUES, rec_pid, 0, &wv, sizeof wv);
		if (len)
			rec_write(buf, len);
	}
}

/* Maps the ring file spanstat named (ring.h); NULL: every thread uses the pipe. */
static REC_NOI void *rec_map_rings(const char *path)
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
	/* the values it was made for must be ours, or words would not frame */
	if (f->magic != RING_MAGIC || f->slots != RING_SLOTS || f->words != RING_WORDS ||
	    f->vals != rec_nvals) {
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
/* ---- names -------------------------------------------------------------- */

/* Object base and path of a code address, for the reader to symbolise. */
static REC_NOI const char *rec_code_object(uint64_t addr, uint64_t *base, char *buf, size_t cap)
{
	Dl_info info;
	*base = 0;
	if (!dladdr((void *)(uintptr_t)addr, &info) || !info.dli_fbase)
		return "";
	*base = (uintptr_t)info.dli_fbase;
	const char *f = info.dli_fname ? info.dli_fname : "";
	if ((uintptr_t)info.dli_fbase == rec_main_base || !f[0])
		return rec_exe[0] ? rec_exe : f;
	if (f[0] == '/' || cap < PATH_MAX)
		return f;		   /* absolute as the loader found it */
	return realpath(f, buf) ? buf : f; /* dlopen()ed by a relative path */
}

/* Allocates an id for key and writes its definition; 0 if that failed. */
static REC_NOI uint32_t rec_define(struct rec_thread *t, uint64_t key)
{
	uint32_t id = atomic_fetch_add(&rec_next_id, 1);
	if (id == 0 || id > WIRE_ID_MAX) {
		atomic_store(&rec_next_id, WIRE_ID_MAX + 1);
		return 0;
	}
	size_t len;
	if (key & REC_CODE_TAG) {
		char path[PATH_MAX];
		uint64_t addr = key & ~REC_CODE_TAG, base;
		const char *obj = rec_code_object(addr, &base, path, sizeof path);
		len = enc_name(t->scratch, sizeof t->scratch, t->pid, t->tid, id, WIRE_NAME_CODE,
			       addr, base, obj, strlen(obj));
	} else {
		const char *s = (const char *)(uintptr_t)key;
		len = enc_name(t->scratch, sizeof t->scratch, t->pid, t->tid, id, WIRE_NAME_STRING,
			       0, 0, s, strnlen(s, WIRE_MAX_RECORD));
	}
	if (!len || rec_write(t->scratch, len) != 0)
		return 0;
	return id;
}

/* The id of key in this process, defining it on first use; 0: drop the event.
 * The thread that claims a slot writes the definition before it publishes the
 * id, so definitions always precede uses on the wire.  A thread that finds a
 * slot claimed but not yet published defines its own id for the same text
 * rather than wait (the decoder merges names by text).  A key not in the
 * table takes the first tombstone of its chain (an address dlclose forgot,
 * rec_code_forget) before an empty slot: an object loaded and unloaded again
 * and again at one address would fill its chains with tombstones otherwise. */
static REC_NOI uint32_t rec_intern(struct rec_thread *t, uint64_t key)
{
	struct rec_slot *tab = rec_table;
	if (!tab)
		return 0;
	for (unsigned round = 0; round < 4; round++) {
		unsigned i = (unsigned)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 40);
		struct rec_slot *claim = NULL, *tomb = NULL;
		uint64_t k = 0;
		for (unsigned probe = 0; probe < REC_PROBES; probe++, i++) {
			struct rec_slot *s = &tab[i & (REC_TABLE_SIZE - 1)];
			k = atomic_load_explicit(&s->key, memory_order_acquire);
			if (k == key) {
				uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
				return id ? id : rec_define(t, key);
			}
			if (k == REC_CODE_TAG) {
				if (!tomb)
					tomb = s;
			} else if (k == 0) {
				claim = s;
				break;
			}
		}
		uint64_t was = 0;
		if (tomb) {
			claim = tomb;
			was = REC_CODE_TAG;
		}
		if (!claim)
			return 0; /* table full along this chain */
		uint64_t expect = was;
		if (atomic_compare_exchange_strong(&claim->key, &expect, key)) {
			uint32_t id = rec_define(t, key);
			if (id)
				atomic_store_explicit(&claim->id, id, memory_order_release);
			else /* not defined: let a later use try again */
				atomic_store_explicit(&claim->key, was, memory_order_release);
			return id;
		}
		if (expect == key) { /* another thread claimed it for the same key */
			uint32_t id = atomic_load_explicit(&claim->id, memory_order_acquire);
			return id ? id : rec_define(t, key);
		}
		/* lost the slot to another key: look again */
	}
	return 0;
}

/* ---- threads ------------------------------------------------------------ */

static REC_NOI void rec_thread_reset(struct rec_thread *t, uint64_t now)
{
	t->pid = rec_pid;
	t->tid = rec_gettid();
	t->base = t->last = now;
	t->dropped = t->reported = 0;
	t->gap = t->low = 0;
	t->wpend_ns = t->wpend_cpu = t->wpend_end = 0; /* another process's or thread's */
	t->seq = 0;
	t->depth = t->fdone = t->njmp = 0;
	memset(t->jmp, 0, sizeof t->jmp);
	memset(t->cache, 0xff, sizeof t->cache); /* no key is all ones */
	memset(t->fcache, 0xff, sizeof t->fcache);
	/* counters count the thread that opens them: a fork child or a later
	 * thread reusing t opens its own */
	recv_close(&t->vt);
	recv_switch_close(&t->vt);
	if (rec_nvals)
		recv_open(&rec_vspec, &t->vt, rec_alloc_fn);
	t->swmark = &rec_nomark;
	t->swflip = 0;
	if (rec_ring_attach(t, now) != 0) {
		t->pos = t->rec + REC_FIRST;
		t->lim = t->rec + REC_WORDS;
	} else if (t->agg && rec_offcpu) {
		t->swmark = recv_switch_mark(&t->vt);
		t->swflip = !t->swmark;
		if (!t->swmark)
			t->swmark = &rec_nomark;
	}
}

/* Gives the calling thread a signal stack when it has none, so that the
 * fatal-signal handler runs even when the thread overflowed its own stack
 * (the kernel can deliver SIGSEGV there only on another stack).  The memory
 * stays with t, which later threads reuse; a thread that set up its own
 * signal stack keeps it. */
static REC_NOI void rec_thread_altstack(struct rec_thread *t)
{
	stack_t cur;
	if (sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
		return;
	if (!t->altstack) {
		void *m = mmap(NULL, REC_ALTSTACK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return;
		t->altstack = m;
	}
	stack_t ss = {.ss_sp = t->altstack, .ss_size = REC_ALTSTACK, .ss_flags = 0};
	sigaltstack(&ss, NULL);
}

static REC_NOI int rec_new_process(struct rec_thread *self);
static REC_HOT int rec_unannounced(void);
static REC_NOI void rec_drain(struct rec_thread *t, int on);

/* The calling thread's first event: a buffer (reused or new) and its name.
 * The time this takes is the recorder's, not the first span's: the caller
 * reads the event's time afterwards. */
static REC_NOI struct rec_thread *rec_thread_start(void)
{
	if (rec_self_done)
		return NULL;
	if (unlikely(rec_unannounced()) && rec_new_process(NULL) != 0)
		return NULL;
	struct rec_thread *t;
	for (t = atomic_load(&rec_threads); t; t = t->next) {
		int zero = 0;
		if (!atomic_load_explicit(&t->live, memory_order_relaxed) &&
		    atomic_compare_exchange_strong(&t->live, &zero, 1))
			break;
	}
	if (!t) {
		void *m = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		t = m;
#ifdef MADV_WIPEONFORK
		madvise(t, REC_WIPED, MADV_WIPEONFORK); /* see struct rec_thread */
#endif
		atomic_store(&t->live, 1);
		struct rec_thread *head = atomic_load(&rec_threads);
		do
			t->next = head;
		while (!atomic_compare_exchange_weak(&rec_threads, &head, t));
	}
	/* a reused struct: what its last thread left of calls it never
	 * returned from (it ended in a signal handler) is not ours */
	t->guard = 0;
	t->nq = 0;
	t->qskip = 0;
	rec_thread_altstack(t);
	rec_thread_reset(t, rec_now());
	atomic_store(&t->busy, 1);
	rec_send_comm(t);
	atomic_store(&t->busy, 0);
	rec_self = t; /* last: a signal handler before this drops its events, counted */
	pthread_setspecific(rec_key, t);
	return t;
}

/* pthread key destructor: the thread ends. */
static REC_NOI void rec_thread_end(void *arg)
{
	struct rec_thread *t = arg;
	if (t != rec_self)
		return;
	rec_self = NULL;
	rec_self_done = 1; /* later events of this thread (other destructors): ignored */
	/* A guard still set belongs to a call that never returns: the thread
	 * ends in a signal handler that interrupted it (pthread_exit, a
	 * cancellation).  Its queue is still applied below. */
	t->guard = 0;
	if (__atomic_load_n(&rec_on, __ATOMIC_RELAXED) && t->pid && !t->guard &&
	    !atomic_exchange(&t->busy, 1)) {
		if (t->nq) { /* what signal handlers left, before the end */
			char mark;
			t->guard = (uintptr_t)&mark;
			atomic_store(&t->busy, 0);
			rec_drain(t, __atomic_load_n(&rec_on, __ATOMIC_RELAXED));
			atomic_store(&t->busy, 1);
			t->guard = 0;
		}
		uint64_t ts = rec_now();
		if (ts > t->last)
			t->last = ts;
		if (t->agg) {
			if ((int64_t)(ts - t->agg->last_ts) > 0)
				t->agg->last_ts = ts;
			__atomic_store_n(&t->slot->state, RING_DONE, __ATOMIC_RELEASE);
			t->slot = NULL;
			t->agg = NULL;
		} else if (t->slot) {
			rec_ring_detach(t, t->last);
		} else {
			rec_flush(t);
			size_t len = enc_simple(t->scratch, sizeof t->scratch, WIRE_THREAD_EXIT,
						t->pid, t->tid, &t->last, sizeof t->last);
			if (len)
				rec_write(t->scratch, len);
		}
	}
	/* t (and its signal stack) may go to another thread from here on */
	stack_t cur;
	if (t->altstack && sigaltstack(NULL, &cur) == 0 && cur.ss_sp == t->altstack &&
	    !(cur.ss_flags & SS_ONSTACK)) {
		stack_t off = {.ss_flags = SS_DISABLE};
		sigaltstack(&off, NULL);
	}
	atomic_store(&t->busy, 0);
	atomic_store(&t->live, 0);
}

/* ---- the recording paths ------------------------------------------------ */

/* ---- aggregate mode (ring.h) ------------------------------------------------ */

/* The child of node cur named id, created when new; REC_AGG_NONE when the
 * tree is full (the span is then not kept: untracked). */
static REC_NOI __attribute__((noinline)) uint32_t rec_agg_child(struct rec_thread *t, uint32_t cur,
								uint32_t id)
{
	struct ring_agg_node *nd = t->anode;
	for (uint32_t c = nd[cur].first_child; c; c = nd[c].next_sibling)
		if (nd[c].id == id)
			return c;
	uint32_t n = t->agg->nodes;
	if (n >= RING_AGG_NODES)
		return REC_AGG_NONE;
	nd[n].id = id;
	nd[n].parent = cur;
	nd[n].next_sibling = nd[cur].first_child;
	nd[cur].first_child = n;
	t->agg->nodes = n + 1; /* after the node: a reader never sees it half made */
	return n;
}

/* A span the thread was switched out in (its switch mark moved): spanstat
 * gets its node and times to join with the kernel's switch records. */
static REC_NOI __attribute__((noinline)) void rec_agg_switched(struct rec_thread *t, uint32_t node,
							       uint64_t begin, uint64_t end)
{
	uint64_t pl[2] = {begin, end};
	if (rec_ring_putn(t, RING_CTL(RING_CTL_SWITCHED | (uint64_t)node << 8), pl, 2) == 0)
		rec_ring_publish(t);
	else if (t->anode[node].swlost != UINT32_MAX) /* never silently */
		t->anode[node].swlost++;
}

static REC_HOT void rec_agg_begin(struct rec_thread *t, uint32_t id, uint64_t now,
				  const uint64_t *v, uint32_t mark)
{
	uint32_t d = t->adepth;
	if (unlikely(d >= RING_AGG_DEPTH)) {
		t->aover++;
		t->agg->deep++;
		return;
	}
	struct ring_agg_node *nd = t->anode;
	uint32_t cur = d ? t->aframe[d - 1].node : 0, n = REC_AGG_NONE;
	if (likely(cur != REC_AGG_NONE)) {
		uint32_t h = nd[cur].hot;
		n = likely(h && nd[h].id == id) ? h : rec_agg_child(t, cur, id);
		if (n != REC_AGG_NONE)
			nd[cur].hot = n;
	}
	if (unlikely(n == REC_AGG_NONE))
		t->agg->untracked++;
	struct ring_agg_frame *f = &t->aframe[d];
	f->node = n;
	f->id = id;
	f->ts = now;
	f->lock = mark + t->swflip;
	if (v)
		memcpy(t->avals + (uint64_t)(RING_AGG_NODES + d) * rec_nvals, v,
		       rec_nvals * sizeof *v);
	t->adepth = d + 1;
	t->agg->depth = d + 1;
}

/* Closes frame f at now (unfinished: closed by an end of an outer span). */
static REC_HOT void rec_agg_close(struct rec_thread *t, const struct ring_agg_frame *f,
				  uint64_t now, int unfinished, const uint64_t *v)
{
	if (f->node >= REC_AGG_NONE)
		return;
	struct ring_agg_node *n = &t->anode[f->node];
	n->count++;
	n->total += (int64_t)(now - f->ts) > 0 ? now - f->ts : 0;
	n->unfinished += (unsigned)unfinished;
	if (unlikely(f->lock != *t->swmark))
		rec_agg_switched(t, f->node, f->ts, now);
	if (v) {
		uint64_t *b = t->avals + (uint64_t)(RING_AGG_NODES + (f - t->aframe)) * rec_nvals;
		uint64_t *sum = t->avals + (uint64_t)f->node * rec_nvals;
		for (unsigned i = 0; i < rec_nvals; i++)
			sum[i] += v[i] > b[i] ? v[i] - b[i] : 0;
		/* the frame's row is free: it keeps the latest values, for
		 * the spans still open if the thread dies (ring.h) */
		memcpy(b, v, rec_nvals * sizeof *v);
	}
}

/* Whether open span k (0: outermost) has the name of the end of key, id:
 * the same id, or (as spanstat matches names by their text) a name at
 * another address with the same text. */
static REC_NOI int rec_agg_same(const struct rec_thread *t, uint32_t k, uint64_t key, uint32_t id)
{
	if (t->aframe[k].id == id)
		return 1;
	if (k >= REC_STACK || t->depth != t->adepth || ((key | t->stk[k]) & REC_CODE_TAG))
		return 0;
	return strcmp((const char *)(uintptr_t)t->stk[k], (const char *)(uintptr_t)key) == 0;
}

/* An end that does not name the innermost open span by id: the spans inside
 * the one it names close unfinished, or it is counted unmatched. */
static REC_NOI __attribute__((noinline)) void
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

static REC_HOT void rec_agg_end(struct rec_thread *t, uint64_t key, uint32_t id, uint64_t now,
				const uint64_t *v)
{
	t->agg->last_ts = now;
	if (unlikely(t->aover)) {
		t->aover--;
		return;
	}
	uint32_t d = t->adepth;
	if (unlikely(d == 0)) {
		t->agg->unmatched++;
		return;
	}
	const struct ring_agg_frame *f = &t->aframe[d - 1];
	if (unlikely(f->id != id)) {
		rec_agg_mismatch(t, key, id, now, v);
		return;
	}
	rec_agg_close(t, f, now, 0, v);
	t->adepth = d - 1;
	t->agg->depth = d - 1;
}

/* One event of a thread that aggregates. */
static REC_HOT void rec_agg_op(struct rec_thread *t, uint64_t key, uint32_t id, uint64_t op,
			       uint64_t now, const uint64_t *v, uint32_t mark)
{
	if (op == REC_OP(WIRE_OP_BEGIN)) {
		rec_agg_begin(t, id, now, v, mark);
	} else if (op == REC_OP(WIRE_OP_END)) {
		rec_agg_end(t, key, id, now, v);
	} else {
		t->agg->last_ts = now;
		if (op == REC_OP(WIRE_OP_INSTANT))
			t->agg->instants++;
		else
			t->agg->counters++;
	}
}

/* Appends one event for key at `now` (no earlier than t->last) to the
 * thread's ring or record; the caller holds t->busy. */
static REC_NOI void rec_emit(struct rec_thread *t, uint64_t key, uint64_t op, uint64_t now,
			     int has_val, int64_t val, const uint64_t *v)
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

/* The shadow stack: which spans are open in this thread, innermost last, so
 * that a longjmp can end the spans it skips (rec_unwind). */
static REC_HOT void rec_push(struct rec_thread *t, uint64_t key)
{
	unsigned d = t->depth++;
	if (likely(d < REC_STACK))
		t->stk[d] = key;
}

static REC_HOT void rec_pop(struct rec_thread *t)
{
	if (likely(t->depth))
		t->depth--;
}

/* Follows an event on the shadow stack. */
static REC_HOT void rec_track(struct rec_thread *t, uint64_t key, uint64_t op)
{
	if (op == REC_OP(WIRE_OP_BEGIN))
		rec_push(t, key);
	else if (op == REC_OP(WIRE_OP_END))
		rec_pop(t);
}

static REC_NOI int rec_new_process(struct rec_thread *t);

/* Everything the hot path does not handle, and every event of a nested call
 * replayed from the queue: `now` was read on entry (fresh: a live event,
 * whose time may be read again after setup) or when queued, v holds the
 * values read then (NULL: read them here).  The caller holds the guard. */
static REC_NOI __attribute__((noinline)) void rec_apply(struct rec_thread *t, uint64_t key,
							uint64_t op, uint64_t now, int fresh,
							int has_val, int64_t val, const uint64_t *v)
{
	if (unlikely(!t->pid) && rec_new_process(t) != 0)
		return;
	if (atomic_exchange(&t->busy, 1)) { /* another thread flushes us (exit, exec) */
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

/* ---- filters (filter.h) --------------------------------------------------- */

/* What --filter and --exclude say of key, cached per thread. */
static REC_NOI unsigned rec_classify(struct rec_thread *t, uint64_t key)
{
	if (!rec_filter.nfilter && !rec_filter.nexclude)
		return 0;
	struct rec_fcentry *c = &t->fcache[rec_hash(key)];
	if (c->key == key)
		return c->cls;
	unsigned cls = key & REC_CODE_TAG
			       ? recf_classify_code(&rec_filter, (uintptr_t)(key & ~REC_CODE_TAG))
			       : recf_classify_name(&rec_filter, (const char *)(uintptr_t)key);
	c->key = key;
	c->cls = cls;
	return cls;
}

/* Sends the begin of open span i, held back until now (--min-duration), as
 * of its own begin: its time, values and (aggregating) switch mark. */
static REC_NOI void rec_filter_late_begin(struct rec_thread *t, unsigned i)
{
	uint32_t depth = t->adepth;
	rec_emit(t, t->stk[i], REC_OP(WIRE_OP_BEGIN), t->fts[i], 0, 0, t->fval[i]);
	if (t->agg && t->adepth == depth + 1) /* its frame: pushed, not refused */
		t->aframe[depth].lock = t->fmark[i];
}

/* Sends the begins of the open spans below depth `upto` that wait for their
 * duration (--min-duration) to be known: one inside them is being sent. */
static REC_NOI void rec_filter_flush(struct rec_thread *t, unsigned upto)
{
	if (upto > REC_STACK)
		upto = REC_STACK;
	for (unsigned i = t->fdone; i < upto; i++)
		if ((t->ffl[i] & (REC_F_PENDING | REC_F_SENT)) == REC_F_PENDING) {
			rec_filter_late_begin(t, i);
			t->ffl[i] |= REC_F_SENT;
		}
	if (upto > t->fdone)
		t->fdone = upto;
}

/* The filter flags (REC_F_*) a span beginning at depth d with key gets. */
static REC_NOI unsigned rec_filter_flags(struct rec_thread *t, unsigned d, uint64_t key)
{
	unsigned pf = d ? t->ffl[d - 1] : REC_F_ROOT;
	unsigned cls = rec_classify(t, key);
	unsigned fl = 0;
	if ((pf & REC_F_INSIDE) || (cls & RECF_FILTER) || !rec_filter.nfilter)
		fl |= REC_F_INSIDE;
	if ((pf & REC_F_BLOCKED) || (cls & RECF_EXCLUDE))
		fl |= REC_F_BLOCKED;
	if ((fl & REC_F_INSIDE) && !(fl & REC_F_BLOCKED) &&
	    (!rec_filter.max_depth || d < rec_filter.max_depth))
		fl |= REC_F_SEND;
	return fl;
}

/* A span the filters let through begins at depth d (already pushed): sent
 * now, or later if it lasts --min-duration.  Caller holds t->busy. */
static REC_NOI void rec_filter_begin(struct rec_thread *t, unsigned d, uint64_t now)
{
	t->fts[d] = now;
	t->fmark[d] = *t->swmark + t->swflip;
	if (rec_nvals)
		recv_read(&rec_vspec, &t->vt, t->fval[d]);
	if (rec_filter.min_dur) {
		t->ffl[d] |= REC_F_PENDING;
	} else {
		rec_filter_flush(t, d);
		rec_emit(t, t->stk[d], REC_OP(WIRE_OP_BEGIN), now, 0, 0, t->fval[d]);
		t->ffl[d] |= REC_F_SENT;
	}
}

/* The innermost open span ends under the filters.  Caller holds t->busy. */
static REC_NOI void rec_filter_end(struct rec_thread *t, uint64_t now)
{
	if (!t->depth)
		return; /* an end without a begin: nothing was sent for it */
	unsigned d = --t->depth;
	if (t->fdone > d)
		t->fdone = d;
	if (d >= REC_STACK)
		return;
	uint8_t fl = t->ffl[d];
	if (fl & REC_F_SENT) {
		rec_emit(t, t->stk[d], REC_OP(WIRE_OP_END), now, 0, 0, NULL);
	} else if ((fl & REC_F_PENDING) && now - t->fts[d] >= rec_filter.min_dur) {
		rec_filter_flush(t, d);
		rec_filter_late_begin(t, d);
		rec_emit(t, t->stk[d], REC_OP(WIRE_OP_END), now, 0, 0, NULL);
	}
}

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

static REC_NOI __attribute__((noinline)) void rec_event_filtered(struct rec_thread *t, uint64_t key,
								 uint64_t op, int has_val,
								 int64_t val, uint64_t now)
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

/* ---- signal handlers ------------------------------------------------------ */

/* A signal handler can interrupt the recorder anywhere, and record spans of
 * its own.  Every call into the recorder sets its thread's guard (a stack
 * address of the call) on entry and clears it on return.  A call that finds
 * the guard set was made by a handler that interrupted another call: it
 * only queues its event (time and values read now) and returns, leaving the
 * interrupted call's state alone.  The next call that finds the guard clear
 * applies the queue first, in order, so handler spans land in the thread's
 * stream and tree at their true place: nested in whatever span was open
 * when the handler ran (a span whose begin was being recorded counts as
 * open).  Queueing takes no lock and calls nothing but the clock and the
 * value reads, so it is async-signal-safe; a full queue drops whole spans,
 * counted as drops. */

#define REC_Q_NONE UINT64_MAX /* a queued begin cancelled: its end found no room */

/* An end the full queue cannot take: its begin, queued, is cancelled, so
 * that the span is dropped whole instead of left open (the spans queued
 * inside it stay, one level up).  The begin is the last queued one below
 * entry n that no queued end closes. */
static REC_NOI void rec_queue_cancel(struct rec_thread *t, unsigned n)
{
	unsigned open = 0;
	while (n-- > 0) {
		struct rec_qev *e = &t->q[n];
		if (e->op == REC_OP(WIRE_OP_END)) {
			open++;
		} else if (e->op == REC_OP(WIRE_OP_BEGIN)) {
			if (!open) {
				e->op = REC_Q_NONE;
				rec_drop(t, 1u + e->nv);
				return;
			}
			open--;
		}
	}
}

static REC_NOI void rec_queue(struct rec_thread *t, uint64_t key, uint64_t op, int has_val,
			      int64_t val)
{
	int is_end = op == REC_OP(WIRE_OP_END);
	if (is_end && t->qskip) { /* its begin found the queue full */
		t->qskip--;
		rec_drop(t, 1);
		return;
	}
	unsigned cap = is_end ? REC_QLEN : REC_QLEN - REC_QENDS;
	unsigned i = __atomic_load_n(&t->nq, __ATOMIC_RELAXED);
	do {
		if (i >= cap) {
			if (op == REC_OP(WIRE_OP_BEGIN))
				t->qskip++;
			else if (is_end)
				rec_queue_cancel(t, i);
			rec_drop(t, 1u + (unsigned)has_val);
			return;
		}
	} while (!__atomic_compare_exchange_n(&t->nq, &i, i + 1, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	/* entry i is ours; a deeper handler takes i + 1 and on */
	struct rec_qev *e = &t->q[i];
	e->key = key;
	e->op = op;
	e->has_val = (uint32_t)has_val;
	e->val = val;
	e->nv = 0;
	if (rec_nvals && (op == REC_OP(WIRE_OP_BEGIN) || is_end)) {
		if (is_end)
			recv_read(&rec_vspec, &t->vt, t->qv[i]);
		e->ts = rec_now();
		if (!is_end)
			recv_read(&rec_vspec, &t->vt, t->qv[i]);
		e->nv = rec_nvals;
	} else {
		e->ts = rec_now();
	}
}

/* Applies the queued events in order; the caller holds the guard, so more
 * may be queued meanwhile (by handlers interrupting this), and are applied
 * too before the queue is emptied. */
static REC_NOI __attribute__((noinline)) void rec_drain(struct rec_thread *t, int on)
{
	unsigned i = 0;
	for (;;) {
		unsigned n = __atomic_load_n(&t->nq, __ATOMIC_ACQUIRE);
		if (i >= n) {
			if (__atomic_compare_exchange_n(&t->nq, &n, 0, 0, __ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
				return;
			continue;
		}
		const struct rec_qev *e = &t->q[i];
		if (e->op == REC_Q_NONE) { /* cancelled (rec_queue_cancel) */
			i++;
			continue;
		}
		uint64_t now = e->ts;
		if ((int64_t)(now - t->last) < 0)
			now = t->last;
		if (on == REC_ON_FILTERED)
			rec_event_filtered(t, e->key, e->op, (int)e->has_val, e->val, now);
		else
			rec_apply(t, e->key, e->op, now, 0, (int)e->has_val, e->val,
				  e->nv ? t->qv[i] : NULL);
		i++;
	}
}

static REC_HOT void rec_guard_set(struct rec_thread *t, const void *mark)
{
	t->guard = (uintptr_t)mark;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static REC_HOT void rec_guard_clear(struct rec_thread *t)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->guard = 0;
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

static __thread volatile int rec_starting __attribute__((tls_model("initial-exec")));

/* Every event the hot path leaves: a thread's first, a nested call, a queue
 * to apply first, a value (counters), a thread whose process forked. */
static REC_NOI __attribute__((noinline)) void rec_event_cold(uint64_t key, uint64_t op, int has_val,
							     int64_t val)
{
	int on = __atomic_load_n(&rec_on, __ATOMIC_RELAXED);
	if (!on || !key || key == REC_CODE_TAG)
		return; /* NULL name */
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
static REC_NOI void rec_recalibrate(struct rec_thread *t);

/* The calibration's own thread state, on the thread that calibrates: its
 * events take the same path as the program's, with the same thread-local
 * read, while rec_self stays the thread's own (a signal handler meanwhile
 * finds it guarded, and queues). */
static __thread struct rec_thread *rec_calib_self __attribute__((tls_model("initial-exec")));

static REC_HOT void rec_event_in(struct rec_thread *t, uint64_t key, uint64_t op)
{
	int on = __atomic_load_n(&rec_on, __ATOMIC_RELAXED);
	if (unlikely(!on || !t || (t->guard | t->nq))) {
		if (on)
			rec_event_cold(key, op, 0, 0);
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

REC_API void spanstat_instant(const char *name)
{
	rec_event((uintptr_t)name, REC_OP(WIRE_OP_INSTANT));
}

REC_API void spanstat_counter(const char *name, int64_t value)
{
	rec_event_cold((uintptr_t)name, REC_OP(WIRE_OP_COUNTER), 1, value);
}

REC_API void spanstat_thread_name(const char *name)
{
	if (!__atomic_load_n(&rec_on, __ATOMIC_RELAXED) || !name)
		return;
	struct rec_thread *t = rec_self;
	if (!t && (rec_starting || !(t = rec_thread_start())))
		return;
	if (t->guard || !t->pid || atomic_exchange(&t->busy, 1))
		return; /* a name from a signal handler, or a fork child's first word */
	char mark;
	rec_guard_set(t, &mark);
	rec_send_thread_name(t, name);
	rec_guard_clear(t);
	atomic_store(&t->busy, 0);
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

/* ---- calibration ------------------------------------------------------------ */

#define REC_CALIB_PAIRS 200u /* per loop: fits one record, so nothing is sent */
#define REC_CALIB_LOOPS 32u  /* the fastest loop counts */
#define REC_RECAL_PAIRS 128u /* in-run: pairs per sample, after REC_RECAL_WARM */
#define REC_RECAL_WARM 8u
#define REC_RECAL_MIN 8u   /* samples below which the connect's measure stands */
static uint64_t rec_calib; /* milli-ticks per event: at connect, then the run's */
static volatile uint64_t rec_calib_sink;
static const char rec_calib_name[] = "spanstat-calibration";
static struct rec_thread *rec_calib_t; /* kept for in-run samples, or NULL */
static atomic_int rec_calib_busy;      /* a thread samples on rec_calib_t */
static uint64_t rec_recal_bound;       /* ticks: a longer sample was interrupted */
static _Atomic uint64_t rec_recal_with, rec_recal_without, rec_recal_pairs;

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

/* spanstat_begin and spanstat_end, on the calibration thread. */
static REC_NOI __attribute__((noinline)) void rec_calib_begin(const char *name)
{
	rec_event_in(rec_calib_self, (uintptr_t)name, REC_OP(WIRE_OP_BEGIN));
}

static REC_NOI __attribute__((noinline)) void rec_calib_end(const char *name)
{
	rec_event_in(rec_calib_self, (uintptr_t)name, REC_OP(WIRE_OP_END));
}

static REC_NOI void rec_calib_free(struct rec_thread *t)
{
	if (t->agg)
		munmap(t->agg, RING_AGG_BYTES);
	if (t->avals)
		munmap(t->avals, ring_vals_bytes(rec_nvals));
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
static REC_NOI uint64_t rec_calibrate(void)
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
static REC_NOI __attribute__((noinline)) void rec_recalibrate(struct rec_thread *t)
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
static REC_NOI void rec_recal_final(void)
{
	uint64_t pairs = atomic_load_explicit(&rec_recal_pairs, memory_order_relaxed);
	uint64_t with = atomic_load_explicit(&rec_recal_with, memory_order_relaxed);
	uint64_t without = atomic_load_explicit(&rec_recal_without, memory_order_relaxed);
	if (pairs >= REC_RECAL_MIN * REC_RECAL_PAIRS && with > without)
		rec_calib = (with - without) * 1000 / (2 * pairs);
}

/* Tells spanstat what an event costs this process (a new process each
 * time: after the HELLO of a connect or a fork). */
static REC_NOI void rec_send_calib(void)
{
	char buf[64];
	struct wire_calib w = {rec_calib, 0};
	size_t len = enc_simple(buf, sizeof buf, WIRE_CALIB, rec_pid, 0, &w, sizeof w);
	if (len && rec_calib)
		rec_write(buf, len);
}

/* ---- process life cycle ------------------------------------------------- */

/* Tells spanstat how long the process's threads waited for room since it
 * last told (before an exit or an exec); a fork child starts from 0. */
static REC_NOI void rec_send_waited(void)
{
	char buf[64];
	uint64_t waited = atomic_exchange(&rec_waited, 0);
	size_t len = enc_simple(buf, sizeof buf, WIRE_WAITED, rec_pid, 0, &waited, sizeof waited);
	if (len && waited)
		rec_write(buf, len);
}

/* The process ends (sig 0: normally): flush every thread's buffer, best
 * effort for threads other than the caller, then WIRE_EXIT.  Only write()
 * and friends: safe in a signal handler. */
static REC_NOI void rec_finish(int sig)
{
	if (!__atomic_load_n(&rec_on, __ATOMIC_RELAXED) || rec_unannounced() ||
	    atomic_exchange(&rec_exiting, 1))
		return; /* off, or a fork child that never recorded: nothing to say */
	struct rec_thread *me = rec_self;
	if (me && me->pid && !me->guard && me->nq) { /* what handlers left, in order */
		char mark;
		me->guard = (uintptr_t)&mark;
		rec_drain(me, __atomic_load_n(&rec_on, __ATOMIC_RELAXED));
		me->guard = 0;
	}
	rec_set_on(0);
	atomic_store(&rec_exit_deadline, rec_mono() + REC_EXIT_WAIT_MS * UINT64_C(1000000));
	uint64_t ts = rec_now();
	struct rec_thread *self = rec_self;
	for (struct rec_thread *t = atomic_load(&rec_threads); t; t = t->next) {
		if (!atomic_load(&t->live) || atomic_exchange(&t->busy, 1))
			continue;
		if (!t->slot && (t->pos > t->rec + REC_WORDS || t->pos < t->rec + REC_FIRST))
			t->pos = t->rec + REC_FIRST; /* torn by a racing thread: give up on it */
		if ((int64_t)(t->last - ts) > 0)
			ts = t->last; /* the exit is no earlier than any event */
		if (t->agg && (int64_t)(t->agg->last_ts - ts) > 0)
			ts = t->agg->last_ts; /* nor than an aggregating thread's */
		rec_flush(t);
		atomic_store(&t->busy, 0);
	}
	char buf[64];
	rec_send_waited();
	if (rec_calib_t) { /* the run's measure, where it has one */
		uint64_t connect = rec_calib;
		rec_recal_final();
		if (rec_calib != connect)
			rec_send_calib();
	}
	struct wire_exit e = {ts, (uint32_t)sig, rec_sat32(atomic_load(&rec_dropped))};
	size_t len =
		enc_simple(buf, sizeof buf, WIRE_EXIT, rec_pid, self ? self->tid : 0, &e, sizeof e);
	if (len)
		rec_write(buf, len);
}

static REC_NOI void rec_on_signal(int sig)
{
	int saved = errno;
	rec_finish(sig);
	/* SA_RESETHAND restored SIG_DFL; the signal stays blocked until we return,
	 * then kills us as it would have without us (a fault re-faults). */
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

static REC_NOI void rec_install_signals(void)
{
	for (unsigned i = 0; i < sizeof rec_fatal / sizeof rec_fatal[0]; i++) {
		struct sigaction old, sa;
		if (sigaction(rec_fatal[i], NULL, &old) != 0)
			continue;
		if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = rec_on_signal;
		/* on the thread's signal stack (rec_thread_altstack) when it has
		 * one: a stack overflow's SIGSEGV has no stack left otherwise */
		sa.sa_flags = SA_RESETHAND | SA_RESTART | SA_ONSTACK;
		sigfillset(&sa.sa_mask);
		sigaction(rec_fatal[i], &sa, NULL);
	}
}

/* fork: the parent sends what the forking thread has, so that its events
 * precede the child's; the child starts a fresh process on the wire. */
static REC_NOI void rec_atfork_prepare(void)
{
	struct rec_thread *t = rec_self;
	if (!__atomic_load_n(&rec_on, __ATOMIC_RELAXED) || !t || atomic_exchange(&t->busy, 1))
		return;
	rec_flush(t);
	atomic_store(&t->busy, 0);
}

/* The process is new and has not said so: a child of fork() (from its
 * pthread_atfork handler), or of _Fork() or clone() without CLONE_VM (found
 * by the first event of a thread whose state the fork wiped, or of a new
 * thread).  It starts a fresh process on the wire under its own pid; the
 * parent's threads do not exist here, and self (the calling thread, or
 * NULL) starts over.  0, or -1 when not recording. */
static REC_NOI int rec_new_process(struct rec_thread *self)
{
	if (!__atomic_load_n(&rec_on, __ATOMIC_RELAXED))
		return -1;
	rec_pid = (uint32_t)getpid();
	if (rec_procp)
		rec_procp->pid = rec_pid;
	atomic_store(&rec_next_id, 1);
	atomic_store(&rec_nowait, 0);
	atomic_store(&rec_dropped, 0);
	atomic_store(&rec_waited, 0);	  /* the parent's waits are the parent's */
	atomic_store(&rec_recal_with, 0); /* and its samples its own */
	atomic_store(&rec_recal_without, 0);
	atomic_store(&rec_recal_pairs, 0);
	atomic_store(&rec_calib_busy, 0);
	rec_calib_self = NULL; /* a fork from a handler that interrupted a sample */
	if (rec_table)	       /* a fresh, zero table: the parent's ids are not ours */
		mmap(rec_table, REC_TABLE_SIZE * sizeof *rec_table, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	for (struct rec_thread *t = atomic_load(&rec_threads); t; t = t->next) {
		if (t == self)
			continue;
		atomic_store(&t->live, 0); /* their threads do not exist here */
		atomic_store(&t->busy, 0);
		t->slot = NULL; /* the parent's: never touched here */
		t->agg = NULL;
	}
	rec_hello();
	rec_send_calib();
	if (self) {
		rec_thread_reset(self, rec_now());
		atomic_store(&self->busy, 0);
		rec_send_comm(self);
	}
	return 0;
}

/* Whether this process is a fork child that has not started yet. */
static REC_HOT int rec_unannounced(void)
{
	return rec_procp && !rec_procp->pid;
}

static REC_NOI void rec_atfork_child(void)
{
	rec_new_process(rec_self);
}

/* ---- exec ---------------------------------------------------------------- */

/* The exec family is interposed (when the build exports it) to send the
 * process's buffered events before the image is replaced, and to hand the
 * new image the pipe's descriptor when its environment still names our pipe
 * (see the top of this file); the new image reconnects by itself and
 * spanstat closes spans left open.  If exec fails, what was done to the
 * descriptors is undone and recording goes on.  The real functions are
 * looked up at load, so that a vfork()ed child calling them never enters the
 * dynamic linker.  In a privileged process the wrappers only call through. */
typedef int (*rec_execve_fn)(const char *, char *const[], char *const[]);
typedef int (*rec_execv_fn)(const char *, char *const[]);
typedef int (*rec_fexecve_fn)(int, char *const[], char *const[]);
static rec_execve_fn rec_real_execve, rec_real_execvpe;
static rec_execv_fn rec_real_execv, rec_real_execvp;
static rec_fexecve_fn rec_real_fexecve;
typedef void (*rec_exit_fn)(int);
static rec_exit_fn rec_real_exit, rec_real_Exit;
static int rec_secure; /* AT_SECURE, as rec_exec_lookup found it */

/* What rec_exec_begin did to the descriptor at `fd` for the new image. */
struct rec_handover {
	int fd;
	int how; /* REC_HAND_* */
};

enum { REC_HAND_NONE, REC_HAND_UNCLOEXEC, REC_HAND_DUP };

static REC_NOI void rec_exec_lookup(void)
{
	if (rec_real_execve)
		return;
	rec_secure = getauxval(AT_SECURE) != 0;
	rec_real_execve = (rec_execve_fn)dlsym(RTLD_NEXT, "execve");
	rec_real_execvpe = (rec_execve_fn)dlsym(RTLD_NEXT, "execvpe");
	rec_real_execv = (rec_execv_fn)dlsym(RTLD_NEXT, "execv");
	rec_real_execvp = (rec_execv_fn)dlsym(RTLD_NEXT, "execvp");
	rec_real_fexecve = (rec_fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
	rec_real_exit = (rec_exit_fn)dlsym(RTLD_NEXT, "_exit");
	rec_real_Exit = (rec_exit_fn)dlsym(RTLD_NEXT, "_Exit");
}

/* Sends every thread's buffered events (best effort for other threads). */
static REC_NOI void rec_exec_flush(void)
{
	for (struct rec_thread *t = atomic_load(&rec_threads); t; t = t->next) {
		if (!atomic_load(&t->live) || atomic_exchange(&t->busy, 1))
			continue;
		if (t->slot || (t->pos <= t->rec + REC_WORDS && t->pos >= t->rec + REC_FIRST))
			rec_flush(t);
		atomic_store(&t->busy, 0);
	}
	rec_send_waited(); /* the new image starts from 0 */
}

/* The value of `name` (with its '=') in envp, or NULL. */
static REC_NOI const char *rec_env_value(char *const envp[], const char *name, size_t len)
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, len) == 0)
			return envp[i] + len;
	return NULL;
}

/* The descriptor number SPANSTAT_FD names in envp, if envp names our pipe
 * (SPANSTAT_PIPE_ID); else -1. */
static REC_NOI int rec_env_fd(char *const envp[])
{
	const char *id = rec_env_value(envp, SPANSTAT_ENV_PIPE_ID "=", sizeof SPANSTAT_ENV_PIPE_ID);
	const char *fds = rec_env_value(envp, SPANSTAT_ENV_FD "=", sizeof SPANSTAT_ENV_FD);
	if (!id || !fds || !*fds)
		return -1;
	char *end;
	unsigned long long dev = strtoull(id, &end, 10), ino;
	if (*end != ':')
		return -1;
	ino = strtoull(end + 1, &end, 10);
	if (*end || (dev_t)dev != rec_dev || (ino_t)ino != rec_ino)
		return -1;
	long v = strtol(fds, &end, 10);
	return !*end && v >= 0 && v < INT_MAX ? (int)v : -1;
}

/* Before an exec: flushes, then gives the new image a descriptor of the pipe
 * at the number its environment names, if that number is free or already
 * holds a write end of our pipe (a close-on-exec one: ours, inherited). */
static REC_NOI void rec_exec_begin(char *const envp[], struct rec_handover *h)
{
	h->fd = -1;
	h->how = REC_HAND_NONE;
	rec_exec_lookup(); /* called before our constructor ran */
	if (rec_secure || !__atomic_load_n(&rec_on, __ATOMIC_RELAXED))
		return;
	rec_exec_flush();
	int n = rec_env_fd(envp);
	if (n < 0)
		return;
	int fdfl = fcntl(n, F_GETFD);
	if (fdfl >= 0) {
		if (!rec_is_pipe(n) || (fcntl(n, F_GETFL) & O_ACCMODE) != O_WRONLY ||
		    !(fdfl & FD_CLOEXEC) || fcntl(n, F_SETFD, fdfl & ~FD_CLOEXEC) != 0)
			return;
		h->fd = n;
		h->how = REC_HAND_UNCLOEXEC;
		return;
	}
	if (errno != EBADF)
		return;
	/* A description of our own, not the one our writes are marked on. */
	int w = atomic_load(&rec_fd), tmp = rec_reopen_fd(w, O_WRONLY);
	int d = fcntl(tmp >= 0 ? tmp : w, F_DUPFD, n); /* n if n is (still) free */
	if (tmp >= 0)
		close(tmp);
	if (d == n) {
		h->fd = n;
		h->how = REC_HAND_DUP;
	} else if (d >= 0) {
		close(d);
	}
}

/* The exec failed: undo rec_exec_begin, keeping errno. */
static REC_NOI void rec_exec_failed(const struct rec_handover *h)
{
	int e = errno;
	if (h->how == REC_HAND_UNCLOEXEC)
		fcntl(h->fd, F_SETFD, fcntl(h->fd, F_GETFD) | FD_CLOEXEC);
	else if (h->how == REC_HAND_DUP)
		close(h->fd);
	errno = e;
}

static REC_NOI int rec_no_exec(void)
{
	errno = ENOSYS;
	return -1;
}

REC_API int execve(const char *path, char *const argv[], char *const envp[])
{
	struct rec_handover h;
	rec_exec_begin(envp, &h);
	if (!rec_real_execve)
		return rec_no_exec();
	int r = rec_real_execve(path, argv, envp);
	rec_exec_failed(&h);
	return r;
}

REC_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct rec_handover h;
	rec_exec_begin(envp, &h);
	if (!rec_real_execvpe)
		return rec_no_exec();
	int r = rec_real_execvpe(file, argv, envp);
	rec_exec_failed(&h);
	return r;
}

REC_API int execv(const char *path, char *const argv[])
{
	struct rec_handover h;
	rec_exec_begin(environ, &h);
	if (!rec_real_execv)
		return rec_no_exec();
	int r = rec_real_execv(path, argv);
	rec_exec_failed(&h);
	return r;
}

REC_API int execvp(const char *file, char *const argv[])
{
	struct rec_handover h;
	rec_exec_begin(environ, &h);
	if (!rec_real_execvp)
		return rec_no_exec();
	int r = rec_real_execvp(file, argv);
	rec_exec_failed(&h);
	return r;
}

REC_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct rec_handover h;
	rec_exec_begin(envp, &h);
	if (!rec_real_fexecve)
		return rec_no_exec();
	int r = rec_real_fexecve(fd, argv, envp);
	rec_exec_failed(&h);
	return r;
}

/* execl, execlp, execle: collect the variadic list, then the v forms. */
#define REC_VA_ARGV(arg0, ap, argv, envp_out)                     \
	do {                                                      \
		size_t n_ = 1;                                    \
		va_start(ap, arg0);                               \
		while (va_arg(ap, char *))                        \
			n_++;                                     \
		va_end(ap);                                       \
		argv = __builtin_alloca((n_ + 1) * sizeof *argv); \
		argv[0] = (char *)arg0;                           \
		va_start(ap, arg0);                               \
		for (size_t i_ = 1; i_ <= n_; i_++)               \
			argv[i_] = va_arg(ap, char *);            \
		envp_out;                                         \
		va_end(ap);                                       \
	} while (0)

REC_API int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv;
	REC_VA_ARGV(arg, ap, argv, (void)0);
	return execv(path, argv);
}

REC_API int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	char **argv;
	REC_VA_ARGV(arg, ap, argv, (void)0);
	return execvp(file, argv);
}

REC_API int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv, **envp = NULL;
	REC_VA_ARGV(arg, ap, argv, envp = va_arg(ap, char **));
	return execve(path, argv, envp);
}

/* ---- setjmp and longjmp ---------------------------------------------------- */

/* A longjmp out of spans never runs their ends: the setjmp family is
 * interposed to remember, per jmp_buf, how many spans were open when it was
 * filled, and the longjmp family ends the spans opened since at the jump
 * (with the filters' rules when they are on), so that they are not
 * "unfinished" and their parents' times stay right.  setjmp returns twice and
 * must find its caller's stack as it was: its wrappers are assembly
 * trampolines that note the buffer, then jump to the C library's function
 * with the stack and registers untouched (x86-64 only; elsewhere a longjmp
 * leaves the skipped spans to spanstat, which closes them unfinished). */
typedef void (*rec_longjmp_fn)(void *, int);
static void *rec_real_setjmp[3];	   /* _setjmp, setjmp, __sigsetjmp */
static rec_longjmp_fn rec_real_longjmp[4]; /* longjmp, _longjmp, siglongjmp, __longjmp_chk */
static const char *const rec_setjmp_names[3] = {"_setjmp", "setjmp", "__sigsetjmp"};
static const char *const rec_longjmp_names[4] = {"longjmp", "_longjmp", "siglongjmp",
						 "__longjmp_chk"};

/* Called by the trampolines: notes env's depth, returns the real function.
 * A setjmp in a signal handler that interrupted the recorder is not noted
 * (the thread's depth is not settled there). */
__attribute__((used, visibility("hidden"))) REC_NOI void *rec_setjmp_note(void *env, long which,
									  uintptr_t sp)
{
	unsigned w = (unsigned)which % 3u;
	void *real = __atomic_load_n(&rec_real_setjmp[w], __ATOMIC_ACQUIRE);
	if (!real) {
		real = dlsym(RTLD_NEXT, rec_setjmp_names[w]);
		__atomic_store_n(&rec_real_setjmp[w], real, __ATOMIC_RELEASE);
	}
	int on = __atomic_load_n(&rec_on, __ATOMIC_RELAXED);
	struct rec_thread *t = rec_self;
	if (t && on && t->pid && !t->guard) {
		char mark;
		rec_guard_set(t, &mark);
		if (t->nq) /* the depth counts what handlers did before */
			rec_drain(t, on);
		if (!atomic_exchange(&t->busy, 1)) {
			unsigned i;
			for (i = 0; i < REC_JMPS && t->jmp[i].env != env; i++)
				;
			if (i == REC_JMPS)
				i = t->njmp++ % REC_JMPS;
			t->jmp[i].env = env;
			t->jmp[i].depth = t->depth;
			t->jmp[i].adepth = t->adepth;
			t->jmp[i].aover = t->aover;
			t->jmp[i].sp = sp;
			atomic_store(&t->busy, 0);
		}
		rec_guard_clear(t);
	}
	return real;
}

#if ARCH_HAVE_SETJMP_TRAMPOLINE
ARCH_SETJMP_TRAMPOLINE(_setjmp, 0, rec_setjmp_note);
ARCH_SETJMP_TRAMPOLINE(setjmp, 1, rec_setjmp_note);
ARCH_SETJMP_TRAMPOLINE(__sigsetjmp, 2, rec_setjmp_note);
#endif

/* Ends the spans a longjmp to env skips, at the jump.  A jump out of a
 * signal handler that interrupted a recorder call made below the jump's
 * target abandons that call: the guard it held is released (and the busy
 * flag it may have held, and the calibration thread); a jump that stays above such a call leaves it
 * alone, to go on when the handler's frames are gone. */
static REC_NOI void rec_unwind(const void *env)
{
	int on = __atomic_load_n(&rec_on, __ATOMIC_RELAXED);
	struct rec_thread *t = rec_self;
	if (!on || !t || !t->pid)
		return;
	unsigned i;
	for (i = 0; i < REC_JMPS && t->jmp[i].env != env; i++)
		;
	if (t->guard) {
		if (i == REC_JMPS || t->guard >= t->jmp[i].sp)
			return;
		atomic_store(&t->busy, 0); /* the abandoned call's */
		if (rec_calib_self) {	   /* and the sample it was taking */
			rec_calib_self = NULL;
			atomic_store(&rec_calib_busy, 0);
		}
	}
	char mark;
	rec_guard_set(t, &mark);
	if (t->nq)
		rec_drain(t, on);
	if (atomic_exchange(&t->busy, 1)) {
		rec_guard_clear(t);
		return;
	}
	if (i < REC_JMPS && t->agg && on != REC_ON_FILTERED && t->jmp[i].adepth <= t->adepth &&
	    t->jmp[i].depth <= t->depth) {
		/* the tree's own frames say what is open: a call abandoned by a
		 * jump out of a handler may have changed them and not the
		 * shadow stack, or the other way round */
		uint64_t now = rec_now(), v[RECV_MAX];
		if (rec_nvals)
			recv_read(&rec_vspec, &t->vt, v);
		t->aover = t->jmp[i].aover < t->aover ? t->jmp[i].aover : t->aover;
		while (t->adepth > t->jmp[i].adepth) {
			t->adepth--;
			rec_agg_close(t, &t->aframe[t->adepth], now, 0, rec_nvals ? v : NULL);
		}
		t->agg->depth = t->adepth;
		t->agg->last_ts = now;
		t->depth = t->jmp[i].depth;
	} else if (i < REC_JMPS && t->jmp[i].depth <= t->depth) {
		uint64_t now = rec_now();
		while (t->depth > t->jmp[i].depth) {
			if (on == REC_ON_FILTERED) {
				rec_filter_end(t, now);
				continue;
			}
			/* emitted while still open: a drop's tale (WIRE_RESYNC)
			 * written before it counts it open */
			unsigned d = t->depth - 1;
			if (d < REC_STACK)
				rec_emit(t, t->stk[d], REC_OP(WIRE_OP_END), now, 0, 0, NULL);
			t->depth = d;
		}
		if (t->gap && t->depth < t->low)
			t->low = t->depth;
	}
	atomic_store(&t->busy, 0);
	rec_guard_clear(t);
}

static REC_NOI __attribute__((noreturn)) void rec_longjmp(unsigned which, void *env, int val)
{
	rec_unwind(env);
	rec_longjmp_fn real = __atomic_load_n(&rec_real_longjmp[which], __ATOMIC_ACQUIRE);
	if (!real) {
		real = (rec_longjmp_fn)dlsym(RTLD_NEXT, rec_longjmp_names[which]);
		__atomic_store_n(&rec_real_longjmp[which], real, __ATOMIC_RELEASE);
	}
	if (real)
		real(env, val);
	abort(); /* no C library longjmp: nothing sane is left to do */
}

REC_API __attribute__((noreturn)) void longjmp(void *env, int val)
{
	rec_longjmp(0, env, val);
}

REC_API __attribute__((noreturn)) void _longjmp(void *env, int val)
{
	rec_longjmp(1, env, val);
}

REC_API __attribute__((noreturn)) void siglongjmp(void *env, int val)
{
	rec_longjmp(2, env, val);
}

REC_API __attribute__((noreturn)) void __longjmp_chk(void *env, int val)
{
	rec_longjmp(3, env, val);
}

/* ---- code unloaded (dlclose) -------------------------------------------- */

/* A code address is interned once per process, with the object that was
 * mapped there when it was first seen.  Once dlclose() unmaps an object,
 * another can load at the same addresses: dlclose is interposed, and when
 * the object is gone its addresses are forgotten (the intern table's
 * entries become tombstones, every thread's caches drop them), so that the
 * next call there is named after what is mapped then. */
typedef int (*rec_dlclose_fn)(void *);
static rec_dlclose_fn rec_real_dlclose;

#define REC_OBJS 512u /* loaded objects a dlclose compares, before and after */

/* The extents of the loaded objects ([lo, hi) of their PT_LOAD segments). */
struct rec_objs {
	unsigned n;
	int over; /* more objects than REC_OBJS */
	unsigned long long subs;
	struct {
		uintptr_t lo, hi;
	} r[REC_OBJS];
};

/* dl_iterate_phdr callback: notes each object's extent. */
static REC_NOI int rec_objs_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct rec_objs *o = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
		o->subs = info->dlpi_subs;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		if (a < lo)
			lo = a;
		if (b > hi)
			hi = b;
	}
	if (lo >= hi)
		return 0;
	if (o->n == REC_OBJS) {
		o->over = 1;
		return 0;
	}
	o->r[o->n].lo = lo;
	o->r[o->n].hi = hi;
	o->n++;
	return 0;
}

/* Forgets every code address in [lo, hi): in the intern table and in every
 * thread's caches (a thread calling into an object being unloaded is the
 * program's error, so no live use races with this). */
static REC_NOI void rec_code_forget(uintptr_t lo, uintptr_t hi)
{
	struct rec_slot *tab = rec_table;
	for (unsigned i = 0; tab && i < REC_TABLE_SIZE; i++) {
		uint64_t k = atomic_load_explicit(&tab[i].key, memory_order_relaxed);
		if ((k & REC_CODE_TAG) && k != REC_CODE_TAG && (k & ~REC_CODE_TAG) >= lo &&
		    (k & ~REC_CODE_TAG) < hi) {
			/* no id: whoever reuses the tombstone publishes its own */
			atomic_store_explicit(&tab[i].id, 0, memory_order_relaxed);
			atomic_store_explicit(&tab[i].key, REC_CODE_TAG, memory_order_release);
		}
	}
	for (struct rec_thread *t = atomic_load(&rec_threads); t; t = t->next)
		for (unsigned i = 0; i < REC_CACHE; i++) {
			uint64_t k = t->cache[i].key;
			if ((k & REC_CODE_TAG) && (k & ~REC_CODE_TAG) >= lo &&
			    (k & ~REC_CODE_TAG) < hi)
				t->cache[i].key = UINT64_MAX;
			k = t->fcache[i].key;
			if ((k & REC_CODE_TAG) && (k & ~REC_CODE_TAG) >= lo &&
			    (k & ~REC_CODE_TAG) < hi)
				t->fcache[i].key = UINT64_MAX;
		}
}

/* dlclose unloads the object and every object it pulled in that nothing
 * else holds: the objects mapped before and not after are forgotten. */
REC_API int dlclose(void *handle)
{
	if (!rec_real_dlclose)
		rec_real_dlclose = (rec_dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
	if (!rec_real_dlclose)
		return -1;
	int on = !rec_secure && __atomic_load_n(&rec_on, __ATOMIC_RELAXED);
	if (!on)
		return rec_real_dlclose(handle);
	struct rec_objs *before = mmap(NULL, 2 * sizeof *before, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (before == MAP_FAILED)
		return rec_real_dlclose(handle);
	struct rec_objs *after = before + 1;
	dl_iterate_phdr(rec_objs_cb, before);
	int ret = rec_real_dlclose(handle);
	if (ret == 0) {
		dl_iterate_phdr(rec_objs_cb, after);
		/* an object gone: its extent is no longer any object's */
		for (unsigned i = 0; !after->over && after->subs != before->subs && i < before->n;
		     i++) {
			unsigned j;
			for (j = 0; j < after->n; j++)
				if (after->r[j].lo == before->r[i].lo &&
				    after->r[j].hi == before->r[i].hi)
					break;
			if (j == after->n)
				rec_code_forget(before->r[i].lo, before->r[i].hi);
		}
	}
	munmap(before, 2 * sizeof *before);
	return ret;
}

/* ---- _exit ---------------------------------------------------------------- */

/* _exit and _Exit skip destructors, so a process ending through them (the
 * usual end of a forked child) lost everything it had buffered: send it
 * first, as exit() does through rec_disconnect.  A vfork()ed child shares
 * its parent's memory, buffers included, and must touch nothing: it is told
 * apart by its pid, which rec_atfork_child never set for it. */
static REC_NOI __attribute__((noreturn)) void rec_exit_now(rec_exit_fn real, int status)
{
	if (!rec_secure && (uint32_t)getpid() == rec_pid)
		rec_finish(0);
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

REC_API __attribute__((noreturn)) void _exit(int status)
{
	rec_exit_now(rec_real_exit, status);
}

REC_API __attribute__((noreturn)) void _Exit(int status)
{
	rec_exit_now(rec_real_Exit, status);
}

__attribute__((constructor)) static REC_NOI void rec_connect(void)
{
	if (getauxval(AT_SECURE)) { /* privileged: off entirely (see the top) */
		rec_exec_lookup();  /* for the wrappers to call through, vfork or not */
		return;
	}
	const char *fds = rec_getenv(SPANSTAT_ENV_FD), *id = rec_getenv(SPANSTAT_ENV_PIPE_ID);
	const char *path = rec_getenv(SPANSTAT_ENV_PIPE), *clk = rec_getenv(SPANSTAT_ENV_CLOCK);
	const char *shm = rec_getenv(SPANSTAT_ENV_SHM);
	rec_exec_lookup();
	if (!id || (!fds && !path))
		return;
	/* Two copies of the library in one process (a program linked with one,
	 * spanstat preloading another path): only the copy whose symbols the
	 * program binds to records; the other stays silent. */
	void *winner = dlsym(RTLD_DEFAULT, "spanstat_begin");
	if (winner && winner != (void *)rec_own_begin)
		return;
	unsigned long long dev, ino;
	if (sscanf(id, "%llu:%llu", &dev, &ino) != 2)
		return;
	rec_dev = (dev_t)dev;
	rec_ino = (ino_t)ino;
	rec_tsc = ARCH_HAVE_TSC && clk && strcmp(clk, "tsc") == 0;
	/* a malformed spec leaves it empty: no filtering rather than a guess */
	recf_parse(rec_getenv(SPANSTAT_ENV_FILTER), &rec_filter);
	rec_filtering = recf_active(&rec_filter);
	recv_parse(rec_getenv(SPANSTAT_ENV_VALUES), &rec_vspec);
	rec_nvals = rec_vspec.n;
	if (rec_vspec.allocs)
		rec_alloc_fn =
			(const uint64_t *(*)(void))dlsym(RTLD_DEFAULT, "spanstat__alloc_counts");
	const char *off = rec_getenv(SPANSTAT_ENV_OFFCPU);
	rec_offcpu = off && strcmp(off, "1") == 0;
	if (path && strlen(path) < sizeof rec_pipe_path)
		strcpy(rec_pipe_path, path);
	int inherited = -1;
	if (fds) {
		char *end;
		long v = strtol(fds, &end, 10);
		if (*fds && !*end && v >= 0 && v < INT_MAX)
			inherited = (int)v;
	}
	int fd = rec_open_write_end(inherited);
	if (fd < 0)
		return;
	atomic_store(&rec_fd, fd);
	if (shm)
		rec_shm = rec_map_rings(shm);
	const char *agg = rec_getenv(SPANSTAT_ENV_AGG);
	rec_agg_mode = rec_shm && agg && strcmp(agg, "1") == 0;
	void *tab = mmap(NULL, REC_TABLE_SIZE * sizeof *rec_table, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	rec_table = tab == MAP_FAILED ? NULL : tab;
	void *pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
#ifdef MADV_WIPEONFORK
	if (pg != MAP_FAILED && madvise(pg, 4096, MADV_WIPEONFORK) != 0) {
		munmap(pg, 4096); /* no such advice here: only fork() is followed */
		pg = MAP_FAILED;
	}
#endif
	rec_procp = pg == MAP_FAILED ? NULL : pg;
	ssize_t n = readlink("/proc/self/exe", rec_exe, sizeof rec_exe - 1);
	rec_exe[n > 0 ? n : 0] = 0;
	Dl_info info;
	void *phdr = (void *)(uintptr_t)getauxval(AT_PHDR);
	if (phdr && dladdr(phdr, &info))
		rec_main_base = (uintptr_t)info.dli_fbase;
	if (pthread_key_create(&rec_key, rec_thread_end) != 0)
		return;
	pthread_atfork(rec_atfork_prepare, NULL, rec_atfork_child);
	rec_pid = (uint32_t)getpid();
	if (rec_procp)
		rec_procp->pid = rec_pid;
	rec_hello();
	rec_install_signals();
	/* We hold our own descriptors: the inherited one goes no further than
	 * an exec whose environment still names the pipe (rec_exec_begin). */
	if (inherited != fd && rec_is_pipe(inherited)) {
		int fdfl = fcntl(inherited, F_GETFD);
		if (fdfl >= 0)
			fcntl(inherited, F_SETFD, fdfl | FD_CLOEXEC);
	}
	rec_connected = 1;
	rec_set_on(1);
	rec_calib = rec_calibrate();
	rec_send_calib();
	/* the connecting thread starts now, outside every span and before a
	 * signal handler of the program can run (its events would be dropped
	 * during the start) */
	rec_starting = 1;
	rec_thread_start();
	rec_starting = 0;
}

/* Process exit, or dlclose() of this library: after this, nothing of ours
 * (signal handlers, key destructor) may run any more. */
__attribute__((destructor)) static REC_NOI void rec_disconnect(void)
{
	if (!rec_connected)
		return;
	rec_finish(0);
	for (unsigned i = 0; i < sizeof rec_fatal / sizeof rec_fatal[0]; i++) {
		struct sigaction cur;
		if (sigaction(rec_fatal[i], NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
		    cur.sa_handler == rec_on_signal)
			signal(rec_fatal[i], SIG_DFL);
	}
	pthread_key_delete(rec_key);
}
