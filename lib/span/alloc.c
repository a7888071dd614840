/* alloc.c: libspanstat-alloc, the allocation counter of --span-allocs.
 * spanstat puts it first in the target's LD_PRELOAD, where its malloc and
 * friends come before those of whichever allocator the program uses: glibc's,
 * or jemalloc or tcmalloc linked or preloaded after it.  Each of ours calls
 * that allocator's own function of the same name (dlsym(RTLD_NEXT), so the
 * program gets exactly what it gets without spanstat, errno included) and
 * counts what it did.  The same goes for the C++ operators new and delete
 * (every sized, aligned and nothrow variant) and jemalloc's own API (mallocx,
 * rallocx, xallocx, sdallocx, dallocx), so every path into the allocator is
 * seen.  Blocks carry nothing of ours: any block may cross between our entry
 * points and the allocator's.
 *
 * Each thread counts, in initial-exec TLS, the allocations it made, the
 * blocks it freed and their bytes (cumulative; the recorder takes them at
 * every begin and end through spanstat__alloc_counts() and keeps the
 * differences; what it allocates for itself it brackets with
 * spanstat__alloc_quiet(), and that is not counted).  Bytes are usable
 * sizes: the allocator's malloc_usable_size of the block, taken when it is
 * handed out and again before it is freed, so the two always balance
 * (malloc(100) is 104 bytes under glibc).  A block freed by another thread,
 * or in a later span, counts where it is freed; a realloc counts as the free
 * of the old block and the allocation of the new.
 *
 * Counted once: one call may reach another of ours (libstdc++'s new calls
 * malloc, glibc's reallocarray calls realloc), so a wrapper counts only what
 * no wrapper inside it counted.  A function served by another object than the
 * allocator's malloc (libstdc++'s new; glibc's pvalloc under jemalloc, which
 * has none) is only passed through: what it asks of the allocator is counted
 * inside it, and what it serves itself is not the program's allocator's.
 *
 * Until the functions are found, dlsym's own allocations come from a small
 * static arena (never freed, never counted).  Nothing here locks, and only
 * al_check_bound() prints. */
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define AL_API __attribute__((visibility("default"), no_instrument_function))
#define AL_NOI __attribute__((no_instrument_function))
#define AL_LIKELY(x) __builtin_expect(!!(x), 1)
#define AL_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* allocs, frees, alloc bytes, free bytes: values.h's order */
static __thread uint64_t al_counts[4] __attribute__((tls_model("initial-exec")));

AL_API const uint64_t *spanstat__alloc_counts(void)
{
	return al_counts;
}

/* Every function wrapped, and its symbol. */
#define AL_SLOTS(X)                                        \
	X(MALLOC, "malloc")                                \
	X(FREE, "free")                                    \
	X(CALLOC, "calloc")                                \
	X(REALLOC, "realloc")                              \
	X(REALLOCARRAY, "reallocarray")                    \
	X(POSIX_MEMALIGN, "posix_memalign")                \
	X(ALIGNED_ALLOC, "aligned_alloc")                  \
	X(MEMALIGN, "memalign")                            \
	X(VALLOC, "valloc")                                \
	X(PVALLOC, "pvalloc")                              \
	X(USABLE, "malloc_usable_size")                    \
	X(NW, "_Znwm")                                     \
	X(NA, "_Znam")                                     \
	X(NW_NT, "_ZnwmRKSt9nothrow_t")                    \
	X(NA_NT, "_ZnamRKSt9nothrow_t")                    \
	X(NW_AL, "_ZnwmSt11align_val_t")                   \
	X(NA_AL, "_ZnamSt11align_val_t")                   \
	X(NW_AL_NT, "_ZnwmSt11align_val_tRKSt9nothrow_t")  \
	X(NA_AL_NT, "_ZnamSt11align_val_tRKSt9nothrow_t")  \
	X(DL, "_ZdlPv")                                    \
	X(DA, "_ZdaPv")                                    \
	X(DL_NT, "_ZdlPvRKSt9nothrow_t")                   \
	X(DA_NT, "_ZdaPvRKSt9nothrow_t")                   \
	X(DL_SZ, "_ZdlPvm")                                \
	X(DA_SZ, "_ZdaPvm")                                \
	X(DL_AL, "_ZdlPvSt11align_val_t")                  \
	X(DA_AL, "_ZdaPvSt11align_val_t")                  \
	X(DL_AL_NT, "_ZdlPvSt11align_val_tRKSt9nothrow_t") \
	X(DA_AL_NT, "_ZdaPvSt11align_val_tRKSt9nothrow_t") \
	X(DL_SZ_AL, "_ZdlPvmSt11align_val_t")              \
	X(DA_SZ_AL, "_ZdaPvmSt11align_val_t")              \
	X(MALLOCX, "mallocx")                              \
	X(RALLOCX, "rallocx")                              \
	X(XALLOCX, "xallocx")                              \
	X(SDALLOCX, "sdallocx")                            \
	X(DALLOCX, "dallocx")

