/* spanmetric.h: the values every span carries besides its wall time (issue
 * "what each span cost"): its off-CPU time, the events of --span-events and
 * the allocation counts of --span-allocs.  A run has one list; every span's
 * values come in that order, as differences of per-thread cumulative values
 * taken at its begin and its end, so a node of a call tree holds their sums
 * and its self value is its total minus its children's, like wall time.
 * Writers iterate the list for values and names; the summary, JSON,
 * Perfetto, pprof and SVG writers still name the kinds where they choose a
 * unit or a label (a metric table that carries those is still to come). */
#ifndef SPANSTAT_SPANMETRIC_H
#define SPANSTAT_SPANMETRIC_H

#include <stdbool.h>
#include <stdint.h>

#define SPANMETRIC_MAX 16 /* values per span */

enum spanmetric_kind {
	SPANMETRIC_OFF_CPU,	/* ns the thread was switched out (spanstat joins the
				 * kernel's switch records with the span's times) */
	SPANMETRIC_EVENT,	/* a perf event the target's thread counts itself */
	SPANMETRIC_ALLOCS,	/* allocations (--span-allocs) */
	SPANMETRIC_FREES,	/* frees */
	SPANMETRIC_ALLOC_BYTES, /* bytes requested */
	SPANMETRIC_FREE_BYTES,	/* bytes of the blocks freed */
};

struct spanmetric {
	enum spanmetric_kind kind;
	const char *name; /* as the user wrote it (events) or its JSON key */
	bool supported;	  /* the event can be counted here (else "<not supported>") */
	bool time;	  /* its values are ns (off-CPU, task-clock, cpu-clock) */
};

struct spanmetrics {
	unsigned n;
	struct spanmetric m[SPANMETRIC_MAX];
	int off_cpu;	       /* index of SPANMETRIC_OFF_CPU, or -1 */
	unsigned first_target; /* values from here on come from the target */
};

/* Index of the metric of that kind (any name for events), or -1. */
static inline int spanmetric_find(const struct spanmetrics *ms, enum spanmetric_kind kind)
{
	for (unsigned i = 0; ms && i < ms->n; i++)
		if (ms->m[i].kind == kind)
			return (int)i;
	return -1;
}

/* Index of the on/off-CPU split when the run measured it, or -1. */
static inline int spanmetric_off_cpu(const struct spanmetrics *ms)
{
	int i = spanmetric_find(ms, SPANMETRIC_OFF_CPU);
	return i >= 0 && ms->m[i].supported ? i : -1;
}

#endif
