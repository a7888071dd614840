/* rec.h: what the files of libspanstat's recorder share.  The recorder is
 * the span library that runs inside the target (linked, or LD_PRELOADed).
 * It owns the connection to spanstat's pipe (found through the SPANSTAT_*
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
 * another is queued (rec_queue.c).
 *
 * The files, one job each:
 *   rec_event.c    the recording paths: the entry points, the hot path and
 *                  everything it calls directly, in one translation unit
 *   rec_filter.c   the filters' decisions and late begins (filter.h)
 *   rec_queue.c    the events of signal handlers that interrupted a call
 *   rec_ring.c     where a thread's words go: its record or its ring (ring.h)
 *   rec_pipe.c     the connection to spanstat's pipe, and waiting for room
 *   rec_names.c    name interning and definitions
 *   rec_thread.c   a thread's state: its start, its name, its end
 *   rec_calib.c    what an event costs the process (WIRE_CALIB)
 *   rec_life.c     the process: connect, hello, fork, fatal signals, exit
 *   rec_exec.c     the exec family, interposed
 *   rec_jmp.c      the setjmp and longjmp families, interposed
 *   rec_dlclose.c  dlclose, interposed
 *   rec_exit.c     _exit and _Exit, interposed
 *   rec_vfork.c    vfork, interposed: its child records nothing of its own
 *   rec_plt.c      library calls through the PLT as spans, and the calls
 *                  that leave their frames (throw, catch, pthread_exit)
 *   rec_mcount.c   -pg and -mfentry builds: mcount, __fentry__, their
 *                  return trampoline, and what unwinds past it
 *
 * This header declares only what one file uses in another, all of it hidden
 * (the library exports its API and the functions it interposes, nothing
 * else).  What the hot path inlines from other files is here as static
 * inline: REC_HOT functions are always inlined, so the hot path stays in
 * rec_event.c whatever file a helper's job belongs to.  Thread-local state
 * is initial-exec, as the library is preloaded: no __tls_get_addr call. */
#ifndef SPANSTAT_SPAN_REC_H
#define SPANSTAT_SPAN_REC_H

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "arch.h"
#include "encode.h"
#include "filter.h"
#include "ring.h"
#include "spanenv.h"
#define SPANSTAT_NO_INLINE /* we define the functions the wrappers call */
#include "spanstat.h"
#include "values.h"
#include "wire.h"

#pragma GCC visibility push(hidden)

#define REC_NOI __attribute__((no_instrument_function))
#define REC_API __attribute__((visibility("default"), no_instrument_function))
#define REC_HOT __attribute__((always_inline, no_instrument_function)) inline
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define REC_WORDS (WIRE_MAX_RECORD / 8u) /* a whole record, header included */
#define REC_FIRST ENC_EVENTS_FIRST_WORD	 /* first event word */
#define REC_CACHE 256u			 /* per-thread name cache entries */
#define REC_TABLE_SIZE (1u << 18)	 /* global intern table slots */
#define REC_TEXTS (1u << 18)		 /* names by text: global table slots */
#define REC_TCACHE 256u			 /* names by text: per-thread cache entries */
#define REC_PROBES 128u			 /* probes before "table full" */
#define REC_CODE_TAG (UINT64_C(1) << 63) /* key of a code address, not a string */
#define REC_WAIT_MS 100			 /* longest wait on a full pipe per write */
#define REC_EXIT_WAIT_MS 1000		 /* longest wait for the final records, in all */
#define REC_STAT_EVERY 64u		 /* writes between full identity checks */
#define REC_FL_MASK (O_ACCMODE | O_NONBLOCK | O_APPEND | O_NOATIME)
#define REC_OP(op) ((uint64_t)(op) << WIRE_OP_SHIFT)
#define REC_ALTSTACK (64u << 10)    /* per-thread signal stack: a stack overflow still flushes */
#define REC_BUSY_SPINS 4096u	    /* yields an event waits for another thread's flush of it */
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
#define REC_MSTACK 512u		    /* hijacked returns followed per thread (-pg) */
#define REC_AGG_NONE RING_AGG_NODES /* a frame of a span the tree had no room for */

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

/* A function of a -pg or -mfentry build whose return was hijacked: the
 * slot of its return address (now the return trampoline's), what was
 * there, and its span's key (rec_mcount.c). */
struct rec_mframe {
	uintptr_t *slot;
	uintptr_t ret;
	uint64_t key;
};

