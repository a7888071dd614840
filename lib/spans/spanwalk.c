/* spanwalk.c: the shared tree walk (spanwalk.h), through the tree's own
 * first-child and next-sibling links. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

static int spanwalk_grow(struct spanwalk_roots *o, uint32_t more, unsigned nval)
{
	struct span_tree *t = &o->tree;
	if (t->n + more <= t->cap)
		return 0;
	uint32_t cap = t->cap ? t->cap : 64;
	while (cap < t->n + more)
		cap *= 2;
	struct span_node *node = realloc(t->node, cap * sizeof *node);
	if (!node)
		return -ENOMEM;
	t->node = node;
	if (nval) {
		uint64_t *val = realloc(t->val, (size_t)cap * 2 * nval * sizeof *val);
		if (!val)
			return -ENOMEM;
		t->val = val;
	}
	t->cap = cap;
	return 0;
}

/* A new node under parent, the last of its children (*last: parent's last
 * child so far, 0 none). */
static uint32_t spanwalk_add(struct span_tree *t, uint32_t parent, uint32_t *last,
			     const struct span_node *from)
{
	uint32_t i = t->n++;
	struct span_node *n = &t->node[i];
	memset(n, 0, sizeof *n);
	if (from) {
		n->count = from->count;
		n->total_ns = from->total_ns;
		n->child_ns = from->child_ns;
		n->unfinished = from->unfinished;
		n->name = from->name;
	}
	n->parent = parent;
	if (*last)
		t->node[*last].next_sibling = i;
	else
		t->node[parent].first_child = i;
	*last = i;
	if (t->nval)
		memset(t->val + (size_t)i * 2 * t->nval, 0, 2 * t->nval * sizeof *t->val);
	return i;
}

static int spanwalk_label(struct spanwalk_roots *o, uint32_t pid, uint32_t tid)
{
	struct spanwalk_root *r = realloc(o->root, (o->n + 1) * sizeof *r);
	if (!r)
		return -ENOMEM;
	o->root = r;
	o->root[o->n] = (struct spanwalk_root){pid, tid};
	return (int)(o->n++);
}

/* Adds its totals to node i and every ancestor up to the root. */
static void spanwalk_carry(struct span_tree *t, uint32_t i, const struct span_node *from,
			   const uint64_t *vals)
{
	for (uint32_t p = i;; p = t->node[p].parent) {
		t->node[p].total_ns += from->total_ns;
		t->node[p].child_ns += from->total_ns;
		for (unsigned k = 0; vals && k < t->nval; k++) {
			uint64_t *v = t->val + (size_t)p * 2 * t->nval;
			v[k] += vals[k];
			v[t->nval + k] += vals[k];
		}
		if (!p)
			break;
	}
}

int spanwalk_rooted(const struct span_trees *st, struct spanwalk_roots *o)
{
	memset(o, 0, sizeof *o);
	struct span_tree *t = &o->tree;
	t->nval = st->nval;
	uint32_t *map = NULL, last_root = 0;
	int err = spanwalk_grow(o, 1, t->nval);
	if (!err) {
		uint32_t dummy = 0;
		t->n = 0;
		spanwalk_add(t, 0, &dummy, NULL);
		t->node[0].first_child = 0;
	}
	/* threads of one process together, in order of first appearance */
	for (size_t a = 0; !err && a < st->nthread; a++) {
		const struct span_tree *first = st->thread[a];
		bool seen = false;
		for (size_t b = 0; b < a && !seen; b++)
			seen = st->thread[b]->pid == first->pid;
		if (seen)
			continue;
		int lp = spanwalk_label(o, first->pid, 0);
		if (lp < 0 || (err = spanwalk_grow(o, 1, t->nval)) < 0) {
			err = -ENOMEM;
			break;
		}
		uint32_t proc = spanwalk_add(t, 0, &last_root, NULL), last_thread = 0;
		t->node[proc].name = SPANWALK_ROOT | (uint32_t)lp;
		for (size_t b = a; !err && b < st->nthread; b++) {
			const struct span_tree *th = st->thread[b];
			if (th->pid != first->pid || th->n < 2)
				continue;
			int lt = spanwalk_label(o, th->pid, th->tid);
			if (lt < 0 || (err = spanwalk_grow(o, th->n, t->nval)) < 0) {
				err = -ENOMEM;
				break;
			}
			uint32_t thr = spanwalk_add(t, proc, &last_thread, NULL);
			t->node[thr].name = SPANWALK_ROOT | (uint32_t)lt;
			uint32_t *m = realloc(map, th->n * sizeof *m);
			uint32_t *lastkid = calloc(th->n, sizeof *lastkid);
			if (!m || !lastkid) {
				free(m ? m : map);
				map = NULL;
				free(lastkid);
				err = -ENOMEM;
				break;
			}
			map = m;
			map[0] = thr;
			uint32_t last_top = 0;
			for (uint32_t i = 1; i < th->n; i++) {
				uint32_t par = th->node[i].parent;
				uint32_t *lk = par ? &lastkid[par] : &last_top;
				map[i] = spanwalk_add(t, map[par], lk, &th->node[i]);
				if (t->nval && th->nval == t->nval)
					memcpy(t->val + (size_t)map[i] * 2 * t->nval,
					       span_node_vals(th, i), 2 * t->nval * sizeof *t->val);
				if (!par)
					spanwalk_carry(t, thr, &th->node[i],
						       t->nval && th->nval == t->nval
							       ? span_node_vals(th, i)
							       : NULL);
			}
			free(lastkid);
		}
	}
	free(map);
	if (err)
		spanwalk_roots_release(o);
	return err;
}

void spanwalk_roots_release(struct spanwalk_roots *o)
{
	free(o->tree.node);
	free(o->tree.val);
	free(o->root);
	memset(o, 0, sizeof *o);
}

char *spanwalk_root_name(const char *proc, const char *thread, uint32_t pid, uint32_t tid)
{
	char *out;
	const char *name = tid && thread && *thread ? thread : proc;
	pid = span_real_pid(pid); /* a merged report's moved pids are not the target's */
	tid = span_real_pid(tid);
	int n = tid ? asprintf(&out, "%s-%" PRIu32 "/%" PRIu32, name && *name ? name : "process",
			       pid, tid)
		    : asprintf(&out, "%s-%" PRIu32, name && *name ? name : "process", pid);
	return n < 0 ? NULL : out;
}
