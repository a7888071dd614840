/* diff.h: two sessions compared, quantity by quantity, with significance
 * (spanstat diff).  Each side is a spanstat JSON document (spanstat-json(5));
 * its runs (-r) are the samples: every counter of .runs[], the rusage of
 * each run, and every span path's count, total, self time and per-span
 * values summed over the threads of each run (.spans.threads[].run).  An
 * item's p is Welch's t-test's or, with 8 or more runs a side, the larger
 * of it and Mann-Whitney U's; since a session has many items, the p-values
 * are adjusted for their number (Holm-Bonferroni) and a change is
 * significant when its adjusted p is below alpha, so that a comparison of
 * two sessions with no difference fails at most at rate alpha.  A change
 * makes things worse when the new mean is higher (more time, more events)
 * by more than the threshold percent. */
#ifndef SPANSTAT_DIFF_H
#define SPANSTAT_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "spantree.h"
#include "strtab.h"

enum diff_kind {
	DIFF_COUNTER, /* an event of -e, as the summary shows its value */
	DIFF_RUSAGE,  /* a field of .runs[].rusage */
	DIFF_SPAN,    /* a span path's field */
};

enum diff_verdict {
	DIFF_NO_TEST, /* fewer than 2 runs a side */
	DIFF_SAME,    /* not significant, or within the threshold */
	DIFF_WORSE,
	DIFF_BETTER,
};

struct diff_item {
	enum diff_kind kind;
	const char *name;  /* the event, rusage field, or span path (frames joined by ';') */
	const char *field; /* a span path's: count, total_ns, self_ns, cpu_ns... ; else "" */
	const char *unit;  /* as the JSON gives it ("msec", "ns", "") */
	double *v[2];	   /* per run of each side (old, new); NAN: not counted in that run */
	size_t n[2];	   /* samples that are numbers */
	double mean[2], sd[2];
	double change_pct; /* (new - old) / old, in percent; NAN: old is 0 */
	double welch_p;	   /* NAN: no test */
	double mwu_p;	   /* NAN: fewer than 8 runs a side */
	double p;	   /* the larger of the two: the item's p (NAN: no test) */
	double holm_p;	   /* p adjusted for every item tested (Holm), NAN: no test */
	bool significant;  /* holm_p < alpha */
	enum diff_verdict verdict;
};

struct diff {
	struct diff_item *item; /* in order of first appearance */
	size_t n, cap;
	unsigned runs[2];
	struct strtab keys, text; /* private: item lookup; names */
	size_t *by_key;		  /* private: key id -> item + 1 */
	size_t nby_key;
};

int diff_init(struct diff *d);
/* Adds side (0 old, 1 new) from JSON text.  0, or -EINVAL with *cause
 * saying what is wrong with it ("not JSON", "not a spanstat document"), or
 * -ENOMEM. */
int diff_add(struct diff *d, int side, const char *json, size_t len, char **cause);
/* The means, changes, tests and verdicts of every item. */
void diff_compare(struct diff *d, double alpha, double threshold_pct);
void diff_release(struct diff *d);
/* The span paths as one tree for a differential flame graph: each node's
 * self time the new mean (total_ns and child_ns as a span tree has them),
 * names interned in names, and old_self[node] the old mean (malloc'd).
 * Call after diff_compare.  0 or -ENOMEM; release t with span_tree_release. */
int diff_tree(const struct diff *d, struct span_tree *t, struct strtab *names, uint64_t **old_self);

#endif
