/* wireframe.h: the span wire's framing: bytes as they come off the pipe, in
 * any split, to whole records whose header is valid (wire.h), handed to a
 * callback one by one.  Anything that cannot begin a record is skipped up to
 * the next possible magic and counted; a record split across feeds is kept
 * until it is whole.  What a record says is not looked at. */
#ifndef SPANSTAT_WIREFRAME_H
#define SPANSTAT_WIREFRAME_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* Receives one whole record (header included, len == h->len). */
typedef void (*wireframe_fn)(void *ctx, const struct wire_hdr *h, const void *rec, size_t len);

struct wireframe {
	uint64_t bad_bytes; /* bytes skipped while resynchronising */
	uint64_t truncated; /* a record cut short by the end of the stream */
	size_t npend;	    /* bytes of a record split across feeds */
	uint64_t pend[2 * WIRE_MAX_RECORD / 8];
};

/* Whether h is a record header (magic, length, check byte). */
int wireframe_hdr_ok(const struct wire_hdr *h);
/* Hands every whole record in buf (after what earlier feeds left) to fn. */
void wireframe_feed(struct wireframe *f, const void *buf, size_t len, wireframe_fn fn, void *ctx);
/* The stream ended: what is left is counted (truncated or bad_bytes). */
void wireframe_finish(struct wireframe *f);

#endif
