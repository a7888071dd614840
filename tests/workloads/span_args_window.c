/* span_args_window.c: typed arguments across a --keep-last window's start,
 * for args.bats.  Span "outer" gets u64 "early" 1, then N spans "filler"
 * (argv[1]) overwrite its begin in a small window, then "outer" gets u64
 * "late" 7 and ends; span "next" follows with u64 "own" 3, and span
 * "after" with no argument.  "late" belongs to "outer", cut at the window's
 * start: it must be left out with it, never given to the thread or to a
 * later span. */
#include <spanstat.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	spanstat_begin("outer");
	spanstat_arg_u64("early", 1);
	for (long i = 0; i < n; i++) {
		spanstat_begin("filler");
		spanstat_end("filler");
	}
	spanstat_arg_u64("late", 7);
	spanstat_end("outer");
	spanstat_begin("next");
	spanstat_arg_u64("own", 3);
	spanstat_end("next");
	spanstat_begin("after");
	spanstat_end("after");
	return 0;
}
