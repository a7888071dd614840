/* alloc.c: libspanstat-alloc, the allocation counter of --span-allocs.
 * spanstat puts it first in the target's LD_PRELOAD, where it replaces the
 * malloc family as glibc allows ("Replacing malloc": malloc, free, calloc,
 * realloc, and with them reallocarray, posix_memalign, aligned_alloc,
 * memalign, valloc, pvalloc and malloc_usable_size) by wrappers around
 * glibc's own allocator (its exported __libc_* entry points, so no lookup
 * is needed before the first allocation).  C++ new and delete reach these.
 *
 * Each thread counts, in initial-exec TLS, the allocations it made, the
 * blocks it freed, the bytes asked for and the bytes of the blocks it freed
 * (cumulative; the recorder takes them at every begin and end through
 * spanstat__alloc_counts() and keeps the differences).  A block freed by
 * another thread, or in a later span than the one that allocated it, counts
 * where it is freed.  A realloc counts as the free of the old block and the
 * allocation of the new one.
 *
 * To know the bytes of a block it frees, every block carries a 16-byte header
 * just below the pointer handed out: the size asked for, the distance back to
 * the start of glibc's block (16, or the alignment of an over-aligned one),
 * and a mark.  A pointer without the mark (from glibc's own internal
 * allocations, or allocated before this library was in place) goes to
 * glibc's free uncounted.  Nothing here prints, locks, or calls the kernel. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define AL_API __attribute__((visibility("default"), no_instrument_function))
#define AL_NOI __attribute__((no_instrument_function))
#define AL_HDR 16u
#define AL_MARK 0xa110c8edu /* in a glibc chunk header's place this would be a 2.7 TB chunk */

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* Below every block handed out. */
struct al_hdr {
	uint64_t size; /* bytes asked for */
	uint32_t back; /* from the pointer handed out back to glibc's block */
	uint32_t mark; /* AL_MARK */
};

_Static_assert(sizeof(struct al_hdr) == AL_HDR, "header size");

/* allocs, frees, alloc bytes, free bytes: values.h's order */
static __thread uint64_t al_counts[4] __attribute__((tls_model("initial-exec")));

AL_API const uint64_t *spanstat__alloc_counts(void)
{
	return al_counts;
}

static inline AL_NOI struct al_hdr *al_hdr_of(void *p)
{
	return (struct al_hdr *)p - 1;
}

/* Marks glibc's block base for `size` bytes with the user pointer `back`
 * bytes in, and counts the allocation. */
static inline AL_NOI void *al_mark(void *base, size_t back, size_t size)
{
	void *p = (char *)base + back;
	struct al_hdr *h = al_hdr_of(p);
	h->size = size;
	h->back = (uint32_t)back;
	h->mark = AL_MARK;
	al_counts[0]++;
	al_counts[2] += size;
	return p;
}

AL_API void *malloc(size_t n)
{
	if (n > SIZE_MAX - AL_HDR) {
		errno = ENOMEM;
		return NULL;
	}
	void *b = __libc_malloc(n + AL_HDR);
	return b ? al_mark(b, AL_HDR, n) : NULL;
}

AL_API void free(void *p)
{
	if (!p)
		return;
	struct al_hdr *h = al_hdr_of(p);
	if (__builtin_expect(h->mark != AL_MARK, 0)) {
		__libc_free(p); /* not ours */
		return;
	}
	al_counts[1]++;
	al_counts[3] += h->size;
	h->mark = 0;
	__libc_free((char *)p - h->back);
}

AL_API void *calloc(size_t n, size_t m)
{
	size_t t;
	if (__builtin_mul_overflow(n, m, &t) || t > SIZE_MAX - AL_HDR) {
		errno = ENOMEM;
		return NULL;
	}
	void *b = __libc_calloc(1, t + AL_HDR);
	return b ? al_mark(b, AL_HDR, t) : NULL;
}

/* An over-aligned block: align must be a power of two above AL_HDR. */
static AL_NOI void *al_aligned(size_t align, size_t n)
{
	if (n > SIZE_MAX - align) {
		errno = ENOMEM;
		return NULL;
	}
	void *b = __libc_memalign(align, n + align);
	return b ? al_mark(b, align, n) : NULL;
}

static inline AL_NOI int al_pow2(size_t a)
{
	return a && !(a & (a - 1));
}

/* memalign's rules: any alignment, rounded up to a power of two. */
static AL_NOI void *al_memalign(size_t align, size_t n)
{
	if (align <= AL_HDR)
		return malloc(n);
	if (align > SIZE_MAX / 2 + 1) {
		errno = EINVAL;
		return NULL;
	}
	size_t a = AL_HDR;
	while (a < align)
		a <<= 1;
	return al_aligned(a, n);
}

AL_API void *realloc(void *p, size_t n)
{
	if (!p)
		return malloc(n);
	if (n == 0) { /* glibc frees and returns NULL */
		free(p);
		return NULL;
	}
	struct al_hdr *h = al_hdr_of(p);
	if (h->mark != AL_MARK)
		return __libc_realloc(p, n); /* not ours: stays glibc's */
	if (n > SIZE_MAX - AL_HDR) {
		errno = ENOMEM;
		return NULL;
	}
	uint64_t old = h->size;
	if (h->back != AL_HDR) { /* over-aligned: a plain block, copied */
		void *q = malloc(n);
		if (!q)
			return NULL;
		/* all malloc_usable_size promised, as glibc's realloc keeps */
		size_t keep = malloc_usable_size(p);
		memcpy(q, p, keep < n ? keep : n);
		free(p);
		return q;
	}
	void *b = __libc_realloc((char *)p - AL_HDR, n + AL_HDR);
	if (!b)
		return NULL; /* the old block stays, and stays counted */
	al_counts[1]++;
	al_counts[3] += old;
	return al_mark(b, AL_HDR, n);
}

AL_API void *reallocarray(void *p, size_t n, size_t m)
{
	size_t t;
	if (__builtin_mul_overflow(n, m, &t)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, t);
}

AL_API int posix_memalign(void **out, size_t align, size_t n)
{
	if (!al_pow2(align) || align % sizeof(void *))
		return EINVAL;
	int saved = errno;
	void *p = align <= AL_HDR ? malloc(n) : al_aligned(align, n);
	if (!p) {
		errno = saved;
		return ENOMEM;
	}
	*out = p;
	return 0;
}

AL_API void *aligned_alloc(size_t align, size_t n)
{
	if (!al_pow2(align)) {
		errno = EINVAL;
		return NULL;
	}
	return align <= AL_HDR ? malloc(n) : al_aligned(align, n);
}

AL_API void *memalign(size_t align, size_t n)
{
	return al_memalign(align, n);
}

AL_API void *valloc(size_t n)
{
	return al_memalign((size_t)sysconf(_SC_PAGESIZE), n);
}

AL_API void *pvalloc(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	if (n > SIZE_MAX - pg) {
		errno = ENOMEM;
		return NULL;
	}
	size_t whole = (n + pg - 1) & ~(pg - 1);
	void *p = al_memalign(pg, whole);
	if (p) { /* counted as the bytes asked for, not the rounding */
		al_counts[2] -= whole - n;
		al_hdr_of(p)->size = n;
	}
	return p;
}

AL_API size_t malloc_usable_size(void *p)
{
	static size_t (*real)(void *);
	if (!p)
		return 0;
	if (!real)
		real = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
	struct al_hdr *h = al_hdr_of(p);
	if (h->mark != AL_MARK)
		return real ? real(p) : 0;
	size_t u = real ? real((char *)p - h->back) : 0;
	return u > h->back ? u - h->back : (size_t)h->size;
}
