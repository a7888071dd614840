/* wirepack.c: see wirepack.h. */
#include "config.h"

#include "wirepack.h"

#include <stdbool.h>
#include <string.h>

#include "wire.h"

/* header, base ts, seq, dropped: kept as they are */
_Static_assert(WIREPACK_RECORD_MAX == WIRE_MAX_RECORD, "one longest record");

#define WP_HEAD (WIRE_HDR_SIZE + 16u)
#define WP_LO ((UINT64_C(1) << 40) - 1) /* an event's time delta */

/* A word's top 24 bits (an event's op and name id) with the op lowest,
 * and back: small ids then take one byte whatever the op. */
static inline uint32_t wp_hi(uint64_t w)
{
	uint32_t hi = (uint32_t)(w >> 40);
	return (hi & 0x3fffffu) << 2 | hi >> 22;
}

static inline uint64_t wp_word(uint64_t hi, uint64_t lo)
{
	return ((hi >> 2) | (hi & 3u) << 22) << 40 | lo;
}

static inline size_t wp_put(uint8_t *out, size_t n, uint64_t v)
{
	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

/* A varint of at most bits bits at in[*at..n): false when cut or longer. */
static inline bool wp_get(const uint8_t *in, size_t n, size_t *at, unsigned bits, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < bits; shift += 7) {
		if (*at == n)
			return false;
		uint8_t b = in[(*at)++];
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return x >> bits == 0;
		}
	}
	return false;
}

size_t wirepack(const void *rec, size_t len, uint8_t *out)
{
	const uint8_t *p = rec;
	struct wire_hdr h;
	if (len < WP_HEAD || len > WIRE_MAX_RECORD || (len - WP_HEAD) % 8)
		return 0;
	memcpy(&h, p, sizeof h);
	if (h.type != WIRE_EVENTS || h.len != len)
		return 0;
	memcpy(out, p, WP_HEAD);
	size_t n = WP_HEAD;
	for (size_t i = WP_HEAD; i < len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		n = wp_put(out, n, wp_hi(w));
		n = wp_put(out, n, w & WP_LO);
		if (n >= len)
			return 0; /* no smaller: kept as it is */
	}
	return n < len ? n : 0;
}

size_t wireunpack(const uint8_t *in, size_t n, uint8_t *out)
{
	struct wire_hdr h;
	if (n < WP_HEAD)
		return 0;
	memcpy(&h, in, sizeof h);
	size_t len = h.len;
	if (h.type != WIRE_EVENTS || len < WP_HEAD || len > WIRE_MAX_RECORD || (len - WP_HEAD) % 8)
		return 0;
	memcpy(out, in, WP_HEAD);
	size_t at = WP_HEAD;
	for (size_t o = WP_HEAD; o < len; o += 8) {
		uint64_t hi, lo;
		if (!wp_get(in, n, &at, 24, &hi) || !wp_get(in, n, &at, 40, &lo))
			return 0;
		uint64_t w = wp_word(hi, lo);
		memcpy(out + o, &w, 8);
	}
	return at == n ? len : 0; /* every byte a word's */
}
