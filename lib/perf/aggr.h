/* aggr.h: perf stat's aggregation modes: how the counter sets of a session
 * (counters.h: one per thread or CPU) add up into the rows printed -- one
 * row for everything (the default), a row per thread (--per-thread), per
 * CPU (-A), or per core, die, socket, NUMA node or cache instance of the
 * CPUs counted, from the machine's topology in sysfs.  Each unit carries
 * the name perf gives it ("CPU0", "S0-D0-C0", "S0-D0", "S0", "N0",
 * "S0-D0-L3-ID0", "comm-tid") and the number of CPUs in it.
 * aggr_build allocates; aggr_release frees.  Never prints. */
#ifndef SPANSTAT_AGGR_H
#define SPANSTAT_AGGR_H

#include <stdbool.h>
#include <stddef.h>

#include "counters.h"

enum aggr_mode {
	AGGR_GLOBAL, /* one row: every set added (no option) */
	AGGR_THREAD, /* --per-thread: a row per thread counted */
	AGGR_NONE,   /* -A, --no-aggr: a row per CPU */
	AGGR_CORE,   /* --per-core */
	AGGR_DIE,    /* --per-die */
	AGGR_SOCKET, /* --per-socket */
	AGGR_NODE,   /* --per-node */
	AGGR_CACHE,  /* --per-cache[=LEVEL] */
};

struct aggr_unit {
	char id[80];	/* as perf names it: "S0-D0-C0", "CPU1", "bash-1234" */
	unsigned ncpus; /* the CPUs it adds up (0: a thread) */
	int cpu;	/* AGGR_NONE: the CPU; else -1 */
	int socket, die, core, node, cache_level, cache_id; /* -1 where the mode has none */
	int tid;					    /* AGGR_THREAD: the thread, else -1 */
	char comm[64]; /* AGGR_THREAD: its name when counted, control bytes as \xNN */
};

struct aggr {
	enum aggr_mode mode;
	struct aggr_unit *unit; /* n, in perf's order (by id) */
	size_t n;
	size_t *unit_of; /* nsets: the unit set k adds into */
	size_t nsets;
	bool skip_zero; /* rows that counted nothing are left out (perf's
			 * --per-thread over every thread of the system, -a) */
};

/* The option that asks for mode ("--per-core"), and its JSON name
 * ("core"; "global" for AGGR_GLOBAL). */
const char *aggr_option(enum aggr_mode mode);
const char *aggr_name(enum aggr_mode mode);

/* --per-cache's LEVEL: "L3", "l3" or "3" into *level.  0 or -EINVAL. */
int aggr_parse_level(const char *s, int *level);

/* The units of mode over the n sets at (a CPU each, or a thread each for
 * AGGR_THREAD, named comm[k], which may be NULL or "" when unknown).
 * cache_level: --per-cache's level, 0 for the highest the CPUs have.
 * sysfs: where /sys/devices/system is (NULL: there).  0, or -EINVAL (a set
 * of the wrong kind), -ENOENT (the topology cannot be read) with *cause,
 * -ENOMEM. */
int aggr_build(struct aggr *ag, enum aggr_mode mode, int cache_level, const struct counters_at *at,
	       size_t n, const char *const *comm, const char *sysfs, char **cause);
void aggr_release(struct aggr *ag);

#endif
