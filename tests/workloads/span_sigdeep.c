/* span_sigdeep.c: a timer's handler that nests spans deeper than the
 * recorder's queue for handlers holds, while the thread records spans in a
 * loop (a handler that interrupts a recorder call has its events queued).
 * Build: cc -O2 -g span_sigdeep.c -o span_sigdeep -lspanstat
 *
 * Usage: span_sigdeep N DEPTH: "main" holds N "w"; a SIGALRM handler at
 * 2 kHz opens DEPTH nested "h" and closes them.  Prints "ticks=T" on stdout.
 * Expected: N "w", every one right under main; an "h" the queue had no
 * room for is dropped whole (its begin and its end), counted. */
#include <signal.h>
#include <spanstat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;
static int depth;

static void on_alarm(int sig)
{
	(void)sig;
	ticks++;
	for (int i = 0; i < depth; i++)
		spanstat_begin("h");
	for (int i = 0; i < depth; i++)
		spanstat_end("h");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	depth = argc > 2 ? atoi(argv[2]) : 1000;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	spanstat_begin("main");
	struct itimerval it = {{0, 500}, {0, 500}};
	setitimer(ITIMER_REAL, &it, NULL);
	for (long i = 0; i < n; i++) {
		spanstat_begin("w");
		spanstat_end("w");
	}
	sigset_t set; /* no tick after main */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	spanstat_end("main");
	printf("ticks=%d\n", (int)ticks);
	return 0;
}
