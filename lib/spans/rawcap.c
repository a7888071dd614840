/* rawcap.c: a raw capture being built (rawcap.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "pbenc.h"
#include "rawcap.h"
#include "wire.h"
#include "wirepack.h"

static bool rawcap_room(struct rawcap *c, size_t more)
{
	if (c->oom)
		return false;
	if (c->len + more <= c->cap)
		return true;
	size_t cap = c->cap ? c->cap : 65536;
	while (cap < c->len + more)
		cap *= 2;
	uint8_t *p = realloc(c->p, cap);
	if (!p) {
		c->oom = true;
		return false;
	}
	c->p = p;
	c->cap = cap;
	return true;
}

void rawcap_put(struct rawcap *c, unsigned tag, const void *a, size_t alen, const void *b,
		size_t blen)
{
	if (!rawcap_room(c, 1 + 10 + alen + blen))
		return;
	uint8_t *p = c->p + c->len;
	*p++ = (uint8_t)tag;
	p += pbenc_put_varint(p, alen + blen);
	if (alen)
		memcpy(p, a, alen);
	if (blen)
		memcpy(p + alen, b, blen);
	c->len = (size_t)(p - c->p) + alen + blen;
}

void rawcap_put_rec(struct rawcap *c, const void *rec, size_t len)
{
	uint8_t packed[WIREPACK_MAX(WIRE_MAX_RECORD)];
	size_t n = len <= WIRE_MAX_RECORD ? wirepack(rec, len, packed) : 0;
	if (n)
		rawcap_put(c, RAW_RECP, packed, n, NULL, 0);
	else
		rawcap_put(c, RAW_REC, rec, len, NULL, 0);
}

size_t rawcap_sym_name(struct rawcap *c, struct decoder *d, const char *path, uint64_t addr,
		       uint64_t base, char *fn, size_t size)
{
	size_t n = decoder_sym_name(d, path, addr, base, fn, size);
	rawcap_put(c, RAW_SYMNAME, fn, n, NULL, 0);
	return n;
}

int rawcap_sym_where(struct rawcap *c, struct decoder *d, const char *path, uint64_t addr,
		     uint64_t base, char *where, size_t size, unsigned *line)
{
	*line = 0;
	if (size)
		where[0] = '\0';
	int r = decoder_sym_where(d, path, addr, base, where, size, line);
	uint8_t v[20];
	size_t n = pbenc_put_varint(v, rawcap_zz(r));
	n += pbenc_put_varint(v + n, *line);
	rawcap_put(c, RAW_SYMWHERE, v, n, where, r == 0 ? strnlen(where, size) : 0);
	return r;
}

void rawcap_put_u64s(struct rawcap *c, unsigned tag, const uint64_t *v, size_t n)
{
	uint8_t buf[16 * 10];
	size_t len = 0;
	for (size_t i = 0; i < n && i < 16; i++)
		len += pbenc_put_varint(buf + len, v[i]);
	rawcap_put(c, tag, buf, len, NULL, 0);
}

void rawcap_release(struct rawcap *c)
{
	free(c->p);
	memset(c, 0, sizeof *c);
}
