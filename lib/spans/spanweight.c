/* spanweight.c: --weight (spanweight.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "spanweight.h"

/* The weights every run may carry, by name: what each counts, and the
 * metric it needs (-1: none).  Any other name is an event's. */
static const struct {
	const char *name;
	enum spanweight_kind kind;
	int metric;
} span_weights[] = {
	{"wall", SPAN_WEIGHT_WALL, -1},
	{"cpu", SPAN_WEIGHT_CPU, SPANMETRIC_OFF_CPU},
	{"off-cpu", SPAN_WEIGHT_OFF_CPU, SPANMETRIC_OFF_CPU},
	{"allocs", SPAN_WEIGHT_VALUE, SPANMETRIC_ALLOCS},
	{"alloc-bytes", SPAN_WEIGHT_VALUE, SPANMETRIC_ALLOC_BYTES},
};

static bool spanweight_is_arg(const char *name)
{
	return name && strncmp(name, SPANWEIGHT_ARG, strlen(SPANWEIGHT_ARG)) == 0;
}

int spanweight_metric(const char *name)
{
	if (spanweight_is_arg(name))
		return -1;
	for (size_t i = 0; name && i < sizeof span_weights / sizeof span_weights[0]; i++)
		if (strcmp(name, span_weights[i].name) == 0)
			return span_weights[i].metric;
	return name ? SPANMETRIC_EVENT : -1;
}

int spanweight_parse(const char *name, const struct spanmetrics *ms, const struct strtab *strings,
		     struct spanweight *out)
{
	out->kind = SPAN_WEIGHT_VALUE;
	out->index = 0;
	out->key = 0;
	if (spanweight_is_arg(name)) {
		const char *k = name + strlen(SPANWEIGHT_ARG);
		out->kind = SPAN_WEIGHT_ARG;
		out->key = strings ? strtab_lookup(strings, k, strlen(k)) : 0;
		return out->key ? 0 : -ENOENT;
	}
	for (size_t i = 0; name && i < sizeof span_weights / sizeof span_weights[0]; i++)
		if (strcmp(name, span_weights[i].name) == 0)
			out->kind = span_weights[i].kind;
	int metric = spanweight_metric(name), k = -1;
	if (metric < 0) {
		out->kind = SPAN_WEIGHT_WALL;
		return 0;
	}
	if (metric != SPANMETRIC_EVENT)
		k = spanmetric_find(ms, (enum spanmetric_kind)metric);
	for (unsigned i = 0; metric == SPANMETRIC_EVENT && ms && i < ms->n; i++)
		if (ms->m[i].kind == SPANMETRIC_EVENT && strcmp(ms->m[i].name, name) == 0)
			k = (int)i;
	if (k < 0)
		return -ENOENT;
	if (!ms->m[k].supported)
		return -ENOTSUP;
	out->index = (unsigned)k;
	return 0;
}

uint64_t spanweight_self(const struct spanweight *w, const struct span_tree *t, uint32_t i)
{
	if (w->kind == SPAN_WEIGHT_ARG)
		return span_args_weight(t->args, i, w->key);
	uint64_t self = span_node_self(&t->node[i]);
	if (w->kind == SPAN_WEIGHT_WALL || w->index >= t->nval)
		return self;
	uint64_t v = span_node_val_self(t, i, w->index);
	switch (w->kind) {
	case SPAN_WEIGHT_CPU:
		return self > v ? self - v : 0;
	case SPAN_WEIGHT_OFF_CPU:
		return v < self ? v : self;
	default:
		return v;
	}
}
