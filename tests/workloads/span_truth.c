/* span_truth.c: spans of known on- and off-CPU times, for the ground-truth
 * tests: the values spanstat gives must lie in ranges this program makes
 * true, in every mode.
 * Build: cc -O2 -g -pthread span_truth.c -o span_truth -lspanstat
 *
 * Main thread: "spin" burns 60 ms of its own CPU time (CLOCK_THREAD_CPUTIME
 * _ID), "sleep" sleeps 60 ms; a thread "worker" does "tspin" (40 ms of CPU)
 * then "tsleep" (40 ms asleep); then "open" begins, sleeps 40 ms and the
 * program calls exit(0) with it open.  Exits 0. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include <spanstat.h>

static volatile unsigned long sink;

static long long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void spin_ms(long ms)
{
	long long end = cpu_ns() + ms * 1000000LL;
	while (cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void *worker(void *arg)
{
	(void)arg;
	spanstat_thread_name("worker");
	spanstat_begin("tspin");
	spin_ms(40);
	spanstat_end("tspin");
	spanstat_begin("tsleep");
	sleep_ms(40);
	spanstat_end("tsleep");
	return NULL;
}

int main(void)
{
	pthread_t th;
	spanstat_begin("spin");
	spin_ms(60);
	spanstat_end("spin");
	spanstat_begin("sleep");
	sleep_ms(60);
	spanstat_end("sleep");
	if (pthread_create(&th, NULL, worker, NULL) != 0 || pthread_join(th, NULL) != 0)
		return 1;
	spanstat_begin("open");
	sleep_ms(40);
	exit(0);
}
