/* metrics.h: the derived metric perf stat prints beside an event (CPUs
 * utilized, insn per cycle, miss rates, per-second rates), computed from the
 * other events of the same list when both inputs were counted. */
#ifndef SPANSTAT_METRICS_H
#define SPANSTAT_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "counters.h"
#include "evlist.h"

struct metric {
	bool valid;
	double value;
	char unit[32];	/* "CPUs utilized", "insn per cycle", "K/sec", "of all branches" ... */
	const char *id; /* machine name: "cpus_utilized", "ipc", "rate_per_sec", "miss_ratio" ... */
	bool percent;	/* value is a percentage (perf prints "%7.2f%%") */
	int decimals;	/* 3 ("%8.3f") or 2 ("%7.2f ", insn per cycle) */
};

/* out[i] for every event of evl; elapsed_ns is the run's (or interval's) wall time. */
void metrics_compute(const struct evlist *evl, const struct count *c, double elapsed_ns,
		     struct metric *out);

#endif
