/* span_loop.c: tight loops for benchmarks and stress tests.
 * Build: cc -O2 -g -finstrument-functions span_loop.c -o span_loop -lspanstat
 *
 *   span_loop pairs N    N x spanstat_begin/end("pair"), one thread
 *   span_loop calls N    N calls of the instrumented function leaf()
 *   span_loop threads T N  T threads each doing N pairs ("pair")
 *   span_loop named N    the thread named "looper-thread", then N pairs
 * Prints nothing; exits 0.  Only leaf() is instrumented. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <spanstat.h>

#define NOI __attribute__((no_instrument_function))

static volatile long sink;
static long loop_n;

__attribute__((noinline)) void leaf(long i);
__attribute__((noinline)) void leaf(long i)
{
	sink = i;
}

static NOI void *pairs(void *arg)
{
	(void)arg;
	for (long i = 0; i < loop_n; i++) {
		spanstat_begin("pair");
		spanstat_end("pair");
	}
	return NULL;
}

NOI int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "pairs";
	if (strcmp(mode, "threads") == 0) {
		int t = argc > 2 ? atoi(argv[2]) : 4;
		loop_n = argc > 3 ? atol(argv[3]) : 1000000;
		pthread_t th[64];
		if (t < 1 || t > 64)
			return 2;
		for (int i = 0; i < t; i++)
			pthread_create(&th[i], NULL, pairs, NULL);
		for (int i = 0; i < t; i++)
			pthread_join(th[i], NULL);
		return 0;
	}
	loop_n = argc > 2 ? atol(argv[2]) : 10000000;
	if (strcmp(mode, "calls") == 0) {
		for (long i = 0; i < loop_n; i++)
			leaf(i);
		return 0;
	}
	if (strcmp(mode, "named") == 0)
		spanstat_thread_name("looper-thread");
	pairs(NULL);
	return 0;
}
