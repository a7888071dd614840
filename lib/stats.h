/* stats.h: running mean and standard deviation (Welford), and perf stat's
 * relative "+- x.xx%" (the stddev of the mean over the mean). */
#ifndef SPANSTAT_STATS_H
#define SPANSTAT_STATS_H

#include "report.h"

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

#endif
