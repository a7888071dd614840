/* strtab.c: interned strings (strtab.h).  Ids are dense, 1..n-1; id 0 is the
 * empty "none" string.  Lookup is an open-addressing hash of ids with linear
 * probing, kept at most half full; strings are copied and owned here. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strtab.h"

static char strtab_empty[1];

static uint32_t strtab_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
	return (uint32_t)(h ^ (h >> 32));
}

int strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof *t);
	t->cap = 64;
	t->str = malloc(t->cap * sizeof *t->str);
	t->len = malloc(t->cap * sizeof *t->len);
	t->nslot = 128;
	t->slot = calloc(t->nslot, sizeof *t->slot);
	if (!t->str || !t->len || !t->slot) {
		strtab_release(t);
		return -ENOMEM;
	}
	t->str[0] = strtab_empty;
	t->len[0] = 0;
	t->n = 1;
	return 0;
}

void strtab_release(struct strtab *t)
{
	for (uint32_t i = 1; i < t->n; i++)
		free(t->str[i]);
	free(t->str);
	free(t->len);
	free(t->slot);
	free(t->cat);
	free(t->catlog);
	memset(t, 0, sizeof *t);
}

static int strtab_rehash(struct strtab *t)
{
	uint32_t nslot = t->nslot * 2;
	uint32_t *slot = calloc(nslot, sizeof *slot);
	if (!slot)
		return -ENOMEM;
	for (uint32_t id = 1; id < t->n; id++) {
		uint32_t i = strtab_hash(t->str[id], t->len[id]) & (nslot - 1);
		while (slot[i])
			i = (i + 1) & (nslot - 1);
		slot[i] = id;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	return 0;
}

uint32_t strtab_lookup(const struct strtab *t, const char *s, size_t len)
{
	if (!t->slot)
		return 0;
	uint32_t mask = t->nslot - 1;
	uint32_t i = strtab_hash(s, len) & mask;
	for (uint32_t id; (id = t->slot[i]) != 0; i = (i + 1) & mask)
		if (t->len[id] == len && memcmp(t->str[id], s, len) == 0)
			return id;
	return 0;
}

uint32_t strtab_intern(struct strtab *t, const char *s, size_t len)
{
	if (!t->slot || len > UINT32_MAX - 1)
		return 0;
	uint32_t mask = t->nslot - 1;
	uint32_t i = strtab_hash(s, len) & mask;
	for (uint32_t id; (id = t->slot[i]) != 0; i = (i + 1) & mask)
		if (t->len[id] == len && memcmp(t->str[id], s, len) == 0)
			return id;
	if (t->n == UINT32_MAX)
		return 0;
	if (t->n == t->cap) {
		uint32_t cap = t->cap * 2;
		char **str = realloc(t->str, cap * sizeof *str);
		if (!str)
			return 0;
		t->str = str;
		uint32_t *lens = realloc(t->len, cap * sizeof *lens);
		if (!lens)
			return 0;
		t->len = lens;
		t->cap = cap;
	}
	char *copy = malloc(len + 1);
	if (!copy)
		return 0;
	memcpy(copy, s, len);
	copy[len] = '\0';
	uint32_t id = t->n++;
	t->str[id] = copy;
	t->len[id] = (uint32_t)len;
	t->slot[i] = id;
	if ((uint64_t)t->n * 2 > t->nslot && strtab_rehash(t) < 0) {
		/* keep the table consistent: forget the new string */
		t->slot[i] = 0;
		t->n--;
		free(copy);
		return 0;
	}
	return id;
}

int strtab_set_cat(struct strtab *t, uint32_t id, uint32_t cat)
{
	if (!id || id >= t->n || !cat || cat >= t->n)
		return 0;
	if (id >= t->ncat) {
		uint32_t n = t->ncat ? t->ncat : 64;
		while (n <= id)
			n *= 2;
		uint32_t *c = realloc(t->cat, n * sizeof *c);
		if (!c)
			return -ENOMEM;
		memset(c + t->ncat, 0, (n - t->ncat) * sizeof *c);
		t->cat = c;
		t->ncat = n;
	}
	if (t->cat[id])
		return 0;
	if (t->ncatlog == t->capcatlog) {
		uint32_t n = t->capcatlog ? t->capcatlog * 2 : 16;
		uint32_t *l = realloc(t->catlog, n * sizeof *l);
		if (!l)
			return -ENOMEM;
		t->catlog = l;
		t->capcatlog = n;
	}
	t->catlog[t->ncatlog++] = id;
	t->cat[id] = cat;
	return 1;
}
