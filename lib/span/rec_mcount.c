/* rec_mcount.c: programs built with -pg or -pg -mfentry (rec.h).
 *
 * Such a build calls mcount (or __fentry__) at each function's entry, and
 * nothing at its return.  This library defines them (x86-64: arch.h), so
 * that preloaded it replaces the C library's gprof counter: each entry
 * begins the function's span, and the function's return address is
 * replaced by a return trampoline that ends it, the real address kept on a
 * stack of the thread's (rec_mstkp: mapped at its first -pg function, so
 * that threads that run none pay nothing; rec_mcount_enter and
 * rec_mcount_exit, the hot path, are in rec_event.c).  What leaves a function without returning
 * has to take its entries off that stack too: a longjmp (rec_jmp.c calls
 * rec_mcount_jump), pthread_exit, and a C++ exception, whose unwinder
 * cannot read a frame through the trampoline's address: the real return
 * addresses are put back before it runs, and the spans of the frames it
 * unwound end at the catch (as uftrace does).  While not recording, mcount
 * and __fentry__ go on to the C library's.
 *
 * gprof: under spanstat the program's gmon.out would hold no call graph
 * (the C library's mcount is not called) and its profiling timer would
 * send SIGPROF through the measurement; while recording, __monstartup and
 * _mcleanup do nothing: no timer, and no gmon.out written (nor an old one
 * touched).  Outside spanstat both go on to the C library. */
#include "config.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "rec.h"

__thread struct rec_mstack *rec_mstkp __attribute__((tls_model("initial-exec")));
int rec_mcount_used; /* a function of a -pg build began a span in this process */

/* ---- the threads' stacks ------------------------------------------------- */

static _Atomic(struct rec_mstack *) rec_mstacks; /* every stack made, never unmapped */
static pthread_key_t rec_mstack_key;		 /* its destructor gives the stack back */
static int rec_mstack_keyed;			 /* the key was made */
static __thread int rec_mstack_making __attribute__((tls_model("initial-exec")));
static __thread struct rec_mstack *rec_mstack_hidden __attribute__((tls_model("initial-exec")));
static struct rec_mstack rec_mstack_calib; /* the calibration's (rec_calib.c) */

/* The thread ended (its key's destructor): its stack is free for another
 * thread to take. */
static REC_NOI void rec_mstack_release(void *arg)
{
	struct rec_mstack *m = arg;
	if (m != rec_mstkp)
		return;
	rec_mstkp = NULL;
	m->depth = 0;
	m->restored = 0;
	/* the pages past the first (a deep recursion's) go back to the system */
	size_t len = (sizeof *m + 4095) & ~(size_t)4095;
	if (len > 4096)
		madvise((char *)m + 4096, len - 4096, MADV_DONTNEED);
	atomic_store(&m->live, 0);
}

/* A free stack of the list, else a new one: mmap, no malloc, so that a
 * -pg malloc of the program's can run while it is made (it is refused
 * then: rec_mstack_making).  Only with the key that gives it back. */
REC_NOI __attribute__((noinline)) struct rec_mstack *rec_mstack_get(void)
{
	if (rec_vforked || rec_mstack_making || !rec_mstack_keyed)
		return NULL;
	rec_mstack_making = 1;
	struct rec_mstack *m;
	for (m = atomic_load(&rec_mstacks); m; m = m->next) {
		int free_ = 0;
		if (atomic_compare_exchange_strong(&m->live, &free_, 1))
			break;
	}
	if (!m) {
		void *p = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (p == MAP_FAILED) {
			rec_mstack_making = 0;
			return NULL;
		}
		m = p;
		atomic_store(&m->live, 1);
		struct rec_mstack *head = atomic_load(&rec_mstacks);
		do
			m->next = head;
		while (!atomic_compare_exchange_weak(&rec_mstacks, &head, m));
	}
	m->depth = 0;
	m->restored = 0;
	rec_mstkp = m;
	pthread_setspecific(rec_mstack_key, m);
	rec_mstack_making = 0;
	return m;
}

REC_NOI void rec_mcount_vfork(int child)
{
	if (child) {
		rec_mstack_hidden = rec_mstkp;
		rec_mstkp = NULL;
	} else {
		rec_mstkp = rec_mstack_hidden;
	}
}

/* At connect, on the connecting thread only: the calibration's -pg calls
 * (balanced) on a stack of their own, so that a program that runs no -pg
 * function maps none. */
REC_NOI void rec_mcount_calib_stack(int on)
{
	static struct rec_mstack *saved;
	if (on) {
		saved = rec_mstkp;
		rec_mstack_calib.depth = 0;
		rec_mstack_calib.restored = 0;
		rec_mstkp = &rec_mstack_calib;
	} else {
		rec_mstkp = saved;
	}
}

__attribute__((constructor)) static REC_NOI void rec_mstack_init(void)
{
	rec_mstack_keyed = pthread_key_create(&rec_mstack_key, rec_mstack_release) == 0;
}

#if ARCH_HAVE_MCOUNT
/* The C library's mcount and __fentry__, for when nothing is recorded. */
__attribute__((used)) void *rec_real_mcount, *rec_real_fentry;

ARCH_MCOUNT_TRAMPOLINES(rec_on, rec_mcount_late, rec_mcount_enter, rec_mcount_exit,
			rec_mcount_return, rec_real_mcount, rec_real_fentry, rec_mcount_self);
