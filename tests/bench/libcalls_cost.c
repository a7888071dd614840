/* libcalls_cost.c: what a library call through the PLT costs, for
 * libcalls-bench: N calls of lc_nop (a shared library's function that
 * returns its argument plus one) through the PLT, then N through a pointer
 * to it (a GOT entry that --lib-calls and uftrace leave alone: the same
 * call, never traced), in the same process, alternating in rounds.  Prints
 * "plt NS" and "ptr NS", ns per call.
 * Build: cc -O2 libcalls_cost.c -o libcalls_cost -L. -llibcalls_nop
 * (libcalls_nop.c below the main program, with -DLC_NOP_LIB -fPIC -shared) */
#ifdef LC_NOP_LIB
int lc_nop(int x)
{
	return x + 1;
}
#else
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int lc_nop(int x);
int (*volatile lc_ptr)(int) = lc_nop;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	double plt = 0, ptr = 0;
	volatile int sink = 0;
	for (int round = 0; round < 10; round++) {
		int (*f)(int) = lc_ptr;
		double a = now();
		for (long i = 0; i < n / 10; i++)
			sink = lc_nop(sink);
		double b = now();
		for (long i = 0; i < n / 10; i++)
			sink = f(sink);
		double c = now();
		plt += b - a;
		ptr += c - b;
	}
	printf("plt %.3f\nptr %.3f\n", plt / n, ptr / n);
	return 0;
}
#endif
