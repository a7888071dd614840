/* pbenc.h: a small protocol buffers encoder for streaming writers (perfetto.c).
 * A struct pbenc is a growable byte buffer holding the message being built;
 * nested messages are opened with pbenc_open(), which reserves a 4-byte
 * padded varint for the length, and closed with pbenc_close(), which patches
 * it in place, so a message is written in one forward pass;
 * pbenc_close_min() instead shrinks a short message's length to one byte.  The caller
 * owns the buffer (pbenc_init/_release) and decides when to flush it.
 * Errors are sticky: after a failed allocation every call is a no-op and
 * e->err is -ENOMEM. */
#ifndef SPANSTAT_PBENC_H
#define SPANSTAT_PBENC_H

#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>

enum pb_wire {
	PB_VARINT = 0,
	PB_FIXED64 = 1,
	PB_LEN = 2,
	PB_FIXED32 = 5,
};

/* Largest length a 4-byte padded varint can hold. */
#define PBENC_MAX_NESTED ((1u << 28) - 1)

struct pbenc {
	uint8_t *buf;
	size_t len, cap;
	int err; /* 0 or -ENOMEM / -EMSGSIZE, sticky */
};

int pbenc_init(struct pbenc *e, size_t cap);
void pbenc_release(struct pbenc *e);
/* Slow path of pbenc_reserve: grow to hold n more bytes. */
int pbenc_grow(struct pbenc *e, size_t n);

static inline void pbenc_reset(struct pbenc *e)
{
	e->len = 0;
}

/* Make room for n more bytes; returns where they go, or NULL on error. */
static inline uint8_t *pbenc_reserve(struct pbenc *e, size_t n)
{
	if (e->cap - e->len < n && pbenc_grow(e, n) < 0)
		return NULL;
	return e->buf + e->len;
}

/* Encode v as a varint at p; returns the bytes written (1..10). */
static inline size_t pbenc_put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Size in bytes of v as a varint. */
static inline size_t pbenc_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint64_t pbenc_tag(uint32_t field, enum pb_wire wt)
{
	return ((uint64_t)field << 3) | (uint64_t)wt;
}

static inline void pbenc_varint(struct pbenc *e, uint32_t field, uint64_t v)
{
	uint8_t *p = pbenc_reserve(e, 20);
	if (!p)
		return;
	size_t n = pbenc_put_varint(p, pbenc_tag(field, PB_VARINT));
	e->len += n + pbenc_put_varint(p + n, v);
}

/* int32/int64 fields: negative values are their 64-bit two's complement. */
static inline void pbenc_int64(struct pbenc *e, uint32_t field, int64_t v)
{
	pbenc_varint(e, field, (uint64_t)v);
}

static inline void pbenc_bool(struct pbenc *e, uint32_t field, int v)
{
	pbenc_varint(e, field, v ? 1 : 0);
}

static inline void pbenc_fixed64(struct pbenc *e, uint32_t field, uint64_t v)
{
	uint8_t *p = pbenc_reserve(e, 18);
	if (!p)
		return;
	size_t n = pbenc_put_varint(p, pbenc_tag(field, PB_FIXED64));
	for (int i = 0; i < 8; i++)
		p[n + i] = (uint8_t)(v >> (8 * i));
	e->len += n + 8;
}

static inline void pbenc_double(struct pbenc *e, uint32_t field, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof v);
	pbenc_fixed64(e, field, v);
}

void pbenc_bytes(struct pbenc *e, uint32_t field, const void *data, size_t len);
void pbenc_string(struct pbenc *e, uint32_t field, const char *s);

/* Open a nested message (or packed field): writes the tag and a 4-byte
 * placeholder for the length; returns the mark pbenc_close() needs. */
static inline size_t pbenc_open(struct pbenc *e, uint32_t field)
{
	uint8_t *p = pbenc_reserve(e, 14);
	if (!p)
		return 0;
	size_t n = pbenc_put_varint(p, pbenc_tag(field, PB_LEN));
	e->len += n + 4;
	return e->len;
}

/* Write len as exactly 4 varint bytes (padded with continuation bits). */
static inline void pbenc_put_varint4(uint8_t *p, uint32_t len)
{
	p[0] = (uint8_t)(len | 0x80);
	p[1] = (uint8_t)((len >> 7) | 0x80);
	p[2] = (uint8_t)((len >> 14) | 0x80);
	p[3] = (uint8_t)((len >> 21) & 0x7f);
}

/* Close the message opened at mark: patch its length. */
static inline void pbenc_close(struct pbenc *e, size_t mark)
{
	if (e->err || mark < 4)
		return;
	size_t len = e->len - mark;
	if (len > PBENC_MAX_NESTED) {
		e->err = -EMSGSIZE;
		return;
	}
	pbenc_put_varint4(e->buf + mark - 4, (uint32_t)len);
}

/* Close the message opened at mark, shrinking its length to one byte when
 * the body is under 128 bytes (moving the body back 3 bytes), else padded as
 * pbenc_close.  Only for the innermost open message: marks taken after mark
 * would move. */
static inline void pbenc_close_min(struct pbenc *e, size_t mark)
{
	if (e->err || mark < 4)
		return;
	size_t len = e->len - mark;
	if (len >= 128) {
		pbenc_close(e, mark);
		return;
	}
	e->buf[mark - 4] = (uint8_t)len;
	memmove(e->buf + mark - 3, e->buf + mark, len);
	e->len -= 3;
}

#endif
