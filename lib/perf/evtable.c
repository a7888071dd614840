/* evtable.c: perf's built-in event names (generic hardware, software and
 * hw-cache), resolved to (type, config) without libpfm4, and the cached
 * "can the kernel here open it" probe used by listings.
 */
#include "config.h"

#include "evtable.h"
#include "perfev.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

struct evtable_sym {
	const char *name;
	uint64_t config;
	const char *desc;
};

static const struct evtable_sym evtable_hw[] = {
	{"cpu-cycles", PERF_COUNT_HW_CPU_CYCLES, "CPU cycles"},
	{"cycles", PERF_COUNT_HW_CPU_CYCLES, "CPU cycles (same as cpu-cycles)"},
	{"instructions", PERF_COUNT_HW_INSTRUCTIONS, "instructions retired"},
	{"cache-references", PERF_COUNT_HW_CACHE_REFERENCES,
	 "cache accesses (usually last-level cache)"},
	{"cache-misses", PERF_COUNT_HW_CACHE_MISSES, "cache misses (usually last-level cache)"},
	{"branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branch instructions retired"},
	{"branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	 "branch instructions retired (same as branch-instructions)"},
	{"branch-misses", PERF_COUNT_HW_BRANCH_MISSES, "mispredicted branches"},
	{"bus-cycles", PERF_COUNT_HW_BUS_CYCLES, "bus cycles"},
	{"stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	 "cycles the front end issued nothing"},
	{"idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	 "cycles the front end issued nothing (same as stalled-cycles-frontend)"},
	{"stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
	 "cycles the back end retired nothing"},
	{"idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
	 "cycles the back end retired nothing (same as stalled-cycles-backend)"},
	{"ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES,
	 "reference cycles, unaffected by frequency scaling"},
};

static const struct evtable_sym evtable_sw[] = {
	{"cpu-clock", PERF_COUNT_SW_CPU_CLOCK, "CPU clock time, in msec"},
	{"task-clock", PERF_COUNT_SW_TASK_CLOCK, "time the task ran on a CPU, in msec"},
	{"page-faults", PERF_COUNT_SW_PAGE_FAULTS, "page faults"},
	{"faults", PERF_COUNT_SW_PAGE_FAULTS, "page faults (same as page-faults)"},
	{"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches"},
	{"cs", PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches (same as context-switches)"},
	{"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS, "moves of the task to another CPU"},
	{"migrations", PERF_COUNT_SW_CPU_MIGRATIONS,
	 "moves of the task to another CPU (same as cpu-migrations)"},
	{"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, "page faults served without I/O"},
	{"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ, "page faults that needed I/O"},
	{"alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS,
	 "unaligned accesses fixed up by the kernel"},
	{"emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS, "instructions emulated by the kernel"},
	{"dummy", PERF_COUNT_SW_DUMMY, "placeholder that counts nothing"},
	{"bpf-output", PERF_COUNT_SW_BPF_OUTPUT, "output channel for BPF programs"},
	{"cgroup-switches", PERF_COUNT_SW_CGROUP_SWITCHES,
	 "switches between tasks of different cgroups"},
};

#define EVTABLE_N(a) (sizeof(a) / sizeof((a)[0]))

/* The hw-cache vocabulary.  The first spelling is the canonical one; the
 * others are perf's aliases, all accepted when parsing. */
struct evtable_cache {
	const char *names[6];
	const char *desc;
	unsigned ops; /* bit per PERF_COUNT_HW_CACHE_OP_*: combinations perf lists */
};

#define EVTABLE_OPS_ALL 7u
#define EVTABLE_OPS_LOAD 1u
#define EVTABLE_OPS_LOAD_PREFETCH 5u

static const struct evtable_cache evtable_caches[] = {
	[PERF_COUNT_HW_CACHE_L1D] = {{"L1-dcache", "l1-d", "l1d", "L1-data"},
				     "L1 data cache",
				     EVTABLE_OPS_ALL},
	[PERF_COUNT_HW_CACHE_L1I] = {{"L1-icache", "l1-i", "l1i", "L1-instruction"},
				     "L1 instruction cache",
				     EVTABLE_OPS_LOAD_PREFETCH},
	[PERF_COUNT_HW_CACHE_LL] = {{"LLC", "L2"}, "last-level cache", EVTABLE_OPS_ALL},
	[PERF_COUNT_HW_CACHE_DTLB] = {{"dTLB", "d-tlb", "Data-TLB"}, "data TLB", EVTABLE_OPS_ALL},
	[PERF_COUNT_HW_CACHE_ITLB] = {{"iTLB", "i-tlb", "Instruction-TLB"},
				      "instruction TLB",
				      EVTABLE_OPS_LOAD},
	[PERF_COUNT_HW_CACHE_BPU] = {{"branch", "branches", "bpu", "btb", "bpc"},
				     "branch prediction unit",
				     EVTABLE_OPS_LOAD},
	[PERF_COUNT_HW_CACHE_NODE] = {{"node"}, "local memory (NUMA node)", EVTABLE_OPS_ALL},
};

/* Operations: canonical singular, canonical plural, then aliases. */
static const char *const evtable_ops[][6] = {
	[PERF_COUNT_HW_CACHE_OP_READ] = {"load", "loads", "read"},
	[PERF_COUNT_HW_CACHE_OP_WRITE] = {"store", "stores", "write"},
	[PERF_COUNT_HW_CACHE_OP_PREFETCH] = {"prefetch", "prefetches", "speculative-read",
					     "speculative-load"},
};

static const char *const evtable_results[][6] = {
	[PERF_COUNT_HW_CACHE_RESULT_ACCESS] = {"refs", "Reference", "ops", "access"},
	[PERF_COUNT_HW_CACHE_RESULT_MISS] = {"misses", "miss"},
};

static uint64_t evtable_cache_config(unsigned cache, unsigned op, unsigned result)
{
	return (uint64_t)cache | (uint64_t)op << 8 | (uint64_t)result << 16;
}

/* Length of word when s starts with it (ignoring case) and the word ends
 * there or at a '-'; else 0. */
static size_t evtable_word(const char *s, const char *word)
{
	size_t n = strlen(word);
	if (strncasecmp(s, word, n) != 0 || (s[n] != '\0' && s[n] != '-'))
		return 0;
	return n;
}

/* Parse up to two "-op" / "-result" words after the cache name, at most one
 * of each, trying every alias so that dash-containing ones backtrack. */
static bool evtable_cache_tail(const char *s, int op, int result, uint64_t cache, uint64_t *config)
{
	if (*s == '\0') {
		*config = evtable_cache_config(
			(unsigned)cache, op < 0 ? PERF_COUNT_HW_CACHE_OP_READ : (unsigned)op,
			result < 0 ? PERF_COUNT_HW_CACHE_RESULT_ACCESS : (unsigned)result);
		return true;
	}
	if (*s != '-')
		return false;
	s++;
	for (size_t i = 0; op < 0 && i < EVTABLE_N(evtable_ops); i++)
		for (size_t j = 0; j < 6 && evtable_ops[i][j]; j++) {
			size_t n = evtable_word(s, evtable_ops[i][j]);
			if (n && evtable_cache_tail(s + n, (int)i, result, cache, config))
				return true;
		}
	for (size_t i = 0; result < 0 && i < EVTABLE_N(evtable_results); i++)
		for (size_t j = 0; j < 6 && evtable_results[i][j]; j++) {
			size_t n = evtable_word(s, evtable_results[i][j]);
			if (n && evtable_cache_tail(s + n, op, (int)i, cache, config))
				return true;
		}
	return false;
}

static bool evtable_cache_lookup(const char *name, uint64_t *config)
{
	for (size_t c = 0; c < EVTABLE_N(evtable_caches); c++)
		for (size_t j = 0; j < 6 && evtable_caches[c].names[j]; j++) {
			size_t n = evtable_word(name, evtable_caches[c].names[j]);
			if (n && evtable_cache_tail(name + n, -1, -1, c, config))
				return true;
		}
	return false;
}

static const struct evtable_sym *evtable_find(const struct evtable_sym *t, size_t n,
					      const char *name,
					      int (*cmp)(const char *, const char *))
{
	for (size_t i = 0; i < n; i++)
		if (cmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

bool evtable_lookup(const char *name, uint32_t *type, uint64_t *config)
{
	int (*cmps[])(const char *, const char *) = {strcmp, strcasecmp};
	for (size_t k = 0; k < 2; k++) {
		const struct evtable_sym *s =
			evtable_find(evtable_hw, EVTABLE_N(evtable_hw), name, cmps[k]);
		if (s) {
			*type = PERF_TYPE_HARDWARE;
			*config = s->config;
			return true;
		}
		s = evtable_find(evtable_sw, EVTABLE_N(evtable_sw), name, cmps[k]);
		if (s) {
			*type = PERF_TYPE_SOFTWARE;
			*config = s->config;
			return true;
		}
	}
	if (evtable_cache_lookup(name, config)) {
		*type = PERF_TYPE_HW_CACHE;
		return true;
	}
	return false;
}

static int evtable_each_sym(const struct evtable_sym *t, size_t n, const char *kind, uint32_t type,
			    int (*fn)(void *, const struct evtable_entry *), void *arg)
{
	for (size_t i = 0; i < n; i++) {
		struct evtable_entry e = {t[i].name, t[i].desc, kind, type, t[i].config};
		int r = fn(arg, &e);
		if (r)
			return r;
	}
	return 0;
}

int evtable_foreach(int (*fn)(void *arg, const struct evtable_entry *e), void *arg)
{
	int r = evtable_each_sym(evtable_hw, EVTABLE_N(evtable_hw), "hardware", PERF_TYPE_HARDWARE,
				 fn, arg);
	if (!r)
		r = evtable_each_sym(evtable_sw, EVTABLE_N(evtable_sw), "software",
				     PERF_TYPE_SOFTWARE, fn, arg);
	for (unsigned c = 0; !r && c < EVTABLE_N(evtable_caches); c++)
		for (unsigned op = 0; !r && op < EVTABLE_N(evtable_ops); op++) {
			if (!(evtable_caches[c].ops & 1u << op))
				continue;
			for (unsigned res = 0; !r && res < EVTABLE_N(evtable_results); res++) {
				char name[64], desc[128];
				bool miss = res == PERF_COUNT_HW_CACHE_RESULT_MISS;
				snprintf(name, sizeof name, "%s-%s", evtable_caches[c].names[0],
					 miss ? evtable_ops[op][0] : evtable_ops[op][1]);
				if (miss)
					strcat(name, "-misses");
				snprintf(desc, sizeof desc, "%s %s%s", evtable_caches[c].desc,
					 miss ? evtable_ops[op][0] : evtable_ops[op][1],
					 miss ? " misses" : "");
				struct evtable_entry e = {name, desc, "cache", PERF_TYPE_HW_CACHE,
							  evtable_cache_config(c, op, res)};
				r = fn(arg, &e);
			}
		}
	return r;
}

struct evtable_probe {
	uint32_t type;
	uint64_t config;
	bool usable;
};

static struct evtable_probe evtable_probes[128];
static size_t evtable_nprobes;

/* user space only, so the probe also works under perf_event_paranoid 2 */
static bool evtable_try_open(uint32_t type, uint64_t config)
{
	int fd = perfev_open_self(type, config);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

bool evtable_usable(uint32_t type, uint64_t config)
{
	for (size_t i = 0; i < evtable_nprobes; i++)
		if (evtable_probes[i].type == type && evtable_probes[i].config == config)
			return evtable_probes[i].usable;
	bool usable = evtable_try_open(type, config);
	if (evtable_nprobes < EVTABLE_N(evtable_probes))
		evtable_probes[evtable_nprobes++] = (struct evtable_probe){type, config, usable};
	return usable;
}
