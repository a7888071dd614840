/* spantree.c: aggregation of balanced span events into call trees
 * (spantree.h).  One tree per (pid, tid), created at the thread's first event
 * (so a tree may hold only its root); a node per unique stack path, found
 * from its parent through a prediction (the child the parent used last, or
 * the sibling that followed that child last time: the common case of
 * repeating stacks) or else an open-addressing hash keyed by (parent, name).
 * The open stack holds node indices; a span that could not get a node (node
 * limit, out of memory) is pushed as SPANTREE_UNTRACKED, and so are the spans
 * inside it, so the stack stays balanced.  Children are linked newest first.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "spantree.h"
#include "grow.h"
#include "stats.h"
#include "u64map.h"

#define SPANTREE_UNTRACKED UINT32_MAX

struct span_trees_index {
	struct u64map thread; /* (pid, tid) -> index in st->thread + 1 */
	struct u64map proc;   /* pid -> process name id + 1 */
	struct u64map async;  /* span_async_key -> index in st->aopen + 1 */
	struct u64map arow;   /* async row's parent << 32 | name -> its index */
	size_t aunmapped;     /* open async spans not in async (a key taken) */
};

/* ---- one tree ------------------------------------------------------- */

static int span_tree_init(struct span_tree *t, uint32_t pid, uint32_t tid, unsigned nval)
{
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->tid = tid;
	t->cap = 16;
	t->nval = nval;
	t->node = calloc(t->cap, sizeof *t->node);
	if (nval && !(t->val = calloc((size_t)t->cap * 2 * nval, sizeof *t->val))) {
		free(t->node);
		t->node = NULL;
	}
	t->nhash = 32;
	t->hash = calloc(t->nhash, sizeof *t->hash);
	t->stack_cap = 16;
	t->stack = malloc(t->stack_cap * sizeof *t->stack);
	if (!t->node || !t->hash || !t->stack) {
		span_tree_release(t);
		return -ENOMEM;
	}
	t->n = 1; /* the root: name 0, its own parent */
	return 0;
}

void span_tree_release(struct span_tree *t)
{
	free(t->node);
	free(t->val);
	free(t->hash);
	free(t->stack);
	free(t->wait);
	for (uint32_t i = 0; i < t->nmsg; i++)
		free(t->msg[i].text);
	free(t->msg);
	span_args_free(t->args);
	memset(t, 0, sizeof *t);
}

static inline uint32_t span_tree_slot(uint32_t parent, uint32_t name, uint32_t nhash)
{
	uint64_t k = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15u;
	return (uint32_t)(k >> 32) & (nhash - 1);
}

static int span_tree_rehash(struct span_tree *t)
{
	uint32_t nhash = t->nhash * 2;
	uint32_t *hash = calloc(nhash, sizeof *hash);
	if (!hash)
		return -ENOMEM;
	for (uint32_t i = 1; i < t->n; i++) {
		uint32_t s = span_tree_slot(t->node[i].parent, t->node[i].name, nhash);
		while (hash[s])
			s = (s + 1) & (nhash - 1);
		hash[s] = i;
	}
	free(t->hash);
	t->hash = hash;
	t->nhash = nhash;
	return 0;
}

/* The child of parent named name, created if needed (if *budget allows);
 * SPANTREE_UNTRACKED when it cannot be. */
