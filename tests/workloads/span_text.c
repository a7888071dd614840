/* span_text.c: names by text (spanstat_begin_text).  300 names "p%d"
 * formatted into one reused buffer, p<i> called i % 3 + 1 times, all inside
 * "work" begun by address and ended by text; then "work" by text ended by
 * address, texts that differ only after a NUL, the empty text,
 * SPANSTAT_SCOPE_TEXT over a reused buffer ("s0" and "s1", twice each), and
 * "edge" given with len SIZE_MAX, its NUL the last byte before an unmapped
 * page (read as strnlen reads it). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spanstat.h"

int main(void)
{
	char buf[32];
	spanstat_begin("work");
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 300; i++) {
			int n = snprintf(buf, sizeof buf, "p%d", i);
			if (round <= i % 3) {
				spanstat_begin_text(buf, (size_t)n);
				spanstat_end_text(buf, (size_t)n);
			}
		}
	spanstat_end_text("work", 4);
	spanstat_begin_text("work!", 4);
	spanstat_end("work");
	spanstat_begin_text("nul\0a", 5);
	spanstat_end_text("nul\0b", 5);
	spanstat_begin_text("x", 0);
	spanstat_end_text("", 0);
	for (int i = 0; i < 4; i++) {
		int n = snprintf(buf, sizeof buf, "s%d", i % 2);
		SPANSTAT_SCOPE_TEXT(buf, (size_t)n);
	}
	long page = sysconf(_SC_PAGESIZE);
	char *two = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (two == MAP_FAILED || munmap(two + page, (size_t)page) != 0)
		return 1;
	char *edge = two + page - sizeof "edge";
	memcpy(edge, "edge", sizeof "edge");
	spanstat_begin_text(edge, SIZE_MAX);
	spanstat_end_text(edge, SIZE_MAX);
	return 0;
}
