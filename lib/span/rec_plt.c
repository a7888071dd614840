/* rec_plt.c: library calls through the PLT as spans (rec.h), for programs
 * nobody rebuilt (SPANSTAT_LIBCALLS, --lib-calls).
 *
 * At connect, the GOT slots of the main program's PLT (R_X86_64_JUMP_SLOT;
 * with SPANSTAT_LIBCALLS_FROM=all, those of every loaded object, and of
 * the objects a patched dlopen call loaded, at its return) whose symbol matches the glob are
 * pointed at a stub of their own (arch.h), made RELRO-writable for the store.  The stub enters
 * rec_plt_enter with its slot's index: it begins the span named by the symbol (its key: a
 * copy of the symbol's name that outlives the object, one stable key per slot), pushes the real
 * return address on the thread's shadow stack and replaces it with rec_plt_return, then runs the
 * function the slot would have run (the GOT's value when bound, else the dynamic linker's answer
 * for the symbol and its version).  rec_plt_return ends the span and returns where the call would
 * have.
 *
 * The shadow stack is matched by the address of the return address (retp),
 * never by count alone:
 *   - a tail call through the PLT (jmp to a slot) finds rec_plt_return as
 *     its return address: it is pushed like any call, with that address as
 *     its "real" one, so that its return ends it and then its caller's
 *     span (the tree: the caller, the tail-called function inside it);
 *   - a return whose retp is below the top's ends the frames above it first
 *     (abandoned: a longjmp the setjmp wrappers did not see);
 *   - a longjmp (rec_jmp.c) drops the frames below the jump's stack pointer
 *     (their spans are ended there, with the recorder's);
 *   - a C++ throw (__cxa_throw, __cxa_rethrow, std::rethrow_exception)
 *     puts every real return address back so that the unwinder finds the
 *     frames, and the catch
 *     (__cxa_begin_catch) ends the spans of the frames it unwound and hooks
 *     the rest again; pthread_exit ends the thread's lib-call spans and puts
 *     the addresses back before its forced unwind;
 *   - a signal handler's calls push above the call it interrupted and are
 *     gone before that call returns; a push reserves its frame before it
 *     writes it, a pop reads its frame before it releases it.
 * A thread's shadow stack is mmap'd at its first call, kept on a list and
 * reused after the thread ends.  The stubs of an object are given back when
 * the interposed dlclose unloads it, or a scan finds no object at its address
 * (struct rec_plt_region), so that a library dlopen'ed and dlclose'd again
 * and again is patched at each load; never while it is loaded, whatever its
 * GOT holds (a program's PLT hook may call the stub it replaced).  exit() and the exec family
 * never return: their open spans end as the process's do.
 *
 * Not patched: calls into this library (the functions it interposes), the
 * functions that return twice or switch stacks (setjmp family, vfork,
 * the ucontext family), __tls_get_addr, and the unwinder's _Unwind_*
 * (_Unwind_Resume, called by a cleanup's landing pad, unwinds on from its
 * caller's frame, whose return address must be the real one); -fno-plt
 * calls (through
 * GLOB_DAT slots, as function pointers are) are not followed.
 *
 * An object that finds no room for its stubs (REC_PLT_REGIONS objects or
 * REC_PLT_SLOTS slots followed at once, or no memory) is not followed: it
 * is counted once per load, with its wanted slots (struct rec_plt_refused),
 * and spanstat is told (WIRE_UNFOLLOWED) after the scan, or before an exit
 * or exec when recording could not send then. */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rec.h"

#if ARCH_HAVE_PLT_HOOK

#define REC_PLT_SLOTS (1u << 18)   /* patched slots, of the objects loaded at once */
#define REC_PLT_DEPTH 4096u	   /* lib calls open per thread, followed */
#define REC_PLT_REGIONS (1u << 14) /* pages of stubs: one per object loaded at once */
#define REC_PLT_NAMES (1u << 16)   /* distinct symbol names whose copy is shared */

/* What a patched slot stands for. */
struct rec_plt_slot {
	uint64_t key;	    /* the symbol's name: a copy of it (rec_plt_name) */
	const void *target; /* the function it runs */
	uintptr_t *got;	    /* the GOT entry that points at its stub */
	int rescan;	    /* dlopen: objects may come, patched at its return */
	int quiet;	    /* hooked for its rescan only: no span (not in the glob) */
};

/* The stubs of one patched object, and the slots they own: slots
 * [first, first + cap), of which the first n are used.  When the object is
 * unloaded (found at the next scan), its stubs are unmapped and the slots
 * are free for the next object of cap or fewer relocations: a library that
 * is dlopen'ed and dlclose'd again and again takes the same ones each time. */
struct rec_plt_region {
	uintptr_t lo, hi; /* its page(s) of stubs; lo 0: free */
	uintptr_t base;	  /* its object's load address */
	uint32_t first, cap, n;
	int seen; /* scan: its object is still loaded */
};

/* One open lib call of a thread. */
struct rec_plt_frame {
	uintptr_t *retp; /* where its return address is */
	uintptr_t ret;	 /* the return address it replaced */
	uint64_t key;
	uint32_t pid;	      /* rec_pid at its begin: a fork child returns from it too */
	unsigned char on;     /* its begin was recorded */
	unsigned char rescan; /* its slot's */
};

/* A thread's shadow stack of lib calls. */
struct rec_plt_stack {
	atomic_int live; /* owned by a running thread */
	struct rec_plt_stack *next;
	unsigned depth;
	int thrown; /* an exception is in flight: the real addresses are back */
	struct rec_plt_frame f[REC_PLT_DEPTH];
};

