/* span_text.c: names by text (spanstat_begin_text).  300 names "p%d"
 * formatted into one reused buffer, p<i> called i % 3 + 1 times, all inside
 * "work" begun by address and ended by text; then "work" by text ended by
 * address, texts that differ only after a NUL, the empty text, and
 * SPANSTAT_SCOPE_TEXT over a reused buffer ("s0" and "s1", twice each). */
#include <stdio.h>

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
	return 0;
}
