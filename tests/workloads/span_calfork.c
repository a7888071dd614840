/* span_calfork.c: forks while other threads take the library's samples of
 * the events' cost, for the test that a sample cut short by a fork leaves
 * nothing in the child (issue 20, item 13).
 * Build: cc -O2 -g -pthread span_calfork.c -o span_calfork -lspanstat
 *
 * span_calfork FORKS PAIRS THREADS: THREADS threads record "bg" pairs until
 * the end; the main thread FORKS times forks a child that records PAIRS
 * "child" pairs and exits, and waits for it inside "forker".  Exact counts:
 * "forker" FORKS, "child" FORKS x PAIRS; "bg" varies.  Exits 0. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spanstat.h>

static volatile int stop;
static volatile unsigned long sink;

static void *background(void *arg)
{
	(void)arg;
	while (!stop)
		for (int i = 0; i < 1000; i++) {
			spanstat_begin("bg");
			sink++;
			spanstat_end("bg");
		}
	return NULL;
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 200;
	long pairs = argc > 2 ? atol(argv[2]) : 140000;
	int nt = argc > 3 ? atoi(argv[3]) : 2;
	pthread_t th[16];
	if (nt > 16)
		nt = 16;
	for (int i = 0; i < nt; i++)
		if (pthread_create(&th[i], NULL, background, NULL) != 0)
			return 1;
	for (int f = 0; f < forks; f++) {
		pid_t p = fork();
		if (p < 0)
			return 1;
		if (p == 0) {
			for (long i = 0; i < pairs; i++) {
				spanstat_begin("child");
				sink++;
				spanstat_end("child");
			}
			exit(0);
		}
		spanstat_begin("forker");
		waitpid(p, NULL, 0);
		spanstat_end("forker");
	}
	stop = 1;
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	return 0;
}
