/* alloc_own.c: a program with a malloc of its own, as one that links an
 * allocator statically has: its malloc, free, calloc and realloc come before
 * any preloaded library's, so --span-allocs cannot count them (spanstat says
 * so, and the values are unknown).  Its allocator counts its own calls and
 * hands them to glibc's.  Span "mallocs" makes 1000 mallocs of 100 bytes;
 * it prints "own mallocs N" (how many its malloc served in the span). */
#include <stddef.h>
#include <stdio.h>

#include <spanstat.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static unsigned long served;

void *malloc(size_t n)
{
	served++;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	served++;
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	served++;
	return __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}

int main(void)
{
	static void *p[1000];
	spanstat_begin("mallocs");
	unsigned long before = served;
	for (int i = 0; i < 1000; i++)
		p[i] = malloc(100);
	unsigned long in = served - before;
	spanstat_end("mallocs");
	for (int i = 0; i < 1000; i++)
		free(p[i]);
	printf("own mallocs %lu\n", in);
	return 0;
}
