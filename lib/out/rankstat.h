/* rankstat.h: a job's ranks side by side (spanstat report over the record
 * files of one job): for each counter, the wall time and each span path
 * (the union of every rank's paths, a rank without one counting 0), the
 * min, mean and max across ranks, the rank holding the max and the
 * imbalance (max - mean) / max, as likwid and Caliper report it.  A rank
 * whose results are lost (a damaged file) is left out of the counters and
 * the wall time, and one that did not count an event out of that event's:
 * each statistic says over how many ranks it is.  The summary and JSON
 * writers print it; nothing here prints. */
#ifndef SPANSTAT_RANKSTAT_H
#define SPANSTAT_RANKSTAT_H

#include <stdbool.h>

#include "report.h"

struct rank_stat {
	unsigned n; /* the ranks it is over; 0: none, the rest means nothing */
	double min, mean, max;
	long max_rank;	  /* the rank (as recorded) holding the max */
	double imbalance; /* (max - mean) / max; 0 when max is 0 */
};

struct rank_summary {
	unsigned nranks;
	unsigned nlost;				/* ranks without results (nruns 0) */
	struct rank_stat *counter;		/* evl->n */
	bool *counted;				/* evl->n: some rank counted it */
	struct rank_stat elapsed;		/* wall time, ns */
	struct span_tree paths;			/* the union of the ranks' paths (names,
						 * parents; node[0] the root) */
	struct rank_stat *total, *self, *count; /* per node of paths */
};

/* 0, or -ENOMEM.  r->ranks must be set. */
int rankstat_build(const struct report *r, struct rank_summary *s);
void rankstat_release(struct rank_summary *s);

#endif
