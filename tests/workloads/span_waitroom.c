/* span_waitroom.c: a wait for room that ends well, for --compensate.
 * Build: cc -O2 span_waitroom.c -o span_waitroom -lspanstat
 *
 *   span_waitroom N MS
 * Inside "outer", then "mid", stops the spanstat process named in
 * $SPANSTAT_PIPE (/proc/PID/fd/N) and has a helper child wake it MS ms later
 * (under the recorder's 100 ms limit on a wait), while it records N "x"
 * spans in "mid", so that its ring fills and it waits, then goes on without
 * a drop; then ends "mid" and records N "y" spans in "outer".  Without
 * $SPANSTAT_PIPE it stops nobody.  Exits 0, or 2 on bad arguments. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <spanstat.h>

#include "reader.h"

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long n = atol(argv[1]), ms = atol(argv[2]);
	if (n < 0 || ms < 0 || ms > 1000)
		return 2;
	int reader = reader_pid();
	spanstat_begin("outer");
	spanstat_begin("mid");
	reader_stop_for(reader, ms);
	for (long i = 0; i < n; i++) {
		spanstat_begin("x");
		spanstat_end("x");
	}
	spanstat_end("mid");
	for (long i = 0; i < n; i++) {
		spanstat_begin("y");
		spanstat_end("y");
	}
	spanstat_end("outer");
	while (wait(NULL) > 0)
		;
	return 0;
}