#define AL_ENUM(id, sym) AL_##id,
enum al_slot { AL_SLOTS(AL_ENUM) AL_NSLOTS };
#define AL_NAME(id, sym) sym,
static const char *const al_names[AL_NSLOTS] = {AL_SLOTS(AL_NAME)};

static void *al_fn[AL_NSLOTS];		/* the allocator's function, or NULL */
static unsigned char al_own[AL_NSLOTS]; /* from malloc's object: counted here */
static size_t (*al_sizer)(void *);	/* the allocator's malloc_usable_size */
static void *al_base;			/* the object holding the allocator's malloc */

/* glibc's allocator, whose usable size is read inline: the size word of
 * glibc's chunk header lies just below the block (its low bits are flags;
 * an mmapped chunk has two header words, others lend the next chunk's first
 * word), as malloc_usable_size computes it.  The reading is checked against
 * glibc's own malloc_usable_size on the program's first AL_CHECKS blocks of
 * each kind (in the heap, mmapped) before it is trusted alone; one that
 * disagrees turns it off for good (al_glibc 0: glibc's function measures).
 * The check measures the program's own blocks: a probe of blocks of our own
 * would leave its freed pieces in the program's heap (memalign's leading and
 * trailing fragments, a raised mmap threshold), and the program's later
 * blocks would be cut from them, with other usable sizes than without us. */
static int al_glibc;
#define AL_CHECKS 64
static int al_unchecked[2] = {AL_CHECKS, AL_CHECKS};

static inline AL_NOI size_t al_glibc_usable(const void *p)
{
	size_t word = ((const size_t *)p)[-1];
	return (word & ~(size_t)7) - (word & 2 ? 2 : 1) * sizeof(size_t);
}

enum { AL_UNRESOLVED, AL_RESOLVING, AL_READY, AL_BROKEN };
static int al_state;
/* set while this thread looks the functions up: dlsym's allocations */
static __thread volatile int al_resolving __attribute__((tls_model("initial-exec")));

/* Set while the allocator measures a block, or while we look a function up
 * late: what is allocated meanwhile is the allocator's or the dynamic
 * linker's business (tcmalloc's first malloc_usable_size news its extension
 * object; dlsym allocates its error strings), not counted, and never
 * measured again (no recursion). */
static __thread volatile int al_quiet __attribute__((tls_model("initial-exec")));

/* The span library's own work (its filters' symbol tables and demangling):
 * between spanstat__alloc_quiet(1) and spanstat__alloc_quiet(-1) what the
 * thread allocates and frees is the recorder's, not the program's, and is
 * not counted.  Nests. */
AL_API void spanstat__alloc_quiet(int delta)
{
	al_quiet += delta;
}

/* ---- the bootstrap arena ------------------------------------------------- */

