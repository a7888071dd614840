/* span_filter.c: a known tree of API spans for the filter tests.
 * Build: cc -O2 -g span_filter.c -o span_filter -lspanstat
 *
 *   main 1x -> short 100x (empty)
 *           -> long 2x (each spins 60 ms, around one empty "lshort")
 *           -> keep 1x -> a 1x -> b 1x (all empty)
 *           -> skip 1x -> x 1x (empty)
 *           -> instant "tick" once inside keep;a and once inside skip
 * Exits 0. */
#include <spanstat.h>
#include <time.h>

static void spin(long ns)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

int main(void)
{
	spanstat_begin("main");
	for (int i = 0; i < 100; i++) {
		spanstat_begin("short");
		spanstat_end("short");
	}
	for (int i = 0; i < 2; i++) {
		spanstat_begin("long");
		spin(30000000);
		spanstat_begin("lshort");
		spanstat_end("lshort");
		spin(30000000);
		spanstat_end("long");
	}
	spanstat_begin("keep");
	spanstat_begin("a");
	spanstat_instant("tick");
	spanstat_begin("b");
	spanstat_end("b");
	spanstat_end("a");
	spanstat_end("keep");
	spanstat_begin("skip");
	spanstat_instant("tick");
	spanstat_begin("x");
	spanstat_end("x");
	spanstat_end("skip");
	spanstat_end("main");
	return 0;
}
