/* rec_names.c: the recorder's names (rec.h): the process's intern table of
 * span names and code addresses, each given an id on first use and defined
 * on the wire (WIRE_NAME) before any event uses it; the table of names
 * given by text, each copied once into memory the library owns, whose
 * address is then the name as if the program had passed it; and the
 * categories spanstat_category() declared (REC_CATS of them kept for the
 * filters, every one sent). */
#include "config.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rec.h"

atomic_uint rec_next_id = 1;
struct rec_slot *rec_table;

/* Object base and path of a code address, for the reader to symbolise. */
static REC_NOI const char *rec_code_object(uint64_t addr, uint64_t *base, char *buf, size_t cap)
{
	Dl_info info;
	*base = 0;
	if (!dladdr((void *)(uintptr_t)addr, &info) || !info.dli_fbase)
		return "";
	*base = (uintptr_t)info.dli_fbase;
	const char *f = info.dli_fname ? info.dli_fname : "";
	if ((uintptr_t)info.dli_fbase == rec_main_base || !f[0])
		return rec_exe[0] ? rec_exe : f;
	if (f[0] == '/' || cap < PATH_MAX)
		return f;		   /* absolute as the loader found it */
	return realpath(f, buf) ? buf : f; /* dlopen()ed by a relative path */
}

/* Allocates an id for key and writes its definition; 0 if that failed. */
static REC_NOI uint32_t rec_define(struct rec_thread *t, uint64_t key)
{
	uint32_t id = atomic_fetch_add(&rec_next_id, 1);
	if (id == 0 || id > WIRE_ID_MAX) {
		atomic_store(&rec_next_id, WIRE_ID_MAX + 1);
		return 0;
	}
	size_t len;
	if (key & REC_CODE_TAG) {
		char path[PATH_MAX];
		uint64_t addr = key & ~REC_CODE_TAG, base;
		const char *obj = rec_code_object(addr, &base, path, sizeof path);
		len = enc_name(t->scratch, sizeof t->scratch, t->pid, t->tid, id, WIRE_NAME_CODE,
			       addr, base, obj, strlen(obj));
	} else {
		const char *s = (const char *)(uintptr_t)key;
		len = enc_name(t->scratch, sizeof t->scratch, t->pid, t->tid, id, WIRE_NAME_STRING,
			       0, 0, s, strnlen(s, WIRE_MAX_RECORD));
	}
	if (!len || rec_write(t->scratch, len) != 0)
		return 0;
	return id;
}

/* The id of key in this process, defining it on first use; 0: drop the event.
 * The thread that claims a slot writes the definition before it publishes the
 * id, so definitions always precede uses on the wire.  A thread that finds a
 * slot claimed but not yet published defines its own id for the same text
 * rather than wait (the decoder merges names by text).  A key not in the
 * table takes the first tombstone of its chain (an address dlclose forgot,
 * rec_code_forget) before an empty slot: an object loaded and unloaded again
 * and again at one address would fill its chains with tombstones otherwise. */
REC_NOI uint32_t rec_intern(struct rec_thread *t, uint64_t key)
{
	struct rec_slot *tab = rec_table;
	if (!tab)
		return 0;
	for (unsigned round = 0; round < 4; round++) {
		unsigned i = (unsigned)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 40);
		struct rec_slot *claim = NULL, *tomb = NULL;
		uint64_t k = 0;
		for (unsigned probe = 0; probe < REC_PROBES; probe++, i++) {
			struct rec_slot *s = &tab[i & (REC_TABLE_SIZE - 1)];
			k = atomic_load_explicit(&s->key, memory_order_acquire);
			if (k == key) {
				uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
				return id ? id : rec_define(t, key);
			}
			if (k == REC_CODE_TAG) {
				if (!tomb)
					tomb = s;
			} else if (k == 0) {
				claim = s;
				break;
			}
		}
		uint64_t was = 0;
		if (tomb) {
			claim = tomb;
			was = REC_CODE_TAG;
		}
		if (!claim)
			return 0; /* table full along this chain */
		uint64_t expect = was;
		if (atomic_compare_exchange_strong(&claim->key, &expect, key)) {
			uint32_t id = rec_define(t, key);
			if (id)
				atomic_store_explicit(&claim->id, id, memory_order_release);
			else /* not defined: let a later use try again */
				atomic_store_explicit(&claim->key, was, memory_order_release);
			return id;
		}
		if (expect == key) { /* another thread claimed it for the same key */
			uint32_t id = atomic_load_explicit(&claim->id, memory_order_acquire);
			return id ? id : rec_define(t, key);
		}
		/* lost the slot to another key: look again */
	}
	return 0;
}

/* ---- names by text (spanstat_begin_text) ------------------------------------ */

/* Texts live in chunks mapped on demand and never unmapped: an interned
 * text's address is a name's key for the life of the process. */
#define REC_TEXT_CHUNK (1u << 20)

struct rec_chunk {
	_Atomic size_t used; /* bytes of data handed out (may run past cap: full) */
	size_t cap;
	_Alignas(8) char data[];
};

static _Atomic(struct rec_chunk *) rec_chunk_cur;
_Atomic(const struct rec_text *) rec_texts[REC_TEXTS];

/* size bytes that stay ours for good, 8-aligned; NULL: no memory.  Lock-free
 * (a fetch-add in the current chunk, a CAS for the next), so a signal handler
 * may interrupt it and take its own. */
