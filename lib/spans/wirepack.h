/* wirepack.h: a wire record's event words, packed for keeping (issue 23's
 * raw capture).  A WIRE_EVENTS record's words are mostly small: a time
 * delta of a few hundred ticks under a name id and an op.  Packed, the
 * header and the payload's first 16 bytes (base, seq, dropped) stay as
 * they are and each word becomes two LEB128s: its top 24 bits with the op
 * lowest (an id below 32: one byte), then its low 40 (the delta: one or
 * two bytes), some 3 bytes instead of 8; any word packs (at most 10).  Other records, and records
 * that would not shrink (value words), are not packed.  Unpacking checks everything: the bytes are
 * a file's. */
#ifndef SPANSTAT_WIREPACK_H
#define SPANSTAT_WIREPACK_H

#include <stddef.h>
#include <stdint.h>

/* The longest record (wire.h's WIRE_MAX_RECORD), for those without it. */
#define WIREPACK_RECORD_MAX 4096u
/* The most bytes a packed record of len bytes may take. */
#define WIREPACK_MAX(len) ((len) + (len) / 4 + 16) /* 10 bytes a word at most */

/* Packs the whole wire record rec (len bytes, its header's len) into out
 * (room for WIREPACK_MAX(len)): the packed size, or 0 when it is not
 * packed (not WIRE_EVENTS, or no smaller). */
size_t wirepack(const void *rec, size_t len, uint8_t *out);
/* Unpacks n bytes that wirepack made into out (room for WIREPACK_RECORD_MAX
 * bytes): the record's size, or 0 when they are not a packed record. */
size_t wireunpack(const uint8_t *in, size_t n, uint8_t *out);

#endif
