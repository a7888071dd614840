/* rec_jmp.c: the setjmp and longjmp families, interposed (rec.h).
 *
 * A longjmp out of spans never runs their ends: the setjmp family is
 * interposed to remember, per jmp_buf, how many spans were open when it was
 * filled, and the longjmp family ends the spans opened since at the jump
 * (with the filters' rules when they are on), so that they are not
 * "unfinished" and their parents' times stay right.  setjmp returns twice and
 * must find its caller's stack as it was: its wrappers are assembly
 * trampolines that note the buffer, then jump to the C library's function
 * with the stack and registers untouched (x86-64 only; elsewhere a longjmp
 * leaves the skipped spans to spanstat, which closes them unfinished). */
#include "config.h"

#include <dlfcn.h>
#include <stdlib.h>

#include "rec.h"

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
	if (i < REC_JMPS) /* -pg builds: the returns of the frames it skips */
		rec_mcount_jump(t->jmp[i].sp);
	int abandoned = t->guard != 0;
	if (abandoned) {
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
	} else if (i < REC_JMPS && abandoned && on != REC_ON_FILTERED &&
		   t->jmp[i].depth <= t->depth + 1u) {
		/* the abandoned call may have sent its word and not followed
		 * it on the shadow stack: the reader ends what it has open */
		rec_emit_pop(t, t->jmp[i].depth, rec_now(), 1);
		t->depth = t->jmp[i].depth;
		if (t->gap && t->depth < t->low)
			t->low = t->depth;
	} else if (i < REC_JMPS && t->jmp[i].depth <= t->depth) {
		uint64_t now = rec_now();
		unsigned to = t->jmp[i].depth > REC_STACK ? t->jmp[i].depth : REC_STACK;
		if (on != REC_ON_FILTERED && t->depth > to) {
			/* the spans whose names it did not follow, in one word */
			rec_emit_pop(t, t->depth - to, now, 0);
			t->depth = to;
		}
		while (t->depth > t->jmp[i].depth) {
			if (on == REC_ON_FILTERED) {
				rec_filter_end(t, now);
				continue;
			}
			/* emitted while still open: a drop's tale (WIRE_RESYNC)
			 * written before it counts it open */
			unsigned d = t->depth - 1;
			rec_emit(t, t->stk[d], REC_OP(WIRE_OP_END), now, 0, 0, NULL);
			t->depth = d;
		}
		if (t->gap && t->depth < t->low)
			t->low = t->depth;
	}
	atomic_store(&t->busy, 0);
	rec_guard_clear(t);
}

/* The lib calls (rec_plt.c) a longjmp to env leaves: those below the
 * stack pointer its setjmp noted (unnoted: left to their next return). */
static REC_NOI void rec_unwind_plt(const void *env)
{
	struct rec_thread *t = rec_self;
	if (!t)
		return;
	for (unsigned i = 0; i < REC_JMPS; i++)
		if (t->jmp[i].env == env) {
			rec_plt_longjmp(t->jmp[i].sp);
			return;
		}
}

static REC_NOI __attribute__((noreturn)) void rec_longjmp(unsigned which, void *env, int val)
{
	rec_unwind(env);
	rec_unwind_plt(env);
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
