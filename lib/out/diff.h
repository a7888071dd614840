/* diff.h: two sessions compared quantity by quantity, as a gate a CI can
 * trust (spanstat diff, spanstat-diff(1)).
 *
 * Each side is a spanstat JSON document (spanstat-json(5)) whose runs (-r)
 * are the samples: every counter of .runs[], the rusage of each run, and
 * for every span path its count, total, self, on- and off-CPU time and
 * per-span values, summed over the threads of each run
 * (.spans.threads[].run).  A document is read one run and one thread at a
 * time, from a window sliding over its text: what is kept is the samples,
 * never the whole text or parse tree.
 *
 * diff_compare then, in this order:
 * - what one side collected and the other did not (span paths, an event,
 *   a span value) is not comparable: a struct diff_gap, and not compared;
 * - a quantity without variance on both sides (2 runs or more each) is
 *   compared exactly: it changed, or it did not;
 * - the others get a p: Welch's t-test's or, with 8 or more runs a side,
 *   the larger of it and Mann-Whitney U's;
 * - the primary family (every counter, the elapsed time, and the self time
 *   of the primary_paths span paths with the most self time in OLD, of
 *   those in both) is adjusted with Holm's method: the chance that any primary quantity of
 *   two sessions without a difference is called changed is at most alpha;
 * - every other quantity is secondary, adjusted with Benjamini-Hochberg's
 *   method (the expected share of false discoveries is at most alpha): it
 *   is reported, and never makes the outcome;
 * - a change beyond threshold_pct percent, significant (or exact), is worse
 *   when the new mean is higher (more time, more events), better when lower.
 *
 * Ownership: struct diff owns its items, their samples, its gaps and every
 * string they point to, until diff_release. */
#ifndef SPANSTAT_DIFF_H
#define SPANSTAT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "spantree.h"
#include "strtab.h"

enum diff_kind {
	DIFF_COUNTER, /* an event of -e, as the summary shows its value */
	DIFF_RUSAGE,  /* a field of .runs[].rusage */
	DIFF_SPAN,    /* a span path's field */
};

enum diff_test {
	DIFF_TEST_NONE,	     /* not compared (see the verdict) */
	DIFF_TEST_WELCH,     /* Welch's t-test */
	DIFF_TEST_WELCH_MWU, /* the larger p of Welch's and Mann-Whitney U's */
	DIFF_TEST_EXACT,     /* no variance on either side: compared as numbers */
};

enum diff_presence {
	DIFF_BOTH,    /* in both sessions */
	DIFF_GONE,    /* a span path in OLD only */
	DIFF_NEW,     /* a span path in NEW only */
	DIFF_NEITHER, /* counted in neither (an event not supported on either) */
};

enum diff_verdict {
	DIFF_NO_TEST, /* fewer than 2 runs with a value on a side */
	DIFF_SAME,    /* not significant, or within the threshold */
	DIFF_WORSE,
	DIFF_BETTER,
	DIFF_NOT_COMPARABLE, /* collected on one side only (a struct diff_gap) */
	DIFF_NOT_COUNTED,    /* counted on neither side */
};

/* The comparison as a whole (struct diff_summary.outcome). */
enum diff_outcome {
	DIFF_OUT_SAME,		 /* no primary quantity changed beyond the threshold */
	DIFF_OUT_BETTER,	 /* one did, for the better, and none for the worse */
	DIFF_OUT_WORSE,		 /* a primary quantity got worse */
	DIFF_OUT_NOT_COMPARABLE, /* the sessions did not collect the same quantities */
	DIFF_OUT_NO_TEST,	 /* no primary quantity could be compared */
};

struct diff_item {
	enum diff_kind kind;
	const char *name;      /* the event, rusage field, or span path (frames joined by ';') */
	const char *field;     /* a span path's: count, total_ns, self_ns, cpu_ns... ; else "" */
	const char *unit;      /* as the JSON gives it ("msec", "ns", "KiB", "bytes", "") */
	double *v[2];	       /* per run of each side (old, new); NAN: not counted in that run */
	size_t n[2];	       /* runs with a value */
	bool seen[2];	       /* a value in any run of that side */
	double mean[2], sd[2]; /* NAN mean: no value on that side */
	double change;	       /* new mean - old mean; NAN when a mean is */
	double change_pct;     /* 100 * change / old mean; +INFINITY from 0; NAN as change */
	bool primary;	       /* in the primary family (Holm), else secondary (BH) */
	enum diff_presence presence;
	enum diff_test test;
	double welch_p;	  /* NAN: no test */
	double mwu_p;	  /* NAN: fewer than 8 runs a side */
	double p;	  /* the item's p; NAN: no test (exact ones too) */
	double adj_p;	  /* p adjusted in its family (Holm or BH); NAN as p */
	bool significant; /* adj_p < alpha, or an exact change */
	enum diff_verdict verdict;
	/* private */
	size_t cap[2];
	int vfam; /* the span value family, -1: a span's count and times, or no span */
};