static struct rec_plt_slot *rec_plt_slots;
static uint32_t rec_plt_nslots;		       /* slots ever given to a region */
static struct rec_plt_region *rec_plt_regions; /* all under rec_plt_lock */
static unsigned rec_plt_nregions;	       /* entries used, free ones among them */
static const char **rec_plt_names;	       /* the copies of names, by hash */
static char rec_plt_glob[256];
static int rec_plt_all; /* SPANSTAT_LIBCALLS_FROM=all */
int rec_plt_active;	/* some slot was patched (or may be, by dlopen) */
static uintptr_t rec_plt_self_base;
static _Atomic(struct rec_plt_stack *) rec_plt_stacks;
static pthread_key_t rec_plt_key;
static __thread struct rec_plt_stack *rec_plt_me __attribute__((tls_model("initial-exec")));
static __thread int rec_plt_busy __attribute__((tls_model("initial-exec")));
static __thread struct rec_plt_stack *rec_plt_hidden __attribute__((tls_model("initial-exec")));
static pthread_mutex_t rec_plt_lock = PTHREAD_MUTEX_INITIALIZER; /* patching, not calls */

/* An object loaded and not followed (no room), told already: found again
 * at later scans, it is not counted again; forgotten when it is unloaded
 * or patched after all (room was freed).  Under rec_plt_lock. */
struct rec_plt_refused {
	uintptr_t base; /* its load address */
	int seen;	/* sweep: its object is still loaded */
};
static struct rec_plt_refused *rec_plt_refused; /* REC_PLT_REGIONS of them */
static unsigned rec_plt_nrefused;
/* Not followed and not told yet (WIRE_UNFOLLOWED): objects, their slots. */
static _Atomic uint32_t rec_plt_untold, rec_plt_untold_slots;

void rec_plt_entry(void);
void rec_plt_return(void);
REC_NOI const void *rec_plt_enter(uint32_t idx, uintptr_t *retp);
REC_NOI uintptr_t rec_plt_leave(uintptr_t sp);
REC_NOI void rec_plt_scan(void);
ARCH_PLT_TRAMPOLINES(rec_plt_entry, rec_plt_return, rec_plt_enter, rec_plt_leave);

/* The symbols whose calls are never patched (see the top). */
static const char *const rec_plt_never[] = {
	"_setjmp",	     "setjmp",
	"__sigsetjmp",	     "sigsetjmp",
	"savectx",	     "vfork",
	"getcontext",	     "setcontext",
	"swapcontext",	     "__tls_get_addr",
	"__libc_start_main", "__cxa_throw",
	"__cxa_rethrow",     "__cxa_begin_catch",
};

static REC_NOI void rec_plt_release(void *arg)
{
	struct rec_plt_stack *s = arg;
	if (s != rec_plt_me)
		return;
	rec_plt_me = NULL;
	s->depth = 0;
	s->thrown = 0;
	atomic_store(&s->live, 0);
}

/* The thread's shadow stack, made on its first call; NULL: no memory, or
 * a vfork child's call (the stack is its parent's: rec_vfork.c). */
static REC_NOI struct rec_plt_stack *rec_plt_stack_get(void)
{
	struct rec_plt_stack *s;
	if (rec_vforked)
		return NULL;
	for (s = atomic_load(&rec_plt_stacks); s; s = s->next) {
		int free_ = 0;
		if (atomic_compare_exchange_strong(&s->live, &free_, 1))
			break;
	}
	if (!s) {
		void *m = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		s = m;
		atomic_store(&s->live, 1);
		struct rec_plt_stack *head = atomic_load(&rec_plt_stacks);
		do
			s->next = head;
		while (!atomic_compare_exchange_weak(&rec_plt_stacks, &head, s));
	}
	s->depth = 0;
	s->thrown = 0;
	rec_plt_me = s;
	pthread_setspecific(rec_plt_key, s);
	return s;
}

/* The stub of a slot: begin, hook the return, run the function. */
REC_NOI const void *rec_plt_enter(uint32_t idx, uintptr_t *retp)
{
	const struct rec_plt_slot *sl = &rec_plt_slots[idx];
	if (rec_plt_busy) /* the recorder's own calls, with every object patched */
		return sl->target;
	rec_plt_busy = 1;
	struct rec_plt_stack *s = rec_plt_me;
	if (!s)
		s = rec_plt_stack_get();
	if (s && s->depth < REC_PLT_DEPTH && !s->thrown) {
		unsigned d = s->depth;
		s->depth = d + 1; /* reserved first: a handler pushes above it */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		struct rec_plt_frame *f = &s->f[d];
		f->retp = retp;
		f->ret = *retp;
		f->key = sl->key;
		f->on = !sl->quiet && __atomic_load_n(&rec_on, __ATOMIC_RELAXED) != 0;
		f->pid = rec_pid;
		f->rescan = (unsigned char)sl->rescan;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		*retp = (uintptr_t)rec_plt_return;
		if (f->on) {
			rec_lib_event(sl->key, REC_OP(WIRE_OP_BEGIN));
		} else if (!sl->quiet && __atomic_load_n(&rec_late, __ATOMIC_RELAXED)) {
			/* after the exit path: its begin, and its end that the
			 * frame (off) will not record, counted (rec_late_event) */
			rec_late_event(sl->key);
			rec_late_event(sl->key);
		}
	} else if ((!s || s->depth >= REC_PLT_DEPTH) && !sl->quiet &&
		   __atomic_load_n(&rec_on, __ATOMIC_RELAXED)) { /* not followed: counted */
		atomic_fetch_add_explicit(&rec_dropped, 2, memory_order_relaxed);
	}
	rec_plt_busy = 0;
	return sl->target;
}

/* Whether the end of frame f is this process's to record: its begin was
 * recorded here, not before a fork (the child returns from the parent's
 * calls, fork's own included, with none of their begins). */
static inline REC_NOI int rec_plt_ends(const struct rec_plt_frame *f)
{
	return f->on && f->pid == rec_pid && !rec_unannounced();
}

/* rec_plt_return: the frame whose return address was at sp - 8 ends (and
 * any above it, abandoned); its real return address. */
