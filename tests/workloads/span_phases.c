/* span_phases.c: a run whose span names tell where in it they came, for the
 * --keep-last tests.
 * Build: cc -O2 -g span_phases.c -o span_phases -lspanstat
 *
 *   span_phases PHASES PAIRS [GO STATUS]
 *
 * One span "run" around everything; in it PHASES spans "phase0000",
 * "phase0001", ... in order, each holding PAIRS spans "pair": 1 + PHASES *
 * (1 + PAIRS) spans in all.  With GO, after half the phases it creates
 * GO.ready and waits (at most 60 s) until GO exists, then goes on; it exits
 * with STATUS (default 0). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spanstat.h>

static void wait_for(const char *go)
{
	char ready[4096];
	snprintf(ready, sizeof ready, "%s.ready", go);
	int fd = open(ready, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 12000 && access(go, F_OK) != 0; i++)
		nanosleep(&(struct timespec){0, 5000000}, NULL);
}

int main(int argc, char **argv)
{
	long phases = argc > 1 ? atol(argv[1]) : 100;
	long pairs = argc > 2 ? atol(argv[2]) : 1000;
	const char *go = argc > 3 ? argv[3] : NULL;
	int status = argc > 4 ? atoi(argv[4]) : 0;
	char name[32];
	spanstat_begin("run");
	for (long p = 0; p < phases; p++) {
		if (go && p == phases / 2)
			wait_for(go);
		int n = snprintf(name, sizeof name, "phase%04ld", p);
		spanstat_begin_text(name, (size_t)n);
		for (long i = 0; i < pairs; i++) {
			spanstat_begin("pair");
			spanstat_end("pair");
		}
		spanstat_end_text(name, (size_t)n);
	}
	spanstat_end("run");
	return status;
}
