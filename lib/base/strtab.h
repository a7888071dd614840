/* strtab.h: interned strings with small dense ids (1..n); id 0 is "none".
 * Owns the copies.  Used by the decoder for span, thread and process names. */
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
};

int strtab_init(struct strtab *t);
void strtab_release(struct strtab *t);
/* Returns the id of the string (adding it), or 0 on -ENOMEM. */
uint32_t strtab_intern(struct strtab *t, const char *s, size_t len);
/* Returns the id of the string if it is interned, else 0; never adds. */
uint32_t strtab_lookup(const struct strtab *t, const char *s, size_t len);
static inline const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return id < t->n ? t->str[id] : "";
}

#endif
