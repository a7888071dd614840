/* alloc_calls.c: every C function libspanstat-alloc wraps, with the counts
 * it must add, checked from inside (the counters read through
 * spanstat__alloc_counts, as the recorder reads them); bytes are usable
 * sizes (malloc_usable_size).  Prints "ok N" or "FAIL: what" lines and exits
 * 1 on any failure; with "threads", memory allocated in one thread is freed
 * in another. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const uint64_t *(*counts)(void);
static int fails, oks;

static void check(int cond, const char *what)
{
	if (cond)
		oks++;
	else
		printf("FAIL: %s\n", what), fails++;
}

/* The change of each count over fn, in the calling thread. */
struct delta {
	uint64_t allocs, frees, abytes, fbytes;
};

static struct delta snap(void)
{
	const uint64_t *c = counts();
	return (struct delta){c[0], c[1], c[2], c[3]};
}

static struct delta since(struct delta a)
{
	struct delta b = snap();
	return (struct delta){b.allocs - a.allocs, b.frees - a.frees, b.abytes - a.abytes,
			      b.fbytes - a.fbytes};
}

static void *other_free(void *p)
{
	size_t u = malloc_usable_size(p);
	struct delta a = snap();
	free(p);
	struct delta d = since(a);
	check(d.frees == 1 && d.fbytes == u && u >= 300,
	      "a block from another thread is freed here");
	return NULL;
}

int main(int argc, char **argv)
{
	counts = (const uint64_t *(*)(void))dlsym(RTLD_DEFAULT, "spanstat__alloc_counts");
	if (!counts) {
		puts("FAIL: no spanstat__alloc_counts (not preloaded)");
		return 1;
	}
	void *p[1000];
	size_t sum = 0;
	struct delta a = snap();
	for (int i = 0; i < 1000; i++)
		p[i] = malloc(100);
	struct delta d = since(a);
	for (int i = 0; i < 1000; i++)
		sum += malloc_usable_size(p[i]);
	check(d.allocs == 1000 && d.abytes == sum && sum >= 100000, "1000 mallocs of 100 bytes");
	a = snap();
	for (int i = 0; i < 1000; i++)
		free(p[i]);
	d = since(a);
	check(d.frees == 1000 && d.fbytes == sum, "1000 frees of them");
	a = snap();
	char *c = calloc(10, 7);
	check(c && c[0] == 0 && c[69] == 0, "calloc zeroes");
	size_t u1 = malloc_usable_size(c);
	c = realloc(c, 500);
	check(c != NULL, "realloc grows");
	size_t u2 = malloc_usable_size(c);
	c = realloc(c, 20);
	size_t u3 = malloc_usable_size(c);
	free(c);
	d = since(a);
	check(d.allocs == 3 && d.abytes == u1 + u2 + u3, "calloc and two reallocs allocate");
	check(d.frees == 3 && d.fbytes == u1 + u2 + u3, "and everything is freed");
	check(realloc(malloc(5), 0) == NULL, "realloc(p, 0) frees");
	errno = 0;
	volatile size_t huge = SIZE_MAX / 2; /* not known to the compiler */
	check(calloc(huge, 3) == NULL && errno == ENOMEM, "calloc overflow: ENOMEM");
	check(reallocarray(NULL, huge, 3) == NULL, "reallocarray overflow");
	void *r = reallocarray(NULL, 10, 10);
	check(r && malloc_usable_size(r) >= 100,
	      "reallocarray allocates, usable size at least asked");
	free(r);
	for (size_t al = 8; al <= 65536; al *= 2) {
		void *q = NULL;
		a = snap();
		int rc = posix_memalign(&q, al, 1001); /* glibc rounds it up */
		check(rc == 0 && ((uintptr_t)q % al) == 0, "posix_memalign aligns");
		size_t u = malloc_usable_size(q);
		check(u > 1001, "its usable size, more than asked");
		memset(q, 1, u); /* all of it is the program's */
		q = realloc(q, u + 3000);
		check(q && ((char *)q)[1000] == 1 && ((char *)q)[u - 1] == 1,
		      "realloc keeps an aligned block's bytes, all it could use");
		size_t u2 = q ? malloc_usable_size(q) : 0;
		free(q);
		d = since(a);
		check(d.allocs == 2 && d.frees == 2 && d.abytes == u + u2 && d.fbytes == u + u2,
		      "aligned blocks count too");
	}
	void *q = NULL;
	check(posix_memalign(&q, 24, 10) == EINVAL, "posix_memalign refuses a non-power of two");
	q = aligned_alloc(256, 512);
	check(q && (uintptr_t)q % 256 == 0, "aligned_alloc");
	free(q);
	q = memalign(100, 50);
	check(q && (uintptr_t)q % 128 == 0, "memalign rounds the alignment up");
	free(q);
	long pg = sysconf(_SC_PAGESIZE);
	a = snap();
	q = valloc(10);
	check(q && (uintptr_t)q % (uintptr_t)pg == 0, "valloc is page-aligned");
	size_t uv = malloc_usable_size(q);
	free(q);
	q = pvalloc(10);
	check(q && (uintptr_t)q % (uintptr_t)pg == 0 && malloc_usable_size(q) >= (size_t)pg,
	      "pvalloc rounds to pages");
	size_t up = malloc_usable_size(q);
	free(q);
	d = since(a);
	check(d.abytes == uv + up && d.fbytes == uv + up,
	      "valloc and pvalloc count their usable sizes");
	/* glibc's own allocations (strdup, asprintf, fopen, getline) free cleanly */
	char *s = strdup("abc"), *t = NULL;
	check(s && asprintf(&t, "%s%d", s, 42) > 0 && strcmp(t, "abc42") == 0, "strdup, asprintf");
	free(s);
	free(t);
	FILE *f = fopen("/proc/self/status", "r");
	char *line = NULL;
	size_t cap = 0;
	check(f && getline(&line, &cap, f) > 0, "fopen and getline");
	free(line);
	if (f)
		fclose(f);
	if (argc > 1 && strcmp(argv[1], "threads") == 0) {
		void *b = malloc(300);
		pthread_t th;
		pthread_create(&th, NULL, other_free, b);
		pthread_join(th, NULL);
		a = snap();
		void *volatile one = malloc(1);
		free(one);
		d = since(a);
		check(d.allocs == 1, "each thread counts its own");
	}
	printf("ok %d\n", oks);
	return fails != 0;
}