REC_NOI uintptr_t rec_plt_leave(uintptr_t sp)
{
	int busy = rec_plt_busy;
	rec_plt_busy = 1;
	struct rec_plt_stack *s = rec_plt_me;
	uintptr_t *retp = (uintptr_t *)(sp - 8);
	unsigned d = s ? s->depth : 0, k = d;
	while (k > 0 && s->f[k - 1].retp != retp)
		k--;
	if (k == 0) /* no frame of ours returned here: nothing sane to do */
		abort();
	for (; d > k; d--) /* abandoned: their ends, innermost first */
		if (rec_plt_ends(&s->f[d - 1]))
			rec_lib_event(s->f[d - 1].key, REC_OP(WIRE_OP_END));
	struct rec_plt_frame *f = &s->f[k - 1];
	uintptr_t ret = f->ret;
	uint64_t key = f->key;
	int on = rec_plt_ends(f), rescan = f->rescan;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->depth = k - 1; /* released after it was read */
	if (on)
		rec_lib_event(key, REC_OP(WIRE_OP_END));
	if (rescan && !busy)
		rec_plt_scan();
	rec_plt_busy = busy;
	return ret;
}

REC_NOI void rec_plt_vfork(int child)
{
	if (child) {
		rec_plt_hidden = rec_plt_me;
		rec_plt_me = NULL;
	} else {
		rec_plt_me = rec_plt_hidden;
	}
}

/* A longjmp to a frame whose stack pointer is sp: the lib calls below it
 * are gone (rec_unwind ended their spans). */
REC_NOI void rec_plt_longjmp(uintptr_t sp)
{
	struct rec_plt_stack *s = rec_plt_me;
	if (!s)
		return;
	while (s->depth > 0 && (uintptr_t)s->f[s->depth - 1].retp < sp)
		s->depth--;
}

/* The real return addresses back in their frames, innermost first (a
 * tail call's frame holds rec_plt_return, its caller's the real one). */
static REC_NOI void rec_plt_unhook(struct rec_plt_stack *s)
{
	for (unsigned d = s->depth; d > 0; d--)
		*s->f[d - 1].retp = s->f[d - 1].ret;
}

/* ---- calls that do not return through their frames ------------------------- */

typedef void (*rec_throw_fn)(void *, void *, void (*)(void *));
typedef void (*rec_void_fn)(void);
typedef void *(*rec_catch_fn)(void *);
typedef void (*rec_pexit_fn)(void *);
static void *rec_plt_real(void **cache, const char *name)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, f, __ATOMIC_RELEASE);
	}
	return f;
}

static REC_NOI void rec_plt_throwing(void)
{
	struct rec_plt_stack *s = rec_plt_me;
	if (s && s->depth && !s->thrown) {
		rec_plt_unhook(s);
		s->thrown = 1;
	}
}

REC_API __attribute__((noreturn)) void __cxa_throw(void *exc, void *type, void (*dtor)(void *))
{
	static void *real;
	rec_plt_throwing();
	rec_throw_fn f = (rec_throw_fn)rec_plt_real(&real, "__cxa_throw");
	if (f)
		f(exc, type, dtor);
	abort();
}

REC_API __attribute__((noreturn)) void __cxa_rethrow(void)
{
	static void *real;
	rec_plt_throwing();
	rec_void_fn f = (rec_void_fn)rec_plt_real(&real, "__cxa_rethrow");
	if (f)
		f();
	abort();
}

/* std::rethrow_exception(std::exception_ptr): it raises the exception with
 * the unwinder itself, not through __cxa_rethrow (the exception_ptr, not
 * trivially copyable, is passed by its address). */
REC_API __attribute__((noreturn)) void rec_plt_rethrow_exception(void *ptr) __asm__(
	"_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE");
REC_API __attribute__((noreturn)) void rec_plt_rethrow_exception(void *ptr)
{
	static void *real;
	rec_plt_throwing();
	void (*f)(void *) = (void (*)(void *))rec_plt_real(
		&real, "_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE");
	if (f)
		f(ptr);
	abort();
}

/* The exceptions thrown and not caught yet (the C++ ABI's
 * __cxa_get_globals), 0 when unknown. */
static REC_NOI unsigned rec_plt_uncaught(void)
{
	static void *get;
	struct {
		void *caught;
		unsigned uncaught;
	} * (*f)(void) = rec_plt_real(&get, "__cxa_get_globals");
	return f ? f()->uncaught : 0;
}

/* The catch: frames below the catching function's are gone (their spans
 * end here), the others are hooked again, unless another exception is
 * still in flight (a catch inside a destructor run by its unwinding): its
 * unwinder still has the frames above to walk. */
REC_API __attribute__((noinline)) void *__cxa_begin_catch(void *exc)
{
	static void *real;
	uintptr_t cfa = (uintptr_t)__builtin_frame_address(0) + 16;
	rec_catch_fn f = (rec_catch_fn)rec_plt_real(&real, "__cxa_begin_catch");
	void *r = f ? f(exc) : NULL;
	unsigned uncaught = rec_plt_uncaught();
	rec_mcount_catch(cfa, uncaught == 0); /* -pg builds' frames, the innermost hijacks */
	struct rec_plt_stack *s = rec_plt_me;
	if (s && s->thrown) {
		int busy = rec_plt_busy;
		rec_plt_busy = 1;
		while (s->depth > 0 && (uintptr_t)s->f[s->depth - 1].retp < cfa) {
			struct rec_plt_frame *fr = &s->f[s->depth - 1];
			if (rec_plt_ends(fr))
				rec_lib_event(fr->key, REC_OP(WIRE_OP_END));
			s->depth--;
		}
		if (uncaught == 0) {
			for (unsigned d = 0; d < s->depth; d++)
				*s->f[d].retp = (uintptr_t)rec_plt_return;
			s->thrown = 0;
		}
		rec_plt_busy = busy;
	}
	return r;
}

