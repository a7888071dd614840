/* stats.c: running mean and variance (Welford's online algorithm, the same
 * recurrence perf uses) and the relative spread perf stat prints as
 * "( +- x.xx% )": the standard deviation of the mean over the mean. */
#include "config.h"

#include <math.h>
#include <stdlib.h>

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

/* The regularised incomplete beta function I_x(a, b), by its continued
 * fraction (modified Lentz), on the side where it converges fast. */
static double stats_betai(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	if (x > (a + 1) / (a + b + 2))
		return 1 - stats_betai(b, a, 1 - x);
	double lbeta = lgamma(a + b) - lgamma(a) - lgamma(b);
	double front = exp(log(x) * a + log(1 - x) * b + lbeta) / a;
	const double tiny = 1e-300;
	double f = 1, c = 1, d = 0;
	for (int i = 0; i <= 400; i++) {
		int m = i / 2;
		double num;
		if (i == 0)
			num = 1;
		else if (i % 2 == 0)
			num = (m * (b - m) * x) / ((a + 2.0 * m - 1) * (a + 2.0 * m));
		else
			num = -((a + m) * (a + b + m) * x) / ((a + 2.0 * m) * (a + 2.0 * m + 1));
		d = 1 + num * d;
		d = fabs(d) < tiny ? tiny : d;
		d = 1 / d;
		c = 1 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		double cd = c * d;
		f *= cd;
		if (fabs(1 - cd) < 1e-12)
			break;
	}
	return front * (f - 1);
}

static void stats_moments(const double *v, size_t n, double *mean, double *var)
{
	struct stats s;
	stats_init(&s);
	for (size_t i = 0; i < n; i++)
		stats_add(&s, v[i]);
	*mean = s.mean;
	*var = n > 1 ? s.m2 / (s.n - 1) : 0;
}

double stats_welch_p(const double *a, size_t na, const double *b, size_t nb)
{
	if (na < 2 || nb < 2)
		return NAN;
	double ma, va, mb, vb;
	stats_moments(a, na, &ma, &va);
	stats_moments(b, nb, &mb, &vb);
	double sa = va / (double)na, sb = vb / (double)nb, se2 = sa + sb;
	if (se2 <= 0)
		return ma == mb ? 1 : 0; /* no spread at all: equal or not */
	double t = (ma - mb) / sqrt(se2);
	double df = se2 * se2 / ((sa * sa) / ((double)na - 1) + (sb * sb) / ((double)nb - 1));
	return stats_betai(df / 2, 0.5, df / (df + t * t));
}

static int stats_cmp_rank(const void *x, const void *y)
{
	const double *p = x, *q = y;
	return (p[0] > q[0]) - (p[0] < q[0]);
}

double stats_mwu_p(const double *a, size_t na, const double *b, size_t nb)
{
	if (!na || !nb)
		return NAN;
	size_t n = na + nb;
	double(*all)[2] = malloc(n * sizeof *all); /* value, side */
	if (!all)
		return NAN;
	for (size_t i = 0; i < na; i++)
		all[i][0] = a[i], all[i][1] = 0;
	for (size_t i = 0; i < nb; i++)
		all[na + i][0] = b[i], all[na + i][1] = 1;
	qsort(all, n, sizeof *all, stats_cmp_rank);
	/* ranks from 1, ties sharing their mean rank */
	double ra = 0, ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && all[j][0] == all[i][0])
			j++;
		double rank = ((double)i + 1 + (double)j) / 2, t = (double)(j - i);
		ties += t * t * t - t;
		for (size_t k = i; k < j; k++)
			if (all[k][1] == 0)
				ra += rank;
		i = j;
	}
	free(all);
	double u = ra - (double)na * ((double)na + 1) / 2;
	double mu = (double)na * (double)nb / 2;
	double sigma2 = (double)na * (double)nb / 12 *
			((double)n + 1 - ties / ((double)n * ((double)n - 1)));
	if (sigma2 <= 0)
		return 1;				/* every value the same */
	double z = (fabs(u - mu) - 0.5) / sqrt(sigma2); /* continuity corrected */
	if (z < 0)
		z = 0;
	return erfc(z / sqrt(2));
}