static REC_NOI void *rec_text_alloc(size_t size)
{
	size = (size + 7) & ~(size_t)7;
	for (;;) {
		struct rec_chunk *c = atomic_load_explicit(&rec_chunk_cur, memory_order_acquire);
		if (c) {
			size_t off =
				atomic_fetch_add_explicit(&c->used, size, memory_order_relaxed);
			if (off <= c->cap && size <= c->cap - off)
				return c->data + off;
		}
		size_t want = size + sizeof(struct rec_chunk);
		size_t len = want > REC_TEXT_CHUNK ? (want + 4095) & ~(size_t)4095 : REC_TEXT_CHUNK;
		void *m =
			mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		struct rec_chunk *n = m;
		n->cap = len - sizeof *n;
		atomic_store_explicit(&n->used, size, memory_order_relaxed);
		if (want > REC_TEXT_CHUNK)
			return n->data; /* a text of its own mapping: not shared */
		if (atomic_compare_exchange_strong(&rec_chunk_cur, &c, n))
			return n->data;
		munmap(m, len); /* another thread (or a handler) put a chunk first */
	}
}

static REC_NOI uint64_t rec_text_mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
	return h ^ (h >> 29);
}

/* The hash of a name given by text: its len bytes (no NUL among them:
 * rec_text_name measured them), eight at a time. */
static REC_NOI uint64_t rec_text_hash(const char *s, size_t len)
{
	uint64_t h = 0;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = rec_text_mix(h, w);
	}
	uint64_t w = 0;
	for (unsigned b = 0; i < len; i++, b++)
		w |= (uint64_t)(unsigned char)s[i] << (8 * b);
	if (len % 8)
		h = rec_text_mix(h, w);
	return rec_text_mix(h, len) * UINT64_C(0xff51afd7ed558ccd);
}

/* The process's copy of the name text gives (its len bytes, no NUL among
 * them), made and entered in rec_texts on its first use; NULL when memory or
 * the table ran out.  Two threads that add the same text at once may both
 * copy it: the loser of the slot takes the winner's and forgets its copy. */
REC_NOI __attribute__((noinline)) const struct rec_text *rec_text_find(const char *text, size_t len)
{
	size_t n = len;
	uint64_t h = rec_text_hash(text, n);
	struct rec_text *mine = NULL;
	unsigned i = (unsigned)(h >> 40);
	for (unsigned probe = 0; probe < REC_PROBES; probe++, i++) {
		_Atomic(const struct rec_text *) *s = &rec_texts[i & (REC_TEXTS - 1)];
		const struct rec_text *e = atomic_load_explicit(s, memory_order_acquire);
		while (!e) {
			if (!mine) {
				mine = rec_text_alloc(sizeof *mine + n + 1);
				if (!mine)
					return NULL;
				mine->hash = h;
				mine->len = n;
				memcpy(mine->text, text, n);
				mine->text[n] = 0;
			}
			if (atomic_compare_exchange_strong_explicit(
				    s, &e, mine, memory_order_release, memory_order_acquire))
				return mine;
		}
		if (e->hash == h && e->len == n && memcmp(e->text, text, n) == 0)
			return e;
	}
	return NULL; /* table full along this chain */
}

/* ---- categories (spanstat_category) ------------------------------------- */

#define REC_CATS 1024u /* declarations the filters know; later ones are only sent */

struct rec_cat {
	_Atomic(const char *) name; /* published last: cat is set when it is */
	const char *cat;
};

static struct rec_cat rec_cats[REC_CATS];
static atomic_uint rec_ncats;

/* A copy of the first n bytes of s (NUL added) in memory that stays ours. */
static REC_NOI char *rec_text_copy(const char *s, size_t n)
{
	char *c = rec_text_alloc(n + 1);
	if (c) {
		memcpy(c, s, n);
		c[n] = 0;
	}
	return c;
}

REC_NOI const char *rec_cat_of(const char *name)
{
	unsigned n = atomic_load_explicit(&rec_ncats, memory_order_acquire);
	if (!name)
		return NULL;
	if (n > REC_CATS)
		n = REC_CATS;
	for (unsigned i = 0; i < n; i++) {
		const char *nm = atomic_load_explicit(&rec_cats[i].name, memory_order_acquire);
		if (nm && strcmp(nm, name) == 0)
			return rec_cats[i].cat;
	}
	return NULL;
}

REC_NOI void rec_cat_declare(struct rec_thread *t, const char *name, const char *cat)
{
	size_t nlen = strnlen(name, WIRE_MAX_RECORD), clen = strnlen(cat, WIRE_CATEGORY_MAX);
	size_t len =
		enc_category(t->scratch, sizeof t->scratch, t->pid, t->tid, name, nlen, cat, clen);
	if (!len || rec_write(t->scratch, len) != 0) /* lost: counted, said at exit */
		atomic_fetch_add_explicit(&rec_dropped, 1, memory_order_relaxed);
	if (rec_cat_of(name))
		return; /* the first category declared holds */
	unsigned i = atomic_fetch_add(&rec_ncats, 1);
	if (i >= REC_CATS) {
		atomic_store(&rec_ncats, REC_CATS);
		return;
	}
	rec_cats[i].cat = rec_text_copy(cat, clen);
	const char *n = rec_cats[i].cat ? rec_text_copy(name, nlen) : NULL;
	atomic_store_explicit(&rec_cats[i].name, n, memory_order_release);
}
