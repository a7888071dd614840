/* span_sigexit.c: threads that end inside a signal handler (pthread_exit),
 * most likely while the handler interrupted a recorder call, then a thread
 * that reuses what they left.
 * Build: cc -O2 -g -pthread span_sigexit.c -o span_sigexit -lspanstat
 *
 * Usage: span_sigexit ROUNDS N: ROUNDS times, a thread records spans "w" in
 * a loop until SIGUSR1, whose handler calls pthread_exit(); then one last
 * thread records N spans "last".  Prints "rounds=R" on stdout.  Expected:
 * exactly N "last", however the earlier threads ended. */
#include <pthread.h>
#include <signal.h>
#include <spanstat.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_ulong iters;

static void on_usr1(int sig)
{
	(void)sig;
	pthread_exit(NULL);
}

static void *looper(void *arg)
{
	(void)arg;
	for (;;) {
		spanstat_begin("w");
		spanstat_end("w");
		atomic_fetch_add(&iters, 1);
	}
	return NULL;
}

static void *last(void *arg)
{
	unsigned long n = (unsigned long)arg;
	for (unsigned long i = 0; i < n; i++) {
		spanstat_begin("last");
		spanstat_end("last");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 50;
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	for (unsigned r = 0; r < rounds; r++) {
		pthread_t th;
		atomic_store(&iters, 0);
		pthread_create(&th, NULL, looper, NULL);
		while (atomic_load(&iters) < 2000)
			;
		pthread_kill(th, SIGUSR1);
		pthread_join(th, NULL);
	}
	pthread_t th;
	pthread_create(&th, NULL, last, (void *)n);
	pthread_join(th, NULL);
	printf("rounds=%u\n", rounds);
	return 0;
}
