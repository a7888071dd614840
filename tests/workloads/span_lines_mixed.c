/* span_lines_mixed.c: one thread that records spans through libspanstat
 * and writes line-protocol spans too.  "lib-outer" begins (in the thread's
 * ring, which spanstat reads later, in batches), then a line begins
 * "line-mid" and reaches spanstat at once: spanstat sees line-mid first and
 * lib-outer, which began before it, only when the ring is read (at exit).
 * Nesting lib-outer under line-mid would be out of time order: counted.
 * Usage: span_lines_mixed (under spanstat, SPANSTAT_LINES set). */
#define _GNU_SOURCE
#include <spanstat.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(void)
{
	const char *path = getenv("SPANSTAT_LINES");
	FILE *f = path ? fopen(path, "a") : NULL;
	/* the ring claimed and read before: lib-outer's begin is no first event */
	for (int i = 0; i < 100; i++) {
		spanstat_begin("warm");
		spanstat_end("warm");
	}
	usleep(100000);
	spanstat_begin("lib-outer");
	if (f) {
		fprintf(f, "B %d %d %llu line-mid\n", getpid(), gettid(), now_ns());
		fflush(f);
	}
	usleep(200000);
	spanstat_end("lib-outer");
	return 0;
}
