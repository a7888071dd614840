/* span_stall.c: stops spanstat while it records, so that the span pipe fills
 * and events are dropped, then lets it go on, for the span tests.
 * Build: cc -O2 -g span_stall.c -o span_stall -lspanstat
 *
 *   span_stall N M
 * Sends SIGSTOP to the spanstat process named in $SPANSTAT_PIPE
 * (/proc/PID/fd/N), records N x "stalled" (far more than the pipe holds when
 * N is large), sends it SIGCONT, sleeps 100 ms so that it drains the pipe,
 * then records "resumed" 1x containing M x "after".  Without $SPANSTAT_PIPE
 * (not under spanstat) it stops nobody.  Exits 0, or 2 on bad arguments. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <spanstat.h>

#include "reader.h"

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long n = atol(argv[1]), m = atol(argv[2]);
	int reader = reader_pid();
	reader_signal(reader, SIGSTOP);
	for (long i = 0; i < n; i++) {
		spanstat_begin("stalled");
		spanstat_end("stalled");
	}
	reader_signal(reader, SIGCONT);
	struct timespec ts = {0, 100 * 1000 * 1000};
	while (nanosleep(&ts, &ts) != 0)
		;
	spanstat_begin("resumed");
	for (long i = 0; i < m; i++) {
		spanstat_begin("after");
		spanstat_end("after");
	}
	spanstat_end("resumed");
	return 0;
}
