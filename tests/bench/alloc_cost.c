/* alloc_cost.c: what one malloc(64) + free pair costs in this process (run
 * by alloc-bench plain and under libspanstat-alloc).  Each of N pairs keeps
 * 16 blocks live in a small rotating window, so that the allocator does
 * real work rather than handing one block back and forth.
 *   alloc_cost N     prints "pair NS" (per malloc + free) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	void *volatile win[16] = {0};
	uint64_t best = UINT64_MAX;
	for (int round = 0; round < 5; round++) {
		uint64_t t0 = now_ns();
		for (long i = 0; i < n; i++) {
			unsigned k = (unsigned)i & 15u;
			free(win[k]);
			win[k] = malloc(64);
		}
		uint64_t t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	for (int k = 0; k < 16; k++)
		free(win[k]);
	printf("pair %.2f\n", (double)best / (double)n);
	return 0;
}