static uint32_t span_tree_child(struct span_tree *t, uint32_t parent, uint32_t name, size_t *budget)
{
	struct span_node *pn = &t->node[parent];
	uint32_t hot = pn->hot;
	if (hot) {
		/* repeating stacks: the sibling that followed last time, or the
		 * same child again */
		uint32_t next = t->node[hot].succ;
		if (next && t->node[next].name == name) {
			pn->hot = next;
			return next;
		}
		if (t->node[hot].name == name)
			return hot;
	}
	uint32_t mask = t->nhash - 1, s = span_tree_slot(parent, name, t->nhash);
	for (uint32_t i; (i = t->hash[s]) != 0; s = (s + 1) & mask) {
		if (t->node[i].parent == parent && t->node[i].name == name) {
			if (hot)
				t->node[hot].succ = i;
			pn->hot = i;
			return i;
		}
	}
	if (!*budget)
		return SPANTREE_UNTRACKED;
	if (t->n == t->cap) {
		size_t row = 2 * (size_t)t->nval;
		if (row) {
			uint64_t *val = realloc(t->val, 2 * (size_t)t->cap * row * sizeof *val);
			if (!val)
				return SPANTREE_UNTRACKED;
			t->val = val;
		}
		struct span_node *node = realloc(t->node, 2 * (size_t)t->cap * sizeof *node);
		if (!node)
			return SPANTREE_UNTRACKED;
		t->node = node;
		t->cap *= 2;
	}
	uint32_t i = t->n++;
	struct span_node *nd = &t->node[i];
	memset(nd, 0, sizeof *nd);
	if (t->nval)
		memset(t->val + (size_t)i * 2 * t->nval, 0, 2 * (size_t)t->nval * sizeof *t->val);
	nd->name = name;
	nd->parent = parent;
	nd->next_sibling = t->node[parent].first_child;
	t->node[parent].first_child = i;
	if (hot)
		t->node[hot].succ = i;
	t->node[parent].hot = i;
	t->hash[s] = i;
	(*budget)--;
	if ((uint64_t)t->n * 2 > t->nhash && span_tree_rehash(t) < 0) {
		/* cannot index more: undo, the span goes untracked */
		t->hash[s] = 0;
		t->node[parent].first_child = nd->next_sibling;
		t->node[parent].hot = 0;
		if (hot)
			t->node[hot].succ = 0;
		t->n--;
		(*budget)++;
		return SPANTREE_UNTRACKED;
	}
	return i;
}

/* ---- the sink ------------------------------------------------------- */

int span_trees_set_values(struct span_trees *st, unsigned k)
{
	if (st->nthread)
		return -EINVAL;
	st->nval = k;
	return 0;
}

/* Adds a span's values (or a node's totals) to node i, and to its parent's
 * children's. */
static void span_tree_add_vals(struct span_tree *t, uint32_t i, const uint64_t *v)
{
	if (!t->nval || !v)
		return;
	uint64_t *self = t->val + (size_t)i * 2 * t->nval;
	uint64_t *up = t->val + (size_t)t->node[i].parent * 2 * t->nval + t->nval;
	for (unsigned k = 0; k < t->nval; k++) {
		self[k] += v[k];
		up[k] += v[k];
	}
}

int span_trees_init(struct span_trees *st)
{
	memset(st, 0, sizeof *st);
	st->index = calloc(1, sizeof(struct span_trees_index));
	return st->index ? 0 : -ENOMEM;
}

void span_trees_release(struct span_trees *st)
{
	for (size_t i = 0; i < st->nthread; i++) {
		span_tree_release(st->thread[i]);
		free(st->thread[i]);
	}
	free(st->thread);
	free(st->apath);
	free(st->aopen);
	struct span_trees_index *ix = st->index;
	if (ix) {
		u64map_release(&ix->thread);
		u64map_release(&ix->proc);
		u64map_release(&ix->async);
		u64map_release(&ix->arow);
		free(ix);
	}
	memset(st, 0, sizeof *st);
}

static struct span_tree *span_trees_tree(struct span_trees *st, uint32_t pid, uint32_t tid)
{
	struct span_trees_index *ix = st->index;
	uint64_t key = (uint64_t)pid << 32 | tid;
	uint32_t i = u64map_get(&ix->thread, key);
	if (i) {
		st->last = st->thread[i - 1];
		return st->last;
	}
	if (GROW(st->thread, st->nthread + 1, st->cap, 16) < 0)
		return NULL;
	struct span_tree *t = malloc(sizeof *t);
	if (!t || span_tree_init(t, pid, tid, st->nval) < 0) {
		free(t);
		return NULL;
	}
	if (u64map_put(&ix->thread, key, (uint32_t)st->nthread + 1) < 0) {
		span_tree_release(t);
		free(t);
		return NULL;
	}
	uint32_t pn = u64map_get(&ix->proc, pid);
	t->process_name = pn ? pn - 1 : 0;
	t->run = st->run;
	st->thread[st->nthread++] = t;
	st->last = t;
	return t;
}

static void span_trees_process(struct span_trees *st, const struct span_event *ev)
{
	struct span_trees_index *ix = st->index;
	bool known = u64map_get(&ix->proc, ev->pid) != 0;
	u64map_put(&ix->proc, ev->pid, ev->name + 1);
	if (known) /* renamed (exec): rare, so a scan is fine */
		for (size_t i = 0; i < st->nthread; i++)
			if (st->thread[i]->pid == ev->pid)
				st->thread[i]->process_name = ev->name;
}

