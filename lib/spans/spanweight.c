/* spanweight.c: --weight (spanweight.h). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "spanweight.h"

int span_weight_parse(const char *name, const struct spanmetrics *ms, struct span_weight *out)
{
	out->kind = SPAN_WEIGHT_WALL;
	out->index = 0;
	if (!name || strcmp(name, "wall") == 0)
		return 0;
	int k = -1;
	if (strcmp(name, "cpu") == 0 || strcmp(name, "off-cpu") == 0) {
		k = spanmetric_find(ms, SPANMETRIC_OFF_CPU);
		out->kind = name[0] == 'c' ? SPAN_WEIGHT_CPU : SPAN_WEIGHT_OFF_CPU;
	} else if (strcmp(name, "allocs") == 0) {
		k = spanmetric_find(ms, SPANMETRIC_ALLOCS);
		out->kind = SPAN_WEIGHT_VALUE;
	} else if (strcmp(name, "alloc-bytes") == 0) {
		k = spanmetric_find(ms, SPANMETRIC_ALLOC_BYTES);
		out->kind = SPAN_WEIGHT_VALUE;
	} else {
		for (unsigned i = 0; ms && i < ms->n; i++)
			if (ms->m[i].kind == SPANMETRIC_EVENT && strcmp(ms->m[i].name, name) == 0)
				k = (int)i;
		out->kind = SPAN_WEIGHT_VALUE;
	}
	if (k < 0)
		return -ENOENT;
	if (!ms->m[k].supported)
		return -ENOTSUP;
	out->index = (unsigned)k;
	return 0;
}

uint64_t span_weight_self(const struct span_weight *w, const struct span_tree *t, uint32_t i)
{
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