/* Something one side collected and the other did not. */
struct diff_gap {
	enum diff_gap_kind {
		DIFF_GAP_SPANS,	     /* span paths at all (--spans) */
		DIFF_GAP_SPAN_VALUE, /* a value of every span: an event, off_cpu_ns, allocs... */
		DIFF_GAP_EVENT,	     /* a counter */
		DIFF_GAP_RUSAGE,     /* a field of the rusage */
	} kind;
	const char *name; /* "" for DIFF_GAP_SPANS */
	int side;	  /* the side that has it: 0 OLD, 1 NEW */
};

struct diff_opts {
	double alpha;		/* the significance level of both families */
	double threshold_pct;	/* a change of at most this is no change */
	unsigned primary_paths; /* span paths in the primary family */
};

struct diff_count {
	size_t compared;      /* tested or compared exactly */
	size_t untested;      /* comparable, but no test (too few runs with a value) */
	size_t worse, better; /* verdicts */
	size_t significant;   /* of compared: significant, within the threshold or not */
};

struct diff_summary {
	enum diff_outcome outcome;
	struct diff_count primary, secondary;
};

struct diff {
	struct diff_item *item; /* in order of first appearance */
	size_t n, cap;
	unsigned runs[2];
	char *command[2];     /* the command line, arguments joined by ' '; NULL: none given */
	char *events[2];      /* the event list, names joined by ','; NULL: none given */
	bool spans[2];	      /* spans collected */
	struct diff_gap *gap; /* after diff_compare */
	size_t ngap, gapcap;
	struct diff_summary sum; /* after diff_compare */
	/* private */
	struct diff_vfam *vfam;
	size_t nvfam;
	struct strtab keys, text;
	size_t *by_key; /* key id -> item + 1 */
	size_t nby_key;
};

int diff_init(struct diff *d);
/* Adds side (0 old, 1 new) from the JSON text json[len].  0, or -EINVAL
 * with *cause saying what is wrong with it ("not JSON", "not a spanstat
 * document", "run 2, event 'cycles': a negative value (-5)": a value that
 * is negative, not finite or beyond 2^63), or -ENOMEM.  After an error, d
 * is only for diff_release. */
int diff_add(struct diff *d, int side, const char *json, size_t len, char **cause);
/* The same from head[len] followed by the rest of fp (read to its end, a
 * window at a time: memory grows with the largest run or thread of the
 * document, not with the document).  A read error: -EIO ("cannot read it:
 * ..."). */
int diff_add_file(struct diff *d, int side, const char *head, size_t len, FILE *fp, char **cause);
/* Compares the two sides (both added): every item's statistics and verdict,
 * the gaps and the summary.  0 or -ENOMEM. */
int diff_compare(struct diff *d, const struct diff_opts *o);
void diff_release(struct diff *d);

/* The items in report order, in a malloc'd array of n indices: primary
 * before secondary; within each, those that got worse or better first,
 * then the rest; within those, the largest relative change first.  0 or
 * -ENOMEM. */
int diff_order(const struct diff *d, size_t **order);

/* Holm's step-down adjustment of the m p-values p into adj (the k-th
 * smallest times m - k, never below an earlier one, at most 1), and
 * Benjamini-Hochberg's (the k-th smallest of m times m / k, never above a
 * later one, at most 1).  NAN p-values are left out (adj NAN).  0 or
 * -ENOMEM. */
int diff_holm(const double *p, double *adj, size_t m);
int diff_bh(const double *p, double *adj, size_t m);

/* The span paths as one tree for a differential flame graph: each node's
 * self time the new mean (total_ns and child_ns as a span tree has them),
 * names interned in names, and old_self[node] the old mean (malloc'd).
 * Call after diff_compare.  0 or -ENOMEM; release t with span_tree_release. */
int diff_tree(const struct diff *d, struct span_tree *t, struct strtab *names, uint64_t **old_self);

#endif
