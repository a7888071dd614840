/* rec_dlclose.c: dlclose, interposed (rec.h).
 *
 * A code address is interned once per process, with the object that was
 * mapped there when it was first seen.  Once dlclose() unmaps an object,
 * another can load at the same addresses: dlclose is interposed, and when
 * the object is gone its addresses are forgotten (the intern table's
 * entries become tombstones, every thread's caches drop them), so that the
 * next call there is named after what is mapped then. */
#include "config.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>

#include "rec.h"

typedef int (*rec_dlclose_fn)(void *);
static rec_dlclose_fn rec_real_dlclose;

#define REC_OBJS 512u /* loaded objects a dlclose compares, before and after */

/* The extents of the loaded objects ([lo, hi) of their PT_LOAD segments). */
struct rec_objs {
	unsigned n;
	int over; /* more objects than REC_OBJS */
	unsigned long long subs;
	struct {
		uintptr_t lo, hi;
	} r[REC_OBJS];
};

/* dl_iterate_phdr callback: notes each object's extent. */
static REC_NOI int rec_objs_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct rec_objs *o = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
		o->subs = info->dlpi_subs;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		if (a < lo)
			lo = a;
		if (b > hi)
			hi = b;
	}
	if (lo >= hi)
		return 0;
	if (o->n == REC_OBJS) {
		o->over = 1;
		return 0;
	}
	o->r[o->n].lo = lo;
	o->r[o->n].hi = hi;
	o->n++;
	return 0;
}

/* The extents of the last REC_GONE objects dlclose unloaded (each once),
 * whose strings (span names the program passed, against spanstat.h's rule)
 * may be unmapped now: the comparison of names by text (rec_same_key) does
 * not read them. */
#define REC_GONE 64u
static struct {
	_Atomic uintptr_t lo, hi;
} rec_gone[REC_GONE];
atomic_uint rec_ngone; /* extents noted, in all */

REC_NOI int rec_text_gone(uint64_t key)
{
	unsigned n = atomic_load_explicit(&rec_ngone, memory_order_acquire);
	if (n > REC_GONE)
		n = REC_GONE;
	for (unsigned i = 0; i < n; i++)
		if (key >= atomic_load_explicit(&rec_gone[i].lo, memory_order_relaxed) &&
		    key < atomic_load_explicit(&rec_gone[i].hi, memory_order_relaxed))
			return 1;
	return 0;
}

/* Forgets every code address in [lo, hi): in the intern table and in every
 * thread's caches (a thread calling into an object being unloaded is the
 * program's error, so no live use races with this). */
static REC_NOI void rec_code_forget(uintptr_t lo, uintptr_t hi)
{
	if (!rec_text_gone(lo) || !rec_text_gone(hi - 1)) { /* an object loaded and unloaded again
							     * at one place takes one entry */
		unsigned g = atomic_fetch_add_explicit(&rec_ngone, 1, memory_order_acq_rel);
		if (g >= REC_GONE) /* an empty extent while it changes */
			atomic_store_explicit(&rec_gone[g % REC_GONE].hi, 0, memory_order_relaxed);
		atomic_store_explicit(&rec_gone[g % REC_GONE].lo, lo, memory_order_relaxed);
		atomic_store_explicit(&rec_gone[g % REC_GONE].hi, hi, memory_order_release);
	}
	struct rec_slot *tab = rec_table;
	for (unsigned i = 0; tab && i < REC_TABLE_SIZE; i++) {
		uint64_t k = atomic_load_explicit(&tab[i].key, memory_order_relaxed);
		if ((k & REC_CODE_TAG) && k != REC_CODE_TAG && (k & ~REC_CODE_TAG) >= lo &&
		    (k & ~REC_CODE_TAG) < hi) {
			/* no id: whoever reuses the tombstone publishes its own */
			atomic_store_explicit(&tab[i].id, 0, memory_order_relaxed);
			atomic_store_explicit(&tab[i].key, REC_CODE_TAG, memory_order_release);
		}
	}
	for (struct rec_thread *t = atomic_load(&rec_threads); t; t = t->next)
		for (unsigned i = 0; i < REC_CACHE; i++) {
			uint64_t k = t->cache[i].key;
			if ((k & REC_CODE_TAG) && (k & ~REC_CODE_TAG) >= lo &&
			    (k & ~REC_CODE_TAG) < hi)
				t->cache[i].key = UINT64_MAX;
			k = t->fcache[i].key;
			if ((k & REC_CODE_TAG) && (k & ~REC_CODE_TAG) >= lo &&
			    (k & ~REC_CODE_TAG) < hi)
				t->fcache[i].key = UINT64_MAX;
		}
}

/* dlclose unloads the object and every object it pulled in that nothing
 * else holds: the objects mapped before and not after are forgotten. */
REC_API int dlclose(void *handle)
{
	if (!rec_real_dlclose)
		rec_real_dlclose = (rec_dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
	if (!rec_real_dlclose)
		return -1;
	int on = !rec_secure && __atomic_load_n(&rec_on, __ATOMIC_RELAXED);
	if (!on)
		return rec_real_dlclose(handle);
	struct rec_objs *before = mmap(NULL, 2 * sizeof *before, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (before == MAP_FAILED)
		return rec_real_dlclose(handle);
	struct rec_objs *after = before + 1;
	dl_iterate_phdr(rec_objs_cb, before);
	int ret = rec_real_dlclose(handle);
	if (ret == 0) {
		dl_iterate_phdr(rec_objs_cb, after);
		/* an object gone: its extent is no longer any object's */
		for (unsigned i = 0; !after->over && after->subs != before->subs && i < before->n;
		     i++) {
			unsigned j;
			for (j = 0; j < after->n; j++)
				if (after->r[j].lo == before->r[i].lo &&
				    after->r[j].hi == before->r[i].hi)
					break;
			if (j == after->n) {
				rec_code_forget(before->r[i].lo, before->r[i].hi);
				rec_plt_gone(before->r[i].lo, before->r[i].hi);
			}
		}
	}
	munmap(before, 2 * sizeof *before);
	return ret;
}
