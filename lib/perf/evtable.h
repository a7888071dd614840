/* evtable.h: perf's built-in event names, known without libpfm4: the generic
 * hardware events, the software events and the hw-cache events perf builds
 * from cache x operation x result (with perf's aliases such as l1d, d-tlb,
 * speculative-read, refs).  Also whether the kernel here can open one of
 * them ("trust the open": a disabled counter on the calling process, result
 * cached for the life of the process).
 */
#ifndef SPANSTAT_EVTABLE_H
#define SPANSTAT_EVTABLE_H

#include <stdbool.h>
#include <stdint.h>

/* One built-in name, as listed. */
struct evtable_entry {
	const char *name; /* canonical spelling, e.g. "L1-dcache-load-misses" */
	const char *desc;
	const char *kind; /* "hardware", "software" or "cache" */
	uint32_t type;	  /* PERF_TYPE_HARDWARE, _SOFTWARE or _HW_CACHE */
	uint64_t config;
};

/* Resolve a built-in name: exact spelling first, then ignoring case.  Returns
 * true and fills *type and *config when the name is known. */
bool evtable_lookup(const char *name, uint32_t *type, uint64_t *config);

/* Calls fn for every built-in name (hardware, software, then the cache
 * combinations perf lists) until fn returns non-zero, which is returned.
 * e->desc may point at a buffer valid only during the call. */
int evtable_foreach(int (*fn)(void *arg, const struct evtable_entry *e), void *arg);

/* Whether perf_event_open succeeds here for (type, config) counting the
 * calling process in user space; probed once per pair and cached. */
bool evtable_usable(uint32_t type, uint64_t config);

#endif
