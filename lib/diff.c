/* diff.c: loading two sessions' JSON documents into samples per quantity,
 * and the tests that compare them (diff.h). */
#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cause.h"
#include "diff.h"
#include "stats.h"
#include "u64map.h"

int diff_init(struct diff *d)
{
	memset(d, 0, sizeof *d);
	if (strtab_init(&d->keys) < 0 || strtab_init(&d->text) < 0) {
		diff_release(d);
		return -ENOMEM;
	}
	return 0;
}

void diff_release(struct diff *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->item[i].v[0]);
		free(d->item[i].v[1]);
	}
	free(d->item);
	free(d->by_key);
	strtab_release(&d->keys);
	strtab_release(&d->text);
	memset(d, 0, sizeof *d);
}

static const char *diff_text(struct diff *d, const char *s)
{
	uint32_t id = strtab_intern(&d->text, s, strlen(s));
	return id ? strtab_get(&d->text, id) : NULL;
}

/* The item (kind, name, field), made with every run of both sides not
 * counted (a span path absent from a run was there 0 times: 0). */
static struct diff_item *diff_item(struct diff *d, enum diff_kind kind, const char *name,
				   const char *field, const char *unit)
{
	char *key;
	if (asprintf(&key, "%d\x1f%s\x1f%s", (int)kind, name, field) < 0)
		return NULL;
	uint32_t id = strtab_intern(&d->keys, key, strlen(key));
	free(key);
	if (!id)
		return NULL;
	if (id >= d->nby_key) {
		size_t n = d->nby_key ? 2 * d->nby_key : 256;
		while (n <= id)
			n *= 2;
		size_t *b = realloc(d->by_key, n * sizeof *b);
		if (!b)
			return NULL;
		memset(b + d->nby_key, 0, (n - d->nby_key) * sizeof *b);
		d->by_key = b;
		d->nby_key = n;
	}
	if (d->by_key[id])
		return &d->item[d->by_key[id] - 1];
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 64;
		struct diff_item *it = realloc(d->item, cap * sizeof *it);
		if (!it)
			return NULL;
		d->item = it;
		d->cap = cap;
	}
	struct diff_item *it = &d->item[d->n];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->name = diff_text(d, name);
	it->field = diff_text(d, field);
	it->unit = diff_text(d, unit ? unit : "");
	for (int s = 0; s < 2; s++) {
		it->v[s] = malloc((d->runs[s] ? d->runs[s] : 1) * sizeof *it->v[s]);
		if (!it->v[s] || !it->name || !it->field || !it->unit) {
			free(it->v[0]);
			free(it->v[1]);
			return NULL;
		}
		for (unsigned r = 0; r < d->runs[s]; r++)
			it->v[s][r] = kind == DIFF_SPAN ? 0 : NAN;
	}
	d->by_key[id] = ++d->n;
	return it;
}

/* Sets (or, for spans, adds to) run r of side s. */
static int diff_put(struct diff *d, int s, unsigned r, enum diff_kind kind, const char *name,
		    const char *field, const char *unit, const cJSON *num)
{
	if (!cJSON_IsNumber(num))
		return 0; /* null: not counted */
	struct diff_item *it = diff_item(d, kind, name, field, unit);
	if (!it)
		return -ENOMEM;
	if (kind == DIFF_SPAN)
		it->v[s][r] += num->valuedouble;
	else
		it->v[s][r] = num->valuedouble;
	return 0;
}

static const char *const diff_rusage[] = {"elapsed_ns", "user_ns", "sys_ns", "max_rss_kib"};

/* A name as a frame of a path: ';' written %3B (a JSON name has its '%'
 * escaped already, so this stays reversible). */
static char *diff_frame(const char *name)
{
	size_t semis = 0;
	for (const char *p = name; *p; p++)
		semis += *p == ';';
	char *f = malloc(strlen(name) + 2 * semis + 1), *o = f;
	for (const char *p = name; f && *p; p++) {
		if (*p == ';') {
			memcpy(o, "%3B", 3);
			o += 3;
		} else {
			*o++ = *p;
		}
	}
	if (f)
		*o = '\0';
	return f;
}

