/* pbenc.c: the out-of-line half of the protocol buffers encoder (pbenc.h):
 * buffer ownership and growth, and length-delimited byte fields. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pbenc.h"
#include "grow.h"

int pbenc_init(struct pbenc *e, size_t cap)
{
	memset(e, 0, sizeof *e);
	if (cap < 64)
		cap = 64;
	e->buf = malloc(cap);
	if (!e->buf)
		return e->err = -ENOMEM;
	e->cap = cap;
	return 0;
}

void pbenc_release(struct pbenc *e)
{
	free(e->buf);
	memset(e, 0, sizeof *e);
}

int pbenc_grow(struct pbenc *e, size_t n)
{
	if (e->err)
		return e->err;
	if (n > SIZE_MAX - e->len || GROW(e->buf, e->len + n, e->cap, 64) < 0)
		return e->err = -ENOMEM;
	return 0;
}

void pbenc_bytes(struct pbenc *e, uint32_t field, const void *data, size_t len)
{
	uint8_t *p = pbenc_reserve(e, len + 15);
	if (!p)
		return;
	size_t n = pbenc_put_varint(p, pbenc_tag(field, PB_LEN));
	n += pbenc_put_varint(p + n, len);
	if (len)
		memcpy(p + n, data, len);
	e->len += n + len;
}

void pbenc_string(struct pbenc *e, uint32_t field, const char *s)
{
	pbenc_bytes(e, field, s, strlen(s));
}
