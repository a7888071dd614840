/* u64map.c: growth, insertion and deletion (backward shift, so no
 * tombstones) for the hash map of u64map.h. */
#include "config.h"

#include "u64map.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

static int u64map_grow(struct u64map *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 16;
	uint64_t *key = calloc(cap, sizeof *key), *val = calloc(cap, sizeof *val);
	uint8_t *used = calloc(cap, 1);
	if (!key || !val || !used) {
		free(key);
		free(val);
		free(used);
		return -ENOMEM;
	}
	for (uint32_t j = 0; j < m->cap; j++) {
		if (!m->used[j])
			continue;
		uint32_t i = u64map_slot(m->key[j], cap);
		while (used[i])
			i = (i + 1) & (cap - 1);
		key[i] = m->key[j];
		val[i] = m->val[j];
		used[i] = 1;
	}
	uint32_t n = m->n; /* u64map_release forgets it */
	u64map_release(m);
	m->key = key;
	m->val = val;
	m->used = used;
	m->cap = cap;
	m->n = n;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t k, uint64_t v)
{
	if ((uint64_t)(m->n + 1) * 2 > m->cap && u64map_grow(m) < 0)
		return -ENOMEM;
	uint32_t i = u64map_slot(k, m->cap);
	while (m->used[i] && m->key[i] != k)
		i = (i + 1) & (m->cap - 1);
	if (!m->used[i])
		m->n++;
	m->key[i] = k;
	m->val[i] = v;
	m->used[i] = 1;
	return 0;
}

void u64map_del(struct u64map *m, uint64_t k)
{
	if (!m->cap)
		return;
	uint32_t mask = m->cap - 1, i = u64map_slot(k, m->cap);
	while (m->key[i] != k || !m->used[i]) {
		if (!m->used[i])
			return;
		i = (i + 1) & mask;
	}
	for (uint32_t j = i;;) {
		j = (j + 1) & mask;
		if (!m->used[j])
			break;
		uint32_t h = u64map_slot(m->key[j], m->cap);
		/* move j back to i unless its home lies cyclically in (i, j] */
		bool stay = i <= j ? (h > i && h <= j) : (h > i || h <= j);
		if (!stay) {
			m->key[i] = m->key[j];
			m->val[i] = m->val[j];
			i = j;
		}
	}
	m->used[i] = 0;
	m->n--;
}

void u64map_release(struct u64map *m)
{
	free(m->key);
	free(m->val);
	free(m->used);
	m->key = m->val = NULL;
	m->used = NULL;
	m->cap = m->n = 0;
}