REC_API __attribute__((noreturn)) void pthread_exit(void *value)
{
	static void *real;
	rec_mcount_thread_exit(); /* -pg builds' frames first */
	struct rec_plt_stack *s = rec_plt_me;
	if (s && s->depth) {
		rec_plt_busy = 1;
		if (!s->thrown)
			rec_plt_unhook(s);
		while (s->depth > 0) {
			struct rec_plt_frame *fr = &s->f[s->depth - 1];
			if (rec_plt_ends(fr))
				rec_lib_event(fr->key, REC_OP(WIRE_OP_END));
			s->depth--;
		}
		s->thrown = 0;
		rec_plt_busy = 0;
	}
	rec_pexit_fn f = (rec_pexit_fn)rec_plt_real(&real, "pthread_exit");
	if (f)
		f(value);
	abort();
}

/* ---- patching ------------------------------------------------------------ */

/* Whether v is in one of our stubs; under rec_plt_lock, as every use of
 * the regions. */
static REC_NOI int rec_plt_ours(uintptr_t v)
{
	for (unsigned i = 0; i < rec_plt_nregions; i++)
		if (v >= rec_plt_regions[i].lo && v < rec_plt_regions[i].hi)
			return 1;
	return 0;
}

/* A region for an object of want relocations, its stubs' page(s) mapped
 * writable with the entry's address first: the free one of the fewest
 * slots that has enough, else new slots; NULL when none is left. */
static REC_NOI struct rec_plt_region *rec_plt_region_new(uint32_t want)
{
	struct rec_plt_region *rg = NULL, fresh = {0};
	for (unsigned i = 0; i < rec_plt_nregions; i++) {
		struct rec_plt_region *c = &rec_plt_regions[i];
		if (!c->lo && c->cap >= want && (!rg || c->cap < rg->cap))
			rg = c;
	}
	if (!rg) {
		if (rec_plt_nregions >= REC_PLT_REGIONS || REC_PLT_SLOTS - rec_plt_nslots < want)
			return NULL;
		fresh.first = rec_plt_nslots;
		fresh.cap = want;
	}
	uint32_t cap = rg ? rg->cap : fresh.cap;
	size_t len = ((size_t)cap * ARCH_PLT_STUB + 16 + 4095) & ~(size_t)4095;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (!rg) {
		rg = &rec_plt_regions[rec_plt_nregions++];
		*rg = fresh;
		rec_plt_nslots += cap;
	}
	const void *entry = (const void *)rec_plt_entry;
	memcpy(m, &entry, sizeof entry);
	rg->lo = (uintptr_t)m;
	rg->hi = (uintptr_t)m + len;
	rg->n = 0;
	return rg;
}

/* Its stubs unmapped, its slots free for another object. */
static REC_NOI void rec_plt_region_free(struct rec_plt_region *rg)
{
	munmap((void *)rg->lo, rg->hi - rg->lo);
	rg->lo = rg->hi = 0;
	rg->n = 0;
}

/* Whether the slot of name is patched: 0 no, 1 its calls are spans, 2
 * hooked without spans (a dlopen the glob leaves out: its return must still
 * patch what it loaded, with --lib-calls-all). */
static REC_NOI int rec_plt_wanted(const char *name)
{
	if (!*name || strncmp(name, "_Unwind_", 8) == 0)
		return 0;
	/* the dynamic linker answers these by their caller's object (its
	 * RUNPATH, $ORIGIN, RTLD_NEXT): through a stub, the caller would be
	 * this library; dlopen is patched only where --lib-calls-all must
	 * see what it loads */
	int dl = strcmp(name, "dlopen") == 0 || strcmp(name, "dlmopen") == 0;
	if (strcmp(name, "dlsym") == 0 || strcmp(name, "dlvsym") == 0 || (!rec_plt_all && dl))
		return 0;
	for (size_t i = 0; i < sizeof rec_plt_never / sizeof rec_plt_never[0]; i++)
		if (strcmp(name, rec_plt_never[i]) == 0)
			return 0;
	if (fnmatch(rec_plt_glob, name, 0) == 0)
		return 1;
	return dl ? 2 : 0;
}

/* The version the object asks of symbol i (DT_VERSYM, DT_VERNEED), or NULL. */
static REC_NOI const char *rec_plt_version(const ElfW(Half) * versym, const ElfW(Verneed) * vn,
					   const char *strtab, size_t i)
{
	if (!versym || !vn)
		return NULL;
	ElfW(Half) want = versym[i] & 0x7fff;
	if (want <= 1)
		return NULL;
	for (;;) {
		const ElfW(Vernaux) *a = (const void *)((const char *)vn + vn->vn_aux);
		for (unsigned k = 0; k < vn->vn_cnt; k++) {
			if (a->vna_other == want)
				return strtab + a->vna_name;
			a = (const void *)((const char *)a + a->vna_next);
		}
		if (!vn->vn_next)
			return NULL;
		vn = (const void *)((const char *)vn + vn->vn_next);
	}
}

/* A copy of name that outlives its object (a dlclose'd object's .dynstr
 * is unmapped, and another object loaded there has other names at the
 * same addresses), or NULL; under rec_plt_lock.  One copy per name, as far
 * as the table of them holds: the key of a function stays the same across
 * the loads of its object, so that each load costs no name of its own. */
static REC_NOI const char *rec_plt_name(const char *name)
{
	static char *at, *end;
	size_t n = strlen(name) + 1;
	uint64_t h = UINT64_C(14695981039346656037);
	for (size_t i = 0; i + 1 < n; i++)
		h = (h ^ (unsigned char)name[i]) * UINT64_C(1099511628211);
	unsigned at_ = (unsigned)(h >> 40) & (REC_PLT_NAMES - 1), room = REC_PLT_NAMES;
	for (unsigned p = 0; rec_plt_names && p < 64; p++) {
		const char *c = rec_plt_names[(at_ + p) & (REC_PLT_NAMES - 1)];
		if (!c) {
			room = (at_ + p) & (REC_PLT_NAMES - 1);
			break;
		}
		if (strcmp(c, name) == 0)
			return c;
	}
	if ((size_t)(end - at) < n) {
		/* a name longer than a chunk's quarter (a C++ template's) gets
		 * pages of its own; the chunk in use stays */
		size_t size = n > 16384 ? (n + 4095) & ~(size_t)4095 : 65536;
		void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			       0);
		if (m == MAP_FAILED)
			return NULL;
		if (n > 16384) {
			memcpy(m, name, n);
			if (room < REC_PLT_NAMES)
				rec_plt_names[room] = m;
			return m;
		}
		at = m;
		end = at + 65536;
	}
	char *copy = at;
	memcpy(copy, name, n);
	at += n;
	if (room < REC_PLT_NAMES)
		rec_plt_names[room] = copy;
	return copy;
}

