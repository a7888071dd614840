/* touch.c: a workload with a known number of page faults: maps N MiB
 * (default 64), without huge pages, and writes one byte in each 4 KiB page,
 * so it faults at least N*256 times.  Usage: touch [MIB] [SPIN_MS] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	long spin_ms = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	size_t len = mib << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	madvise(p, len, MADV_NOHUGEPAGE);
	for (size_t off = 0; off < len; off += 4096)
		p[off] = (char)off;
	/* optionally burn CPU so task-clock and user time are measurable */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	volatile unsigned long x = 0;
	do {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i * 2654435761u;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < spin_ms);
	return (int)(p[len - 4096] & 0);
}
