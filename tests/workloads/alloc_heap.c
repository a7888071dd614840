/* alloc_heap.c: what glibc's heap looks like to the program, for
 * spanvalues.bats: after a span and a -finstrument-functions function (the
 * recorder's first work: its thread, its calibration, under the filters a
 * symbol lookup), the number of free chunks in malloc's bins and whether a
 * block of 1 MiB is mmapped (glibc's threshold, which rises when an mmapped
 * block is freed).  Run with and without spanstat, the line must be the
 * same: spanstat leaves nothing in the program's heap that its blocks could
 * be cut from.  Build: cc -finstrument-functions alloc_heap.c -lspanstat */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include <spanstat.h>

__attribute__((noinline)) void work(void)
{
	__asm__ volatile("");
}

int main(void)
{
	spanstat_begin("first");
	work();
	spanstat_end("first");
	struct mallinfo2 a = mallinfo2();
	void *volatile big = malloc(1 << 20);
	struct mallinfo2 b = mallinfo2();
	printf("free chunks %zu, in fastbins %zu; 1 MiB mmapped %d\n", a.ordblks, a.smblks,
	       (int)(b.hblks - a.hblks));
	free(big);
	return 0;
}