static void span_trees_begin(struct span_trees *st, struct span_tree *t,
			     const struct span_event *ev)
{
	if (t->depth == t->stack_cap) {
		uint32_t *s = realloc(t->stack, 2 * (size_t)t->stack_cap * sizeof *s);
		if (!s) { /* the decoder bounds depth, so only out of memory */
			st->untracked++;
			return;
		}
		t->stack = s;
		t->stack_cap *= 2;
	}
	uint32_t parent = t->depth ? t->stack[t->depth - 1] : 0;
	uint32_t node = SPANTREE_UNTRACKED;
	if (parent != SPANTREE_UNTRACKED) {
		size_t budget = SPANTREE_MAX_NODES - st->nodes;
		node = span_tree_child(t, parent, ev->name, &budget);
		st->nodes = SPANTREE_MAX_NODES - budget;
	}
	if (node == SPANTREE_UNTRACKED)
		st->untracked++;
	t->stack[t->depth++] = node;
}

static void span_trees_end(struct span_tree *t, const struct span_event *ev)
{
	if (!t->depth)
		return;
	uint32_t i = t->stack[--t->depth];
	if (i == SPANTREE_UNTRACKED)
		return;
	uint64_t dur = ev->ts > ev->begin_ts ? ev->ts - ev->begin_ts : 0;
	struct span_node *n = &t->node[i];
	n->count++;
	n->total_ns += dur;
	n->unfinished += ev->flags & SPAN_F_UNFINISHED;
	t->node[n->parent].child_ns += dur;
	span_tree_add_vals(t, i, ev->vals);
}

/* A wait for room (SPAN_NOTE_WAITED, or its off-CPU part): every span open
 * now holds it. */
static void span_trees_waited(struct span_tree *t, bool off, uint64_t ns)
{
	if (t->nwait < t->n) {
		uint64_t *w = realloc(t->wait, 2 * (size_t)t->cap * sizeof *w);
		if (!w)
			return; /* the wait stays in the span times, as uncompensated */
		memset(w + 2 * (size_t)t->nwait, 0, 2 * (size_t)(t->cap - t->nwait) * sizeof *w);
		t->wait = w;
		t->nwait = t->cap;
	}
	for (uint32_t k = 0; k < t->depth; k++) {
		uint32_t i = t->stack[k];
		if (i == SPANTREE_UNTRACKED)
			continue;
		uint64_t *w = &t->wait[2 * (size_t)i + off];
		*w = stats_sat_add(*w, ns);
	}
}

/* A message of thread t: counted, and kept while t has fewer than
 * SPANTREE_MESSAGES (without memory: only counted). */
static void span_trees_message(struct span_trees *st, struct span_tree *t,
			       const struct span_event *ev)
{
	t->messages++;
	st->messages++;
	if (t->nmsg >= SPANTREE_MESSAGES)
		return;
	if (!t->msg && !(t->msg = calloc(SPANTREE_MESSAGES, sizeof *t->msg)))
		return;
	char *c = malloc((size_t)ev->len + 1);
	if (!c)
		return;
	memcpy(c, ev->text, ev->len);
	c[ev->len] = 0;
	t->msg[t->nmsg++] = (struct span_message){ev->ts, c};
}

/* The row for name under row parent, made when new; 0 (the root) when
 * memory runs out. */
static uint32_t span_async_row(struct span_trees *st, uint32_t parent, uint32_t name)
{
	if (!st->napath) {
		if (GROW(st->apath, 1, st->capapath, 16) < 0)
			return 0;
		st->apath[st->napath++] = (struct span_async_path){0};
	}
	struct span_trees_index *ix = st->index;
	uint64_t key = (uint64_t)parent << 32 | name;
	uint64_t i = u64map_get(&ix->arow, key);
	if (i)
		return (uint32_t)i;
	if (st->napath >= SPANTREE_MAX_NODES ||
	    GROW(st->apath, st->napath + 1, st->capapath, 16) < 0 ||
	    u64map_put(&ix->arow, key, st->napath) < 0)
		return 0;
	st->apath[st->napath] = (struct span_async_path){.name = name, .parent = parent};
	return (uint32_t)st->napath++;
}

/* An open async span's key in the index: two (pid, id) may share one, so
 * what it finds is checked, and the later one is left to a scan. */