#define AL_ARENA (256u * 1024u)
static char al_arena[AL_ARENA] __attribute__((aligned(4096)));
static size_t al_arena_used;

static inline AL_NOI int al_in_arena(const void *p)
{
	return (uintptr_t)p - (uintptr_t)al_arena < AL_ARENA;
}

/* A zeroed block of the arena (it is never reused), its size just below it. */
static AL_NOI void *al_arena_alloc(size_t n, size_t align)
{
	if (align < 16)
		align = 16;
	if (n > AL_ARENA || align > 4096 || (align & (align - 1))) {
		errno = n > AL_ARENA ? ENOMEM : EINVAL;
		return NULL;
	}
	size_t need = (n + 16 + align + 15) & ~(size_t)15;
	size_t at = __atomic_fetch_add(&al_arena_used, need, __ATOMIC_RELAXED);
	if (at > AL_ARENA - need) {
		errno = ENOMEM;
		return NULL;
	}
	uintptr_t p = ((uintptr_t)al_arena + at + 16 + align - 1) & ~(uintptr_t)(align - 1);
	((size_t *)p)[-1] = n;
	return (void *)p;
}

static inline AL_NOI size_t al_arena_size(const void *p)
{
	return ((const size_t *)p)[-1];
}

/* ---- finding the allocator ----------------------------------------------- */

static AL_NOI void *al_object_of(void *fn)
{
	Dl_info di;
	return fn && dladdr(fn, &di) ? di.dli_fbase : NULL;
}

/* A function nobody in the global scope after us has: from an object loaded
 * with RTLD_LOCAL (a Python extension bringing libstdc++ along), or NULL. */
static AL_NOI void *al_find_local(const char *name)
{
	void *self = al_object_of((void *)al_find_local);
	for (struct link_map *l = _r_debug.r_map; l; l = l->l_next) {
		if (!l->l_name || !*l->l_name)
			continue; /* the program: before us, never a fallback */
		void *h = dlopen(l->l_name, RTLD_NOLOAD | RTLD_LAZY);
		if (!h)
			continue;
		void *fn = dlsym(h, name);
		dlclose(h);
		if (fn && al_object_of(fn) != self)
			return fn;
	}
	return NULL;
}

static AL_NOI void al_set(enum al_slot s, void *fn)
{
	__atomic_store_n(&al_own[s], fn && al_object_of(fn) == al_base, __ATOMIC_RELAXED);
	__atomic_store_n(&al_fn[s], fn, __ATOMIC_RELEASE);
}

/* Looks every function up, once; 0 while this thread is doing so (dlsym
 * came back to us) or when there is no malloc to be had. */
