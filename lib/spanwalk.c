/* spanwalk.c: the shared tree walk (spanwalk.h), through the tree's own
 * first-child and next-sibling links. */
#include "spanwalk.h"

int spanwalk(const struct span_tree *t, spanwalk_fn fn, void *ctx)
{
	if (!t->n)
		return 0;
	uint32_t i = t->node[0].first_child, d = 0;
	while (i && i < t->n) {
		int r = fn(ctx, t, i, d);
		if (r)
			return r;
		if (t->node[i].first_child) {
			i = t->node[i].first_child;
			d++;
			continue;
		}
		/* the next sibling, else the nearest ancestor's */
		while (i && !t->node[i].next_sibling && d) {
			i = t->node[i].parent;
			d--;
		}
		i = i ? t->node[i].next_sibling : 0;
	}
	return 0;
}