static uint64_t span_async_key(uint32_t pid, uint64_t aid)
{
	return aid ^ (uint64_t)pid * UINT64_C(0xff51afd7ed558ccd);
}

static size_t span_async_find(const struct span_trees *st, uint32_t pid, uint64_t aid)
{
	const struct span_trees_index *ix = st->index;
	uint64_t v = u64map_get(&ix->async, span_async_key(pid, aid));
	if (v && st->aopen[v - 1].pid == pid && st->aopen[v - 1].aid == aid)
		return (size_t)(v - 1);
	for (size_t i = st->naopen; ix->aunmapped && i-- > 0;)
		if (st->aopen[i].pid == pid && st->aopen[i].aid == aid)
			return i;
	return SIZE_MAX;
}

/* Keeps an open async span (its row), found again by span_async_find;
 * -ENOMEM. */
static int span_async_open(struct span_trees *st, const struct span_event *ev, uint32_t row)
{
	struct span_trees_index *ix = st->index;
	if (GROW(st->aopen, st->naopen + 1, st->capaopen, 16) < 0)
		return -ENOMEM;
	uint64_t k = span_async_key(ev->pid, ev->aid);
	if (u64map_get(&ix->async, k) || u64map_put(&ix->async, k, st->naopen + 1) < 0)
		ix->aunmapped++; /* found by a scan */
	st->aopen[st->naopen++] = (struct span_async_open){ev->pid, row, ev->aid};
	return 0;
}

/* Forgets open async span i: the last takes its place. */
static void span_async_close(struct span_trees *st, size_t i)
{
	struct span_trees_index *ix = st->index;
	uint64_t k = span_async_key(st->aopen[i].pid, st->aopen[i].aid);
	if (u64map_get(&ix->async, k) == i + 1)
		u64map_del(&ix->async, k);
	else
		ix->aunmapped--;
	size_t last = --st->naopen;
	if (i == last)
		return;
	st->aopen[i] = st->aopen[last];
	k = span_async_key(st->aopen[i].pid, st->aopen[i].aid);
	if (u64map_get(&ix->async, k) == last + 1 && u64map_put(&ix->async, k, i + 1) < 0) {
		u64map_del(&ix->async, k);
		ix->aunmapped++;
	}
}

/* An async span's begin and end (the normaliser balances them); its enters
 * and exits count in its end.  Open spans are few next to thread spans: a
 * list searched from its end. */
static void span_trees_async(struct span_trees *st, const struct span_event *ev)
{
	if (!st->first_ts || ev->ts < st->first_ts)
		st->first_ts = ev->ts;
	if (ev->ts > st->last_ts)
		st->last_ts = ev->ts;
	if (ev->kind == SPAN_ASYNC_BEGIN) {
		size_t p = ev->parent ? span_async_find(st, ev->pid, ev->parent) : SIZE_MAX;
		uint32_t row = span_async_row(st, p == SIZE_MAX ? 0 : st->aopen[p].path, ev->name);
		if (!row || span_async_open(st, ev, row) < 0)
			st->untracked++;
		return;
	}
	if (ev->kind != SPAN_ASYNC_END)
		return;
	size_t i = span_async_find(st, ev->pid, ev->aid);
	if (i == SIZE_MAX)
		return; /* not kept at its begin: counted there */
	struct span_async_path *a = &st->apath[st->aopen[i].path];
	span_async_close(st, i);
	uint64_t total = ev->ts > ev->begin_ts ? ev->ts - ev->begin_ts : 0;
	uint64_t busy = ev->value > 0 ? (uint64_t)ev->value : 0;
	a->count++;
	a->unfinished += (ev->flags & SPAN_F_UNFINISHED) != 0;
	a->total_ns += total;
	a->busy_ns += busy < total ? busy : total;
	a->enters += ev->enters;
	a->moved += ev->threads > 1;
}

int span_trees_async_names(const struct span_trees *st, struct span_async_path **out, size_t *n)
{
	struct span_async_path *r = calloc(st->napath ? st->napath : 1, sizeof *r);
	struct u64map at = {0}; /* name -> its row in r */
	size_t k = 1;
	if (!r)
		return -ENOMEM;
	for (size_t i = 1; i < st->napath; i++) {
		const struct span_async_path *a = &st->apath[i];
		size_t j = (size_t)u64map_get(&at, a->name);
		if (!j) {
			if (u64map_put(&at, a->name, k) < 0) {
				u64map_release(&at);
				free(r);
				return -ENOMEM;
			}
			j = k;
			r[k++] = (struct span_async_path){.name = a->name};
		}
		r[j].count += a->count;
		r[j].unfinished += a->unfinished;
		r[j].total_ns += a->total_ns;
		r[j].busy_ns += a->busy_ns;
		r[j].enters += a->enters;
		r[j].moved += a->moved;
	}
	u64map_release(&at);
	*out = r;
	*n = st->napath ? k : 0;
	return 0;
}