ARCH_MCOUNT_CALIB_FN(rec_mcount_calib_fn, rec_mcount_calib_site, rec_mcount_self);

__attribute__((constructor)) static REC_NOI void rec_mcount_lookup(void)
{
	rec_real_mcount = dlsym(RTLD_NEXT, "mcount");
	rec_real_fentry = dlsym(RTLD_NEXT, "__fentry__");
}
#endif

/* A longjmp to a frame whose stack pointer was sp: the entries of the
 * frames it skips (their slots below sp) go, innermost first, as long as
 * they are; their spans were ended by rec_unwind. */
REC_NOI void rec_mcount_jump(uintptr_t sp)
{
	struct rec_mstack *m = rec_mstkp;
	if (!m)
		return;
	unsigned d = m->depth;
	while (d > 0 && (uintptr_t)m->f[d - 1].slot < sp)
		d--;
	m->depth = d;
}

/* Every hijacked slot gets its own address back, outermost last (a slot a
 * tail call shares holds the trampoline in the inner entry). */
static REC_NOI void rec_mcount_restore(struct rec_mstack *m)
{
	for (unsigned d = m->depth; d > 0; d--)
		*m->f[d - 1].slot = m->f[d - 1].ret;
}

/* Looks a function of the next object up once. */
static REC_NOI void *rec_mcount_next(void **cache, const char *name)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, f, __ATOMIC_RELEASE);
	}
	return f;
}

/* ---- C++ exceptions ------------------------------------------------------ */

typedef int (*rec_unwind_fn)(void *);
static void *rec_real_raise, *rec_real_rethrow;

/* A throw (or rethrow): the unwinder is about to walk the stack. */
static REC_NOI int rec_mcount_throw(void **cache, const char *name, void *exc)
{
	struct rec_mstack *m = rec_mstkp;
	if (m && m->depth) { /* again in a nested throw: its frames were hijacked since */
		rec_mcount_restore(m);
		m->restored = 1;
	}
	rec_unwind_fn real = (rec_unwind_fn)rec_mcount_next(cache, name);
	return real ? real(exc) : 3; /* _URC_FATAL_PHASE1_ERROR: std::terminate */
}

REC_API int _Unwind_RaiseException(void *exc)
{
	return rec_mcount_throw(&rec_real_raise, "_Unwind_RaiseException", exc);
}

REC_API int _Unwind_Resume_or_Rethrow(void *exc)
{
	return rec_mcount_throw(&rec_real_rethrow, "_Unwind_Resume_or_Rethrow", exc);
}

/* A function entered while an exception unwinds (a destructor its cleanup
 * runs), its return address at slot: the entries at or below slot are of
 * frames the unwinding left (their spans end now, innermost first; a dead
 * entry's slot may lie in the new frames).  Returns the depth left. */
REC_NOI unsigned rec_mcount_unwound(struct rec_mstack *m, uintptr_t slot)
{
	unsigned d = m->depth;
	while (d > 0 && (uintptr_t)m->f[d - 1].slot <= slot) {
		d--;
		rec_mcount_end(m->f[d].key);
		m->depth = d;
	}
	return d;
}

/* A catch (rec_plt.c's __cxa_begin_catch, after the real one), sp the
 * stack pointer of the frame that catches: the frames below it were unwound
 * (their spans end now, innermost first); the others get the trampoline
 * back, unless another exception is still in flight (rehook 0: a catch
 * inside a destructor its unwinding runs), whose unwinder has them to walk. */
REC_NOI void rec_mcount_catch(uintptr_t sp, int rehook)
{
	struct rec_mstack *m = rec_mstkp;
	if (m && m->restored) {
		unsigned d = m->depth;
		while (d > 0 && (uintptr_t)m->f[d - 1].slot < sp) {
			d--;
			rec_mcount_end(m->f[d].key);
			m->depth = d;
		}
		if (!rehook)
			return;
		for (unsigned i = 0; i < d; i++)
			*m->f[i].slot = (uintptr_t)rec_mcount_return;
		m->restored = 0;
	}
}

/* pthread_exit (rec_plt.c's, before the real one): the thread's functions
 * will never return, and the unwinder that runs their cleanups must read
 * their frames: their own return addresses go back; their spans end as any
 * open at a thread's end. */
REC_NOI void rec_mcount_thread_exit(void)
{
	struct rec_mstack *m = rec_mstkp;
	if (!m)
		return;
	rec_mcount_restore(m);
	m->depth = 0;
	m->restored = 0;
}

/* ---- gprof's start and end ----------------------------------------------- */

static void *rec_real_monstartup, *rec_real_mcleanup;
static int rec_gmon_off; /* __monstartup did nothing: so does _mcleanup */

REC_API void __monstartup(unsigned long lowpc, unsigned long highpc)
{
	if (__atomic_load_n(&rec_on, __ATOMIC_RELAXED)) {
		rec_gmon_off = 1;
		return;
	}
	void (*real)(unsigned long, unsigned long) =
		(void (*)(unsigned long, unsigned long))rec_mcount_next(&rec_real_monstartup,
									"__monstartup");
	if (real)
		real(lowpc, highpc);
}

REC_API void monstartup(unsigned long lowpc, unsigned long highpc)
{
	__monstartup(lowpc, highpc);
}

REC_API void _mcleanup(void)
{
	if (rec_gmon_off)
		return;
	void (*real)(void) = (void (*)(void))rec_mcount_next(&rec_real_mcleanup, "_mcleanup");
	if (real)
		real();
}
