/* rec_mcount.c: programs built with -pg or -pg -mfentry (rec.h).
 *
 * Such a build calls mcount (or __fentry__) at each function's entry, and
 * nothing at its return.  This library defines them (x86-64: arch.h), so
 * that preloaded it replaces the C library's gprof counter: each entry
 * begins the function's span, and the function's return address is
 * replaced by a return trampoline that ends it, the real address kept on a
 * thread-local stack (rec_mstk; rec_mcount_enter and rec_mcount_exit, the
 * hot path, are in rec_event.c).  What leaves a function without returning
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

#include "rec.h"

__thread struct rec_mstack rec_mstk __attribute__((tls_model("initial-exec")));
int rec_mcount_used; /* a function of a -pg build began a span in this process */

#if ARCH_HAVE_MCOUNT
/* The C library's mcount and __fentry__, for when nothing is recorded. */
__attribute__((used)) void *rec_real_mcount, *rec_real_fentry;

ARCH_MCOUNT_TRAMPOLINES(rec_on, rec_mcount_enter, rec_mcount_exit, rec_mcount_return,
			rec_real_mcount, rec_real_fentry, rec_mcount_self);
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
	struct rec_mstack *m = &rec_mstk;
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
	struct rec_mstack *m = &rec_mstk;
	if (m->depth) { /* again in a nested throw: its frames were hijacked since */
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
	struct rec_mstack *m = &rec_mstk;
	if (m->restored) {
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
	struct rec_mstack *m = &rec_mstk;
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
