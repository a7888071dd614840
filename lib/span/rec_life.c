/* rec_life.c: the process's life cycle on the wire (rec.h): the
 * connection at load (the constructor reads the SPANSTAT_* environment, the
 * only place that does), its hello, fork (a child is a new process),
 * fatal signals and the end, where every thread's buffered events are sent
 * before WIRE_EXIT.
 *
 * Privileged processes (AT_SECURE: setuid, setgid, file capabilities): the
 * library stays off entirely.  It reads no variable, opens and writes
 * nothing, installs no handler, and its exec wrappers only call through, so
 * that nobody can have such a process send its spans and load addresses to a
 * pipe of their choosing. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rec.h"

#ifdef HAVE_SECURE_GETENV
#define rec_getenv secure_getenv /* a second line: rec_connect checked AT_SECURE */
#else
#define rec_getenv getenv
#endif

struct recv_spec rec_vspec; /* SPANSTAT_VALUES: what begins and ends carry */
unsigned rec_nvals;	    /* rec_vspec.n */
uint32_t rec_vlayout;	    /* spanstat_values_id() of it (0: no values) */
int rec_offcpu;		    /* SPANSTAT_OFFCPU: aggregating threads mark switched spans */
const uint64_t *(*rec_alloc_fn)(void); /* libspanstat-alloc's counts */
void (*rec_alloc_quiet)(int delta);    /* its bracket: the recorder's own */
int rec_agg_mode;		       /* SPANSTAT_AGG: threads with a slot aggregate */
int rec_filtering;		       /* SPANSTAT_FILTER set some filter */
struct recf_spec rec_filter;	       /* the filters */
int rec_tsc;			       /* timestamps are TSC ticks, else CLOCK_MONOTONIC ns */
char rec_exe[PATH_MAX];		       /* /proc/self/exe at connect */
uintptr_t rec_main_base;	       /* dladdr base of the main program */
uint32_t rec_pid;
atomic_int rec_exiting;
int rec_late; /* the exit path ran: later events are counted (rec_late_event) */
/* where the -pg trampolines count a call after the exit path (ring.h's
 * late): set with rec_late, NULL before */
__attribute__((used)) uint64_t *rec_mcount_late;
static int rec_connected; /* the constructor installed handlers and the key */
uint64_t rec_incarnation; /* the ts of our latest WIRE_HELLO */
pthread_key_t rec_key;
struct rec_proc *rec_procp;

static const int rec_fatal[] = {SIGSEGV, SIGBUS,  SIGFPE, SIGILL, SIGABRT,
				SIGINT,	 SIGTERM, SIGHUP, SIGQUIT};

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
		struct wire_values wv = {rec_nvals, rec_vlayout};
		len = enc_simple(buf, sizeof buf, WIRE_VALUES, rec_pid, 0, &wv, sizeof wv);
		if (len)
			rec_write(buf, len);
	}
}

/* Tells spanstat how long the process's threads waited for room since it
 * last told (before an exit or an exec); a fork child starts from 0. */
REC_NOI void rec_send_waited(void)
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
REC_NOI void rec_finish(int sig)
{
	/* a vfork child's exit() or fatal signal (rec_vfork.c): the process
	 * and its memory are its parent's, which records on */
	if (rec_vforked || !__atomic_load_n(&rec_on, __ATOMIC_RELAXED) || rec_unannounced() ||
	    atomic_exchange(&rec_exiting, 1))
		return; /* off, or a fork child that never recorded: nothing to say */
	struct rec_thread *me = rec_self;
	if (me && me->pid && !me->guard && me->nq) { /* what handlers left, in order */
		char mark;
		me->guard = (uintptr_t)&mark;
		rec_drain(me, __atomic_load_n(&rec_on, __ATOMIC_RELAXED));
		me->guard = 0;
	}
	/* what comes after this (a destructor or exit handler that runs after
	 * ours, another thread) is lost: counted in the ring file, where
	 * spanstat reads it once we are gone; the API's inline wrappers call
	 * in for that.  Counting starts before recording stops, and the
	 * wrappers' flag never drops meanwhile: no event of another thread
	 * falls between the two uncounted */
	if (rec_shm) {
		__atomic_store_n(&rec_late, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&rec_mcount_late, &((struct ring_file *)rec_shm)->late,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&rec_on, 0, __ATOMIC_RELEASE);
	} else { /* nowhere to count them: spanstat is told they are unknown */
		rec_set_on(0);
		static const char none;
		char nb[WIRE_HDR_SIZE];
		size_t n = enc_simple(nb, sizeof nb, WIRE_NOLATE, rec_pid, 0, &none, 0);
		if (n)
			rec_write(nb, n);
	}
	atomic_store(&rec_exit_deadline, rec_mono() + REC_EXIT_WAIT_MS * UINT64_C(1000000));
	uint64_t ts = rec_now(), end = ts;
	struct rec_thread *self = rec_self;
	for (struct rec_thread *t = atomic_load(&rec_threads); t; t = t->next) {
		if (!atomic_load(&t->live) || atomic_exchange(&t->busy, 1))
			continue;
		if (!t->slot && (t->pos > t->rec + REC_WORDS || t->pos < t->rec + REC_FIRST))
			t->pos = t->rec + REC_FIRST; /* torn by a racing thread: give up on it */
		if (t->pid)
			rec_filter_settle(t, end);
		if ((int64_t)(t->last - ts) > 0)
			ts = t->last; /* the exit is no earlier than any event */
		if (t->agg && (int64_t)(t->agg->last_ts - ts) > 0)
			ts = t->agg->last_ts; /* nor than an aggregating thread's */
		rec_flush(t);
		atomic_store(&t->busy, 0);
	}
	char buf[64];
	rec_send_waited();
	rec_plt_tell();
	uint64_t connect = rec_calib;
	if (rec_calib_t) /* the run's measure, where it has one */
		rec_recal_final();
	/* a process that ran -pg functions: every event at their cost */
	if (rec_mcount_used && rec_calib && rec_calib_pg_extra) {
		rec_calib += rec_calib_pg_extra;
		rec_mcount_used = 0; /* once */
	}
	if (rec_calib != connect)
		rec_send_calib();
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
REC_NOI int rec_new_process(struct rec_thread *self)
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

static REC_NOI void rec_atfork_child(void)
{
	rec_new_process(rec_self);
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
	const char *vals = rec_getenv(SPANSTAT_ENV_VALUES);
	recv_parse(vals, &rec_vspec);
	rec_nvals = rec_vspec.n;
	/* which values they are, told with their count (WIRE_VALUES) and
	 * checked against the ring file's (rec_map_rings) */
	rec_vlayout = rec_nvals ? spanstat_values_id(vals) : 0;
	if (rec_vspec.allocs) {
		rec_alloc_fn =
			(const uint64_t *(*)(void))dlsym(RTLD_DEFAULT, "spanstat__alloc_counts");
		rec_alloc_quiet = (void (*)(int))dlsym(RTLD_DEFAULT, "spanstat__alloc_quiet");
	}
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
	rec_plt_init(rec_getenv(SPANSTAT_ENV_LIBCALLS), rec_getenv(SPANSTAT_ENV_LIBCALLS_FROM));
}

/* Process exit, or dlclose() of this library: after this, nothing of ours
 * (signal handlers, key destructor) may run any more. */
__attribute__((destructor)) static REC_NOI void rec_disconnect(void)
{
	if (!rec_connected || rec_vforked) /* a vfork child's exit(): its parent's state */
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
