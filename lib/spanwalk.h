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

#endif