/* Whether addr is in one of the object's segments. */
static REC_NOI int rec_plt_inside(const struct dl_phdr_info *info, uintptr_t addr)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + p->p_vaddr;
		if (p->p_type == PT_LOAD && addr >= lo && addr < lo + p->p_memsz)
			return 1;
	}
	return 0;
}

static inline uintptr_t rec_plt_abs(uintptr_t base, uintptr_t p)
{
	return p < base ? p + base : p; /* the dynamic linker relocated some, not all */
}

/* ---- lazy slots' functions, looked up between two walks ------------------ *
 * Inside dl_iterate_phdr (which holds the dynamic linker's list lock), no
 * dlsym, dladdr or dlopen: they take its load lock, which a dlopen in
 * another thread holds while it waits for the list lock (a deadlock).  A
 * walk notes the lazy slots' symbols it needs (rec_plt_need), the scan looks
 * them up after it (rec_plt_resolve), and a second walk patches with them. */

#define REC_PLT_WANTS (1u << 13) /* lazy symbols looked up per scan */

struct rec_plt_want {
	const char *name, *ver, *obj; /* copies (rec_plt_name); obj: its object's path */
	const void *target;	      /* NULL: none found */
	unsigned gen;		      /* the scan it is of (0: free) */
	int done;		      /* looked up */
};

static struct rec_plt_want *rec_plt_wants; /* under rec_plt_lock */
static unsigned rec_plt_gen, rec_plt_nwants;
static int rec_plt_pending; /* this walk noted symbols not looked up yet */

static inline int rec_plt_same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The function of a lazy slot (name, in version ver, asked by object obj):
 * looked up since the scan began, else noted for rec_plt_resolve (*pend
 * set); NULL when none is found or the table is full. */
static REC_NOI const void *rec_plt_need(const char *name, const char *ver, const char *obj,
					int *pend)
{
	if (!rec_plt_wants)
		return NULL;
	if (obj && !*obj)
		obj = NULL; /* the main program's: no path */
	uint64_t h = UINT64_C(14695981039346656037);
	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * UINT64_C(1099511628211);
	for (const char *c = ver ? ver : ""; *c; c++)
		h = (h ^ (unsigned char)*c) * UINT64_C(1099511628211);
	for (unsigned p = 0; p < 64; p++) {
		struct rec_plt_want *w = &rec_plt_wants[(h + p) & (REC_PLT_WANTS - 1)];
		if (w->gen == rec_plt_gen) {
			if (strcmp(w->name, name) != 0 || !rec_plt_same(w->ver, ver) ||
			    !rec_plt_same(w->obj, obj))
				continue;
			if (!w->done)
				*pend = 1;
			return w->target;
		}
		/* free: noted, with copies that outlive the object's strings */
		if (rec_plt_nwants >= REC_PLT_WANTS / 2)
			return NULL;
		const char *nc = rec_plt_name(name), *vc = ver ? rec_plt_name(ver) : NULL,
			   *oc = obj ? rec_plt_name(obj) : NULL;
		if (!nc || (ver && !vc))
			return NULL;
		*w = (struct rec_plt_want){nc, vc, oc, NULL, rec_plt_gen, 0};
		rec_plt_nwants++;
		rec_plt_pending = 1;
		*pend = 1;
		return NULL;
	}
	return NULL;
}

/* Looks up what the walk noted, as the dynamic linker would, with the
 * version asked for; outside dl_iterate_phdr, under rec_plt_lock. */
static REC_NOI void rec_plt_resolve(void)
{
	Dl_info self;
	for (unsigned i = 0; i < REC_PLT_WANTS; i++) {
		struct rec_plt_want *w = &rec_plt_wants[i];
		if (w->gen != rec_plt_gen || w->done)
			continue;
		const void *target = dlsym(RTLD_DEFAULT, w->name);
		/* this library (preloaded, unversioned) binds every version
		 * of what it defines; otherwise the version asked for */
		if (w->ver && !(target && dladdr(target, &self) &&
				(uintptr_t)self.dli_fbase == rec_plt_self_base)) {
			const void *v = dlvsym(RTLD_DEFAULT, w->name, w->ver);
			target = v ? v : target;
		}
		if (!target && w->obj) { /* a local object's own dependencies */
			void *handle = dlopen(w->obj, RTLD_LAZY | RTLD_NOLOAD);
			if (handle) {
				target = dlsym(handle, w->name);
				dlclose(handle);
			}
		}
		w->target = target;
		w->done = 1;
	}
}

/* dl_iterate_phdr callback (nested: its lock is recursive): the object
 * that holds *arg; its address is put there, or 0 when none does. */
static REC_NOI int rec_plt_owner_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t *a = arg;
	if (!rec_plt_inside(info, *a))
		return 0;
	*a = info->dlpi_addr == rec_plt_self_base ? 0 : 1;
	return 1;
}

/* Whether addr is in a loaded object other than this library (dladdr
 * without the dynamic linker's load lock). */
static REC_NOI int rec_plt_elsewhere(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	if (!a || dl_iterate_phdr(rec_plt_owner_cb, &a) == 0)
		return 0;
	return a == 1;
}

/* The entry of the refused object at base, or NULL. */
static REC_NOI struct rec_plt_refused *rec_plt_refused_at(uintptr_t base)
{
	for (unsigned i = 0; i < rec_plt_nrefused; i++)
		if (rec_plt_refused[i].base == base)
			return &rec_plt_refused[i];
	return NULL;
}