/* One thread's nodes: the path of each (its parent's and its name), and
 * every field that is a number. */
static int diff_thread(struct diff *d, int s, unsigned r, const cJSON *nodes)
{
	int n = cJSON_GetArraySize(nodes), err = 0, i = 0;
	char **path = calloc(n ? (size_t)n : 1, sizeof *path);
	struct u64map ids; /* a node's id -> its index + 1 */
	memset(&ids, 0, sizeof ids);
	if (!path)
		return -ENOMEM;
	static const struct {
		const char *name, *unit;
	} fields[] = {{"count", ""},	       {"total_ns", "ns"},   {"self_ns", "ns"},
		      {"cpu_ns", "ns"},	       {"off_cpu_ns", "ns"}, {"allocs", ""},
		      {"alloc_bytes", "bytes"}};
	const cJSON *nd;
	cJSON_ArrayForEach(nd, nodes)
	{
		if (err || i >= n)
			break;
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(nd, "name");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(nd, "id");
		const cJSON *parent = cJSON_GetObjectItemCaseSensitive(nd, "parent");
		if (!cJSON_IsString(name) || !cJSON_IsNumber(id) ||
		    !(cJSON_IsNumber(parent) || cJSON_IsNull(parent))) {
			err = -EINVAL;
			break;
		}
		/* the outermost spans' parent is null (the root is not listed) */
		uint64_t at =
			cJSON_IsNumber(parent) ? u64map_get(&ids, (uint64_t)parent->valueint) : 0;
		const char *up = at ? path[at - 1] : NULL;
		if (u64map_put(&ids, (uint64_t)id->valueint, (uint64_t)i + 1) < 0) {
			err = -ENOMEM;
			break;
		}
		char *frame = diff_frame(name->valuestring);
		int pr = !frame ? -1
			 : up	? asprintf(&path[i], "%s;%s", up, frame)
				: asprintf(&path[i], "%s", frame);
		free(frame);
		if (pr < 0) {
			path[i] = NULL;
			err = -ENOMEM;
			break;
		}
		for (size_t f = 0; f < sizeof fields / sizeof *fields && !err; f++)
			err = diff_put(d, s, r, DIFF_SPAN, path[i], fields[f].name, fields[f].unit,
				       cJSON_GetObjectItemCaseSensitive(nd, fields[f].name));
		const cJSON *m;
		cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(nd, "metrics"))
		{
			if (!err && m->string)
				err = diff_put(d, s, r, DIFF_SPAN, path[i], m->string, "", m);
		}
		i++;
	}
	for (int k = 0; k < n; k++)
		free(path[k]);
	free(path);
	u64map_release(&ids);
	return err;
}

