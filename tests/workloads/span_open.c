/* span_open.c: a span left open at each way a thread or process can end,
 * for the tests of how spanstat ends such spans (endings.bats).
 * Build: cc -O2 -g -pthread span_open.c -o span_open -lspanstat
 *    or: cc -O2 -g -pthread -DNO_API -finstrument-functions span_open.c
 *        (no -lspanstat: only the functions make spans; mode "finstr")
 *
 * Every mode but finstr and after: "outer" begins, "step" (a 10 ms spin)
 * begins and ends inside it, then the thread sleeps 100 ms with "outer"
 * still open, and ends:
 *   span_open exit       exit(3)
 *   span_open _exit      _exit(3)
 *   span_open abort      abort() (SIGABRT)
 *   span_open kill       prints "sleeping PID" on stdout and sleeps for 30 s
 *                        instead (the test kills it: SIGKILL from outside)
 *   span_open selfkill   kill(getpid(), SIGKILL)
 *   span_open exec       execs itself as "span_open after"
 *   span_open after      (the exec'd image) "after" 1x (a 10 ms spin), exit 0
 *   span_open thread     a second thread does the above and calls
 *                        pthread_exit(); main joins it, spins 10 ms in
 *                        "main-after" and returns 0
 *   span_open finstr     (built -DNO_API -finstrument-functions) main calls
 *                        step() (10 ms spin), sleeps 100 ms and calls
 *                        exit(0) with main's span open
 * The true length of "outer" (and of finstr's "main") is 110 ms or a little
 * more, 100 ms of it off-CPU. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef NO_API
#define spanstat_begin(name) ((void)(name))
#define spanstat_end(name) ((void)(name))
#else
#include <spanstat.h>
#endif

static volatile unsigned long sink;

static __attribute__((noinline)) void step(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 10000000L);
}

static __attribute__((no_instrument_function)) void nap(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* "outer" open, "step" closed inside it, 100 ms asleep. */
static void open_and_sleep(void)
{
	spanstat_begin("outer");
	spanstat_begin("step");
	step();
	spanstat_end("step");
	nap(100);
}

static void *thread_main(void *arg)
{
	(void)arg;
	open_and_sleep();
	pthread_exit(NULL);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "exit";
	if (strcmp(how, "finstr") == 0) {
		step();
		nap(100);
		exit(0);
	}
	if (strcmp(how, "after") == 0) {
		spanstat_begin("after");
		step();
		spanstat_end("after");
		return 0;
	}
	if (strcmp(how, "thread") == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, thread_main, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
		spanstat_begin("main-after");
		step();
		spanstat_end("main-after");
		return 0;
	}
	if (strcmp(how, "kill") == 0) {
		spanstat_begin("outer");
		spanstat_begin("step");
		step();
		spanstat_end("step");
		printf("sleeping %d\n", (int)getpid());
		fflush(stdout);
		nap(30000);
		return 1;
	}
	open_and_sleep();
	if (strcmp(how, "_exit") == 0)
		_exit(3);
	if (strcmp(how, "abort") == 0)
		abort();
	if (strcmp(how, "selfkill") == 0)
		kill(getpid(), SIGKILL);
	if (strcmp(how, "exec") == 0) {
		execl("/proc/self/exe", argv[0], "after", (char *)NULL);
		return 126;
	}
	exit(3);
}
