/* spanfilter.h: the span filters as spanstat sees them (--min-duration,
 * --max-depth, --filter, --exclude): checking the user's values, and
 * writing them as SPANSTAT_FILTER's value for the span library, whose
 * lib/span/filter.h describes the format and decides inside the target.
 * The globs are borrowed from the caller (argv); a spanfilter owns only its
 * two arrays. */
#ifndef SPANSTAT_SPANFILTER_H
#define SPANSTAT_SPANFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder.h"

#define SPANFILTER_TIME_MAX_S 1000000u /* --min-duration at most this many seconds */

struct spanfilter {
	uint64_t min_ns;    /* 0: none */
	unsigned max_depth; /* 0: none */
	const char **filter, **exclude;
	size_t nfilter, nexclude;
};

void spanfilter_init(struct spanfilter *f);
void spanfilter_release(struct spanfilter *f);
/* Whether any filter is set. */
bool spanfilter_any(const struct spanfilter *f);
/* A TIME: a whole number followed by ns, us, ms or s, from 1ns to
 * SPANFILTER_TIME_MAX_S seconds.  0, or -EINVAL (*why says what was
 * expected). */
int spanfilter_parse_time(const char *s, uint64_t *ns, const char **why);
/* Adds a --filter (exclude false) or --exclude GLOB; -EINVAL when it is
 * empty or holds a newline (*why says so), -ENOMEM. */
int spanfilter_add(struct spanfilter *f, bool exclude, const char *glob, const char **why);
/* ns in the ticks of a TSC clock, rounded up. */
uint64_t spanfilter_ticks(uint64_t ns, const struct spanclock *tsc);
/* SPANSTAT_FILTER's value (without the name) in *out, which the caller
 * frees: the min duration in TSC ticks when tsc is given, else in ns.
 * 0 or -ENOMEM. */
int spanfilter_spec(const struct spanfilter *f, const struct spanclock *tsc, char **out);

#endif