/* A thread's hijacked returns, innermost last.  Its own rather than in
 * struct rec_thread: a return must find its address whatever became of
 * the thread's recording state, and a fork child inherits it.  Mapped at
 * the thread's first -pg function, kept on a list and taken again by a
 * later thread once its own ended (rec_mcount.c). */
struct rec_mstack {
	unsigned depth;
	unsigned restored; /* an exception is unwinding: the slots hold their own addresses */
	atomic_int live;   /* owned by a running thread */
	struct rec_mstack *next;
	struct rec_mframe f[REC_MSTACK];
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
	uint32_t *ahash;      /* aggregate tree's (parent, id) hash, or NULL (rec_agg_child) */
	uint32_t ahash_nodes; /* the tree's nodes it holds */
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
	_Atomic(const struct rec_text *) tcache[REC_TCACHE]; /* names by text (rec_text_name) */
	struct rec_qev q[REC_QLEN];	 /* events of nested calls (signal handlers) */
	uint64_t qv[REC_QLEN][RECV_MAX]; /* their values */
	uint64_t rec[REC_WORDS];	 /* the events record in progress */
	char scratch[WIRE_MAX_RECORD];	 /* other records of this thread */
};

/* The part of a thread's state a fork child must not inherit (see above). */
#define REC_WIPED offsetof(struct rec_thread, live)
_Static_assert(REC_WIPED == 4096, "the wiped part is the first page");

/* A name given by text (spanstat_begin_text), as the process keeps it: made
 * once, never changed nor freed, so that a pointer to it is all a cache or
 * a table needs to hold (one store: a signal handler sees it whole). */
struct rec_text {
	uint64_t hash; /* rec_text_hash */
	size_t len;    /* bytes of text, no NUL among them */
	char text[];   /* NUL-terminated: the name's key is its address */
};

/* Global intern table: key 0 is empty; id 0 means claimed, not yet defined. */
struct rec_slot {
	_Atomic uint64_t key;
	_Atomic uint32_t id;
	uint32_t pad;
};

/* rec_event.c */
/* Our own spanstat_begin (an alias), whichever copy the program's calls bind to. */
void rec_own_begin(const char *name);
extern int rec_on; /* the hot-path gate: 0 or REC_ON* */
extern __thread struct rec_thread *rec_self __attribute__((tls_model("initial-exec")));
extern __thread volatile int rec_starting __attribute__((tls_model("initial-exec")));
extern __thread struct rec_thread *rec_calib_self __attribute__((tls_model("initial-exec")));

/* rec_life.c: what the constructor found */
extern struct recv_spec rec_vspec; /* SPANSTAT_VALUES: what begins and ends carry */
extern unsigned rec_nvals;	   /* rec_vspec.n */
extern uint32_t rec_vlayout;	   /* spanstat_values_id() of it (0: no values) */
extern int rec_offcpu;		   /* SPANSTAT_OFFCPU: aggregating threads mark switched spans */
extern const uint64_t *(*rec_alloc_fn)(void); /* libspanstat-alloc's counts */
extern void (*rec_alloc_quiet)(int delta);    /* its bracket: the recorder's own */
extern int rec_agg_mode;		      /* SPANSTAT_AGG: threads with a slot aggregate */
extern int rec_filtering;		      /* SPANSTAT_FILTER set some filter */
extern struct recf_spec rec_filter;	      /* the filters */
extern int rec_tsc;		/* timestamps are TSC ticks, else CLOCK_MONOTONIC ns */
extern char rec_exe[PATH_MAX];	/* /proc/self/exe at connect */
extern uintptr_t rec_main_base; /* dladdr base of the main program */
extern uint32_t rec_pid;
extern atomic_int rec_exiting;
extern int rec_late;		 /* the exit path ran: later events are counted (rec_late_event) */
extern uint64_t rec_incarnation; /* the ts of our latest WIRE_HELLO */
extern pthread_key_t rec_key;
/* One page wiped in a fork child (MADV_WIPEONFORK): pid 0 there. */
struct rec_proc {
	uint32_t pid;
};
extern struct rec_proc *rec_procp;

/* rec_pipe.c */
extern atomic_int rec_fd;  /* private write end */
extern atomic_int rec_rfd; /* private read end, never read */
extern dev_t rec_dev;
extern ino_t rec_ino;
extern char rec_pipe_path[256]; /* SPANSTAT_PIPE, to reconnect */
extern atomic_int
	rec_nowait; /* a write timed out: no waiting until one succeeds (2: an exec's too) */
extern _Atomic uint64_t rec_exit_deadline; /* rec_finish, exec: wait for room until then */
extern _Atomic uint64_t rec_waited;	   /* ns threads waited for room (WIRE_WAITED) */

