/* metrics.c: perf stat's derived metrics ("shadow stats"): for each counted
 * event, the one number perf prints after '#', computed from another event
 * of the same list.  Events are recognised by their resolved attr (type and
 * config), so aliases (cs, faults, cpu-cycles ...) and modifiers do not
 * matter; a ratio's two events must count the same privilege levels. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "metrics.h"

enum metric_kind {
	MK_OTHER,
	MK_CLOCK, /* task-clock, cpu-clock */
	MK_CYCLES,
	MK_INSTRUCTIONS,
	MK_BRANCHES,
	MK_BRANCH_MISSES,
	MK_CACHE_REFS,
	MK_CACHE_MISSES,
	MK_STALLED_FE,
	MK_STALLED_BE,
	MK_L1D_LOADS,
	MK_L1D_MISSES,
	MK_L1I_LOADS,
	MK_L1I_MISSES,
	MK_LLC_LOADS,
	MK_LLC_MISSES,
	MK_DTLB_LOADS,
	MK_DTLB_MISSES,
	MK_ITLB_LOADS,
	MK_ITLB_MISSES,
};

/* A miss kind, the kind it is a fraction of, and perf's wording. */
static const struct {
	enum metric_kind miss, total;
	const char *unit;
} metrics_ratios[] = {
	{MK_BRANCH_MISSES, MK_BRANCHES, "of all branches"},
	{MK_CACHE_MISSES, MK_CACHE_REFS, "of all cache refs"},
	{MK_L1D_MISSES, MK_L1D_LOADS, "of all L1-dcache accesses"},
	{MK_L1I_MISSES, MK_L1I_LOADS, "of all L1-icache accesses"},
	{MK_LLC_MISSES, MK_LLC_LOADS, "of all LL-cache accesses"},
	{MK_DTLB_MISSES, MK_DTLB_LOADS, "of all dTLB cache accesses"},
	{MK_ITLB_MISSES, MK_ITLB_LOADS, "of all iTLB cache accesses"},
	{MK_STALLED_FE, MK_CYCLES, "frontend cycles idle"},
	{MK_STALLED_BE, MK_CYCLES, "backend cycles idle"},
};

static enum metric_kind metrics_cache_kind(uint64_t config)
{
	unsigned id = config & 0xff, op = (config >> 8) & 0xff, res = (config >> 16) & 0xff;
	static const enum metric_kind kinds[][2] = {
		[PERF_COUNT_HW_CACHE_L1D] = {MK_L1D_LOADS, MK_L1D_MISSES},
		[PERF_COUNT_HW_CACHE_L1I] = {MK_L1I_LOADS, MK_L1I_MISSES},
		[PERF_COUNT_HW_CACHE_LL] = {MK_LLC_LOADS, MK_LLC_MISSES},
		[PERF_COUNT_HW_CACHE_DTLB] = {MK_DTLB_LOADS, MK_DTLB_MISSES},
		[PERF_COUNT_HW_CACHE_ITLB] = {MK_ITLB_LOADS, MK_ITLB_MISSES},
	};

	if (op != PERF_COUNT_HW_CACHE_OP_READ || id >= sizeof(kinds) / sizeof(kinds[0]) ||
	    res > PERF_COUNT_HW_CACHE_RESULT_MISS || kinds[id][0] == MK_OTHER)
		return MK_OTHER;
	return kinds[id][res == PERF_COUNT_HW_CACHE_RESULT_MISS];
}

static enum metric_kind metrics_kind(const struct perf_event_attr *a)
{
	/* hybrid PMUs put the PMU type in config's upper half */
	uint64_t config = a->config & 0xffffffffu;

	switch (a->type) {
	case PERF_TYPE_SOFTWARE:
		if (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK)
			return MK_CLOCK;
		return MK_OTHER;
	case PERF_TYPE_HARDWARE:
		switch (config) {
		case PERF_COUNT_HW_CPU_CYCLES:
			return MK_CYCLES;
		case PERF_COUNT_HW_INSTRUCTIONS:
			return MK_INSTRUCTIONS;
		case PERF_COUNT_HW_BRANCH_INSTRUCTIONS:
			return MK_BRANCHES;
		case PERF_COUNT_HW_BRANCH_MISSES:
			return MK_BRANCH_MISSES;
		case PERF_COUNT_HW_CACHE_REFERENCES:
			return MK_CACHE_REFS;
		case PERF_COUNT_HW_CACHE_MISSES:
			return MK_CACHE_MISSES;
		case PERF_COUNT_HW_STALLED_CYCLES_FRONTEND:
			return MK_STALLED_FE;
		case PERF_COUNT_HW_STALLED_CYCLES_BACKEND:
			return MK_STALLED_BE;
		}
		return MK_OTHER;
	case PERF_TYPE_HW_CACHE:
		return metrics_cache_kind(config);
	}
	return MK_OTHER;
}

