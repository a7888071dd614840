/* stats.c: running mean and variance (Welford's online algorithm, the same
 * recurrence perf uses) and the relative spread perf stat prints as
 * "( +- x.xx% )": the standard deviation of the mean over the mean. */
#include "config.h"

#include <math.h>

#include "stats.h"

void stats_add(struct stats *s, double x)
{
	double delta = x - s->mean;

	s->n += 1;
	s->mean += delta / s->n;
	s->m2 += delta * (x - s->mean);
}

double stats_stddev(const struct stats *s)
{
	if (s->n < 2)
		return 0;
	return sqrt(s->m2 / (s->n - 1));
}

struct stat_summary stats_summary(const struct stats *s)
{
	struct stat_summary sum = {.mean = s->mean, .stddev = stats_stddev(s), .rel = 0};

	/* perf: rel_stddev_stats(stddev_stats(), avg), where stddev_stats is
	 * sqrt(variance / n), the standard error of the mean. */
	if (s->n >= 2 && sum.mean != 0)
		sum.rel = 100.0 * (sum.stddev / sqrt(s->n)) / sum.mean;
	return sum;
}
