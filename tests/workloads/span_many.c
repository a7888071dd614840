/* span_many.c: many names under one parent, so the aggregating tree finds
 * a node's children through its hash (rec_agg_child) rather than a scan.
 * Usage: span_many N.  Inside "a" and then inside "b", names "n0".."n<N-1>"
 * by text, twice each; n<i> with i % 7 == 0 holds "inner" once per call.
 * With N = 100000 the tree (RING_AGG_NODES) fills: what does not fit is
 * counted untracked.  Exits 0. */
#include <stdio.h>
#include <stdlib.h>

#include "spanstat.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	const char *parents[] = {"a", "b"};
	char buf[32];
	for (int p = 0; p < 2; p++) {
		spanstat_begin(parents[p]);
		for (int round = 0; round < 2; round++)
			for (int i = 0; i < n; i++) {
				int len = snprintf(buf, sizeof buf, "n%d", i);
				spanstat_begin_text(buf, (size_t)len);
				if (i % 7 == 0) {
					spanstat_begin("inner");
					spanstat_end("inner");
				}
				spanstat_end_text(buf, (size_t)len);
			}
		spanstat_end(parents[p]);
	}
	return 0;
}
