/* span_die.c: a target that dies inside open spans, for the span tests.
 * Build: cc -O2 -g span_die.c -o span_die -lspanstat
 *
 *   span_die abort   "outer" 1x containing "inner" 1x and "done" 1x (closed);
 *                    dies by abort() (SIGABRT) with "outer" and "inner" open
 *   span_die segv    the same, dies from a SIGSEGV (a write through NULL)
 *   span_die term    the same, then raise(SIGTERM)
 *   span_die exit    the same, then exit(3) with the spans open
 * With no argument: abort.  Exit: killed by the signal (or status 3). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <spanstat.h>

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "abort";
	spanstat_begin("outer");
	spanstat_begin("done");
	spanstat_end("done");
	spanstat_begin("inner");
	if (strcmp(how, "segv") == 0) {
		volatile int *p = NULL;
		*p = 1;
	} else if (strcmp(how, "term") == 0) {
		raise(SIGTERM);
	} else if (strcmp(how, "exit") == 0) {
		exit(3);
	}
	abort();
}
