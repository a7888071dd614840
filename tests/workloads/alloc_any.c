/* alloc_any.c: every C allocation entry point inside spans, for
 * --span-allocs under any allocator (glibc's, or jemalloc or tcmalloc linked
 * or preloaded).  Each span's allocations and frees are known: the program
 * counts the blocks it gets and frees, and their usable sizes as the
 * allocator reports them (malloc_usable_size, as libspanstat-alloc counts),
 * and prints per span, after all of them:
 *   expect NAME ALLOCS FREES ALLOC_BYTES FREE_BYTES
 * and what each call returned, to compare with a run without spanstat:
 *   call WHAT -> block|null errno=E
 * Under libspanstat-alloc it also checks the counter's own changes over each
 * span (spanstat__alloc_counts) and prints "FAIL: ..." where they differ.
 * Built with -DALLOC_JEMALLOC (and -ljemalloc) it mixes jemalloc's own API
 * with malloc and free in span "jemalloc"; glibc's pvalloc, which jemalloc
 * lacks, is then left out (its block is glibc's: jemalloc cannot free it),
 * as it is with -DALLOC_NO_PVALLOC (for jemalloc preloaded).
 *   alloc_any [plugin LIB]: LIB (a C++ library, dlopen'ed RTLD_LOCAL) runs
 *   plugin_run() in span "plugin", reporting its own expectations. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <spanstat.h>

#ifdef ALLOC_JEMALLOC
void *mallocx(size_t size, int flags);
void *rallocx(void *ptr, size_t size, int flags);
size_t xallocx(void *ptr, size_t size, size_t extra, int flags);
size_t sallocx(const void *ptr, int flags);
void dallocx(void *ptr, int flags);
void sdallocx(void *ptr, size_t size, int flags);
size_t nallocx(size_t size, int flags);
#define MALLOCX_LG_ALIGN(la) ((int)(la))
#define MALLOCX_ZERO ((int)0x40)
#endif

#define MAXSPANS 16

struct expect {
	const char *name;
	uint64_t allocs, frees, abytes, fbytes;
	uint64_t c0[4]; /* the counter at its begin, when preloaded */
};

static struct expect spans[MAXSPANS];
static int nspans, fails;
static struct expect *cur;
static const uint64_t *(*counts)(void);
static char calls[64][96], failed[16][96];
static int ncalls, nfailed;

static void begin(const char *name)
{
	cur = &spans[nspans++];
	cur->name = name;
	if (counts)
		memcpy(cur->c0, counts(), sizeof cur->c0);
	spanstat_begin(name);
}

static void end(void)
{
	spanstat_end(cur->name);
	if (counts) {
		const uint64_t *c = counts();
		uint64_t want[4] = {cur->allocs, cur->frees, cur->abytes, cur->fbytes};
		for (int k = 0; k < 4; k++)
			if (c[k] - cur->c0[k] != want[k] && nfailed < 16)
				snprintf(failed[nfailed++], sizeof failed[0],
					 "FAIL: span %s: count %d is %llu, expected %llu",
					 cur->name, k, (unsigned long long)(c[k] - cur->c0[k]),
					 (unsigned long long)want[k]);
	}
}

/* A block handed out, and one about to be freed. */
static void *got(void *p)
{
	if (p) {
		cur->allocs++;
		cur->abytes += malloc_usable_size(p);
	}
	return p;
}

static void *gone(void *p)
{
	if (p) {
		cur->frees++;
		cur->fbytes += malloc_usable_size(p);
	}
	return p;
}

/* What a call returned, kept to print later (printing allocates). */
static void *called(const char *what, void *p, int err)
{
	if (ncalls < 64)
		snprintf(calls[ncalls++], sizeof calls[0], "call %s -> %s errno=%d", what,
			 p ? "block" : "null", p ? 0 : err);
	return p;
}

/* The block expr returns, its errno kept. */
#define call(what, expr)                 \
	({                               \
		errno = 0;               \
		void *p_ = (expr);       \
		called(what, p_, errno); \
	})