/* The same privilege levels are counted (perf's shadow-stat "context"). */
static bool metrics_same_ctx(const struct perf_event_attr *a, const struct perf_event_attr *b)
{
	return a->exclude_user == b->exclude_user && a->exclude_kernel == b->exclude_kernel &&
	       a->exclude_hv == b->exclude_hv && a->exclude_idle == b->exclude_idle &&
	       a->exclude_host == b->exclude_host && a->exclude_guest == b->exclude_guest;
}

/* The count as the kernel counted it (ns for clocks), without the display scale. */
static double metrics_unscaled(const struct event *ev, const struct count *c)
{
	return ev->scale != 0 ? c->value / ev->scale : c->value;
}

/* First counted event of kind k in ev's context, or -1. */
static long metrics_find(const struct evlist *evl, const struct count *c,
			 const enum metric_kind *kind, enum metric_kind k, const struct event *ev)
{
	for (size_t j = 0; j < evl->n; j++)
		if (kind[j] == k && c[j].state == COUNT_OK &&
		    metrics_same_ctx(&evl->ev[j].attr, &ev->attr) &&
		    (evl->ev[j].cgroup == ev->cgroup ||
		     (evl->ev[j].cgroup && ev->cgroup && !strcmp(evl->ev[j].cgroup, ev->cgroup))))
			return (long)j;
	return -1;
}

static void metrics_set(struct metric *m, double value, const char *id, const char *unit,
			bool percent, int decimals)
{
	m->valid = true;
	m->value = value;
	m->id = id;
	m->percent = percent;
	m->decimals = decimals;
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
}

static double metrics_div(double a, double b)
{
	return b != 0 ? a / b : 0;
}

/* Events per second of the clock's time, with perf's K/M/G steps. */
static void metrics_rate(struct metric *m, double count, double clock_ns)
{
	static const char prefix[] = {'K', 'M', 'G'};
	double v = metrics_div(1e9 * count, clock_ns);
	char unit[8] = "/sec";

	for (int i = 0; i < 3 && v > 1000.0; i++) {
		v /= 1000.0;
		snprintf(unit, sizeof(unit), "%c/sec", prefix[i]);
	}
	metrics_set(m, v, "rate_per_sec", unit, false, 3);
}

void metrics_compute(const struct evlist *evl, const struct count *c, double elapsed_ns,
		     struct metric *out)
{
	enum metric_kind kind[evl->n ? evl->n : 1];

	for (size_t i = 0; i < evl->n; i++) {
		kind[i] = metrics_kind(&evl->ev[i].attr);
		memset(&out[i], 0, sizeof(out[i]));
		out[i].id = "";
	}
	for (size_t i = 0; i < evl->n; i++) {
		const struct event *ev = &evl->ev[i];
		double v = metrics_unscaled(ev, &c[i]);
		long clk = metrics_find(evl, c, kind, MK_CLOCK, ev), j;
		double clock_ns = clk >= 0 ? metrics_unscaled(&evl->ev[clk], &c[clk]) : 0;
		bool done = false;

		if (c[i].state != COUNT_OK || event_is_tool(ev))
			continue; /* perf gives its tool events no rate */
		switch (kind[i]) {
		case MK_CLOCK:
			metrics_set(&out[i], metrics_div(v, elapsed_ns), "cpus_utilized",
				    "CPUs utilized", false, 3);
			continue;
		case MK_INSTRUCTIONS:
			j = metrics_find(evl, c, kind, MK_CYCLES, ev);
			if (j >= 0)
				metrics_set(&out[i],
					    metrics_div(v, metrics_unscaled(&evl->ev[j], &c[j])),
					    "ipc", "insn per cycle", false, 2);
			continue;
		case MK_CYCLES:
			if (clk >= 0)
				metrics_set(&out[i], metrics_div(v, clock_ns), "ghz", "GHz", false,
					    3);
			continue;
		default:
			break;
		}
		for (size_t r = 0; r < sizeof(metrics_ratios) / sizeof(metrics_ratios[0]); r++) {
			if (metrics_ratios[r].miss != kind[i])
				continue;
			j = metrics_find(evl, c, kind, metrics_ratios[r].total, ev);
			if (j >= 0) {
				metrics_set(&out[i],
					    100.0 * metrics_div(v, metrics_unscaled(&evl->ev[j],
										    &c[j])),
					    kind[i] == MK_STALLED_FE || kind[i] == MK_STALLED_BE
						    ? "stalled_ratio"
						    : "miss_ratio",
					    metrics_ratios[r].unit, true, 2);
				done = true;
			}
			/* perf: stalled cycles have no fallback rate */
			if (kind[i] == MK_STALLED_FE || kind[i] == MK_STALLED_BE)
				done = true;
		}
		if (!done && clk >= 0)
			metrics_rate(&out[i], v, clock_ns);
	}
}
