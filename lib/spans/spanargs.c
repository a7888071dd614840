/* spanargs.c: per-node aggregates of typed arguments (spanargs.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "spanargs.h"

static uint64_t span_args_ixkey(uint32_t node, unsigned type, uint32_t key)
{
	return (uint64_t)node << 35 | (uint64_t)type << 32 | key;
}

/* node's entry for (key, type), made empty on first need; NULL: no memory. */
static struct span_arg *span_args_entry(struct span_args *sa, uint32_t node, uint32_t key,
					unsigned type)
{
	uint64_t k = span_args_ixkey(node, type, key);
	uint64_t i = u64map_get(&sa->ix, k);
	if (i)
		return &sa->a[i - 1];
	if (GROW(sa->a, sa->n + 1, sa->cap, 16) < 0)
		return NULL;
	if (u64map_put(&sa->ix, k, sa->n + 1) < 0)
		return NULL;
	uint64_t h = u64map_get(&sa->head, node);
	if (u64map_put(&sa->head, node, sa->n + 1) < 0) {
		u64map_del(&sa->ix, k);
		return NULL;
	}
	struct span_arg *e = &sa->a[sa->n++];
	memset(e, 0, sizeof *e);
	e->node = node;
	e->key = key;
	e->type = type;
	e->next = (uint32_t)h;
	return e;
}

static int span_args_str(struct span_arg *e, uint32_t text, uint64_t count)
{
	for (uint32_t i = 0; i < e->nstr; i++)
		if (e->str[i].text == text) {
			e->str[i].count += count;
			return 0;
		}
	if (e->nstr >= SPANARGS_STRS) {
		e->others += count;
		return 0;
	}
	if (!e->str && !(e->str = calloc(SPANARGS_STRS, sizeof *e->str))) {
		e->others += count;
		return -ENOMEM;
	}
	e->str[e->nstr++] = (struct span_arg_str){text, count};
	return 0;
}

/* Folds n values whose sum, min and max are those of f into e. */
static int span_args_fold(struct span_arg *e, const struct span_arg *f)
{
	bool first = e->count == 0;
	e->count += f->count;
	switch (e->type) {
	case SPAN_ARG_I64:
		e->sum += f->sum;
		e->imin = first || f->imin < e->imin ? f->imin : e->imin;
		e->imax = first || f->imax > e->imax ? f->imax : e->imax;
		break;
	case SPAN_ARG_U64:
		e->sum += f->sum;
		e->umin = first || f->umin < e->umin ? f->umin : e->umin;
		e->umax = first || f->umax > e->umax ? f->umax : e->umax;
		break;
	case SPAN_ARG_F64:
		/* a NaN has no order: min and max are unknown (NaN) once
		 * one came, wherever it came, as the sum is */
		e->fsum += f->fsum;
		e->fmin = first || isnan(f->fmin) || f->fmin < e->fmin ? f->fmin : e->fmin;
		e->fmax = first || isnan(f->fmax) || f->fmax > e->fmax ? f->fmax : e->fmax;
		break;
	case SPAN_ARG_BOOL:
		e->sum += f->sum;
		break;
	default: {
		int r = 0;
		for (uint32_t i = 0; i < f->nstr; i++)
			if (span_args_str(e, f->str[i].text, f->str[i].count) < 0)
				r = -ENOMEM;
		e->others += f->others;
		return r;
	}
	}
	return 0;
}

int span_args_add(struct span_args *sa, uint32_t node, uint32_t key, unsigned type, uint64_t bits)
{
	if (type >= SPAN_ARG_TYPES)
		return -EINVAL;
	struct span_arg *e = span_args_entry(sa, node, key, type);
	if (!e)
		return -ENOMEM;
	struct span_arg one = {.type = type, .count = 1};
	int64_t i;
	double d;
	struct span_arg_str s = {(uint32_t)bits, 1};
	switch (type) {
	case SPAN_ARG_I64:
		memcpy(&i, &bits, sizeof i);
		one.sum = i;
		one.imin = one.imax = i;
		break;
	case SPAN_ARG_U64:
		one.sum = bits;
		one.umin = one.umax = bits;
		break;
	case SPAN_ARG_F64:
		memcpy(&d, &bits, sizeof d);
		one.fsum = one.fmin = one.fmax = d;
		break;
	case SPAN_ARG_BOOL:
		one.sum = bits != 0;
		break;
	default:
		one.str = &s;
		one.nstr = 1;
		break;
	}
	return span_args_fold(e, &one);
}

int span_args_merge(struct span_args *sa, uint32_t node, const struct span_arg *f)
{
	struct span_arg *e = span_args_entry(sa, node, f->key, f->type);
	return e ? span_args_fold(e, f) : -ENOMEM;
}

const struct span_arg *span_args_first(const struct span_args *sa, uint32_t node)
{
	uint64_t i = sa ? u64map_get(&sa->head, node) : 0;
	return i ? &sa->a[i - 1] : NULL;
}

const struct span_arg *span_args_next(const struct span_args *sa, const struct span_arg *e)
{
	return e->next ? &sa->a[e->next - 1] : NULL;
}

uint64_t span_args_weight(const struct span_args *sa, uint32_t node, uint32_t key)
{
	double w = 0;
	for (const struct span_arg *e = span_args_first(sa, node); e; e = span_args_next(sa, e)) {
		if (e->key != key || e->type == SPAN_ARG_STR || e->type == SPAN_ARG_BOOL)
			continue;
		w += e->type == SPAN_ARG_F64 ? e->fsum : (double)e->sum;
	}
	/* NaN (a NaN value, or inf + -inf) has no weight: 0, as a negative */
	return !(w > 0) ? 0 : w >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)w;
}

bool span_args_has_number(const struct span_args *sa, uint32_t key)
{
	for (uint32_t i = 0; sa && i < sa->n; i++)
		if (sa->a[i].key == key && sa->a[i].type != SPAN_ARG_STR &&
		    sa->a[i].type != SPAN_ARG_BOOL)
			return true;
	return false;
}

unsigned span_args_top(const struct span_arg *e, struct span_arg_str *out)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < e->nstr; i++) {
		uint64_t c = e->str[i].count;
		if (n == SPANARGS_TOP && c <= out[n - 1].count)
			continue;
		unsigned k = n < SPANARGS_TOP ? n++ : n - 1;
		while (k && out[k - 1].count < c) {
			out[k] = out[k - 1];
			k--;
		}
		out[k] = e->str[i];
	}
	return n;
}

const char *span_args_type_name(unsigned type)
{
	static const char *const names[] = {"i64", "u64", "f64", "bool", "string"};
	return type < SPAN_ARG_TYPES ? names[type] : "unknown";
}

void span_args_free(struct span_args *sa)
{
	if (!sa)
		return;
	for (uint32_t i = 0; i < sa->n; i++)
		free(sa->a[i].str);
	free(sa->a);
	u64map_release(&sa->ix);
	u64map_release(&sa->head);
	free(sa);
}