static AL_NOI int al_init(void)
{
	int st = __atomic_load_n(&al_state, __ATOMIC_ACQUIRE);
	if (AL_LIKELY(st == AL_READY))
		return 1;
	if (al_resolving || st == AL_BROKEN)
		return 0;
	st = AL_UNRESOLVED;
	if (!__atomic_compare_exchange_n(&al_state, &st, AL_RESOLVING, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		while ((st = __atomic_load_n(&al_state, __ATOMIC_ACQUIRE)) == AL_RESOLVING)
			sched_yield(); /* another thread resolves; only before main */
		return st == AL_READY;
	}
	al_resolving = 1;
	void *m = dlsym(RTLD_NEXT, "malloc");
	al_base = al_object_of(m);
	for (int s = 0; s < AL_NSLOTS; s++)
		al_set((enum al_slot)s, s == AL_MALLOC ? m : dlsym(RTLD_NEXT, al_names[s]));
	if (al_own[AL_USABLE])
		al_sizer = (size_t(*)(void *))al_fn[AL_USABLE];
	al_resolving = 0;
	al_glibc = al_sizer && al_base == al_object_of((void *)gnu_get_libc_version);
	st = m && al_fn[AL_FREE] && al_fn[AL_CALLOC] && al_fn[AL_REALLOC] ? AL_READY : AL_BROKEN;
	__atomic_store_n(&al_state, st, __ATOMIC_RELEASE);
	return st == AL_READY;
}

/* Our own malloc, whatever the process binds the name to. */
#if defined __has_attribute && __has_attribute(copy)
#define AL_COPY_MALLOC __attribute__((copy(malloc)))
#else
#define AL_COPY_MALLOC
#endif
extern __typeof(malloc) al_own_malloc AL_COPY_MALLOC
	__attribute__((alias("malloc"), visibility("hidden")));

/* A program that defines malloc itself (an allocator linked statically)
 * binds every call to its own, before ours: nothing can be counted.  spanstat
 * checks the command before it starts it and does not preload us there; a
 * program that command starts in turn is told here, on its standard error,
 * the one line this library ever writes. */
static AL_NOI void al_check_bound(void)
{
	if (dlsym(RTLD_DEFAULT, "malloc") == (void *)al_own_malloc)
		return;
	char exe[256], line[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	int len =
		snprintf(line, sizeof line,
			 "spanstat: --span-allocs: cannot count the allocations of '%s' (pid %d): "
			 "it has a malloc of its own; its values read 0\n",
			 exe, (int)getpid());
	if (len > 0 && write(2, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1))
		return;
}

__attribute__((constructor)) static AL_NOI void al_start(void)
{
	al_init(); /* now, while there is one thread, if no malloc did before */
	al_check_bound();
}

/* The allocator's function for s; one found late if the first look-up had
 * none; NULL if no object loaded has it. */
static AL_NOI void *al_late(enum al_slot s)
{
	int saved = errno;
	al_quiet++;
	void *fn = dlsym(RTLD_NEXT, al_names[s]); /* loaded RTLD_GLOBAL since */
	if (!fn)
		fn = al_find_local(al_names[s]);
	if (fn)
		al_set(s, fn);
	/* the failed look-ups' messages go now, uncounted as they came */
	dlerror();
	dlerror();
	al_quiet--;
	errno = saved;
	return fn;
}

static inline AL_NOI int al_unready(void)
{
	return __atomic_load_n(&al_state, __ATOMIC_ACQUIRE) != AL_READY;
}

static inline AL_NOI void *al_get(enum al_slot s)
{
	if (AL_UNLIKELY(al_unready()))
		al_init();
	void *fn = __atomic_load_n(&al_fn[s], __ATOMIC_ACQUIRE);
	return AL_LIKELY(fn != NULL) ? fn : al_late(s);
}

/* Called for a function that no object in the process defines: it was
 * reached through our symbol alone (a weak reference), and there is nothing
 * to hand the call to. */
static AL_NOI __attribute__((noreturn)) void al_none(enum al_slot s)
{
	(void)s;
	abort();
}

/* ---- counting ------------------------------------------------------------ */

/* The inline reading u of block p, checked against glibc's own while it is
 * still being checked; glibc's, when they disagree. */
static AL_NOI __attribute__((noinline)) size_t al_glibc_check(void *p, size_t u, int kind)
{
	size_t g = al_sizer(p);
	if (g != u) {
		__atomic_store_n(&al_glibc, 0, __ATOMIC_RELAXED);
		return g;
	}
	__atomic_fetch_sub(&al_unchecked[kind], 1, __ATOMIC_RELAXED);
	return u;
}

static inline AL_NOI size_t al_size(void *p)
{
	if (AL_LIKELY(__atomic_load_n(&al_glibc, __ATOMIC_RELAXED))) {
		size_t u = al_glibc_usable(p);
		int kind = (((const size_t *)p)[-1] >> 1) & 1; /* mmapped */
		if (AL_UNLIKELY(__atomic_load_n(&al_unchecked[kind], __ATOMIC_RELAXED) > 0))
			return al_glibc_check(p, u, kind);
		return u;
	}
	al_quiet++;
	size_t u = al_sizer ? al_sizer(p) : 0;
	al_quiet--;
	return u;
}

static inline AL_NOI int al_busy(void)
{
	return al_quiet;
}

static inline AL_NOI void al_count_alloc(void *p)
{
	if (AL_UNLIKELY(al_busy()))
		return;
	al_counts[0]++;
	al_counts[2] += al_size(p);
}

static inline AL_NOI void al_count_free(size_t usable)
{
	al_counts[1]++;
	al_counts[3] += usable;
}

/* Allocating entry points: the block handed out counts, unless a wrapper
 * inside counted it.  al_none() never returns. */
#define AL_ALLOC_FN(slot, sym, params, args)                       \
	AL_API void *sym params                                    \
	{                                                          \
		void *(*fn)params = (void *(*)params)al_get(slot); \
		if (AL_UNLIKELY(!fn))                              \
			al_none(slot);                             \
		if (!al_own[slot])                                 \
			return fn args;                            \
		uint64_t a0 = al_counts[0];                        \
		void *q = fn args;                                 \
		if (q && al_counts[0] == a0)                       \
			al_count_alloc(q);                         \
		return q;                                          \
	}

/* Freeing entry points: the block's usable size, taken before it goes. */
#define AL_FREE_FN(slot, sym, params, args, ptr)                 \
	AL_API void sym params                                   \
	{                                                        \
		void(*fn) params = (void(*) params)al_get(slot); \
		if (AL_UNLIKELY(!fn))                            \
			al_none(slot);                           \
		if (!ptr || !al_own[slot] || al_busy()) {        \
			fn args;                                 \
			return;                                  \
		}                                                \
		uint64_t f0 = al_counts[1];                      \
		size_t u = al_size(ptr);                         \
		fn args;                                         \
		if (al_counts[1] == f0)                          \
			al_count_free(u);                        \
	}

/* ---- the C library's functions ------------------------------------------- */

AL_API void *malloc(size_t n)
{
	if (AL_UNLIKELY(al_unready()) && !al_init())
		return al_arena_alloc(n, 16);
	void *q = ((void *(*)(size_t))al_fn[AL_MALLOC])(n);
	if (AL_LIKELY(q != NULL))
		al_count_alloc(q);
	return q;
}

AL_API void free(void *p)
{
	if (AL_UNLIKELY(al_in_arena(p)) || !p)
		return; /* the arena's: never freed */
	if (AL_UNLIKELY(al_unready()) && !al_init())
		return; /* cannot happen: a block that is not the arena's came from it */
	if (AL_LIKELY(al_own[AL_FREE] && !al_busy()))
		al_count_free(al_size(p));
	((void (*)(void *))al_fn[AL_FREE])(p);
}

AL_API void *calloc(size_t n, size_t m)
{
	if (AL_UNLIKELY(al_unready()) && !al_init()) {
		size_t t;
		if (__builtin_mul_overflow(n, m, &t)) {
			errno = ENOMEM;
			return NULL;
		}
		return al_arena_alloc(t, 16); /* zeroed: the arena is never reused */
	}
	void *(*fn)(size_t, size_t) = (void *(*)(size_t, size_t))al_fn[AL_CALLOC];
	if (!al_own[AL_CALLOC])
		return fn(n, m);
	uint64_t a0 = al_counts[0];
	void *q = fn(n, m);
	if (q && al_counts[0] == a0)
		al_count_alloc(q);
	return q;
}

/* A block of the arena moving to the allocator (or, still resolving, to a
 * bigger block of the arena). */
static AL_NOI void *al_arena_realloc(void *p, size_t n)
{
	void *q = malloc(n);
	if (q && p) {
		size_t old = al_arena_size(p);
		memcpy(q, p, old < n ? old : n);
	}
	return q;
}

/* realloc's kind: the old block's free and the new block's allocation, each
 * unless a wrapper inside counted it.  zero_frees: a NULL for size 0 means
 * the old block was freed (glibc's realloc(p, 0)). */
static inline AL_NOI void *al_realloc_count(void *p, size_t n, void *q, size_t old, uint64_t a0,
					    uint64_t f0, int zero_frees)
{
	if (q && al_counts[0] == a0)
		al_count_alloc(q);
	if (p && (q || (zero_frees && n == 0)) && al_counts[1] == f0 && !al_busy())
		al_count_free(old);
	return q;
}

AL_API void *realloc(void *p, size_t n)
{
	if (AL_UNLIKELY(al_in_arena(p)) || (AL_UNLIKELY(al_unready()) && !al_init()))
		return al_arena_realloc(p, n);
	void *(*fn)(void *, size_t) = (void *(*)(void *, size_t))al_fn[AL_REALLOC];
	if (!al_own[AL_REALLOC])
		return fn(p, n);
	uint64_t a0 = al_counts[0], f0 = al_counts[1];
	size_t old = p && !al_busy() ? al_size(p) : 0;
	return al_realloc_count(p, n, fn(p, n), old, a0, f0, 1);
}

AL_API void *reallocarray(void *p, size_t n, size_t m)
{
	size_t t;
	if (AL_UNLIKELY(al_in_arena(p)) || (AL_UNLIKELY(al_unready()) && !al_init())) {
		if (__builtin_mul_overflow(n, m, &t)) {
			errno = ENOMEM;
			return NULL;
		}
		return al_arena_realloc(p, t);
	}
	void *(*fn)(void *, size_t, size_t) =
		(void *(*)(void *, size_t, size_t))al_get(AL_REALLOCARRAY);
	if (!fn) { /* an allocator and a C library without one: realloc's rules */
		if (__builtin_mul_overflow(n, m, &t)) {
			errno = ENOMEM;
			return NULL;
		}
		return realloc(p, t);
	}
	if (!al_own[AL_REALLOCARRAY])
		return fn(p, n, m);
	if (__builtin_mul_overflow(n, m, &t))
		t = SIZE_MAX; /* refused: nothing is freed */
	uint64_t a0 = al_counts[0], f0 = al_counts[1];
	size_t old = p && !al_busy() ? al_size(p) : 0;
	return al_realloc_count(p, t, fn(p, n, m), old, a0, f0, 1);
}

AL_API int posix_memalign(void **out, size_t align, size_t n)
{
	if (AL_UNLIKELY(al_unready()) && !al_init()) {
		if (!align || (align & (align - 1)) || align % sizeof(void *))
			return EINVAL;
		int saved = errno;
		void *q = al_arena_alloc(n, align);
		errno = saved;
		if (!q)
			return ENOMEM;
		*out = q;
		return 0;
	}
	int (*fn)(void **, size_t, size_t) =
		(int (*)(void **, size_t, size_t))al_get(AL_POSIX_MEMALIGN);
	if (AL_UNLIKELY(!fn))
		al_none(AL_POSIX_MEMALIGN);
	if (!al_own[AL_POSIX_MEMALIGN])
		return fn(out, align, n);
	uint64_t a0 = al_counts[0];
	int r = fn(out, align, n);
	if (r == 0 && al_counts[0] == a0)
		al_count_alloc(*out);
	return r;
}

/* The aligned allocations of the C library, while resolving: the arena. */
#define AL_BOOT_ALIGNED(align, n)                            \
	do {                                                 \
		if (AL_UNLIKELY(al_unready()) && !al_init()) \
			return al_arena_alloc(n, align);     \
	} while (0)

static AL_NOI void *al_aligned_alloc(size_t align, size_t n);
static AL_NOI void *al_memalign(size_t align, size_t n);
static AL_NOI void *al_valloc(size_t n);
static AL_NOI void *al_pvalloc(size_t n);

AL_API void *aligned_alloc(size_t align, size_t n)
{
	AL_BOOT_ALIGNED(align, n);
	return al_aligned_alloc(align, n);
}

AL_API void *memalign(size_t align, size_t n)
{
	AL_BOOT_ALIGNED(align, n);
	return al_memalign(align, n);
}

AL_API void *valloc(size_t n)
{
	AL_BOOT_ALIGNED(4096, n);
	return al_valloc(n);
}

AL_API void *pvalloc(size_t n)
{
	AL_BOOT_ALIGNED(4096, n);
	return al_pvalloc(n);
}

AL_ALLOC_FN(AL_ALIGNED_ALLOC, al_aligned_alloc, (size_t align, size_t n), (align, n))
AL_ALLOC_FN(AL_MEMALIGN, al_memalign, (size_t align, size_t n), (align, n))
AL_ALLOC_FN(AL_VALLOC, al_valloc, (size_t n), (n))
AL_ALLOC_FN(AL_PVALLOC, al_pvalloc, (size_t n), (n))

AL_API size_t malloc_usable_size(void *p)
{
	if (AL_UNLIKELY(al_in_arena(p)))
		return al_arena_size(p);
	if (AL_UNLIKELY(al_unready()) && !al_init())
		return 0;
	size_t (*fn)(void *) = (size_t(*)(void *))al_get(AL_USABLE);
	return fn ? fn(p) : 0;
}

/* ---- C++: new and delete --------------------------------------------------
 * align_val_t is a size_t, nothrow_t a reference: a pointer. */

AL_ALLOC_FN(AL_NW, _Znwm, (size_t n), (n))
AL_ALLOC_FN(AL_NA, _Znam, (size_t n), (n))
AL_ALLOC_FN(AL_NW_NT, _ZnwmRKSt9nothrow_t, (size_t n, const void *nt), (n, nt))
AL_ALLOC_FN(AL_NA_NT, _ZnamRKSt9nothrow_t, (size_t n, const void *nt), (n, nt))
AL_ALLOC_FN(AL_NW_AL, _ZnwmSt11align_val_t, (size_t n, size_t al), (n, al))
AL_ALLOC_FN(AL_NA_AL, _ZnamSt11align_val_t, (size_t n, size_t al), (n, al))
AL_ALLOC_FN(AL_NW_AL_NT, _ZnwmSt11align_val_tRKSt9nothrow_t, (size_t n, size_t al, const void *nt),
	    (n, al, nt))
AL_ALLOC_FN(AL_NA_AL_NT, _ZnamSt11align_val_tRKSt9nothrow_t, (size_t n, size_t al, const void *nt),
	    (n, al, nt))

AL_FREE_FN(AL_DL, _ZdlPv, (void *p), (p), p)
AL_FREE_FN(AL_DA, _ZdaPv, (void *p), (p), p)
AL_FREE_FN(AL_DL_NT, _ZdlPvRKSt9nothrow_t, (void *p, const void *nt), (p, nt), p)
AL_FREE_FN(AL_DA_NT, _ZdaPvRKSt9nothrow_t, (void *p, const void *nt), (p, nt), p)
AL_FREE_FN(AL_DL_SZ, _ZdlPvm, (void *p, size_t n), (p, n), p)
AL_FREE_FN(AL_DA_SZ, _ZdaPvm, (void *p, size_t n), (p, n), p)
AL_FREE_FN(AL_DL_AL, _ZdlPvSt11align_val_t, (void *p, size_t al), (p, al), p)
AL_FREE_FN(AL_DA_AL, _ZdaPvSt11align_val_t, (void *p, size_t al), (p, al), p)
AL_FREE_FN(AL_DL_AL_NT, _ZdlPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t al, const void *nt),
	   (p, al, nt), p)
AL_FREE_FN(AL_DA_AL_NT, _ZdaPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t al, const void *nt),
	   (p, al, nt), p)