int diff_add(struct diff *d, int s, const char *json, size_t len, char **cause)
{
	cJSON *doc = cJSON_ParseWithLength(json, len);
	if (!doc)
		return cause_set(cause, -EINVAL, "not JSON (or not a whole document)");
	const cJSON *runs = cJSON_GetObjectItemCaseSensitive(doc, "runs");
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(doc, "schema_version");
	int err = 0;
	if (!cJSON_IsArray(runs) || !cJSON_IsNumber(ver) || cJSON_GetArraySize(runs) < 1) {
		cJSON_Delete(doc);
		return cause_set(cause, -EINVAL,
				 "not a spanstat JSON document with a run (spanstat --json)");
	}
	unsigned nruns = (unsigned)cJSON_GetArraySize(runs);
	if (d->n) { /* items made with the other side only: room for this one's runs */
		for (size_t i = 0; i < d->n; i++) {
			double *v = realloc(d->item[i].v[s], nruns * sizeof *v);
			if (!v) {
				cJSON_Delete(doc);
				return -ENOMEM;
			}
			for (unsigned r = 0; r < nruns; r++)
				v[r] = d->item[i].kind == DIFF_SPAN ? 0 : NAN;
			d->item[i].v[s] = v;
		}
	}
	d->runs[s] = nruns;
	unsigned r = 0;
	const cJSON *run;
	cJSON_ArrayForEach(run, runs)
	{
		const cJSON *ev;
		cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(run, "events"))
		{
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
			const cJSON *unit = cJSON_GetObjectItemCaseSensitive(ev, "unit");
			if (!err && cJSON_IsString(name))
				err = diff_put(d, s, r, DIFF_COUNTER, name->valuestring, "",
					       cJSON_IsString(unit) ? unit->valuestring : "",
					       cJSON_GetObjectItemCaseSensitive(ev, "value"));
		}
		const cJSON *ru = cJSON_GetObjectItemCaseSensitive(run, "rusage");
		for (size_t k = 0; k < sizeof diff_rusage / sizeof *diff_rusage && !err; k++)
			err = diff_put(d, s, r, DIFF_RUSAGE, diff_rusage[k], "",
				       strstr(diff_rusage[k], "_ns") ? "ns" : "KiB",
				       cJSON_GetObjectItemCaseSensitive(ru, diff_rusage[k]));
		r++;
	}
	const cJSON *th;
	const cJSON *spans = cJSON_GetObjectItemCaseSensitive(doc, "spans");
	cJSON_ArrayForEach(th, cJSON_GetObjectItemCaseSensitive(spans, "threads"))
	{
		const cJSON *rn = cJSON_GetObjectItemCaseSensitive(th, "run");
		double rv = cJSON_IsNumber(rn) ? rn->valuedouble : 0;
		unsigned k =
			rv >= 0 && rv < nruns ? (unsigned)rv : nruns; /* else: no run of ours */
		if (!err && k < nruns)
			err = diff_thread(d, s, k, cJSON_GetObjectItemCaseSensitive(th, "nodes"));
	}
	cJSON_Delete(doc);
	if (err == -EINVAL)
		return cause_set(cause, err, "a span node without its name, id or parent");
	return err;
}

static const struct diff *diff_sort;
static int diff_by_p(const void *a, const void *b)
{
	double x = diff_sort->item[*(const size_t *)a].p, y = diff_sort->item[*(const size_t *)b].p;
	return (x > y) - (x < y);
}

/* Holm's step-down adjustment over the m items tested: the k-th smallest p
 * (from 0) times m - k, never below an earlier one's, at most 1. */
static void diff_holm(struct diff *d)
{
	size_t m = 0;
	size_t *ix = malloc((d->n ? d->n : 1) * sizeof *ix);
	if (!ix) { /* out of memory: Bonferroni, the cruder bound */
		for (size_t i = 0; i < d->n; i++)
			m += !isnan(d->item[i].p);
		for (size_t i = 0; i < d->n; i++)
			if (!isnan(d->item[i].p))
				d->item[i].holm_p = fmin(1, d->item[i].p * (double)m);
		return;
	}
	for (size_t i = 0; i < d->n; i++)
		if (!isnan(d->item[i].p))
			ix[m++] = i;
	diff_sort = d;
	if (m)
		qsort(ix, m, sizeof *ix, diff_by_p);
	double run = 0;
	for (size_t k = 0; k < m; k++) {
		double adj = fmin(1, d->item[ix[k]].p * (double)(m - k));
		run = fmax(run, adj);
		d->item[ix[k]].holm_p = run;
	}
	free(ix);
}

void diff_compare(struct diff *d, double alpha, double threshold_pct)
{
	for (size_t i = 0; i < d->n; i++) {
		struct diff_item *it = &d->item[i];
		double *x[2];
		for (int s = 0; s < 2; s++) {
			/* the numbers first (compacted in place), then the stats */
			size_t n = 0;
			for (unsigned r = 0; r < d->runs[s]; r++)
				if (!isnan(it->v[s][r]))
					it->v[s][n++] = it->v[s][r];
			it->n[s] = n;
			x[s] = it->v[s];
			struct stats st;
			stats_init(&st);
			for (size_t k = 0; k < n; k++)
				stats_add(&st, x[s][k]);
			it->mean[s] = n ? st.mean : NAN;
			it->sd[s] = stats_stddev(&st);
		}
		it->change_pct = it->mean[0] != 0 ? 100 * (it->mean[1] - it->mean[0]) / it->mean[0]
				 : it->mean[1] == 0 ? 0
						    : NAN;
		it->welch_p = stats_welch_p(x[0], it->n[0], x[1], it->n[1]);
		it->mwu_p = it->n[0] >= 8 && it->n[1] >= 8
				    ? stats_mwu_p(x[0], it->n[0], x[1], it->n[1])
				    : NAN;
		it->p = isnan(it->mwu_p) || it->mwu_p < it->welch_p ? it->welch_p : it->mwu_p;
		it->holm_p = NAN;
	}
	diff_holm(d);
	for (size_t i = 0; i < d->n; i++) {
		struct diff_item *it = &d->item[i];
		it->significant = !isnan(it->holm_p) && it->holm_p < alpha;
		double change = isnan(it->change_pct) ? INFINITY : fabs(it->change_pct);
		if (isnan(it->p))
			it->verdict = DIFF_NO_TEST;
		else if (!it->significant || change <= threshold_pct)
			it->verdict = DIFF_SAME;
		else
			it->verdict = it->mean[1] > it->mean[0] ? DIFF_WORSE : DIFF_BETTER;
	}
}

