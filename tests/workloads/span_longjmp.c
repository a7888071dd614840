/* span_longjmp.c: spans skipped by longjmp and siglongjmp, for the longjmp
 * tests.
 * Build: cc -O2 -g span_longjmp.c -o span_longjmp -lspanstat
 *
 *   span_longjmp jump    10 rounds of "round", each setjmp()s, then recurses
 *                        5 levels of "level" (each spins about 20 us before
 *                        going deeper) and longjmp()s from the deepest one
 *                        back to the round, which then records "after" once
 *   span_longjmp sig     the same with sigsetjmp() and siglongjmp()
 *   span_longjmp ok      the same work without errors: every level returns
 *   span_longjmp mismatch  as jump, but each round first begins "a" and "b"
 *                        and ends "a" (which closes "b" too, unfinished)
 * In every mode: 10 "round", 50 "level", 10 "after", each "level" nested in
 * the one above it, and no span is left open.  Built with -DNO_API (and
 * -finstrument-functions, without -lspanstat) only the functions make spans:
 * main, then level nested 5 deep under it 10 times, spin under each. */
#include <setjmp.h>
#ifdef NO_API
#define spanstat_begin(name) ((void)(name))
#define spanstat_end(name) ((void)(name))
#else
#include <spanstat.h>
#endif
#include <string.h>
#include <time.h>

static jmp_buf env;
static sigjmp_buf senv;
static int mode; /* 0 ok, 1 longjmp, 2 siglongjmp, 3 longjmp after a mismatched end */

static __attribute__((noinline)) void spin(long ns)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static __attribute__((noinline)) void level(int n)
{
	spanstat_begin("level");
	spin(20000);
	if (n > 1)
		level(n - 1);
	else if (mode == 1 || mode == 3)
		longjmp(env, 1);
	else if (mode == 2)
		siglongjmp(senv, 1);
	spanstat_end("level");
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "jump";
	mode = strcmp(m, "ok") == 0	    ? 0
	       : strcmp(m, "sig") == 0	    ? 2
	       : strcmp(m, "mismatch") == 0 ? 3
					    : 1;
	for (int i = 0; i < 10; i++) {
		spanstat_begin("round");
		if (mode == 2 ? sigsetjmp(senv, 1) == 0 : setjmp(env) == 0) {
			if (mode == 3) {
				spanstat_begin("a");
				spanstat_begin("b");
				spanstat_end("a");
			}
			level(5);
		}
		spanstat_begin("after");
		spanstat_end("after");
		spanstat_end("round");
	}
	return 0;
}