/* A typed argument: to the node of the thread's innermost open span (the
 * root outside every span); one of an untracked span is not kept. */
static void span_trees_arg(struct span_trees *st, struct span_tree *t, const struct span_event *ev)
{
	st->args++;
	uint32_t node = t->depth ? t->stack[t->depth - 1] : 0;
	if (node == SPANTREE_UNTRACKED || (!t->args && !(t->args = calloc(1, sizeof *t->args))) ||
	    span_args_add(t->args, node, ev->name, ev->flags, (uint64_t)ev->value) < 0)
		t->args_lost++;
}

void span_trees_event(void *arg, const struct span_event *ev)
{
	struct span_trees *st = arg;
	if (ev->kind >= SPAN_ASYNC_BEGIN && ev->kind <= SPAN_ASYNC_END) {
		span_trees_async(st, ev);
		return;
	}
	if (ev->kind == SPAN_PROCESS) {
		span_trees_process(st, ev);
		return;
	}
	if (ev->kind == SPAN_PROCESS_END)
		return;
	struct span_tree *t = st->last;
	if (!t || t->pid != ev->pid || t->tid != ev->tid) {
		t = span_trees_tree(st, ev->pid, ev->tid);
		if (!t) {
			if (ev->kind == SPAN_BEGIN)
				st->untracked++;
			return;
		}
	}
	if (ev->kind == SPAN_THREAD) {
		if (ev->name)
			t->thread_name = ev->name;
		return;
	}
	if (ev->kind == SPAN_DAMAGE) { /* not an event of the thread's: no extent */
		if (ev->depth >= SPAN_DMG_DROPPED && ev->depth < SPAN_DAMAGE_KINDS &&
		    ev->value > 0) {
			uint64_t *d = &t->dmg[ev->depth];
			*d = stats_sat_add(*d, (uint64_t)ev->value);
			if (ev->depth == SPAN_NOTE_WAITED || ev->depth == SPAN_NOTE_WAITED_OFF)
				span_trees_waited(t, ev->depth == SPAN_NOTE_WAITED_OFF,
						  (uint64_t)ev->value);
		}
		return;
	}
	if (!t->first_ts || ev->ts < t->first_ts)
		t->first_ts = ev->ts;
	if (ev->ts > t->last_ts)
		t->last_ts = ev->ts;
	if (!st->first_ts || ev->ts < st->first_ts)
		st->first_ts = ev->ts;
	if (ev->ts > st->last_ts)
		st->last_ts = ev->ts;
	switch (ev->kind) {
	case SPAN_BEGIN:
		span_trees_begin(st, t, ev);
		break;
	case SPAN_END:
		span_trees_end(t, ev);
		break;
	case SPAN_INSTANT:
		t->instants++;
		st->instants++;
		break;
	case SPAN_COUNTER:
		t->counters++;
		st->counters++;
		break;
	case SPAN_MESSAGE:
		span_trees_message(st, t, ev);
		break;
	case SPAN_ARG:
		span_trees_arg(st, t, ev);
		break;
	default:
		break;
	}
}

static void span_trees_extent(struct span_trees *st, struct span_tree *t, uint64_t first,
			      uint64_t last)
{
	if (first && (!t->first_ts || first < t->first_ts))
		t->first_ts = first;
	if (last > t->last_ts)
		t->last_ts = last;
	if (first && (!st->first_ts || first < st->first_ts))
		st->first_ts = first;
	if (last > st->last_ts)
		st->last_ts = last;
}

