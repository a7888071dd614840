/* span_forkwait.c: a wait for room, then fork children, for the wait's
 * accounting.  Build: cc -O2 span_forkwait.c -o span_forkwait -lspanstat
 *
 *   span_forkwait N K
 * Inside "stall", stops the spanstat process named in $SPANSTAT_PIPE
 * (/proc/PID/fd/N) and has a helper child wake it 300 ms later, while it
 * records N "x" spans, so that its ring fills and it waits; then forks K
 * children one after the other, each of which records one "child" span and
 * exits.  The children never wait: the waits spanstat reports are the
 * parent's alone, at most its elapsed time.  Exits 0, or 2 on bad arguments. */
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
	long n = atol(argv[1]), k = atol(argv[2]);
	int reader = reader_pid();
	spanstat_begin("stall");
	reader_stop_for(reader, 300);
	for (long i = 0; i < n; i++) {
		spanstat_begin("x");
		spanstat_end("x");
	}
	spanstat_end("stall");
	while (wait(NULL) > 0)
		;
	for (long i = 0; i < k; i++) {
		pid_t p = fork();
		if (p == 0) {
			spanstat_begin("child");
			spanstat_end("child");
			exit(0);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	return 0;
}
