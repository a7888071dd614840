/* mt_pairs.c: the target of tests/bench/mt-bench: T threads, each recording
 * N begin/end pairs of one span name as fast as it can, started together at a
 * barrier.  Prints "threads T", "pairs TOTAL" and "rate R" (million pairs per
 * second over all threads, wall time from the barrier to the last join).
 * usage: mt_pairs THREADS PAIRS_PER_THREAD */
#include <pthread.h>
#include <spanstat.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_barrier_t start;
static long pairs;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *hot(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	for (long i = 0; i < pairs; i++) {
		spanstat_begin("mt");
		spanstat_end("mt");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int t = argc > 1 ? atoi(argv[1]) : 1;
	pairs = argc > 2 ? atol(argv[2]) : 10000000;
	if (t < 1 || t > 256 || pairs < 1)
		return 2;
	pthread_t *th = calloc((size_t)t, sizeof *th);
	if (!th)
		return 1;
	pthread_barrier_init(&start, NULL, (unsigned)t + 1);
	for (int i = 0; i < t; i++)
		pthread_create(&th[i], NULL, hot, NULL);
	pthread_barrier_wait(&start);
	double t0 = now();
	for (int i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	double dt = now() - t0;
	printf("threads %d\npairs %ld\nrate %.2f\n", t, pairs * t, (double)(pairs * t) / dt / 1e6);
	free(th);
	return 0;
}
