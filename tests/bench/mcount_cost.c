/* mcount_cost.c: the time per call of an empty function, for mcount-bench:
 * built plainly, with -finstrument-functions, -pg and -pg -mfentry.
 * Usage: mcount_cost N   prints "ns/call X": N calls of leaf, timed. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void leaf(void)
{
	__asm__ volatile("");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		leaf();
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("ns/call %.3f\n", n > 0 ? ns / (double)n : 0.0);
	return 0;
}
