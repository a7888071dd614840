/* span_busy.c: a worker busy with many short spans, each far shorter than a
 * pixel of the run's flame chart, for the test that such a thread never
 * looks idle there.
 * Build: cc -O2 -g -pthread span_busy.c -o span_busy -lspanstat
 *
 * Usage: span_busy N: a thread runs "work" holding N "tick" spans of about
 * 20 us of spinning each, back to back; the main thread's "wait" holds the
 * thread's whole life and then 300 ms of sleep, so that the run lasts far
 * longer than the ticks (a pixel of the chart is then about 0.3 ms).  Exits 0. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include <spanstat.h>

static volatile unsigned long sink;

static long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void *run(void *arg)
{
	long n = *(long *)arg;
	spanstat_begin("work");
	for (long i = 0; i < n; i++) {
		spanstat_begin("tick");
		long t0 = now_ns();
		while (now_ns() - t0 < 20000)
			sink++;
		spanstat_end("tick");
	}
	spanstat_end("work");
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000;
	pthread_t th;
	spanstat_begin("wait");
	if (pthread_create(&th, NULL, run, &n) != 0)
		return 2;
	pthread_join(th, NULL);
	struct timespec nap = {0, 300000000};
	nanosleep(&nap, NULL);
	spanstat_end("wait");
	return 0;
}