/* rec_ring.c */
extern _Atomic uint64_t rec_dropped; /* event words every thread dropped */
extern void *rec_shm;		     /* the ring file's slot table, mapped shared, or NULL */

/* rec_names.c */
extern atomic_uint rec_next_id;
extern struct rec_slot *rec_table;

/* rec_thread.c */
extern const uint32_t rec_nomark; /* the switch mark of threads that need none */
extern _Atomic(struct rec_thread *) rec_threads;
extern __thread int rec_self_done __attribute__((tls_model("initial-exec")));

/* rec_calib.c */
extern uint64_t rec_calib;	       /* milli-ticks per event: at connect, then the run's */
extern uint64_t rec_calib_pg_extra;    /* milli-ticks a -pg function's event costs more */
extern struct rec_thread *rec_calib_t; /* kept for in-run samples, or NULL */
extern atomic_int rec_calib_busy;      /* a thread samples on rec_calib_t */
extern _Atomic uint64_t rec_recal_with, rec_recal_without, rec_recal_pairs;

/* rec_exec.c: the C library's functions, looked up at load */
typedef void (*rec_exit_fn)(int);
extern rec_exit_fn rec_real_exit, rec_real_Exit;
extern int rec_secure; /* AT_SECURE, as rec_exec_lookup found it */

/* rec_event.c */
REC_NOI __attribute__((noinline)) uint32_t rec_agg_child(struct rec_thread *t, uint32_t cur,
							 uint32_t id);
REC_NOI void rec_agg_hash_reset(struct rec_thread *t);
REC_NOI __attribute__((noinline)) void rec_agg_switched(struct rec_thread *t, uint32_t node,
							uint64_t begin, uint64_t end);
REC_NOI __attribute__((noinline)) void
rec_agg_mismatch(struct rec_thread *t, uint64_t key, uint32_t id, uint64_t now, const uint64_t *v);
REC_NOI __attribute__((noinline)) void rec_apply(struct rec_thread *t, uint64_t key, uint64_t op,
						 uint64_t now, int fresh, int has_val, int64_t val,
						 const uint64_t *v);
REC_NOI __attribute__((noinline)) void rec_event_filtered(struct rec_thread *t, uint64_t key,
							  uint64_t op, int has_val, int64_t val,
							  uint64_t now);
REC_NOI __attribute__((noinline)) void rec_calib_begin(const char *name);
REC_NOI __attribute__((noinline)) void rec_calib_end(const char *name);

/* rec_filter.c */
REC_NOI void rec_filter_flush(struct rec_thread *t, unsigned upto);
REC_NOI void rec_filter_settle(struct rec_thread *t, uint64_t now);
REC_NOI unsigned rec_filter_flags(struct rec_thread *t, unsigned d, uint64_t key);
REC_NOI void rec_filter_begin(struct rec_thread *t, unsigned d, uint64_t now);
REC_NOI void rec_filter_end(struct rec_thread *t, uint64_t now);

/* rec_queue.c */
REC_NOI void rec_queue(struct rec_thread *t, uint64_t key, uint64_t op, int has_val, int64_t val);
REC_NOI __attribute__((noinline)) void rec_drain(struct rec_thread *t, int on);

/* rec_ring.c */
REC_NOI void rec_drop(struct rec_thread *t, uint64_t words);
REC_NOI uint32_t rec_sat32(uint64_t n);
REC_NOI void rec_flush(struct rec_thread *t);
REC_NOI void rec_ring_publish(struct rec_thread *t);
REC_NOI int rec_ring_attach(struct rec_thread *t, uint64_t now);
REC_NOI int rec_ring_putn(struct rec_thread *t, uint64_t word, const uint64_t *pl, unsigned n);
REC_NOI void rec_ring_detach(struct rec_thread *t, uint64_t ts);
REC_NOI void *rec_map_rings(const char *path);
/* An event (key: its name) that came after the exit path had run: it can
 * no longer be sent, so it is counted in the ring file (ring_file.late),
 * which spanstat reads once the process is gone. */
REC_NOI __attribute__((noinline)) void rec_late_event(uint64_t key);
/* An event while recording is off: counted when the exit path ran. */
extern uint64_t *rec_mcount_late; /* -pg calls after the exit path (rec_life.c) */
static inline void rec_late_maybe(uint64_t key)
{
	if (unlikely(__atomic_load_n(&rec_late, __ATOMIC_RELAXED)))
		rec_late_event(key);
}
REC_NOI void rec_emit_pop(struct rec_thread *t, uint64_t n, uint64_t now, int to);
REC_NOI void rec_emit_arg(struct rec_thread *t, uint64_t key, unsigned type, uint64_t val,
			  uint64_t skey);