static REC_NOI void rec_plt_refused_drop(struct rec_plt_refused *e)
{
	*e = rec_plt_refused[--rec_plt_nrefused];
}

/* The object at base was not followed, slots of its wanted slots with it:
 * counted, to be told.  A table that is full forgets it: then it is
 * counted again at the next scan that finds it still loaded. */
static REC_NOI void rec_plt_refuse(uintptr_t base, uint32_t slots)
{
	if (rec_plt_refused && rec_plt_nrefused < REC_PLT_REGIONS)
		rec_plt_refused[rec_plt_nrefused++] = (struct rec_plt_refused){base, 1};
	atomic_fetch_add_explicit(&rec_plt_untold, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&rec_plt_untold_slots, slots, memory_order_relaxed);
}

REC_NOI void rec_plt_tell(void)
{
	if (!atomic_load_explicit(&rec_plt_untold, memory_order_relaxed) || rec_unannounced())
		return;
	struct wire_unfollowed u = {atomic_exchange(&rec_plt_untold, 0),
				    atomic_exchange(&rec_plt_untold_slots, 0)};
	char buf[64];
	size_t len = enc_simple(buf, sizeof buf, WIRE_UNFOLLOWED, rec_pid, 0, &u, sizeof u);
	if (len && u.objects)
		rec_write(buf, len);
}

/* /proc/self/maps as the scan began (rec_plt_maps_read), for
 * rec_plt_relocated: NUL-terminated, or NULL when it could not be read. */
static char *rec_plt_maps;
static size_t rec_plt_maps_cap;

static REC_NOI void rec_plt_maps_read(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	for (;;) {
		if (fd < 0)
			break;
		if (len + 1 >= rec_plt_maps_cap) { /* room for a NUL and more */
			size_t cap = rec_plt_maps_cap ? 2 * rec_plt_maps_cap : 1 << 16;
			char *m = mmap(NULL, cap, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED) {
				len = 0;
				break;
			}
			if (rec_plt_maps) {
				memcpy(m, rec_plt_maps, len);
				munmap(rec_plt_maps, rec_plt_maps_cap);
			}
			rec_plt_maps = m;
			rec_plt_maps_cap = cap;
		}
		ssize_t n = read(fd, rec_plt_maps + len, rec_plt_maps_cap - 1 - len);
		if (n < 0) {
			len = 0;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (fd >= 0)
		close(fd);
	if (rec_plt_maps)
		rec_plt_maps[len] = 0;
}

/* Whether the dynamic linker is done relocating the object whose RELRO
 * segment is [relro, relro + len): it makes the pages from the one the
 * segment begins in to the one it ends in (not that one) read-only after
 * relocating, as glibc's _dl_protect_relro rounds both ends down (a small
 * object's RELRO, less than a page that ends on a page's end, is its whole
 * first page), so a page of it still writable when the scan began is
 * another thread's dlopen at work (the object is listed before it is
 * relocated), whose writes a GOT patched and made read-only now would
 * fault or undo.  Such an object waits for the next scan, the one its
 * dlopen's return makes.  Without such a page (nothing is protected) or
 * without the maps, as before: relocated. */
static REC_NOI int rec_plt_relocated(uintptr_t relro, uintptr_t len)
{
	uintptr_t lo = relro & ~(uintptr_t)4095, hi = (relro + len) & ~(uintptr_t)4095;
	if (lo >= hi || !rec_plt_maps || !*rec_plt_maps)
		return 1;
	for (const char *l = rec_plt_maps; *l;) {
		char *e;
		uintptr_t a = (uintptr_t)strtoull(l, &e, 16), b = 0;
		if (*e == '-')
			b = (uintptr_t)strtoull(e + 1, &e, 16);
		if (*e == ' ' && lo >= a && lo < b)
			return e[2] != 'w';
		const char *nl = strchr(l, '\n');
		if (!nl)
			break;
		l = nl + 1;
	}
	return 0; /* mapped since the scan began: a dlopen at work */
}

/* Patches the wanted slots of one object; 0, or -1 when it had none.  A
 * lazy slot's function not looked up yet: the object waits for the next
 * walk (the scan's second), so that its slots take one region. */
static REC_NOI int rec_plt_object(struct dl_phdr_info *info)
{
	uintptr_t base = info->dlpi_addr;
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t relro = 0, relro_len = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(base + info->dlpi_phdr[i].p_vaddr);
		else if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
			relro = base + info->dlpi_phdr[i].p_vaddr;
			relro_len = info->dlpi_phdr[i].p_memsz;
		}
	}
	if (!dyn)
		return -1;
	if (relro && !rec_plt_relocated(relro, relro_len))
		return 0;
	const ElfW(Rela) *jmprel = NULL;
	size_t pltrelsz = 0;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Half) *versym = NULL;
	const ElfW(Verneed) *verneed = NULL;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		uintptr_t p = rec_plt_abs(base, d->d_un.d_ptr);
		switch (d->d_tag) {
		case DT_JMPREL:
			jmprel = (const void *)p;
			break;
		case DT_PLTRELSZ:
			pltrelsz = d->d_un.d_val;
			break;
		case DT_SYMTAB:
			symtab = (const void *)p;
			break;
		case DT_STRTAB:
			strtab = (const void *)p;
			break;
		case DT_VERSYM:
			versym = (const void *)p;
			break;
		case DT_VERNEED:
			verneed = (const void *)p;
			break;
		}
	}
	size_t n = pltrelsz / sizeof *jmprel;
	if (!jmprel || !symtab || !strtab || !n)
		return -1;
	int pend = 0;
	for (size_t r = 0; r < n; r++) { /* the lazy slots' functions, noted */
		if (ELF64_R_TYPE(jmprel[r].r_info) != R_X86_64_JUMP_SLOT)
			continue;
		size_t si = ELF64_R_SYM(jmprel[r].r_info);
		const char *name = strtab + symtab[si].st_name;
		uintptr_t *got = (uintptr_t *)(base + jmprel[r].r_offset);
		if (rec_plt_inside(info, *got) && !rec_plt_ours(*got) && rec_plt_wanted(name))
			rec_plt_need(name, rec_plt_version(versym, verneed, strtab, si),
				     info->dlpi_name, &pend);
	}
	if (pend)
		return 0;
	struct rec_plt_region *rg = NULL;
	uint32_t k = 0, lost = 0;
	int refused = 0;
	for (size_t r = 0; r < n; r++) {
		if (ELF64_R_TYPE(jmprel[r].r_info) != R_X86_64_JUMP_SLOT)
			continue;
		size_t si = ELF64_R_SYM(jmprel[r].r_info);
		const char *name = strtab + symtab[si].st_name;
		uintptr_t *got = (uintptr_t *)(base + jmprel[r].r_offset);
		int want = rec_plt_ours(*got) ? 0 : rec_plt_wanted(name);
		if (!want)
			continue;
		const void *target = (const void *)*got;
		/* still the PLT's own code (lazy binding): what rec_plt_resolve
		 * found for it */
		if (rec_plt_inside(info, (uintptr_t)target)) {
			int again = 0;
			target = rec_plt_need(name, rec_plt_version(versym, verneed, strtab, si),
					      info->dlpi_name, &again);
			if (!target || again || (uintptr_t)target == *got)
				continue;
		}
		if (!rec_plt_elsewhere(target))
			continue; /* into this library, or nowhere known */
		if (refused) {	  /* no room: its slots that would have been, counted */
			lost++;
			continue;
		}
		if (!rg && !(rg = rec_plt_region_new((uint32_t)n))) {
			if (rec_plt_refused_at(base)) /* counted at its first scan */
				return 0;
			refused = 1;
			lost++;
			continue;
		} /* a slot per relocation: k stays below rg->cap */
		const char *copy = rec_plt_name(name);
		if (!copy)
			break;
		uint32_t idx = rg->first + k;
		rec_plt_slots[idx].key = (uintptr_t)copy;
		rec_plt_slots[idx].target = target;
		rec_plt_slots[idx].got = got;
		rec_plt_slots[idx].rescan = rec_plt_all && (strcmp(name, "dlopen") == 0 ||
							    strcmp(name, "dlmopen") == 0);
		rec_plt_slots[idx].quiet = want == 2;
		arch_plt_stub((unsigned char *)rg->lo + 16 + (size_t)k * ARCH_PLT_STUB, idx,
			      (const void *)rg->lo);
		k++;
	}
	if (refused)
		rec_plt_refuse(base, lost);
	if (!rg)
		return 0;
	if (!k || mprotect((void *)rg->lo, rg->hi - rg->lo, PROT_READ | PROT_EXEC) != 0) {
		rec_plt_region_free(rg);
		return k ? -1 : 0;
	}
	rg->base = base;
	rg->n = k;
	rec_plt_active = 1;
	struct rec_plt_refused *was = rec_plt_nrefused ? rec_plt_refused_at(base) : NULL;
	if (was) /* followed after all: room was freed */
		rec_plt_refused_drop(was);
	/* the stores: the GOT is writable while lazy, read-only under RELRO */
	uintptr_t pg = relro & ~(uintptr_t)4095;
	size_t pglen = relro ? ((relro + relro_len + 4095) & ~(uintptr_t)4095) - pg : 0;
	if (pglen)
		mprotect((void *)pg, pglen, PROT_READ | PROT_WRITE);
	for (uint32_t i = 0; i < k; i++)
		__atomic_store_n(rec_plt_slots[rg->first + i].got,
				 rg->lo + 16 + (uintptr_t)i * ARCH_PLT_STUB, __ATOMIC_RELEASE);
	if (pglen)
		mprotect((void *)pg, pglen, PROT_READ);
	return 0;
}

