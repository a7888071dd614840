/* encode.h: building wire records (wire.h) into memory.  Used by the span
 * library's recorder and by tests that need real records; no I/O, no state.
 * Every function writes at p and returns the bytes written (a multiple of 8),
 * or 0 when the record would not fit in cap bytes. */
#ifndef SPANSTAT_ENCODE_H
#define SPANSTAT_ENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire.h"

/* Fills a header for a record of total length len (a multiple of 8). */
static inline void enc_hdr(void *p, enum wire_type type, uint32_t len, uint32_t pid, uint32_t tid)
{
	struct wire_hdr h = {WIRE_MAGIC, (uint16_t)len, (uint8_t)type, 0, pid, tid};
	h.check = wire_check(&h);
	memcpy(p, &h, sizeof h);
}

/* Record with a fixed payload of n bytes (padded to 8), e.g. THREAD_EXIT. */
static inline size_t enc_simple(void *p, size_t cap, enum wire_type type, uint32_t pid,
				uint32_t tid, const void *payload, size_t n)
{
	size_t len = WIRE_HDR_SIZE + wire_pad8((unsigned)n);
	if (len > cap || len > WIRE_MAX_RECORD)
		return 0;
	memset((char *)p + WIRE_HDR_SIZE, 0, len - WIRE_HDR_SIZE);
	memcpy((char *)p + WIRE_HDR_SIZE, payload, n);
	enc_hdr(p, type, (uint32_t)len, pid, tid);
	return len;
}

/* Record = fixed struct + variable bytes (hello, name, thread name). */
static inline size_t enc_with_bytes(void *p, size_t cap, enum wire_type type, uint32_t pid,
				    uint32_t tid, const void *fixed, size_t nfixed,
				    const void *bytes, size_t nbytes)
{
	size_t len = WIRE_HDR_SIZE + wire_pad8((unsigned)(nfixed + nbytes));
	if (len > cap || len > WIRE_MAX_RECORD)
		return 0;
	char *q = (char *)p + WIRE_HDR_SIZE;
	memset(q, 0, len - WIRE_HDR_SIZE);
	memcpy(q, fixed, nfixed);
	if (nbytes) /* an async enter's: no bytes, no pointer */
		memcpy(q + nfixed, bytes, nbytes);
	enc_hdr(p, type, (uint32_t)len, pid, tid);
	return len;
}

static inline size_t enc_hello(void *p, size_t cap, uint32_t pid, uint32_t ppid,
			       enum wire_clock clock, uint64_t ts, uint64_t mono_ns,
			       const char *name, size_t name_len)
{
	if (name_len > WIRE_MAX_RECORD - WIRE_HDR_SIZE - sizeof(struct wire_hello))
		name_len = WIRE_MAX_RECORD - WIRE_HDR_SIZE - sizeof(struct wire_hello);
	struct wire_hello h = {WIRE_VERSION, (uint32_t)clock,	ts, mono_ns,
			       ppid,	     (uint32_t)name_len};
	return enc_with_bytes(p, cap, WIRE_HELLO, pid, 0, &h, sizeof h, name, name_len);
}

/* A name definition; for WIRE_NAME_CODE bytes is the object path. */
static inline size_t enc_name(void *p, size_t cap, uint32_t pid, uint32_t tid, uint32_t id,
			      enum wire_name_kind kind, uint64_t addr, uint64_t base,
			      const char *bytes, size_t n)
{
	if (n > WIRE_MAX_RECORD - WIRE_HDR_SIZE - sizeof(struct wire_name))
		n = WIRE_MAX_RECORD - WIRE_HDR_SIZE - sizeof(struct wire_name);
	struct wire_name w = {id, (uint16_t)kind, (uint16_t)n, addr, base};
	return enc_with_bytes(p, cap, WIRE_NAME, pid, tid, &w, sizeof w, bytes, n);
}

static inline size_t enc_thread_name(void *p, size_t cap, uint32_t pid, uint32_t tid,
				     const char *name, size_t n)
{
	if (n > 255)
		n = 255;
	uint32_t fixed[2] = {(uint32_t)n, 0};
	return enc_with_bytes(p, cap, WIRE_THREAD_NAME, pid, tid, fixed, sizeof fixed, name, n);
}

/* A category declaration (WIRE_CATEGORY); the category is cut to
 * WIRE_CATEGORY_MAX bytes and the name to what room is left. */
static inline size_t enc_category(void *p, size_t cap, uint32_t pid, uint32_t tid, const char *name,
				  size_t nlen, const char *cat, size_t clen)
{
	char buf[WIRE_MAX_RECORD];
	size_t room = WIRE_MAX_RECORD - WIRE_HDR_SIZE - sizeof(struct wire_category);
	if (clen > WIRE_CATEGORY_MAX)
		clen = WIRE_CATEGORY_MAX;
	if (nlen > room - clen)
		nlen = room - clen;
	struct wire_category w = {(uint16_t)nlen, (uint16_t)clen, 0};
	memcpy(buf, name, nlen);
	memcpy(buf + nlen, cat, clen);
	return enc_with_bytes(p, cap, WIRE_CATEGORY, pid, tid, &w, sizeof w, buf, nlen + clen);
}

/* A message (WIRE_MESSAGE), cut to WIRE_MESSAGE_MAX bytes. */
static inline size_t enc_message(void *p, size_t cap, uint32_t pid, uint32_t tid, uint64_t ts,
				 const char *text, size_t n)
{
	if (n > WIRE_MESSAGE_MAX)
		n = WIRE_MESSAGE_MAX;
	struct wire_message w = {ts, (uint32_t)n, 0};
	return enc_with_bytes(p, cap, WIRE_MESSAGE, pid, tid, &w, sizeof w, text, n);
}

/* An async span's begin, enter, exit or end (WIRE_ASYNC); name and n only
 * for a begin, cut to WIRE_ASYNC_NAME_MAX bytes. */
static inline size_t enc_async(void *p, size_t cap, uint32_t pid, uint32_t tid, uint64_t ts,
			       uint64_t id, enum wire_async_op op, const char *name, size_t n)
{
	if (op != WIRE_ASYNC_BEGIN)
		n = 0;
	if (n > WIRE_ASYNC_NAME_MAX)
		n = WIRE_ASYNC_NAME_MAX;
	struct wire_async w = {ts, id, (uint32_t)op, (uint32_t)n};
	return enc_with_bytes(p, cap, WIRE_ASYNC, pid, tid, &w, sizeof w, name, n);
}

/* An events record is: header, u64 base, u32 seq, u32 dropped, then words.
 * The recorder fills the words in place and calls enc_events_close() with
 * their count, the record's sequence number and the thread's cumulative
 * dropped words. */
#define ENC_EVENTS_FIRST_WORD 4 /* header (2 words) + base + seq/dropped */
#define ENC_EVENTS_MAX_WORDS ((WIRE_MAX_RECORD / 8u) - ENC_EVENTS_FIRST_WORD)

static inline size_t enc_events_close(uint64_t *rec, uint32_t pid, uint32_t tid, uint64_t base,
				      uint32_t seq, uint32_t dropped, size_t nwords)
{
	size_t len = (ENC_EVENTS_FIRST_WORD + nwords) * 8u;
	rec[2] = base;
	rec[3] = (uint64_t)dropped << 32 | seq; /* little-endian: u32 seq, u32 dropped */
	enc_hdr(rec, WIRE_EVENTS, (uint32_t)len, pid, tid);
	return len;
}

#endif