extern atomic_uint rec_ngone; /* objects dlclose unloaded (rec_dlclose.c) */
REC_NOI int rec_text_gone(uint64_t key);
REC_NOI void rec_emit(struct rec_thread *t, uint64_t key, uint64_t op, uint64_t now, int has_val,
		      int64_t val, const uint64_t *v);

/* rec_pipe.c */
REC_NOI int rec_is_pipe(int fd);
REC_NOI int rec_reopen_fd(int fd, int mode);
REC_NOI int rec_open_write_end(int inherited);
REC_NOI void rec_set_on(int on);
REC_NOI int rec_wait_round(uint64_t *deadline, uint64_t *now);
REC_NOI uint64_t rec_thread_cpu(void);
REC_NOI void rec_waited_since(uint64_t since, uint64_t cpu, int got);
REC_NOI int rec_write(const void *buf, size_t len);

/* rec_names.c */
REC_NOI uint32_t rec_intern(struct rec_thread *t, uint64_t key);
REC_NOI __attribute__((noinline)) const struct rec_text *rec_text_find(const char *text,
								       size_t len);
/* spanstat_category(): keeps name's category for the filters (the first
 * one declared for a text holds) and sends it (WIRE_CATEGORY). */
REC_NOI void rec_cat_declare(struct rec_thread *t, const char *name, const char *cat);
/* The category declared for the span name text name, NULL if none. */
REC_NOI const char *rec_cat_of(const char *name);

/* rec_thread.c */
REC_NOI uint32_t rec_gettid(void);
REC_NOI void rec_thread_reset(struct rec_thread *t, uint64_t now);
REC_NOI struct rec_thread *rec_thread_start(void);
REC_NOI void rec_thread_end(void *arg);
REC_NOI void rec_send_thread_name(struct rec_thread *t, const char *name);
REC_NOI void rec_send_uncounted(struct rec_thread *t);
REC_NOI void rec_send_comm(struct rec_thread *t);

/* rec_calib.c */
REC_NOI uint64_t rec_calibrate(void);
REC_NOI __attribute__((noinline)) void rec_recalibrate(struct rec_thread *t);
REC_NOI void rec_recal_final(void);
REC_NOI void rec_send_calib(void);

/* rec_life.c */
REC_NOI void rec_send_waited(void);
REC_NOI void rec_finish(int sig);
REC_NOI int rec_new_process(struct rec_thread *self);

/* rec_exec.c */
REC_NOI void rec_exec_lookup(void);

/* rec_event.c: an event of a lib call (rec_plt.c), on the hot path */
REC_NOI void rec_lib_event(uint64_t key, uint64_t op);

/* rec_vfork.c: vfork children nested in this thread's memory (0: none);
 * while it is not 0 the thread's state is hidden and its events dropped */
extern __thread int rec_vforked __attribute__((tls_model("initial-exec")));

/* rec_plt.c */
REC_NOI void rec_plt_init(const char *glob, const char *from);
REC_NOI void rec_plt_longjmp(uintptr_t sp);
/* A vfork child (1) hides the thread's lib-call stack; its parent (0) gets it back. */
REC_NOI void rec_plt_vfork(int child);
/* dlclose unloaded what was at [lo, hi): the lib-call stubs of its objects are given back. */
REC_NOI void rec_plt_gone(uintptr_t lo, uintptr_t hi);
/* Tells spanstat the objects found since it last told whose calls are not
 * followed (WIRE_UNFOLLOWED): before an exit or an exec; signal-safe. */
