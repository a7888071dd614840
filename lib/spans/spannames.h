/* spannames.h: how span names are shown.  A span's identity is its raw name
 * (a strtab id: the user's text, or a function's symbol; under
 * --demangle=simple the decoder gives functions that show as one text that
 * text's id, so that they are one node); what the writers
 * print is this view of it, computed once per name when the decoder defines
 * it: the text to show (the demangled symbol, per --demangle) and, for
 * functions with debug information, the source file and line.  Names without
 * an entry (user spans, thread and process names) show as they are.
 *
 * The decoder owns the view and fills it (spannames_set); writers read it
 * through spannames_text and spannames_where, never through the arrays. */
#ifndef SPANSTAT_SPANNAMES_H
#define SPANSTAT_SPANNAMES_H

#include <stdint.h>

#include "strtab.h"

struct spannames {
	const struct strtab *strings; /* the ids' strings (the decoder's) */
	uint32_t *text;		      /* by name id: the id shown, 0: the name */
	uint32_t *file;		      /* by name id: the source file's id, 0: none */
	uint32_t *line;		      /* by name id: 0: unknown */
	uint32_t n;		      /* ids below n have entries */
};

void spannames_init(struct spannames *v, const struct strtab *strings);
void spannames_release(struct spannames *v);
/* Records what name id shows as (a strtab id; id itself for no change) and
 * where it is defined (file id and line, 0 and 0 when unknown).  0 or
 * -ENOMEM (the name then shows as it is). */
int spannames_set(struct spannames *v, uint32_t id, uint32_t text, uint32_t file, uint32_t line);
/* Whether spannames_set was called for id. */
static inline int spannames_known(const struct spannames *v, uint32_t id)
{
	return v && id < v->n && v->text[id];
}
/* The id of the text to show for name id. */
static inline uint32_t spannames_shown(const struct spannames *v, uint32_t id)
{
	return spannames_known(v, id) ? v->text[id] : id;
}
/* The text to show for name id; with v NULL, the name in strings (or ""). */
static inline const char *spannames_text(const struct spannames *v, const struct strtab *strings,
					 uint32_t id)
{
	const struct strtab *t = v ? v->strings : strings;
	return t ? strtab_get(t, spannames_shown(v, id)) : "";
}
/* The category of name id (spanstat_category), NULL for none; with v NULL,
 * as strings has it. */
static inline const char *spannames_cat(const struct spannames *v, const struct strtab *strings,
					uint32_t id)
{
	const struct strtab *t = v ? v->strings : strings;
	uint32_t c = t ? strtab_cat(t, id) : 0;
	return c ? strtab_get(t, c) : NULL;
}
/* The source file (NULL when unknown) and line (0) of name id. */
static inline const char *spannames_where(const struct spannames *v, uint32_t id, uint32_t *line)
{
	if (!spannames_known(v, id) || !v->file[id]) {
		*line = 0;
		return NULL;
	}
	*line = v->line[id];
	return strtab_get(v->strings, v->file[id]);
}

#endif