AL_FREE_FN(AL_DL_SZ_AL, _ZdlPvmSt11align_val_t, (void *p, size_t n, size_t al), (p, n, al), p)
AL_FREE_FN(AL_DA_SZ_AL, _ZdaPvmSt11align_val_t, (void *p, size_t n, size_t al), (p, n, al), p)

/* ---- jemalloc's own API (nallocx and sallocx only measure) ---------------- */

/* No jemalloc in the process, yet a program reached these through our
 * symbols (a weak reference it tests): what the C library can do, through
 * our counted entry points (MALLOCX_LG_ALIGN and MALLOCX_ZERO honoured,
 * arenas and thread caches ignored), never an abort. */
static AL_NOI void *al_mallocx_libc(size_t n, int flags)
{
	size_t al = (flags & 0x3f) ? (size_t)1 << (flags & 0x3f) : 0;
	void *q = NULL;
	if (al > 16) {
		if (posix_memalign(&q, al, n ? n : 1) != 0)
			q = NULL;
	} else {
		q = malloc(n ? n : 1);
	}
	if (q && (flags & 0x40))
		memset(q, 0, n);
	return q;
}

AL_ALLOC_FN(AL_MALLOCX, al_mallocx_real, (size_t n, int flags), (n, flags))
AL_FREE_FN(AL_SDALLOCX, al_sdallocx_real, (void *p, size_t n, int flags), (p, n, flags), p)
AL_FREE_FN(AL_DALLOCX, al_dallocx_real, (void *p, int flags), (p, flags), p)