/* The child of parent named name (a strtab id), made when missing. */
static uint32_t diff_child(struct span_tree *t, uint32_t parent, uint32_t name)
{
	uint32_t last = 0;
	for (uint32_t c = t->node[parent].first_child; c; c = t->node[c].next_sibling) {
		if (t->node[c].name == name)
			return c;
		last = c;
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 64;
		struct span_node *nd = realloc(t->node, cap * sizeof *nd);
		if (!nd)
			return 0;
		t->node = nd;
		t->cap = cap;
	}
	uint32_t i = t->n++;
	memset(&t->node[i], 0, sizeof t->node[i]);
	t->node[i].name = name;
	t->node[i].parent = parent;
	if (last)
		t->node[last].next_sibling = i;
	else
		t->node[parent].first_child = i;
	return i;
}

int diff_tree(const struct diff *d, struct span_tree *t, struct strtab *names, uint64_t **old_self)
{
	memset(t, 0, sizeof *t);
	*old_self = NULL;
	uint64_t *old = NULL;
	size_t oldcap = 0;
	t->node = calloc(1, sizeof *t->node);
	if (!t->node)
		return -ENOMEM;
	t->n = t->cap = 1;
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_item *it = &d->item[i];
		if (it->kind != DIFF_SPAN || strcmp(it->field, "self_ns") != 0)
			continue;
		uint32_t at = 0;
		for (const char *p = it->name; at != UINT32_MAX;) {
			size_t len = strcspn(p, ";");
			uint32_t id = strtab_intern(names, p, len);
			uint32_t c = id ? diff_child(t, at, id) : 0;
			if (!c)
				goto nomem;
			at = c;
			if (!p[len])
				break;
			p += len + 1;
		}
		if (t->cap > oldcap) {
			uint64_t *o = realloc(old, t->cap * sizeof *o);
			if (!o)
				goto nomem;
			memset(o + oldcap, 0, (t->cap - oldcap) * sizeof *o);
			old = o;
			oldcap = t->cap;
		}
		/* a width: a time in ns, never negative, within uint64_t */
		double nw = isnan(it->mean[1]) || it->mean[1] < 0 ? 0 : fmin(it->mean[1], 9e18);
		double od = isnan(it->mean[0]) || it->mean[0] < 0 ? 0 : fmin(it->mean[0], 9e18);
		t->node[at].total_ns = (uint64_t)llround(nw); /* self for now */
		old[at] = (uint64_t)llround(od);
	}
	/* totals: self plus the children's, bottom up (children come later) */
	for (uint32_t i = t->n; i-- > 1;) {
		struct span_node *p = &t->node[t->node[i].parent];
		p->total_ns += t->node[i].total_ns;
		p->child_ns += t->node[i].total_ns;
	}
	if (t->n > oldcap) { /* no span at all */
		uint64_t *o = realloc(old, t->n * sizeof *o);
		if (!o)
			goto nomem;
		memset(o + oldcap, 0, (t->n - oldcap) * sizeof *o);
		old = o;
	}
	*old_self = old;
	return 0;
nomem:
	free(old);
	span_tree_release(t);
	return -ENOMEM;
}
