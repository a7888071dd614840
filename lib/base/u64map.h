/* u64map.h: a small open-addressing hash map from uint64_t keys to uint64_t
 * values, for the decoder's processes and threads, the span tree's thread
 * index and the Perfetto writer's tracks.  Any key is allowed; a get of a
 * missing key returns 0, so callers store non-zero values.  The map owns
 * its arrays; u64map_release frees them. */
#ifndef SPANSTAT_U64MAP_H
#define SPANSTAT_U64MAP_H

#include <stdint.h>

struct u64map {
	uint64_t *key, *val;
	uint8_t *used;
	uint32_t cap, n; /* cap: 0 or a power of two */
};

static inline uint32_t u64map_slot(uint64_t k, uint32_t cap)
{
	return (uint32_t)((k * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (cap - 1);
}

static inline uint64_t u64map_get(const struct u64map *m, uint64_t k)
{
	if (!m->cap)
		return 0;
	for (uint32_t i = u64map_slot(k, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->key[i] == k)
			return m->val[i];
	return 0;
}

/* Stores k -> v (replacing).  Returns 0 or -ENOMEM. */
int u64map_put(struct u64map *m, uint64_t k, uint64_t v);
void u64map_del(struct u64map *m, uint64_t k);
void u64map_release(struct u64map *m);

#endif
