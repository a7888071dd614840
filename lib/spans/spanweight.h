/* spanweight.h: what a tree writer counts for each node (--weight): self
 * wall time by default, or self CPU time, self off-CPU time, or the self
 * value of one of the run's span metrics (an event of --span-events,
 * allocations, bytes allocated).  The writers whose registry row takes a
 * weight (output.c: folded, pprof, the flame graph) each parse it at
 * finish, against the run's metrics. */
#ifndef SPANSTAT_SPANWEIGHT_H
#define SPANSTAT_SPANWEIGHT_H

#include <stdint.h>

#include "spanmetric.h"
#include "strtab.h"
#include "spantree.h"

enum spanweight_kind {
	SPAN_WEIGHT_WALL,
	SPAN_WEIGHT_CPU,
	SPAN_WEIGHT_OFF_CPU,
	SPAN_WEIGHT_VALUE, /* metric `index` */
	SPAN_WEIGHT_ARG,   /* the sums of typed argument `key` (spanargs.h) */
};

struct spanweight {
	enum spanweight_kind kind;
	unsigned index;
	uint32_t key; /* SPAN_WEIGHT_ARG: its strtab id */
};

/* The prefix of a weight by a typed argument: arg:KEY. */
#define SPANWEIGHT_ARG "arg:"

/* The metric (enum spanmetric_kind) the weight `name` needs: -1 for NULL,
 * "wall" and arg:KEY, SPANMETRIC_EVENT for any name that is not one of the fixed
 * ones (an event of --span-events, or nothing the run carries). */
int spanweight_metric(const char *name);
/* name: NULL or "wall", "cpu", "off-cpu", "allocs", "alloc-bytes", an
 * event of the run's metrics, or arg:KEY (a typed argument's key, looked up
 * in strings).  0, or -ENOENT when the run does not carry it (off-CPU time
 * unsupported here, no --span-allocs, an unknown event, a key no span had)
 * or -ENOTSUP when it carries it but cannot count it (an event not
 * supported). */
int spanweight_parse(const char *name, const struct spanmetrics *ms, const struct strtab *strings,
		     struct spanweight *out);
/* Node i's self weight. */
uint64_t spanweight_self(const struct spanweight *w, const struct span_tree *t, uint32_t i);

#endif
