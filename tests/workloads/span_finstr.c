/* span_finstr.c: a known call tree for -finstrument-functions, static
 * functions included, for the span tests.
 * Build: cc -O2 -g -finstrument-functions span_finstr.c -o span_finstr
 * (no -lspanstat: spanstat preloads the library.)
 *
 * Call tree (noinline so -O2 keeps every call):
 *   main -> run 1x -> leaf_a 3x
 *                  -> mid 2x -> leaf_b 2x each (4 in all)
 *                  -> spin 1x (a ~20 ms busy loop, the hot frame)
 * leaf_a, leaf_b, mid, spin and run are static; main is not.  Folded stacks:
 * main;run;leaf_a  main;run;mid;leaf_b  main;run;mid  main;run;spin
 * main;run  main.  Exits 0. */
#include <time.h>

static volatile unsigned long sink;

static __attribute__((noinline)) void leaf_a(int i)
{
	sink += (unsigned long)i;
}

static __attribute__((noinline)) void leaf_b(int i)
{
	sink ^= (unsigned long)i;
}

static __attribute__((noinline)) void mid(int i)
{
	leaf_b(i);
	leaf_b(i + 1);
}

static __attribute__((noinline)) void spin(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 20000000L);
}

static __attribute__((noinline)) void run(void)
{
	for (int i = 0; i < 3; i++)
		leaf_a(i);
	for (int i = 0; i < 2; i++)
		mid(i);
	spin();
}

int main(void)
{
	run();
	return 0;
}
