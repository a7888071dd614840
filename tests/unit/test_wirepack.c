/* test_wirepack.c: packing a wire record's event words (wirepack.c): the
 * round trip of typical and of any words, what is not packed, and that
 * damaged packed bytes are refused, never read past. */
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "tap.h"
#include "wire.h"
#include "wirepack.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* An events record of n words made by fn(i): its length. */
static size_t record(uint64_t *rec, size_t n, uint64_t (*fn)(size_t))
{
	for (size_t i = 0; i < n; i++)
		rec[ENC_EVENTS_FIRST_WORD + i] = fn(i);
	return enc_events_close(rec, 4242, 4243, 123456789, 7, 1, n);
}

/* a thread's begins and ends of a few names, ~100 ticks apart */
static uint64_t typical(size_t i)
{
	return wire_event(i & 1 ? WIRE_OP_END : WIRE_OP_BEGIN, 1 + (uint32_t)(next() % 20),
			  50 + next() % 150);
}

static uint64_t any(size_t i)
{
	(void)i;
	switch (next() % 4) {
	case 0:
		return UINT64_MAX;
	case 1:
		return 0;
	default:
		return next();
	}
}

static int roundtrip(const uint64_t *rec, size_t len, size_t *packed)
{
	uint8_t p[WIREPACK_MAX(WIRE_MAX_RECORD)], back[WIRE_MAX_RECORD];
	size_t n = wirepack(rec, len, p);
	*packed = n;
	if (!n)
		return 1; /* not packed: kept as it is */
	return wireunpack(p, n, back) == len && memcmp(back, rec, len) == 0;
}

int main(void)
{
	uint64_t rec[WIRE_MAX_RECORD / 8];
	size_t packed, len = record(rec, ENC_EVENTS_MAX_WORDS, typical);
	ok(roundtrip(rec, len, &packed), "a full record of typical events comes back");
	ok(packed && packed * 2 < len, "it packs to under half: %zu of %zu bytes", packed, len);

	int all = 1, some = 0;
	for (int k = 0; k < 2000; k++) {
		size_t n = (size_t)(next() % (ENC_EVENTS_MAX_WORDS + 1));
		len = record(rec, n, k % 2 ? any : typical);
		all &= roundtrip(rec, len, &packed);
		some += packed != 0;
	}
	ok(all, "2000 records of any words and lengths come back, packed or not");
	ok(some > 900, "the typical ones pack (%d of 2000 packed)", some);

	len = record(rec, 0, typical);
	ok(roundtrip(rec, len, &packed) && packed == 0, "an empty record is not packed");
	uint8_t p[WIREPACK_MAX(WIRE_MAX_RECORD)], back[WIRE_MAX_RECORD];
	size_t rl = enc_simple((char *)rec, sizeof rec, WIRE_EXIT, 1, 1, "12345678", 8);
	ok(rl && wirepack(rec, rl, p) == 0, "another type is not packed");
	len = record(rec, 10, typical);
	ok(wirepack(rec, len - 8, p) == 0, "a length other than the header's is not packed");

	/* damage: every cut, an extra byte, a header saying more */
	len = record(rec, 300, typical);
	size_t n = wirepack(rec, len, p);
	int cut = 1;
	for (size_t k = 0; k < n; k++)
		cut &= wireunpack(p, k, back) == 0;
	ok(cut, "every cut of a packed record is refused (%zu)", n);
	p[n] = 0;
	ok(wireunpack(p, n + 1, back) == 0, "a byte more is refused");
	uint8_t q[WIREPACK_MAX(WIRE_MAX_RECORD)];
	memcpy(q, p, n);
	q[5] = 0x20; /* len 8192 + low byte: beyond a record */
	ok(wireunpack(q, n, back) == 0, "a length beyond a record is refused");
	memcpy(q, p, n);
	memset(q + 40, 0xff, 12); /* a varint longer than its field */
	ok(wireunpack(q, n, back) == 0, "a varint wider than its field is refused");
	int safe = 1;
	for (int k = 0; k < 20000; k++) {
		memcpy(q, p, n);
		q[WIRE_HDR_SIZE + 16 + next() % (n - WIRE_HDR_SIZE - 16)] ^=
			(uint8_t)(1u << (next() % 8));
		size_t got = wireunpack(q, n, back);
		safe &= got == 0 || got == len;
	}
	ok(safe, "20000 flipped bits: refused or a record of the header's length");
	return tap_done();
}
