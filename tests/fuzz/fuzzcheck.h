/* fuzzcheck.h: what the fuzz targets check every output against, shared by
 * fuzz_decode.c and fuzz_record.c: a Perfetto trace's protobuf framing,
 * valid UTF-8, an SVG as written, and the copies tests/fuzz/check-outputs
 * reads.  Included by the targets only (static functions). */
#ifndef SPANSTAT_FUZZCHECK_H
#define SPANSTAT_FUZZCHECK_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "utf8esc.h"

/* A varint at *p (below end); false when it runs past end or 10 bytes. */
static inline int fuzz_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 70; shift += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 1;
	}
	return 0;
}

/* Walks one level of protobuf fields in [p, end): every tag and length
 * valid, everything within bounds.  With top, every field must be
 * Trace.packet (1, length-delimited) and its contents are walked too. */
static inline int fuzz_proto(const uint8_t *p, const uint8_t *end, int top)
{
	while (p < end) {
		uint64_t tag, v;
		if (!fuzz_varint(&p, end, &tag) || (tag >> 3) == 0)
			return 0;
		switch (tag & 7) {
		case 0:
			if (!fuzz_varint(&p, end, &v))
				return 0;
			break;
		case 1:
			if (end - p < 8)
				return 0;
			p += 8;
			break;
		case 2:
			if (!fuzz_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return 0;
			if (top && ((tag >> 3) != 1 || !fuzz_proto(p, p + v, 0)))
				return 0;
			p += v;
			break;
		case 5:
			if (end - p < 4)
				return 0;
			p += 4;
			break;
		default:
			return 0;
		}
		if (top && tag != ((1 << 3) | 2))
			return 0;
	}
	return 1;
}

static inline int fuzz_utf8(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t len = utf8esc_seqlen((const unsigned char *)s + i, n - i);
		if (!len)
			return 0;
		i += len;
	}
	return 1;
}

/* An SVG as written: valid UTF-8, no control byte but newlines, and ending
 * with the closing tag. */
static inline int fuzz_svg(const char *b, size_t n)
{
	if (!fuzz_utf8(b, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)b[i] < 0x20 && b[i] != '\n') || b[i] == 0x7f)
			return 0;
	static const char end[] = "</svg>\n";
	return n >= sizeof end - 1 && memcmp(b + n - (sizeof end - 1), end, sizeof end - 1) == 0;
}

/* Keeps a copy of an output for tests/fuzz/check-outputs. */
static inline void fuzz_save(const char *dir, unsigned long n, const char *ext, const char *buf,
			     size_t len)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%lu.%s", dir, n, ext);
	FILE *fp = fopen(path, "w");
	if (fp) {
		fwrite(buf, 1, len, fp);
		fclose(fp);
	}
}

#endif
