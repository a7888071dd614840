/* span_first.c: empty spans that are a thread's first event, or a name's
 * first use, for the test that the recorder's setup (a thread's buffers, a
 * name's definition) is not counted in them.
 * Build: cc -O2 -g -pthread span_first.c -o span_first -lspanstat
 *
 * Usage: span_first THREADS: each thread (one after the other) begins and
 * ends "first" at once (its first event), then "named-<i>" (a text at an
 * address no thread used before: a name defined there).  Exits 0. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <spanstat.h>

static char names[256][16];

static void *run(void *arg)
{
	const char *name = arg;
	spanstat_begin("first");
	spanstat_end("first");
	spanstat_begin(name);
	spanstat_end(name);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	if (n < 1 || n > 256)
		return 2;
	for (int i = 0; i < n; i++) {
		snprintf(names[i], sizeof names[i], "named-%d", i);
		pthread_t th;
		if (pthread_create(&th, NULL, run, names[i]) != 0 || pthread_join(th, NULL) != 0)
			return 2;
	}
	return 0;
}
