/* span_swlost.c: switches spanstat cannot place, for the on/off-CPU checks.
 * Build: cc -O2 span_swlost.c -o span_swlost -lspanstat
 *
 *   span_swlost N
 * Inside "work", stops the spanstat process named in $SPANSTAT_PIPE
 * (/proc/PID/fd/N), then makes N "nap" spans that each sleep 20 us, so
 * that an aggregating thread's notes of its switched spans outgrow its
 * ring and some are lost; then sends SIGCONT and ends "work".  Without
 * $SPANSTAT_PIPE it stops nobody.  Exits 0, or 2 on a bad argument. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <spanstat.h>

#include "reader.h"

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	long n = atol(argv[1]);
	int reader = reader_pid();
	spanstat_begin("work");
	reader_signal(reader, SIGSTOP);
	for (long i = 0; i < n; i++) {
		struct timespec ts = {0, 20000};
		spanstat_begin("nap");
		nanosleep(&ts, NULL);
		spanstat_end("nap");
	}
	reader_signal(reader, SIGCONT);
	spanstat_end("work");
	return 0;
}
