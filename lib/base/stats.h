/* stats.h: running mean and standard deviation (Welford), and perf stat's
 * relative "+- x.xx%" (the stddev of the mean over the mean). */
#ifndef SPANSTAT_STATS_H
#define SPANSTAT_STATS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* x's integer part within 0..UINT64_MAX (NaN: 0), as a cast would give it
 * where one is defined: sums a damaged record makes huge stay representable. */
static inline uint64_t stats_sat_u64(double x)
{
	return x >= 0x1p64 ? UINT64_MAX : x > 0 ? (uint64_t)x : 0;
}

/* The same within 0..LONG_MAX. */
/* a + b, at most UINT64_MAX: sums of what a damaged record claims. */
static inline uint64_t stats_sat_add(uint64_t a, uint64_t b)
{
	uint64_t s;
	return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

static inline long stats_sat_long(double x)
{
	return x >= (double)LONG_MAX ? LONG_MAX : x > 0 ? (long)x : 0;
}

/* Mean and spread of one quantity over the runs. */
struct stat_summary {
	double mean, stddev; /* sample stddev of the mean's inputs */
	double rel;	     /* 100 * stddev_of_mean / mean, as perf's "+-" */
};

struct stats {
	double n, mean, m2;
};

static inline void stats_init(struct stats *s)
{
	s->n = s->mean = s->m2 = 0;
}
void stats_add(struct stats *s, double x);
double stats_stddev(const struct stats *s); /* sample stddev, 0 for n < 2 */
struct stat_summary stats_summary(const struct stats *s);

/* Welch's t-test: the two-sided p-value that samples a[na] and b[nb] have
 * the same mean; NAN when a side has fewer than 2. */
double stats_welch_p(const double *a, size_t na, const double *b, size_t nb);
/* Mann-Whitney U: the two-sided p-value that a and b come from the same
 * distribution (normal approximation with the tie and continuity
 * corrections: meant for 8 or more a side); NAN when a side is empty. */
double stats_mwu_p(const double *a, size_t na, const double *b, size_t nb);

#endif