int span_trees_import(struct span_trees *st, const struct span_import *im)
{
	st->untracked += im->untracked;
	struct span_tree *t = span_trees_tree(st, im->pid, im->tid);
	uint32_t *map = t && im->n ? malloc(im->n * sizeof *map) : NULL;
	if (!map) {
		for (uint32_t i = 1; i < im->n; i++)
			st->untracked += im->count[i];
		return t && im->n ? -ENOMEM : 0;
	}
	map[0] = 0;
	for (uint32_t i = 1; i < im->n; i++) {
		uint32_t p = im->parent[i] < i ? map[im->parent[i]] : SPANTREE_UNTRACKED;
		map[i] = SPANTREE_UNTRACKED;
		if (p != SPANTREE_UNTRACKED && im->name[i]) {
			size_t budget = SPANTREE_MAX_NODES - st->nodes;
			map[i] = span_tree_child(t, p, im->name[i], &budget);
			st->nodes = SPANTREE_MAX_NODES - budget;
		}
		if (map[i] == SPANTREE_UNTRACKED) {
			st->untracked += im->count[i];
			continue;
		}
		struct span_node *nd = &t->node[map[i]];
		nd->count += im->count[i];
		nd->total_ns += im->total_ns[i];
		nd->unfinished += im->unfinished[i];
		t->node[p].child_ns += im->total_ns[i];
		if (im->vals)
			span_tree_add_vals(t, map[i], im->vals + (size_t)i * t->nval);
	}
	free(map);
	span_trees_extent(st, t, im->first_ts, im->last_ts);
	t->instants += im->instants;
	t->counters += im->counters;
	st->instants += im->instants;
	st->counters += im->counters;
	t->args_unkept += im->args;
	st->args_unkept += im->args;
	return 0;
}

/* Node i's value row: its totals, then its children's (span_node_vals). */
static uint64_t *span_trees_vals(struct span_tree *t, uint32_t i)
{
	return t->val + (size_t)i * 2 * t->nval;
}

/* Takes n's cut out of its total, and the off-CPU part of its waits out of
 * its off-CPU value `off` (an index of t->val, or -1). */
static void span_trees_cut(struct span_tree *t, uint32_t i, double cut, int off)
{
	struct span_node *n = &t->node[i];
	n->total_ns = cut >= (double)n->total_ns ? 0 : n->total_ns - (uint64_t)cut;
	if (off >= 0 && t->val) { /* never more off the CPU than it lasts */
		uint64_t *v = span_trees_vals(t, i) + off;
		uint64_t w = i < t->nwait ? t->wait[2 * (size_t)i + 1] : 0;
		*v = w >= *v ? 0 : *v - w;
		if (*v > n->total_ns)
			*v = n->total_ns;
	}
}

uint64_t span_trees_compensate(struct span_trees *st, double event_ns, int off)
{
	uint64_t removed = 0;
	for (size_t k = 0; k < st->nthread; k++) {
		struct span_tree *t = st->thread[k];
		uint64_t *below = calloc(t->n ? t->n : 1, sizeof *below);
		if (!below)
			continue;
		if (off >= 0 && (unsigned)off >= t->nval)
			off = -1;
		/* spans under each node, children before parents (parents' indexes
		 * are always lower) */
		for (uint32_t i = t->n; i-- > 1;)
			below[t->node[i].parent] += below[i] + t->node[i].count;
		uint64_t self_before = 0, self_after = 0;
		for (uint32_t i = 1; i < t->n; i++)
			self_before += span_node_self(&t->node[i]);
		for (uint32_t i = 1; i < t->n; i++) {
			double cut = event_ns * ((double)t->node[i].count + 2.0 * (double)below[i]);
			if (i < t->nwait)
				cut += (double)t->wait[2 * (size_t)i];
			span_trees_cut(t, i, cut, off);
		}
		for (uint32_t i = 0; i < t->n; i++)
			t->node[i].child_ns = 0;
		for (uint32_t i = 1; i < t->n; i++)
			t->node[t->node[i].parent].child_ns += t->node[i].total_ns;
		if (off >= 0 && t->val) { /* the children's off-CPU totals follow */
			for (uint32_t i = 0; i < t->n; i++)
				span_trees_vals(t, i)[t->nval + (unsigned)off] = 0;
			for (uint32_t i = 1; i < t->n; i++)
				span_trees_vals(t, t->node[i].parent)[t->nval + (unsigned)off] +=
					span_trees_vals(t, i)[off];
		}
		for (uint32_t i = 1; i < t->n; i++)
			self_after += span_node_self(&t->node[i]);
		removed += self_before > self_after ? self_before - self_after : 0;
		free(below);
	}
	return removed;
}

