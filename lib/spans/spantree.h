/* spantree.h: aggregation of balanced span events (a span_sink) into one call
 * tree per thread, keyed by stack path, plus a merged tree on demand.
 * Memory grows with unique stacks, not with span count. */
#ifndef SPANSTAT_SPANTREE_H
#define SPANSTAT_SPANTREE_H

#include <stddef.h>
#include <stdint.h>

#include "spanargs.h"
#include "spanev.h"

/* A message a thread put on its timeline (spanstat_message). */
struct span_message {
	uint64_t ts;
	char *text; /* NUL-terminated copy (the text has no NUL) */
};

/* Messages kept per thread, in the order they came; the rest are counted. */
#define SPANTREE_MESSAGES 64u

struct span_node {
	uint32_t name;			    /* strtab id; the root has 0 */
	uint32_t parent;		    /* index in the tree's nodes; root: itself (0) */
	uint32_t first_child, next_sibling; /* 0: none */
	uint64_t count;			    /* finished spans at this path */
	uint64_t total_ns;
	uint64_t child_ns;   /* total of direct children: self = total - child */
	uint64_t unfinished; /* of count, closed by spanstat */
	uint32_t hot;	     /* private: the child found last (lookup cache) */
	uint32_t succ;	     /* private: the sibling found after this one last */
};

struct span_tree {
	uint32_t pid, tid;
	uint32_t thread_name; /* strtab id or 0 */
	uint32_t process_name;
	unsigned run;		/* the run (-r) it ran in, from 0 */
	struct span_node *node; /* node[0] is the root; a parent's index is
				 * always below its children's */
	uint32_t n, cap;
	uint64_t first_ts, last_ts;	 /* extent of this thread's events (0: none) */
	uint64_t instants, counters;	 /* this thread's */
	uint64_t dmg[SPAN_DAMAGE_KINDS]; /* what its data lost, by enum span_damage */
	unsigned nval;			 /* values per span (spanmetric.h) */
	uint64_t *val;			 /* per node: nval totals, then nval of its
					  * direct children's totals (span_node_vals) */
	uint64_t *wait;			 /* per node: ns waited for room inside its spans (all, off
					  * the CPU): SPAN_NOTE_WAITED; NULL when none */
	uint32_t nwait;			 /* nodes `wait` has room for */
	/* its messages, kept or not, and the first SPANTREE_MESSAGES of them */
	uint64_t messages;
	struct span_message *msg;
	uint32_t nmsg;
	/* typed arguments per node (spanargs.h), NULL: none; those not kept
	 * (out of memory), and those the target could not keep (aggregating) */
	struct span_args *args;
	uint64_t args_lost, args_unkept;
	/* private: child lookup and the open stack */
	uint32_t *hash;
	uint32_t nhash;
	uint32_t *stack;
	uint32_t depth, stack_cap;
};

/* Async spans (SPAN_ASYNC_*) by path: a path is the async spans entered on
 * the beginning thread when it began (innermost last), then its name; rows
 * form a tree under row 0, the async root (name 0), a parent's index below
 * its children's.  Times are over finished spans (spanstat ended the
 * unfinished ones, which count too): total = end - begin, busy = when some
 * thread had it entered, idle = total - busy. */
struct span_async_path {
	uint32_t name, parent;
	uint64_t count, unfinished;
	uint64_t total_ns, busy_ns;
	uint64_t enters;
	uint64_t moved; /* of count, entered by more than one thread */
};

struct span_trees {
	struct span_tree **thread; /* in order of first appearance */
	size_t nthread, cap;
	uint64_t first_ts, last_ts; /* extent of all events */
	uint64_t instants, counters;
	uint64_t messages;	       /* all threads', kept or not */
	uint64_t args;		       /* typed arguments, all threads' */
	uint64_t args_unkept;	       /* arguments threads aggregating in the target
					* could not keep (span_import) */
	struct span_async_path *apath; /* napath rows (0 or at least 1: the root) */
	size_t napath, capapath;
	uint64_t untracked; /* spans not aggregated: SPANTREE_MAX_NODES reached
			     * (or out of memory); their time stays in the
			     * parent's self time */
	size_t nodes;	    /* over all threads */
	unsigned nval;	    /* values per span: span_trees_set_values */
	unsigned run;	    /* the run new threads belong to (-r, from 0) */
	/* private */
	struct span_async_open {
		uint32_t pid, path;
		uint64_t aid;
	} * aopen; /* the async spans open, and their rows */
	size_t naopen, capaopen;
	struct span_tree *last;
	void *index;
	uint32_t *proc_name;
	size_t nproc_name; /* by pid slot */
};

