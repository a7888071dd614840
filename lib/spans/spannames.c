/* spannames.c: the shown text and location of span names (spannames.h):
 * three arrays indexed by name id, grown as names are defined. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spannames.h"

void spannames_init(struct spannames *v, const struct strtab *strings)
{
	memset(v, 0, sizeof *v);
	v->strings = strings;
}

void spannames_release(struct spannames *v)
{
	free(v->text);
	free(v->file);
	free(v->line);
	spannames_init(v, v->strings);
}

static int spannames_grow(uint32_t **a, uint32_t n, uint32_t to)
{
	uint32_t *p = realloc(*a, to * sizeof *p);
	if (!p)
		return -ENOMEM;
	memset(p + n, 0, (to - n) * sizeof *p);
	*a = p;
	return 0;
}

int spannames_set(struct spannames *v, uint32_t id, uint32_t text, uint32_t file, uint32_t line)
{
	if (!id || !text)
		return -EINVAL;
	if (id >= v->n) {
		uint32_t to = v->n ? v->n : 256;
		while (to <= id) {
			if (to > UINT32_MAX / 2)
				return -ENOMEM;
			to *= 2;
		}
		/* grown one by one: v->n only moves once all three have room */
		if (spannames_grow(&v->text, v->n, to) < 0 ||
		    spannames_grow(&v->file, v->n, to) < 0 ||
		    spannames_grow(&v->line, v->n, to) < 0)
			return -ENOMEM;
		v->n = to;
	}
	v->text[id] = text;
	v->file[id] = file;
	v->line[id] = line;
	return 0;
}
