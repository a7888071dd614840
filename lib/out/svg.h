/* svg.h: the flame graph drawn from a tree of its own, outside the writer
 * (svg.c): spanstat diff's differential flame graph. */
#ifndef SPANSTAT_SVG_H
#define SPANSTAT_SVG_H

#include <stdint.h>
#include <stdio.h>

#include "spantree.h"
#include "strtab.h"

/* t's frames as wide as its new self times summed up the stack, names from
 * names; each frame red as much as it grew over old_self (per node, the old
 * self value, summed the same way), blue as much as it shrank, white
 * unchanged; its tooltip the old and new values and the change; titled
 * "OLD -> NEW", the names of what was compared.  0, -ENOMEM or -EIO. */
int svg_flamegraph_diff(FILE *fp, const struct span_tree *t, const struct strtab *names,
			const uint64_t *old_self, const char *old, const char *new);

#endif
