/* span_async.c: async spans (spanstat_async_*, issue 24) in a small thread
 * pool whose tasks move between threads, for async.bats.
 *
 * Four "request" tasks (ids 1..4) are begun by main inside span "serve".
 * Each runs in three steps; step k is taken by pool thread k % 2 (both
 * named "pool"), so every task moves between the two: it pops the task
 * from the queue, enters the task's span,
 * spins BUSY_MS on the CPU, exits it and puts the task back after a sleep of
 * IDLE_MS on a timer thread-free path (the task waits in the queue with a
 * due time).  The step after the first begins a child "query" async span
 * (ids 101..104) inside the entered request, entered and ended at once by
 * the same thread (busy only).  After the last step the thread ends the
 * request.  So: 4 requests, 12 enters, each busy >= 3 * BUSY_MS and idle
 * >= 2 * IDLE_MS; 4 queries under request.  With the argument "open", main
 * also begins "leak" (id 9) and never ends it.  With "gone", a thread enters
 * "orphan" (id 7), spins GONE_MS and ends without leaving it; main ends it
 * GONE_MS later.  With "kill", main enters "doomed" (id 8), spins GONE_MS
 * and kills itself with SIGKILL.  With "many", main begins MANY "task"
 * spans (ids 1000..), all open at once, then ends them in the same order;
 * with "names", the same but each named "task-N", N its id. */
#include <pthread.h>
#include <signal.h>
#include <spanstat.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define TASKS 4
#define STEPS 3
#define BUSY_MS 20
#define IDLE_MS 30
#define GONE_MS 200
#define MANY 60000

struct task {
	uint64_t id;
	int step;
	uint64_t due; /* ns: not before then */
};

static struct task queue[TASKS];
static int nqueue, done;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_ms(int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;
	volatile uint64_t x = 0;
	while (now_ns() < end)
		x++;
}

static void sleep_until(uint64_t due)
{
	uint64_t t = now_ns();
	if (t >= due)
		return;
	struct timespec ts = {(time_t)((due - t) / 1000000000u), (long)((due - t) % 1000000000u)};
	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	int me = (int)(intptr_t)arg, i;
	spanstat_thread_name("pool");
	for (;;) {
		pthread_mutex_lock(&mu);
		for (;;) {
			for (i = 0; i < nqueue && queue[i].step % 2 != me; i++)
				;
			if (i < nqueue || done == TASKS)
				break;
			pthread_cond_wait(&cv, &mu);
		}
		if (i == nqueue) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		struct task t = queue[i];
		memmove(queue + i, queue + i + 1, (size_t)(--nqueue - i) * sizeof *queue);
		pthread_mutex_unlock(&mu);
		sleep_until(t.due);
		spanstat_async_enter(t.id);
		spin_ms(BUSY_MS);
		if (t.step == 1) {
			spanstat_async_begin("query", 100 + t.id);
			spanstat_async_enter(100 + t.id);
			spin_ms(1);
			spanstat_async_exit(100 + t.id);
			spanstat_async_end(100 + t.id);
		}
		spanstat_async_exit(t.id);
		pthread_mutex_lock(&mu);
		if (++t.step == STEPS) {
			spanstat_async_end(t.id);
			done++;
		} else {
			t.due = now_ns() + IDLE_MS * 1000000u;
			queue[nqueue++] = t;
		}
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
}

static void *orphan(void *arg)
{
	(void)arg;
	spanstat_async_enter(7);
	spin_ms(GONE_MS);
	return NULL; /* still inside 7 */
}

int main(int argc, char **argv)
{
	pthread_t th[2];
	if (argc > 1 && strcmp(argv[1], "gone") == 0) {
		spanstat_async_begin("orphan", 7);
		pthread_create(&th[0], NULL, orphan, NULL);
		pthread_join(th[0], NULL);
		spin_ms(GONE_MS);
		spanstat_async_end(7);
		return 0;
	}
	if (argc > 1 && (strcmp(argv[1], "many") == 0 || strcmp(argv[1], "names") == 0)) {
		for (uint64_t i = 0; i < MANY; i++) {
			char name[32] = "task";
			if (argv[1][0] == 'n')
				snprintf(name, sizeof name, "task-%llu",
					 (unsigned long long)(1000 + i));
			spanstat_async_begin(name, 1000 + i);
		}
		for (uint64_t i = 0; i < MANY; i++)
			spanstat_async_end(1000 + i);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "kill") == 0) {
		spanstat_async_begin("doomed", 8);
		spanstat_async_enter(8);
		spin_ms(GONE_MS);
		raise(SIGKILL);
	}
	if (argc > 1 && strcmp(argv[1], "open") == 0)
		spanstat_async_begin("leak", 9);
	spanstat_begin("serve");
	pthread_mutex_lock(&mu);
	for (uint64_t i = 1; i <= TASKS; i++) {
		spanstat_async_begin("request", i);
		queue[nqueue++] = (struct task){i, 0, 0};
	}
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	spanstat_end("serve");
	return 0;
}
