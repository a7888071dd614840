/* wireframe.c: record framing for the span wire (wireframe.h).  A record is
 * accepted when its header has the magic, a length of 16..4096 that is a
 * multiple of 8 and a matching check byte; anything else is skipped byte by
 * byte up to the next possible magic.  Whole records are handed over straight
 * from the caller's buffer; only a record split across feeds is copied. */
#include "config.h"

#include <string.h>

#include "wireframe.h"

int wireframe_hdr_ok(const struct wire_hdr *h)
{
	return h->magic == WIRE_MAGIC && h->len >= WIRE_HDR_SIZE && h->len <= WIRE_MAX_RECORD &&
	       h->len % 8 == 0 && h->check == wire_check(h);
}

/* Could the n (< 16) bytes at p begin a header? */
static int wf_prefix(const uint8_t *p, size_t n)
{
	uint32_t magic = WIRE_MAGIC;
	return memcmp(p, &magic, n < 4 ? n : 4) == 0;
}

/* First position after i where a header could start (or n). */
static size_t wf_next_magic(const uint8_t *p, size_t i, size_t n)
{
	const uint8_t first = (uint8_t)(WIRE_MAGIC & 0xff);
	for (i++; i < n; i++) {
		const uint8_t *q = memchr(p + i, first, n - i);
		if (!q)
			return n;
		i = (size_t)(q - p);
		if (wf_prefix(q, n - i))
			return i;
	}
	return n;
}

/* Hands over every whole record in p[0..n); returns the bytes consumed.
 * What is left is shorter than a record and may begin one. */
static size_t wf_scan(struct wireframe *f, const uint8_t *p, size_t n, wireframe_fn fn, void *ctx)
{
	size_t i = 0;
	while (i < n) {
		size_t avail = n - i;
		if (avail >= WIRE_HDR_SIZE) {
			struct wire_hdr h;
			memcpy(&h, p + i, sizeof h);
			if (wireframe_hdr_ok(&h)) {
				if (h.len > avail)
					break;
				fn(ctx, &h, p + i, h.len);
				i += h.len;
				continue;
			}
		} else if (wf_prefix(p + i, avail)) {
			break;
		}
		size_t j = wf_next_magic(p, i, n);
		f->bad_bytes += j - i;
		i = j;
	}
	return i;
}

void wireframe_feed(struct wireframe *f, const void *buf, size_t len, wireframe_fn fn, void *ctx)
{
	const uint8_t *p = buf;
	uint8_t *pend = (uint8_t *)f->pend;
	/* complete the record split across feeds, through the pend buffer */
	while (f->npend && len) {
		size_t take = len < WIRE_MAX_RECORD ? len : WIRE_MAX_RECORD;
		memcpy(pend + f->npend, p, take);
		size_t total = f->npend + take;
		size_t rest = total - wf_scan(f, pend, total, fn, ctx);
		if (rest <= take) { /* the rest is all new input: read it in place */
			p += take - rest;
			len -= take - rest;
			f->npend = 0;
		} else {
			memmove(pend, pend + total - rest, rest);
			f->npend = rest;
			p += take;
			len -= take;
		}
	}
	if (len) {
		size_t used = wf_scan(f, p, len, fn, ctx);
		memcpy(pend, p + used, len - used);
		f->npend = len - used;
	}
}

void wireframe_finish(struct wireframe *f)
{
	if (f->npend) {
		struct wire_hdr h;
		if (f->npend >= WIRE_HDR_SIZE &&
		    (memcpy(&h, f->pend, sizeof h), wireframe_hdr_ok(&h)))
			f->truncated++;
		else
			f->bad_bytes += f->npend;
		f->npend = 0;
	}
}
