/* span_threads.c: nested manual spans in several threads, for the span tests.
 * Build: cc -O2 -g -pthread span_threads.c -o span_threads -lspanstat
 *
 * Fixed structure (counts are exact):
 *   main thread, named "main-thread":
 *     "main" 1x, containing "spawn" 1x, "sleep" 1x (a 50 ms nanosleep) and
 *     "join" 1x, in that order
 *   SPAN_THREADS (4) worker threads, named "worker-0" .. "worker-3", each:
 *     "work" 1x, containing ITERS (1000) x "outer", each containing "inner",
 *     containing a SPANSTAT_SCOPE "scoped"; "tick" instants ITERS/100 (10)
 *     times inside "outer"; counter "progress" ITERS/100 times (values 0, 100,
 *     .. 900)
 * Folded stacks per worker: work;outer;inner;scoped, work;outer;inner,
 * work;outer, work.  Exits 0. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include <spanstat.h>

#define SPAN_THREADS 4
#define ITERS 1000

static volatile unsigned long sink;

static void scoped_work(int i)
{
	SPANSTAT_SCOPE("scoped");
	for (int k = 0; k < 50; k++)
		sink += (unsigned long)(i * k);
}

static void *worker(void *arg)
{
	char name[32];
	snprintf(name, sizeof name, "worker-%d", (int)(long)arg);
	spanstat_thread_name(name);
	spanstat_begin("work");
	for (int i = 0; i < ITERS; i++) {
		spanstat_begin("outer");
		if (i % 100 == 0) {
			spanstat_instant("tick");
			spanstat_counter("progress", i);
		}
		spanstat_begin("inner");
		scoped_work(i);
		spanstat_end("inner");
		spanstat_end("outer");
	}
	spanstat_end("work");
	return NULL;
}

int main(void)
{
	pthread_t th[SPAN_THREADS];
	spanstat_thread_name("main-thread");
	spanstat_begin("main");
	spanstat_begin("spawn");
	for (long i = 0; i < SPAN_THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	spanstat_end("spawn");
	spanstat_begin("sleep");
	struct timespec ts = {0, 50 * 1000 * 1000};
	while (nanosleep(&ts, &ts) != 0)
		;
	spanstat_end("sleep");
	spanstat_begin("join");
	for (int i = 0; i < SPAN_THREADS; i++)
		pthread_join(th[i], NULL);
	spanstat_end("join");
	spanstat_end("main");
	return 0;
}