static void libc_calls(void)
{
	volatile size_t huge = SIZE_MAX / 2; /* not known to the compiler */
	char *c = got(calloc(10, 7));
	if (!c || c[0] || c[69])
		fails++;
	void *r = gone(c); /* realloc: the old block's free, the new's allocation */
	c = got(realloc(r, 500));
	gone(c);
	c = got(realloc(c, 20));
	free(gone(c));
	free(gone(got(realloc(NULL, 64))));
	void *z = gone(got(malloc(5)));
	z = call("realloc(p,0)", realloc(z, 0));
	if (z) { /* an allocator that keeps a block for size 0 */
		got(z);
		free(gone(z));
	}
	free(gone(got(reallocarray(NULL, 10, 10))));
	call("reallocarray(NULL,huge,3)", reallocarray(NULL, huge, 3));
	call("calloc(huge,3)", calloc(huge, 3));
	call("malloc(huge*2)", malloc(huge * 2));
	void *q = NULL;
	int rc = posix_memalign(&q, 64, 1001);
	called("posix_memalign(64,1001)", rc ? NULL : q, rc);
	if (!rc && (uintptr_t)q % 64)
		fails++;
	free(gone(got(rc ? NULL : q)));
	rc = posix_memalign(&q, 24, 10);
	called("posix_memalign(24,10)", rc ? NULL : q, rc);
	free(gone(got(rc ? NULL : q)));
	free(gone(got(call("aligned_alloc(256,512)", aligned_alloc(256, 512)))));
	free(gone(got(call("aligned_alloc(3,10)", aligned_alloc(3, 10)))));
	free(gone(got(call("memalign(100,50)", memalign(100, 50)))));
	free(gone(got(call("valloc(10)", valloc(10)))));
#if !defined ALLOC_JEMALLOC && !defined ALLOC_NO_PVALLOC
	free(gone(got(call("pvalloc(10)", pvalloc(10)))));
#endif
	free(gone(got(malloc(0))));
	free(gone(got(strdup("a string of glibc's own"))));
	free(NULL);
}

#ifdef ALLOC_JEMALLOC
/* jemalloc's own API mixed with malloc and free, both ways. */
static void jemalloc_calls(void)
{
	free(gone(got(mallocx(100, 0))));
	void *p = got(malloc(100));
	sdallocx(gone(p), 100, 0);
	p = got(mallocx(1000, MALLOCX_LG_ALIGN(6) | MALLOCX_ZERO));
	if (!p || (uintptr_t)p % 64 || ((char *)p)[999])
		fails++;
	gone(p);
	p = got(rallocx(p, 5000, 0));
	/* in place: counted as a realloc when the block's size changed */
	size_t before = malloc_usable_size(p);
	size_t after = xallocx(p, 20000, 0, 0);
	if (after != before) {
		cur->frees++;
		cur->fbytes += before;
		cur->allocs++;
		cur->abytes += after;
	}
	if (sallocx(p, 0) != after || nallocx(100, 0) < 100)
		fails++;
	dallocx(gone(p), 0);
	p = gone(got(mallocx(64, 0))); /* a block of either API resized by the other */
	p = gone(got(realloc(p, 4000)));
	p = got(rallocx(p, 300, 0));
	free(gone(p));
}
#endif

static void *p1000[1000];

int main(int argc, char **argv)
{
	counts = (const uint64_t *(*)(void))dlsym(RTLD_DEFAULT, "spanstat__alloc_counts");
	begin("warm"); /* the thread's first span sets the thread up */
	end();
	begin("mallocs");
	for (int i = 0; i < 1000; i++)
		p1000[i] = got(malloc(100));
	end();
	begin("frees");
	for (int i = 0; i < 1000; i++)
		free(gone(p1000[i]));
	end();
	begin("libc");
	libc_calls();
	end();
#ifdef ALLOC_JEMALLOC
	begin("jemalloc");
	jemalloc_calls();
	end();
#endif
	if (argc > 2 && strcmp(argv[1], "plugin") == 0) {
		void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		void (*run)(uint64_t *) = h ? (void (*)(uint64_t *))dlsym(h, "plugin_run") : NULL;
		if (!run) {
			printf("FAIL: cannot load %s: %s\n", argv[2], dlerror());
			return 1;
		}
		uint64_t v[4] = {0};
		begin("plugin");
		run(v);
		cur->allocs = v[0];
		cur->frees = v[1];
		cur->abytes = v[2];
		cur->fbytes = v[3];
		end();
	}
	for (int i = 0; i < nspans; i++)
		printf("expect %s %llu %llu %llu %llu\n", spans[i].name,
		       (unsigned long long)spans[i].allocs, (unsigned long long)spans[i].frees,
		       (unsigned long long)spans[i].abytes, (unsigned long long)spans[i].fbytes);
	for (int i = 0; i < ncalls; i++)
		puts(calls[i]);
	for (int i = 0; i < nfailed; i++)
		puts(failed[i]);
	if (fails)
		puts("FAIL: a block was not what was asked for");
	return fails || nfailed;
}