/* dl_iterate_phdr callback: marks the regions (seen 0) whose object may be
 * this one: an object at their address that holds their GOT slots.  With
 * arg, only where a slot still points at one of their stubs (another object
 * loaded where an unloaded one was has its own GOT, which points at none);
 * without, whatever the slots hold: a program may rewrite its GOT (a PLT
 * hook that calls the stub it found there) and still run the stubs. */
static REC_NOI int rec_plt_seen(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (unsigned i = 0; !arg && i < rec_plt_nrefused; i++)
		if (rec_plt_refused[i].base == info->dlpi_addr)
			rec_plt_refused[i].seen = 1;
	for (unsigned i = 0; i < rec_plt_nregions; i++) {
		struct rec_plt_region *rg = &rec_plt_regions[i];
		if (!rg->lo || rg->seen || !rg->n || rg->base != info->dlpi_addr ||
		    !rec_plt_inside(info, (uintptr_t)rec_plt_slots[rg->first].got))
			continue;
		for (uint32_t j = 0; j < rg->n && !rg->seen; j++) {
			uintptr_t *got = rec_plt_slots[rg->first + j].got;
			rg->seen = !arg || (rec_plt_inside(info, (uintptr_t)got) &&
					    *got >= rg->lo && *got < rg->hi);
		}
	}
	return 0;
}

/* Frees the regions with no object at their address any more (calling into
 * an unloaded object is the program's error: nothing runs their stubs); under
 * rec_plt_lock.  The interposed dlclose tells its unloads at once
 * (rec_plt_gone); this finds those it could not see (the C library's own),
 * but for an object loaded since where one of them was: that region stays
 * until its address is free again. */
static REC_NOI void rec_plt_sweep(void)
{
	for (unsigned i = 0; i < rec_plt_nregions; i++)
		rec_plt_regions[i].seen = 0;
	for (unsigned i = 0; i < rec_plt_nrefused; i++)
		rec_plt_refused[i].seen = 0;
	dl_iterate_phdr(rec_plt_seen, NULL);
	for (unsigned i = 0; i < rec_plt_nregions; i++)
		if (rec_plt_regions[i].lo && !rec_plt_regions[i].seen)
			rec_plt_region_free(&rec_plt_regions[i]);
	for (unsigned i = rec_plt_nrefused; i > 0; i--) /* unloaded: a new load counts */
		if (!rec_plt_refused[i - 1].seen)
			rec_plt_refused_drop(&rec_plt_refused[i - 1]);
}