int span_trees_merge(const struct span_trees *st, struct span_tree *out)
{
	if (span_tree_init(out, 0, 0, st->nval) < 0)
		return -ENOMEM;
	uint32_t *map = NULL;
	size_t mapcap = 0;
	size_t budget = SIZE_MAX;
	for (size_t k = 0; k < st->nthread; k++) {
		const struct span_tree *t = st->thread[k];
		if (t->n > mapcap) {
			free(map);
			mapcap = t->n;
			map = malloc(mapcap * sizeof *map);
			if (!map)
				goto nomem;
		}
		map[0] = 0;
		for (uint32_t i = 0; i < t->n; i++) {
			const struct span_node *n = &t->node[i];
			if (i) {
				map[i] = span_tree_child(out, map[n->parent], n->name, &budget);
				if (map[i] == SPANTREE_UNTRACKED)
					goto nomem;
			}
			struct span_node *o = &out->node[map[i]];
			o->count += n->count;
			o->total_ns += n->total_ns;
			o->child_ns += n->child_ns;
			o->unfinished += n->unfinished;
			for (const struct span_arg *e = span_args_first(t->args, i); e;
			     e = span_args_next(t->args, e))
				if ((!out->args && !(out->args = calloc(1, sizeof *out->args))) ||
				    span_args_merge(out->args, map[i], e) < 0)
					out->args_lost += e->count;
			if (out->nval) {
				uint64_t *ov = out->val + (size_t)map[i] * 2 * out->nval;
				const uint64_t *nv = span_node_vals(t, i);
				for (unsigned k = 0; k < 2 * out->nval; k++)
					ov[k] += nv[k];
			}
		}
		if (t->first_ts && (!out->first_ts || t->first_ts < out->first_ts))
			out->first_ts = t->first_ts;
		if (t->last_ts > out->last_ts)
			out->last_ts = t->last_ts;
		out->instants += t->instants;
		out->messages += t->messages;
		out->counters += t->counters;
		out->args_lost += t->args_lost;
		out->args_unkept += t->args_unkept;
		for (size_t k = 0; k < sizeof out->dmg / sizeof out->dmg[0]; k++)
			out->dmg[k] = out->dmg[k] + t->dmg[k] < out->dmg[k]
					      ? UINT64_MAX
					      : out->dmg[k] + t->dmg[k];
	}
	free(map);
	return 0;
nomem:
	free(map);
	span_tree_release(out);
	return -ENOMEM;
}

/* The slack covers the two clocks' rounding (TSC ticks against
 * CLOCK_MONOTONIC). */
#define OFFCPU_SLACK_NS 20000u
static uint64_t oc_excess(uint64_t have, uint64_t held, uint64_t span)
{
	uint64_t slack = OFFCPU_SLACK_NS + span / 1000;
	return held > have + slack ? held - have : 0;
}

void span_trees_offcpu_check(const struct span_trees *st, int oc, uint32_t pid_base,
			     int64_t ts_shift,
			     uint64_t (*off_at)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns),
			     void (*damage)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts,
					    uint64_t excess),
			     void *ctx)
{
	if (oc < 0 || !st)
		return;
	for (size_t k = 0; k < st->nthread; k++) {
		const struct span_tree *t = st->thread[k];
		if (!t->nval || (unsigned)oc >= t->nval || t->last_ts <= t->first_ts ||
		    t->pid >> SPAN_PID_BITS != pid_base >> SPAN_PID_BITS)
			continue;
		uint32_t pid = t->pid - pid_base, tid = t->tid - pid_base;
		uint64_t first = t->first_ts - (uint64_t)ts_shift,
			 last = t->last_ts - (uint64_t)ts_shift;
		uint64_t koff = off_at(ctx, pid, tid, last) - off_at(ctx, pid, tid, first);
		uint64_t life = last - first, excess = 0;
		for (uint32_t p = 0; p < t->n; p++) {
			uint64_t have = life > koff ? life - koff : 0, span = life, held = 0;
			if (p) {
				uint64_t tot = t->node[p].total_ns, off = span_node_vals(t, p)[oc];
				have = tot > off ? tot - off : 0;
				span = tot;
			}
			for (uint32_t c = t->node[p].first_child; c && c < t->n;
			     c = t->node[c].next_sibling) {
				uint64_t tot = t->node[c].total_ns, off = span_node_vals(t, c)[oc];
				held += tot > off ? tot - off : 0;
			}
			excess += oc_excess(have, held, span);
		}
		if (excess)
			damage(ctx, pid, tid, last, excess);
	}
}
