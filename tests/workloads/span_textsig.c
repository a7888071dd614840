/* span_textsig.c: names by text from a signal handler that interrupts the
 * thread's own calls by text (a lookup, a first copy, the cache's update).
 * The thread records "m0".."m63" in turns, 64 x ROUNDS pairs, formatted into
 * one buffer, each name new in its first round; SIGPROF every 50 us of CPU
 * records "h0".."h49" the same way.  Runs until the handler ran 100 times
 * and ROUNDS (default 2000) rounds are done; writes the handler's runs to
 * the file argv[1]. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "spanstat.h"

static volatile sig_atomic_t runs;

static void on_prof(int sig)
{
	(void)sig;
	char buf[16];
	int n = runs % 50, k = 1;
	buf[0] = 'h';
	if (n >= 10)
		buf[k++] = (char)('0' + n / 10);
	buf[k++] = (char)('0' + n % 10);
	spanstat_begin_text(buf, (size_t)k);
	spanstat_end_text(buf, (size_t)k);
	runs++;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	long rounds = argc > 2 ? atol(argv[2]) : 2000;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = {{0, 50}, {0, 50}};
	setitimer(ITIMER_PROF, &it, NULL);
	char buf[32];
	long done = 0;
	while (done < rounds || runs < 100) {
		for (int i = 0; i < 64; i++) {
			int n = snprintf(buf, sizeof buf, "m%d", i);
			spanstat_begin_text(buf, (size_t)n);
			spanstat_end_text(buf, (size_t)n);
		}
		done++;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_PROF, &off, NULL);
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fprintf(f, "%d %ld\n", (int)runs, done);
	return fclose(f) != 0;
}