/* dlclose unloaded what was at [lo, hi): the regions of its objects are
 * freed, but for one whose object at that address has a GOT that points at
 * its stubs (another thread loaded an object there since, and patched it).
 * Not while a scan runs: the dlclose may be a constructor's, inside a dlopen
 * that holds the dynamic linker's lock the scan waits for; the scan's sweep
 * frees them then, if no object was loaded at their address meanwhile. */
REC_NOI void rec_plt_gone(uintptr_t lo, uintptr_t hi)
{
	if (!rec_plt_slots)
		return;
	int busy = rec_plt_busy, any = 0;
	if (pthread_mutex_trylock(&rec_plt_lock) != 0)
		return;
	rec_plt_busy = 1;
	for (unsigned i = rec_plt_nrefused; i > 0; i--) /* unloaded: a new load counts */
		if (rec_plt_refused[i - 1].base >= lo && rec_plt_refused[i - 1].base < hi)
			rec_plt_refused_drop(&rec_plt_refused[i - 1]);
	for (unsigned i = 0; i < rec_plt_nregions; i++) {
		struct rec_plt_region *rg = &rec_plt_regions[i];
		uintptr_t got = rg->lo && rg->n ? (uintptr_t)rec_plt_slots[rg->first].got : 0;
		rg->seen = !(got >= lo && got < hi);
		any |= !rg->seen;
	}
	if (any) {
		dl_iterate_phdr(rec_plt_seen, &any);
		for (unsigned i = 0; i < rec_plt_nregions; i++)
			if (rec_plt_regions[i].lo && !rec_plt_regions[i].seen)
				rec_plt_region_free(&rec_plt_regions[i]);
	}
	pthread_mutex_unlock(&rec_plt_lock);
	rec_plt_busy = busy;
}

static REC_NOI int rec_plt_each(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	unsigned *nth = arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *slash = strrchr(name, '/');
	const char *base = slash ? slash + 1 : name;
	unsigned k = (*nth)++;
	if (k > 0 && !rec_plt_all)
		return 1; /* the main program is the first */
	if (k > 0 &&
	    (!*name || strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "linux-vdso", 10) == 0 ||
	     strncmp(base, "libspanstat", 11) == 0))
		return 0;
	if (info->dlpi_addr == rec_plt_self_base && k > 0)
		return 0;
	rec_plt_object(info);
	return 0;
}

/* Patches what is loaded and not patched yet. */
REC_NOI void rec_plt_scan(void)
{
	if (!rec_plt_slots)
		return;
	int busy = rec_plt_busy;
	rec_plt_busy = 1;
	pthread_mutex_lock(&rec_plt_lock);
	rec_plt_sweep();
	if (++rec_plt_gen == 0)
		rec_plt_gen = 1;
	rec_plt_nwants = 0;
	/* a walk, then (when it noted lazy slots' functions) their lookups and
	 * another; what a third would need waits for the next scan */
	/* once: an object mapped after it waits as one being relocated */
	if (rec_plt_all) /* objects other threads' dlopens are relocating */
		rec_plt_maps_read();
	for (int pass = 0; pass < 2; pass++) {
		unsigned nth = 0;
		rec_plt_pending = 0;
		dl_iterate_phdr(rec_plt_each, &nth);
		if (!rec_plt_pending)
			break;
		rec_plt_resolve();
	}
	if (__atomic_load_n(&rec_on, __ATOMIC_RELAXED)) /* else at the exit or exec */
		rec_plt_tell();
	pthread_mutex_unlock(&rec_plt_lock);
	rec_plt_busy = busy;
}

/* At connect: glob (NULL: off) and from ("all": every object). */
REC_NOI void rec_plt_init(const char *glob, const char *from)
{
	if (!glob || strlen(glob) >= sizeof rec_plt_glob)
		return;
	strcpy(rec_plt_glob, *glob ? glob : "*");
	rec_plt_all = from && strcmp(from, "all") == 0;
	Dl_info di;
	if (!dladdr((void *)rec_plt_init, &di))
		return;
	rec_plt_self_base = (uintptr_t)di.dli_fbase;
	if (pthread_key_create(&rec_plt_key, rec_plt_release) != 0)
		return;
	void *m = mmap(NULL, REC_PLT_SLOTS * sizeof *rec_plt_slots, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return;
	void *r = mmap(NULL, REC_PLT_REGIONS * sizeof *rec_plt_regions, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED) {
		munmap(m, REC_PLT_SLOTS * sizeof *rec_plt_slots);
		return;
	}
	void *nm = mmap(NULL, REC_PLT_NAMES * sizeof *rec_plt_names, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	rec_plt_names = nm == MAP_FAILED ? NULL : nm; /* without it: a copy per slot */
	void *wm = mmap(NULL, REC_PLT_WANTS * sizeof *rec_plt_wants, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	rec_plt_wants = wm == MAP_FAILED ? NULL : wm; /* without it: lazy slots unpatched */
	void *fm = mmap(NULL, REC_PLT_REGIONS * sizeof *rec_plt_refused, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	rec_plt_refused = fm == MAP_FAILED ? NULL : fm; /* without it: counted at each scan */
	rec_plt_regions = r;
	rec_plt_slots = m;
	rec_plt_scan();
}

#else

int rec_plt_active;
REC_NOI void rec_plt_init(const char *glob, const char *from)
{
	(void)glob;
	(void)from;
}
REC_NOI void rec_plt_longjmp(uintptr_t sp)
{
	(void)sp;
}
REC_NOI void rec_plt_vfork(int child)
{
	(void)child;
}
REC_NOI void rec_plt_gone(uintptr_t lo, uintptr_t hi)
{
	(void)lo;
	(void)hi;
}
REC_NOI void rec_plt_tell(void)
{
}

#endif
