/* comp_work.c: programs for compensate-bench, built with
 * -finstrument-functions, so that every call below is a span.
 *   comp_work recurse N     fib(N) by plain recursion: N levels deep, every
 *                           level a different stack path
 *   comp_work threads T N   T threads, each sorting N numbers with an
 *                           instrumented comparison (the README demo's kind
 *                           of work), main waiting for them
 * Prints a checksum so that nothing is optimised away; exits 0. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __attribute__((noinline)) uint64_t fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static __attribute__((noinline)) int compare(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static __attribute__((noinline)) uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct job {
	size_t n;
	uint64_t seed, sum;
};

static __attribute__((noinline)) void *sorter(void *arg)
{
	struct job *j = arg;
	uint64_t *v = malloc(j->n * sizeof *v);
	if (!v)
		return NULL;
	for (size_t i = 0; i < j->n; i++)
		v[i] = next_random(&j->seed);
	qsort(v, j->n, sizeof *v, compare);
	for (size_t i = 0; i < j->n; i++)
		j->sum = j->sum * 31 + v[i];
	free(v);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "recurse")) {
		printf("fib %llu\n", (unsigned long long)fib((unsigned)atoi(argv[2])));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "threads")) {
		int t = atoi(argv[2]);
		if (t < 1 || t > 64)
			return 2;
		pthread_t th[64];
		struct job jobs[64];
		uint64_t sum = 0;
		for (int i = 0; i < t; i++) {
			jobs[i] = (struct job){(size_t)atol(argv[3]),
					       0x9e3779b97f4a7c15u + (uint64_t)i, 0};
			if (pthread_create(&th[i], NULL, sorter, &jobs[i]) != 0)
				return 1;
		}
		for (int i = 0; i < t; i++) {
			pthread_join(th[i], NULL);
			sum ^= jobs[i].sum;
		}
		printf("sum %016llx\n", (unsigned long long)sum);
		return 0;
	}
	fprintf(stderr, "usage: comp_work recurse N | threads T N\n");
	return 2;
}
