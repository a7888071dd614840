/* uprobe_calls.c: calls of known number, for uprobe:PATH:SYMBOL.
 * usage: uprobe_calls N [M]
 *   calls uprobe_target() N times (a function of its own, never inlined)
 *   and malloc() M times itself (each block freed at once), so counts of
 *   either can be checked against what was asked. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline, used)) int uprobe_target(int x)
{
	__asm__ volatile("" ::: "memory"); /* a body the compiler keeps */
	return x * 3 + 1;
}

/* called through a volatile pointer: no malloc/free pair is elided */
static void *(*volatile uprobe_malloc)(size_t) = malloc;

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: uprobe_calls N [M]\n");
		return 2;
	}
	long n = strtol(argv[1], NULL, 10), m = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	int (*volatile target)(int) = uprobe_target;
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += target((int)i);
	for (long i = 0; i < m; i++)
		free(uprobe_malloc(64 + (size_t)(i % 64)));
	return sum == -1;
}
