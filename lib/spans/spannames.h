/* spannames.h: how span names are shown.  A span's identity is its raw name
 * (a strtab id: the user's text, or a function's symbol; under
 * --demangle=simple the decoder gives functions that show as one text that
 * text's id, so that they are one node); what the writers
 * print is this view of it, computed once per name when the decoder defines
 * it: the text to show (the demangled symbol, per --demangle) and, for
 * functions with debug information, the source file and line.  Names without
 * an entry (user spans, thread and process names) show as they are.
 *
 * The decoder owns the view and fills it (span_names_set); writers read it
 * through span_names_text and span_names_where, never through the arrays. */
#ifndef SPANSTAT_SPANNAMES_H
#define SPANSTAT_SPANNAMES_H

#include <stdint.h>

#include "strtab.h"

struct span_names {
	const struct strtab *strings; /* the ids' strings (the decoder's) */
	uint32_t *text;		      /* by name id: the id shown, 0: the name */
	uint32_t *file;		      /* by name id: the source file's id, 0: none */
	uint32_t *line;		      /* by name id: 0: unknown */
	uint32_t n;		      /* ids below n have entries */
};

void span_names_init(struct span_names *v, const struct strtab *strings);
void span_names_release(struct span_names *v);
/* Records what name id shows as (a strtab id; id itself for no change) and
 * where it is defined (file id and line, 0 and 0 when unknown).  0 or
 * -ENOMEM (the name then shows as it is). */
int span_names_set(struct span_names *v, uint32_t id, uint32_t text, uint32_t file, uint32_t line);
/* Whether span_names_set was called for id. */
static inline int span_names_known(const struct span_names *v, uint32_t id)
{
	return v && id < v->n && v->text[id];
}
/* The id of the text to show for name id. */
static inline uint32_t span_names_shown(const struct span_names *v, uint32_t id)
{
	return span_names_known(v, id) ? v->text[id] : id;
}
/* The text to show for name id; with v NULL, the name in strings (or ""). */
static inline const char *span_names_text(const struct span_names *v, const struct strtab *strings,
					  uint32_t id)
{
	const struct strtab *t = v ? v->strings : strings;
	return t ? strtab_get(t, span_names_shown(v, id)) : "";
}
/* The source file (NULL when unknown) and line (0) of name id. */
static inline const char *span_names_where(const struct span_names *v, uint32_t id, uint32_t *line)
{
	if (!span_names_known(v, id) || !v->file[id]) {
		*line = 0;
		return NULL;
	}
	*line = v->line[id];
	return strtab_get(v->strings, v->file[id]);
}

#endif
