/* spanmetric.h: the values every span carries besides its wall time (issue
 * "what each span cost"): its off-CPU time, the events of --span-events and
 * the allocation counts of --span-allocs.  A run has one list; every span's
 * values come in that order, as differences of per-thread cumulative values
 * taken at its begin and its end, so a node of a call tree holds their sums
 * and its self value is its total minus its children's, like wall time.
 * How each kind shows (its column, JSON key, pprof sample type, unit) is a
 * row of the metric table (spanmetric.c): writers iterate the run's list,
 * ask the table, and never name a kind.  A new kind is its collector and
 * one row. */
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
#define SPANMETRIC_KIND_LAST SPANMETRIC_FREE_BYTES

enum spanmetric_unit {
	SPANMETRIC_COUNT,
	SPANMETRIC_NS,
	SPANMETRIC_BYTES,
};

/* How every writer shows a metric of one kind: a row of the table. */
struct spanmetric_info {
	const char *column;	   /* the span table's head before "/call" (NULL: the
				    * metric's name) */
	const char *key;	   /* its own key on a JSON node, always there (null
				    * when not measured); NULL: under "metrics", by name */
	const char *sample;	   /* its pprof sample type (NULL: the metric's name) */
	enum spanmetric_unit unit; /* a metric with `time` set is in ns whatever this says */
	bool split;		   /* the on/off-CPU split of wall time: shown as CPU and
				    * off-CPU time, never as a value of its own */
	bool track;		   /* a per-thread counter track (Perfetto) */
	int net_of;		   /* the span table shows that kind's value less this
				    * one ("net": bytes still in use); -1: its own */
};

/* The metric table, indexed by enum spanmetric_kind. */
extern const struct spanmetric_info spanmetric_table[];

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

static inline const struct spanmetric_info *spanmetric_info(const struct spanmetric *m)
{
	return &spanmetric_table[m->kind];
}

static inline enum spanmetric_unit spanmetric_unit(const struct spanmetric *m)
{
	return m->time ? SPANMETRIC_NS : spanmetric_info(m)->unit;
}

/* Index of the metric that splits wall time (its row's `split`), or -1. */
static inline int spanmetric_split(const struct spanmetrics *ms)
{
	for (unsigned i = 0; ms && i < ms->n; i++)
		if (spanmetric_info(&ms->m[i])->split)
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
