/* spanargs.h: typed arguments (spanstat_arg_*, SPAN_ARG) aggregated per
 * call-tree node and key: count, sum, min and max of numbers; for strings,
 * the counts of the first SPANARGS_STRS distinct texts and of the rest.
 * A span_tree owns its struct span_args (NULL until its first argument);
 * entries hold strtab ids, not texts. */
#ifndef SPANSTAT_SPANARGS_H
#define SPANSTAT_SPANARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "spanev.h"
#include "u64map.h"

#define SPANARGS_STRS 64u /* distinct strings counted per node and key */
#define SPANARGS_TOP 5u	  /* of those, the most frequent an output shows */

struct span_arg_str {
	uint32_t text; /* strtab id */
	uint64_t count;
};

/* One node's values of one key and type. */
struct span_arg {
	uint32_t node, key; /* node index, key's strtab id */
	unsigned type;	    /* enum span_arg_type */
	uint32_t next;	    /* the node's next entry + 1 (0: none) */
	uint64_t count;
	__int128 sum;		  /* I64, U64; BOOL: how many were true */
	int64_t imin, imax;	  /* I64 */
	uint64_t umin, umax;	  /* U64 */
	double fsum, fmin, fmax;  /* F64 */
	struct span_arg_str *str; /* STR: the first SPANARGS_STRS texts */
	uint32_t nstr;
	uint64_t others; /* STR: values of texts past those */
};

struct span_args {
	struct span_arg *a;
	uint32_t n, cap;
	struct u64map ix;   /* (node, type, key) -> entry + 1 */
	struct u64map head; /* node -> its first entry + 1 */
};

/* Adds a value (bits as SPAN_ARG's) of key at node.  0 or -ENOMEM. */
int span_args_add(struct span_args *sa, uint32_t node, uint32_t key, unsigned type, uint64_t bits);
/* Adds entry e (of another tree) to node's.  0 or -ENOMEM. */
int span_args_merge(struct span_args *sa, uint32_t node, const struct span_arg *e);
/* Node's first entry, or NULL; then span_args_next. */
const struct span_arg *span_args_first(const struct span_args *sa, uint32_t node);
const struct span_arg *span_args_next(const struct span_args *sa, const struct span_arg *e);
/* The sum of node's numbers of key (i64, u64 and f64 alike; a negative
 * sum counts 0, as a NaN one does; a fraction is dropped), for
 * --weight=arg:KEY. */
uint64_t span_args_weight(const struct span_args *sa, uint32_t node, uint32_t key);
/* Whether any node got a number (i64, u64, f64) of key. */
bool span_args_has_number(const struct span_args *sa, uint32_t key);
/* e's texts, the most frequent first (ties: first seen first), at most
 * SPANARGS_TOP into out; returns how many. */
unsigned span_args_top(const struct span_arg *e, struct span_arg_str *out);
/* The name of a type: "i64", "u64", "f64", "bool", "string". */
const char *span_args_type_name(unsigned type);
void span_args_free(struct span_args *sa);

#endif