/* Nodes over all per-thread trees (a merged tree never has more). */
#define SPANTREE_MAX_NODES (1u << 22)

int span_trees_init(struct span_trees *st);
void span_trees_release(struct span_trees *st);
/* Every span carries k values (spanmetric.h) that nodes sum; before any event. */
int span_trees_set_values(struct span_trees *st, unsigned k);
/* The span_sink callback; arg is the struct span_trees. */
void span_trees_event(void *arg, const struct span_event *ev);
/* A thread's call tree aggregated elsewhere (by the target, ring.h), to add
 * to the thread's tree: node 0 is the root, parent[i] < i; a node named 0
 * is not kept (nor anything under it), its spans count as untracked. */
struct span_import {
	uint32_t pid, tid, n;
	const uint32_t *parent, *name;
	const uint64_t *count, *total_ns, *unfinished;
	const uint64_t *vals;	    /* n rows of the tree's nval totals, or NULL */
	uint64_t first_ts, last_ts; /* the thread's extent */
	uint64_t instants, counters, untracked;
	uint64_t args; /* arguments the target could not keep */
};
/* 0, or -ENOMEM (what could not be kept counts as untracked). */
int span_trees_import(struct span_trees *st, const struct span_import *im);
/* Removes the instrumentation's own cost from every span's time (--compensate):
 * a span holds about one event of its own (half its begin, half its end) and
 * two whole events per span below it, each costing event_ns, and every wait
 * for room in spanstat's buffers told while it was open (SPAN_NOTE_WAITED),
 * whose off-CPU part also leaves value `off` (the on/off-CPU split's index
 * in the values, or -1); totals never go below zero, and parents' child
 * times follow.  Returns the ns removed from the self times, in all. */
uint64_t span_trees_compensate(struct span_trees *st, double event_ns, int off);
/* Merge every thread's tree into out (matching paths by name); out needs no
 * initialisation and is released with span_tree_release.  0 or -ENOMEM. */
int span_trees_merge(const struct span_trees *st, struct span_tree *out);
void span_tree_release(struct span_tree *t);
/* The async rows summed by name (each a child of the root; row 0 the root),
 * in order of first appearance; *out is the caller's to free.  0 or -ENOMEM. */
int span_trees_async_names(const struct span_trees *st, struct span_async_path **out, size_t *n);

static inline uint64_t span_node_self(const struct span_node *n)
{
	return n->total_ns > n->child_ns ? n->total_ns - n->child_ns : 0;
}

/* Node i's value totals (t->nval), then its children's. */
static inline const uint64_t *span_node_vals(const struct span_tree *t, uint32_t i)
{
	return t->val + (size_t)i * 2 * t->nval;
}

/* Node i's self value k: its total less its children's (never below 0). */
static inline uint64_t span_node_val_self(const struct span_tree *t, uint32_t i, unsigned k)
{
	const uint64_t *v = span_node_vals(t, i);
	return v[k] > v[t->nval + k] ? v[k] - v[t->nval + k] : 0;
}

/* Off-CPU time that no span holds though it must.  A span's children never
 * overlap and lie inside it, so their CPU time (total - off-CPU) cannot
 * exceed its own; nor can a thread's outermost spans' exceed what the
 * thread ran, as the kernel's switches tell, between its first and last
 * event.  off_at(ctx, pid, tid, ns) is the thread's cumulative off-CPU ns
 * at ns (offcpu_at), as the kernel's switches tell.  Where they do, a switch was lost or missed (a
 * SWITCHED note that found no room, say) and the split of the spans below is incomplete:
 * damage(ctx, pid, tid, ts, excess) for each such thread of st, its off-CPU
 * value at index oc, with the excess; ts is its last event's.  A thread
 * whose pid is not of pid_base's file (span_real_pid's high bits) is left
 * out; pid_base and ts_shift are taken off the others' ids and times (a
 * report of several files).  The run of the session (live) and of its
 * record's replay (report) alike. */
void span_trees_offcpu_check(const struct span_trees *st, int oc, uint32_t pid_base,
			     int64_t ts_shift,
			     uint64_t (*off_at)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns),
			     void (*damage)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts,
					    uint64_t excess),
			     void *ctx);

#endif
