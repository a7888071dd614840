/* strtab.h: interned strings with small dense ids (1..n); id 0 is "none".
 * Owns the copies.  Used by the decoder for span, thread and process names.
 * A string may be given a category (another string's id): the first one
 * given holds, and the table keeps the order they were given in. */
#ifndef SPANSTAT_STRTAB_H
#define SPANSTAT_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab {
	char **str; /* str[id], NUL-terminated */
	uint32_t *len;
	uint32_t n, cap; /* ids 1..n-1 in use; str[0] = "" */
	uint32_t *slot;	 /* open-addressing hash of ids */
	uint32_t nslot;
	uint32_t *cat;	  /* cat[id]: its category's id, 0 none (ncat of them) */
	uint32_t ncat;	  /* 0 until a category is given */
	uint32_t *catlog; /* the ids given a category, in that order */
	uint32_t ncatlog, capcatlog;
};

int strtab_init(struct strtab *t);
void strtab_release(struct strtab *t);
/* Returns the id of the string (adding it), or 0 on -ENOMEM. */
uint32_t strtab_intern(struct strtab *t, const char *s, size_t len);
/* Returns the id of the string if it is interned, else 0; never adds. */
uint32_t strtab_lookup(const struct strtab *t, const char *s, size_t len);
/* Gives string id the category id cat (both interned, cat not 0): 1 when
 * set, 0 when id had one already (it keeps it), -ENOMEM. */
int strtab_set_cat(struct strtab *t, uint32_t id, uint32_t cat);
/* The id of string id's category, 0 for none. */
static inline uint32_t strtab_cat(const struct strtab *t, uint32_t id)
{
	return id < t->ncat ? t->cat[id] : 0;
}
static inline const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return id < t->n ? t->str[id] : "";
}

#endif
