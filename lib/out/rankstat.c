/* rankstat.c: min, mean, max and imbalance across ranks (rankstat.h). */
#include "config.h"

#include "rankstat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "u64map.h"

/* The statistics of v[0..n), v[i] belonging to ranks[i], over the ranks
 * with in[i] (all when in is NULL). */
static struct rank_stat rank_stat_of(const double *v, const bool *in, const struct rank_info *ranks,
				     unsigned n)
{
	struct rank_stat s = {0};
	double sum = 0;
	for (unsigned i = 0; i < n; i++) {
		if (in && !in[i])
			continue;
		if (!s.n++ || v[i] < s.min)
			s.min = v[i];
		if (s.n == 1 || v[i] > s.max) {
			s.max = v[i];
			s.max_rank = ranks[i].rank;
		}
		sum += v[i];
	}
	if (!s.n)
		return s;
	s.mean = sum / s.n;
	s.imbalance = s.max > 0 ? (s.max - s.mean) / s.max : 0;
	return s;
}

/* Adds rank k's tree to the union: map[i] is the union node of its node i. */
static int rank_union(struct rank_summary *s, struct u64map *idx, const struct span_tree *t,
		      uint32_t *map)
{
	map[0] = 0;
	for (uint32_t i = 1; i < t->n; i++) {
		uint32_t p = t->node[i].parent < i ? map[t->node[i].parent] : 0;
		uint64_t key = (uint64_t)p << 32 | t->node[i].name;
		uint64_t u = u64map_get(idx, key);
		if (!u) {
			struct span_tree *pt = &s->paths;
			if (GROW(pt->node, pt->n + 1, pt->cap, 64) < 0)
				return -ENOMEM;
			memset(&pt->node[pt->n], 0, sizeof pt->node[pt->n]);
			pt->node[pt->n].name = t->node[i].name;
			pt->node[pt->n].parent = p;
			u = ++pt->n - 1;
			if (u64map_put(idx, key, u) < 0)
				return -ENOMEM;
		}
		map[i] = (uint32_t)u;
	}
	return 0;
}

int rankstat_build(const struct report *r, struct rank_summary *s)
{
	const struct report_ranks *rk = r->ranks;
	const struct evlist *evl = r->head->evl;
	unsigned n = rk->n;
	memset(s, 0, sizeof *s);
	s->nranks = n;
	size_t ne = evl->n ? evl->n : 1;
	double *v = calloc(n, sizeof *v);
	bool *in = calloc(n, sizeof *in);
	s->counter = calloc(ne, sizeof *s->counter);
	s->counted = calloc(ne, sizeof *s->counted);
	s->paths.node = calloc(64, sizeof *s->paths.node);
	uint32_t **map = calloc(n, sizeof *map);
	struct u64map idx = {0};
	int err = -ENOMEM;
	if (!v || !in || !s->counter || !s->counted || !s->paths.node || !map)
		goto out;
	s->paths.n = 1;
	s->paths.cap = 64;
	for (unsigned i = 0; i < n; i++)
		s->nlost += rk->r[i].nruns == 0;
	/* a rank that did not count an event is left out of it, not a 0 */
	for (size_t e = 0; e < evl->n; e++) {
		for (unsigned i = 0; i < n; i++) {
			const struct count *c = &rk->r[i].count[e];
			in[i] = rk->r[i].nruns && c->state == COUNT_OK;
			v[i] = in[i] ? c->value : 0;
		}
		s->counter[e] = rank_stat_of(v, in, rk->r, n);
		s->counted[e] = s->counter[e].n > 0;
	}
	for (unsigned i = 0; i < n; i++) {
		in[i] = rk->r[i].nruns > 0;
		v[i] = (double)rk->r[i].ru.elapsed_ns;
	}
	s->elapsed = rank_stat_of(v, in, rk->r, n);
	for (unsigned i = 0; i < n; i++) {
		const struct span_tree *t = rk->r[i].merged;
		if (!t)
			continue;
		if (!(map[i] = calloc(t->n ? t->n : 1, sizeof *map[i])))
			goto out;
		if (rank_union(s, &idx, t, map[i]) < 0)
			goto out;
	}
	size_t np = s->paths.n;
	double *m = calloc(np * n * 3, sizeof *m); /* [node][rank]: total, self, count */
	s->total = calloc(np, sizeof *s->total);
	s->self = calloc(np, sizeof *s->self);
	s->count = calloc(np, sizeof *s->count);
	if (!m || !s->total || !s->self || !s->count) {
		free(m);
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct span_tree *t = rk->r[i].merged;
		for (uint32_t k = 1; t && k < t->n; k++) {
			double *x = m + ((size_t)map[i][k] * n + i) * 3;
			x[0] += (double)t->node[k].total_ns;
			x[1] += (double)span_node_self(&t->node[k]);
			x[2] += (double)t->node[k].count;
		}
	}
	for (size_t p = 1; p < np; p++) {
		struct rank_stat *out[3] = {&s->total[p], &s->self[p], &s->count[p]};
		for (unsigned q = 0; q < 3; q++) {
			for (unsigned i = 0; i < n; i++)
				v[i] = m[(p * n + i) * 3 + q];
			*out[q] = rank_stat_of(v, NULL, rk->r, n);
		}
	}
	free(m);
	err = 0;
out:
	for (unsigned i = 0; map && i < n; i++)
		free(map[i]);
	free(map);
	free(v);
	free(in);
	u64map_release(&idx);
	if (err < 0)
		rankstat_release(s);
	return err;
}

void rankstat_release(struct rank_summary *s)
{
	free(s->counter);
	free(s->counted);
	free(s->total);
	free(s->self);
	free(s->count);
	span_tree_release(&s->paths);
	memset(s, 0, sizeof *s);
}
