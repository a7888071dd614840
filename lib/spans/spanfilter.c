/* spanfilter.c: spanstat's side of the span filters (spanfilter.h): the
 * checks of --min-duration's TIME and of the globs, and the SPANSTAT_FILTER
 * text the span library parses (lib/span/filter.c). */
#include "config.h"

#include "spanfilter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPANFILTER_NUM_MAX UINT64_C(1000000000000000000) /* the span library's limit */

void spanfilter_init(struct spanfilter *f)
{
	memset(f, 0, sizeof *f);
}

void spanfilter_release(struct spanfilter *f)
{
	free(f->filter);
	free(f->exclude);
	memset(f, 0, sizeof *f);
}

bool spanfilter_any(const struct spanfilter *f)
{
	return f->min_ns || f->max_depth || f->nfilter || f->nexclude;
}

int spanfilter_parse_time(const char *s, uint64_t *ns, const char **why)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} unit[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
	size_t digits = strspn(s, "0123456789");
	*why = "expected a whole number and a unit: ns, us, ms or s (e.g. 500us)";
	if (digits == 0 || digits > 19)
		return -EINVAL;
	uint64_t v = strtoull(s, NULL, 10);
	for (size_t i = 0; i < sizeof unit / sizeof unit[0]; i++) {
		if (strcmp(s + digits, unit[i].name) != 0)
			continue;
		if (v == 0 || v > (uint64_t)SPANFILTER_TIME_MAX_S * 1000000000u / unit[i].ns) {
			*why = "expected a time from 1ns to 1000000s";
			return -EINVAL;
		}
		*ns = v * unit[i].ns;
		return 0;
	}
	return -EINVAL;
}

int spanfilter_add(struct spanfilter *f, bool exclude, const char *glob, const char **why)
{
	if (!*glob) {
		*why = "expected a pattern";
		return -EINVAL;
	}
	if (strcmp(glob, "cat:") == 0) {
		*why = "expected a category pattern after cat:";
		return -EINVAL;
	}
	if (strchr(glob, '\n')) {
		*why = "a pattern cannot contain a newline";
		return -EINVAL;
	}
	const char ***v = exclude ? &f->exclude : &f->filter;
	size_t *n = exclude ? &f->nexclude : &f->nfilter;
	const char **p = realloc(*v, (*n + 1) * sizeof *p);
	if (!p)
		return -ENOMEM;
	p[(*n)++] = glob;
	*v = p;
	return 0;
}

uint64_t spanfilter_ticks(uint64_t ns, const struct spanclock *tsc)
{
	/* the decoder turns ticks into ns as (ticks * mult) >> shift: the
	 * smallest tick count that comes to at least ns */
	if (!tsc->mult)
		return ns;
	unsigned __int128 t = (((unsigned __int128)ns << tsc->shift) + tsc->mult - 1) / tsc->mult;
	return t > SPANFILTER_NUM_MAX ? SPANFILTER_NUM_MAX : (uint64_t)t;
}

static int spanfilter_line(FILE *fp, const char *key, const char *const *glob, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fprintf(fp, "%s=%s\n", key, glob[i]) < 0)
			return -1;
	return 0;
}

int spanfilter_spec(const struct spanfilter *f, const struct spanclock *tsc, char **out)
{
	size_t len;
	FILE *fp = open_memstream(out, &len);
	if (!fp)
		return -ENOMEM;
	int r = 0;
	if (f->min_ns) {
		uint64_t min = tsc && tsc->valid ? spanfilter_ticks(f->min_ns, tsc) : f->min_ns;
		r |= fprintf(fp, "min=%llu\n", (unsigned long long)min) < 0;
	}
	if (f->max_depth)
		r |= fprintf(fp, "depth=%u\n", f->max_depth) < 0;
	r |= spanfilter_line(fp, "filter", f->filter, f->nfilter);
	r |= spanfilter_line(fp, "exclude", f->exclude, f->nexclude);
	if (fclose(fp) != 0 || r) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}