AL_API void *mallocx(size_t n, int flags)
{
	if (AL_UNLIKELY(!al_get(AL_MALLOCX)))
		return al_mallocx_libc(n, flags);
	return al_mallocx_real(n, flags);
}

AL_API void sdallocx(void *p, size_t n, int flags)
{
	if (AL_UNLIKELY(!al_get(AL_SDALLOCX))) {
		free(p);
		return;
	}
	al_sdallocx_real(p, n, flags);
}

AL_API void dallocx(void *p, int flags)
{
	if (AL_UNLIKELY(!al_get(AL_DALLOCX))) {
		free(p);
		return;
	}
	al_dallocx_real(p, flags);
}

AL_API void *rallocx(void *p, size_t n, int flags)
{
	void *(*fn)(void *, size_t, int) = (void *(*)(void *, size_t, int))al_get(AL_RALLOCX);
	if (AL_UNLIKELY(!fn)) { /* no jemalloc: see al_mallocx_libc */
		if ((flags & 0x3f) <= 4 && !(flags & 0x40))
			return realloc(p, n);
		void *q = al_mallocx_libc(n, flags);
		if (q && p) {
			size_t u = malloc_usable_size(p);
			memcpy(q, p, u < n ? u : n);
			free(p);
		}
		return q;
	}
	if (!al_own[AL_RALLOCX])
		return fn(p, n, flags);
	uint64_t a0 = al_counts[0], f0 = al_counts[1];
	size_t old = p && !al_busy() ? al_size(p) : 0;
	return al_realloc_count(p, n, fn(p, n, flags), old, a0, f0, 0);
}

/* Resizes in place; counted as a realloc when the block's size changed. */
AL_API size_t xallocx(void *p, size_t n, size_t extra, int flags)
{
	size_t (*fn)(void *, size_t, size_t, int) =
		(size_t(*)(void *, size_t, size_t, int))al_get(AL_XALLOCX);
	if (AL_UNLIKELY(!fn)) /* no jemalloc: nothing resizes in place */
		return malloc_usable_size(p);
	if (!al_own[AL_XALLOCX])
		return fn(p, n, extra, flags);
	if (al_busy())
		return fn(p, n, extra, flags);
	uint64_t a0 = al_counts[0], f0 = al_counts[1];
	size_t old = al_size(p);
	size_t now = fn(p, n, extra, flags);
	if (now != old && al_counts[0] == a0 && al_counts[1] == f0) {
		al_count_free(old);
		al_counts[0]++;
		al_counts[2] += now;
	}
	return now;
}
