/* span_uprobe.c: spans that call a function a known number of times, for
 * --span-events=uprobe:PATH:SYMBOL.
 * usage: span_uprobe K
 *   calls    calls uprobe_target() K times
 *   none     calls nothing
 *   outer    holds one call of its own around "calls" (K more inside) */
#include <stdlib.h>

#include <spanstat.h>

__attribute__((noinline, used)) int uprobe_target(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

int main(int argc, char **argv)
{
	long k = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	int (*volatile target)(int) = uprobe_target;
	long sum = 0;
	spanstat_begin("outer");
	sum += target(-1);
	spanstat_begin("calls");
	for (long i = 0; i < k; i++)
		sum += target((int)i);
	spanstat_end("calls");
	spanstat_begin("none");
	volatile long x = 0;
	for (long i = 0; i < k; i++)
		x += i;
	spanstat_end("none");
	spanstat_end("outer");
	return sum == -1;
}
