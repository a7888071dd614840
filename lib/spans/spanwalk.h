/* spanwalk.h: the one walk over a call tree that the tree writers share
 * (folded stacks, pprof, and the SVG pictures to come): every node below
 * the root, depth first, a parent before its children, children in the
 * tree's order, with its depth, so that a writer keeps its own path by
 * depth.  Iterative: any depth, no recursion. */
#ifndef SPANSTAT_SPANWALK_H
#define SPANSTAT_SPANWALK_H

#include <stdint.h>

#include "spantree.h"

/* Non-zero stops the walk and is what spanwalk returns. */
typedef int (*spanwalk_fn)(void *ctx, const struct span_tree *t, uint32_t node, uint32_t depth);

int spanwalk(const struct span_tree *t, spanwalk_fn fn, void *ctx);

/* A root frame's name in spanwalk_rooted's tree: not a strtab id but
 * SPANWALK_ROOT | k, label k of the pid and tid it stands for. */
#define SPANWALK_ROOT 0x80000000u

struct spanwalk_roots {
	struct span_tree tree;
	struct spanwalk_root {
		uint32_t pid, tid; /* tid 0: the process's frame */
	} * root;
	uint32_t n;
};

/* Every thread's tree of st under two root frames, its process's and its
 * own (--folded-threads' rooting), as one tree whose root frames carry no
 * time of their own.  Release with spanwalk_roots_release.  0 or -ENOMEM. */
int spanwalk_rooted(const struct span_trees *st, struct spanwalk_roots *out);
/* A root frame's name: the process "PROCNAME-PID" (tid 0) or the thread
 * "THREADNAME-PID/TID", a thread without a name named as its process, either
 * "process" when empty.  malloc'd; NULL on ENOMEM. */
char *spanwalk_root_name(const char *proc, const char *thread, uint32_t pid, uint32_t tid);
void spanwalk_roots_release(struct spanwalk_roots *r);

#endif
