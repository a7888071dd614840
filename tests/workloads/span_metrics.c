/* span_metrics.c: spans with known costs, for per-span values
 * (--span-events, off-CPU, --span-allocs).
 * usage: span_metrics [threads|fork]
 *   touch    touches 64 MiB (16384 fresh pages: page faults)
 *   sibling  touches nothing
 *   sleep    sleeps 50 ms
 *   spin     spins on the CPU for 100 ms (and prints "spin-cpu TID NS": the
 *            CPU time its thread had in it, by the thread's own clock)
 *   mallocs  1000 mallocs of 100 bytes (freed after the span)
 *   frees    frees memory allocated before it began
 * threads: a second thread runs the same spans; fork: a child does;
 * killed: runs them inside "killed", then dies by SIGKILL with it open. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <spanstat.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *work(void *arg)
{
	(void)arg;
	size_t len = 64u << 20;
	spanstat_begin("touch");
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (size_t i = 0; m != MAP_FAILED && i < len; i += 4096)
		m[i] = 1;
	spanstat_end("touch");
	spanstat_begin("sibling");
	volatile int x = 0;
	for (int i = 0; i < 1000; i++)
		x += i;
	spanstat_end("sibling");
	if (m != MAP_FAILED)
		munmap(m, len);

	spanstat_begin("sleep");
	struct timespec ts = {0, 50 * 1000 * 1000};
	while (nanosleep(&ts, &ts) != 0)
		;
	spanstat_end("sleep");

	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	spanstat_begin("spin");
	double t0 = now_s();
	while (now_s() - t0 < 0.1)
		;
	spanstat_end("spin");
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	printf("spin-cpu %ld %lld\n", (long)syscall(SYS_gettid),
	       (long long)(c1.tv_sec - c0.tv_sec) * 1000000000 + (c1.tv_nsec - c0.tv_nsec));
	fflush(stdout);

	void *p[1000];
	spanstat_begin("mallocs");
	for (int i = 0; i < 1000; i++)
		p[i] = malloc(100);
	spanstat_end("mallocs");
	spanstat_begin("frees");
	for (int i = 0; i < 1000; i++)
		free(p[i]);
	spanstat_end("frees");
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "threads") == 0) {
		pthread_t th;
		if (pthread_create(&th, NULL, work, NULL) != 0)
			return 1;
		pthread_join(th, NULL);
	} else if (strcmp(mode, "fork") == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			work(NULL);
			_exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
	} else if (strcmp(mode, "killed") == 0) {
		spanstat_begin("killed");
		work(NULL);
		raise(SIGKILL);
	}
	work(NULL);
	return 0;
}