REC_NOI void rec_plt_tell(void);
/* rec_mcount.c, rec_event.c: -pg and -mfentry builds */
/* The thread's hijacked returns, NULL until its first -pg function. */
extern __thread struct rec_mstack *rec_mstkp __attribute__((tls_model("initial-exec")));
/* rec_mstkp made; NULL: no memory, a vfork child's, or inside the making. */
REC_NOI __attribute__((noinline)) struct rec_mstack *rec_mstack_get(void);
/* A vfork child (1) hides the thread's -pg stack; its parent (0) gets it back. */
REC_NOI void rec_mcount_vfork(int child);
/* The calibration's -pg calls (1) on a stack of their own, not the thread's (0: back). */
REC_NOI void rec_mcount_calib_stack(int on);
void rec_mcount_return(void); /* the return trampoline (arch.h) */
REC_NOI void rec_mcount_enter(uintptr_t site, uintptr_t *slot);
REC_NOI uintptr_t rec_mcount_exit(uintptr_t *slot);
REC_NOI void rec_mcount_end(uint64_t key);
REC_NOI void rec_mcount_jump(uintptr_t sp);
REC_NOI void rec_mcount_catch(uintptr_t sp, int rehook);
REC_NOI unsigned rec_mcount_unwound(struct rec_mstack *m, uintptr_t slot);
REC_NOI void rec_mcount_thread_exit(void);
extern int rec_mcount_used; /* a -pg function began a span in this process */
#if ARCH_HAVE_MCOUNT
void rec_mcount_calib_fn(void);		   /* a -pg function of the library's (arch.h) */
extern const char rec_mcount_calib_site[]; /* where its mcount call returns */
#endif

static inline REC_NOI uint64_t rec_mono(void)
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

/* The thread's cache entry for a text query (text, len): from its length
 * and its first and last eight bytes, as given (a NUL among them included:
 * two queries of one name may have two entries, each holding the name). */
static REC_HOT unsigned rec_text_slot(const char *s, size_t len)
{
	uint64_t first = 0, last = 0;
	if (likely(len >= 8)) {
		memcpy(&first, s, 8);
		memcpy(&last, s + len - 8, 8);
	} else if (len >= 4) { /* two words of four, overlapping */
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + len - 4, 4);
		first = (uint64_t)a << 32 | b;
	} else {
		for (size_t i = 0; i < len; i++)
			first = first << 8 | (unsigned char)s[i];
	}
	uint64_t h = first * UINT64_C(0x9e3779b97f4a7c15) ^ last * UINT64_C(0xc2b2ae3d27d4eb4f) ^
		     len * UINT64_C(0xff51afd7ed558ccd);
	return (unsigned)(h >> 56) & (REC_TCACHE - 1);
}

/* Whether the query (s, len), len measured to its NUL (rec_text_name), names
 * e: the same bytes.  Reads no byte of s beyond len (it may end a page). */
static REC_HOT int rec_text_names(const struct rec_text *e, const char *s, size_t len)
{
	size_t n = e->len;
	if (n != len)
		return 0;
	if (n < 8) {
		if (n >= 4) { /* two words of four, overlapping */
			uint32_t a, b, c, d;
			memcpy(&a, e->text, 4);
			memcpy(&b, s, 4);
			memcpy(&c, e->text + n - 4, 4);
			memcpy(&d, s + n - 4, 4);
			return a == b && c == d;
		}
		for (size_t i = 0; i < n; i++)
			if (e->text[i] != s[i])
				return 0;
		return 1;
	}
	uint64_t a, b;
	for (size_t i = 0; i + 8 <= n; i += 8) {
		memcpy(&a, e->text + i, 8);
		memcpy(&b, s + i, 8);
		if (a != b)
			return 0;
	}
	memcpy(&a, e->text + n - 8, 8); /* the last word, overlapping */
	memcpy(&b, s + n - 8, 8);
	return a == b;
}

/* The name the process keeps for text (its first len bytes, up to a NUL):
 * the thread's cache, else the process's table, which copies it on first
 * use (rec_text_find).  NULL: not kept (no memory, a full table).  Lock-free
 * and without a guard: every store is one pointer to a text that never
 * changes, so a signal handler may run it in the middle of the thread's. */
static REC_HOT const char *rec_text_name(struct rec_thread *t, const char *text, size_t len)
{
	/* the text's own length first: nothing below reads past a NUL, so a
	 * len beyond the buffer (SIZE_MAX, a buffer's size) is safe as it is
	 * for strnlen */
	len = strnlen(text, len);
	if (unlikely(t == NULL)) {
		const struct rec_text *e = rec_text_find(text, len);
		return e ? e->text : NULL;
	}
	_Atomic(const struct rec_text *) *c = &t->tcache[rec_text_slot(text, len)];
	const struct rec_text *e = atomic_load_explicit(c, memory_order_relaxed);
	if (likely(e && rec_text_names(e, text, len)))
		return e->text;
	e = rec_text_find(text, len);
	if (e)
		atomic_store_explicit(c, e, memory_order_relaxed);
	return e ? e->text : NULL;
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

/* Whether this process is a fork child that has not started yet. */
static REC_HOT int rec_unannounced(void)
{
	return rec_procp && !rec_procp->pid;
}

#pragma GCC visibility pop

#endif
