/* aggr.c: the units of perf stat's aggregation modes (see aggr.h), from
 * the CPU topology in sysfs:
 *   cpu/cpuN/topology/{physical_package_id,die_id,core_id}
 *   cpu/cpuN/cache/indexK/{level,id,shared_cpu_list}
 *   node/nodeN/cpulist
 * A kernel without die_id (before 5.6) has one die per socket: die 0, as
 * perf takes it.  A cache without an id file is named by the first CPU
 * that shares it, as perf names it. */
#include "config.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"
#include "cause.h"

#define AGGR_SYSFS "/sys/devices/system"
#define AGGR_MAX_INDEX 32 /* cache/indexK looked at, at most */

const char *aggr_option(enum aggr_mode mode)
{
	static const char *const opt[] = {
		[AGGR_GLOBAL] = "",	    [AGGR_THREAD] = "--per-thread",
		[AGGR_NONE] = "--no-aggr",  [AGGR_CORE] = "--per-core",
		[AGGR_DIE] = "--per-die",   [AGGR_SOCKET] = "--per-socket",
		[AGGR_NODE] = "--per-node", [AGGR_CACHE] = "--per-cache"};
	return (unsigned)mode < sizeof opt / sizeof opt[0] ? opt[mode] : "";
}

const char *aggr_name(enum aggr_mode mode)
{
	static const char *const name[] = {
		[AGGR_GLOBAL] = "global", [AGGR_THREAD] = "thread", [AGGR_NONE] = "cpu",
		[AGGR_CORE] = "core",	  [AGGR_DIE] = "die",	    [AGGR_SOCKET] = "socket",
		[AGGR_NODE] = "node",	  [AGGR_CACHE] = "cache"};
	return (unsigned)mode < sizeof name / sizeof name[0] ? name[mode] : "global";
}

int aggr_parse_level(const char *s, int *level)
{
	if (s && (*s == 'L' || *s == 'l'))
		s++;
	if (!s || *s < '1' || *s > '9' || s[strspn(s, "0123456789")] || strlen(s) > 4)
		return -EINVAL;
	*level = atoi(s);
	return 0;
}

/* The first line of root/rel (formatted) into buf; 0 or -errno. */
__attribute__((format(printf, 4, 5))) static int aggr_read(char *buf, size_t size, const char *root,
							   const char *fmt, ...)
{
	char rel[256], path[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rel, sizeof rel, fmt, ap);
	va_end(ap);
	snprintf(path, sizeof path, "%s/%s", root, rel);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int r = fgets(buf, (int)size, f) ? 0 : -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return r;
}

/* A whole number of sysfs into *v; 0, -errno, or -EINVAL when it is none. */
static int aggr_number(const char *buf, int *v)
{
	char *end;
	errno = 0;
	long x = strtol(buf, &end, 10);
	if (end == buf || *end || errno || x < -1 || x > 0x7fffffff)
		return -EINVAL;
	*v = (int)x;
	return 0;
}

/* A thread's name as a row shows it: control bytes (a newline, a
 * terminal's escape) as \xNN, so one thread stays one row and prints as
 * itself. */
static void aggr_printable(char *buf, size_t size, const char *s)
{
	size_t n = 0;
	buf[0] = 0;
	for (const unsigned char *p = (const unsigned char *)s; p && *p && n + 5 < size; p++)
		n += (size_t)snprintf(buf + n, size - n, *p < 0x20 || *p == 0x7f ? "\\x%02x" : "%c",
				      *p);
}

/* Whether cpu is in a sysfs CPU list ("0-3,8"); *first: its first CPU. */
static bool aggr_in_list(const char *list, int cpu, int *first)
{
	bool in = false;
	*first = -1;
	for (const char *p = list; *p;) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;
		if (end == p)
			break;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p)
				break;
		}
		if (*first < 0)
			*first = (int)lo;
		in |= cpu >= lo && cpu <= hi;
		p = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	return in;
}

/* CPU cpu's NUMA node from node/nodeN/cpulist; -1 when none lists it. */
static int aggr_node_of(const char *root, int cpu)
{
	char dir[512], buf[4096];
	snprintf(dir, sizeof dir, "%s/node", root);
	DIR *d = opendir(dir);
	int node = -1, first;
	for (struct dirent *e; d && node < 0 && (e = readdir(d));) {
		int n;
		if (strncmp(e->d_name, "node", 4) != 0 || aggr_number(e->d_name + 4, &n) < 0 ||
		    n < 0)
			continue;
		if (aggr_read(buf, sizeof buf, root, "node/%s/cpulist", e->d_name) == 0 &&
		    aggr_in_list(buf, cpu, &first))
			node = n;
	}
	if (d)
		closedir(d);
	return node;
}

/* The cache of `level` CPU cpu uses: its id (or the first CPU sharing it).
 * 0, or -ENOENT when the CPU has no cache of that level. */
static int aggr_cache_of(const char *root, int cpu, int level, int *id)
{
	char buf[4096];
	for (int k = 0; k < AGGR_MAX_INDEX; k++) {
		int lv, first;
		if (aggr_read(buf, sizeof buf, root, "cpu/cpu%d/cache/index%d/level", cpu, k) < 0)
			continue;
		if (aggr_number(buf, &lv) < 0 || lv != level)
			continue;
		if (aggr_read(buf, sizeof buf, root, "cpu/cpu%d/cache/index%d/id", cpu, k) == 0 &&
		    aggr_number(buf, id) == 0)
			return 0;
		if (aggr_read(buf, sizeof buf, root, "cpu/cpu%d/cache/index%d/shared_cpu_list", cpu,
			      k) == 0) {
			aggr_in_list(buf, cpu, &first);
			*id = first >= 0 ? first : cpu;
			return 0;
		}
	}
	return -ENOENT;
}

/* The highest cache level CPU cpu has, 0: none. */
static int aggr_top_level(const char *root, int cpu)
{
	char buf[64];
	int top = 0;
	for (int k = 0; k < AGGR_MAX_INDEX; k++) {
		int lv;
		if (aggr_read(buf, sizeof buf, root, "cpu/cpu%d/cache/index%d/level", cpu, k) ==
			    0 &&
		    aggr_number(buf, &lv) == 0 && lv > top)
			top = lv;
	}
	return top;
}

/* The ids of CPU cpu that mode needs, into u (the rest -1). */
static int aggr_topology(const char *root, enum aggr_mode mode, int level, int cpu,
			 struct aggr_unit *u, char **cause)
{
	char buf[64];
	int r;
	u->socket = u->die = u->core = u->node = u->cache_level = u->cache_id = -1;
	u->cpu = mode == AGGR_NONE ? cpu : -1;
	if (mode == AGGR_NODE) {
		u->node = aggr_node_of(root, cpu);
		if (u->node < 0)
			return cause_set(cause, -ENOENT,
					 "--per-node: no NUMA node lists CPU %d in %s/node", cpu,
					 root);
		return 0;
	}
	if (mode == AGGR_NONE)
		return 0;
	if ((r = aggr_read(buf, sizeof buf, root, "cpu/cpu%d/topology/physical_package_id", cpu)) <
		    0 ||
	    (r = aggr_number(buf, &u->socket)) < 0)
		return cause_set(cause, -ENOENT,
				 "%s: cannot read the socket of CPU %d "
				 "(%s/cpu/cpu%d/topology/physical_package_id): %s",
				 aggr_option(mode), cpu, root, cpu, strerror(-r));
	if (mode == AGGR_SOCKET)
		return 0;
	u->die = 0; /* no die_id: one die per socket */
	if (aggr_read(buf, sizeof buf, root, "cpu/cpu%d/topology/die_id", cpu) == 0 &&
	    aggr_number(buf, &u->die) < 0)
		u->die = 0;
	if (mode == AGGR_CORE) {
		if ((r = aggr_read(buf, sizeof buf, root, "cpu/cpu%d/topology/core_id", cpu)) < 0 ||
		    (r = aggr_number(buf, &u->core)) < 0)
			return cause_set(cause, -ENOENT,
					 "--per-core: cannot read the core of CPU %d "
					 "(%s/cpu/cpu%d/topology/core_id): %s",
					 cpu, root, cpu, strerror(-r));
	}
	if (mode == AGGR_CACHE) {
		u->cache_level = level;
		if (aggr_cache_of(root, cpu, level, &u->cache_id) < 0)
			return cause_set(cause, -ENOENT,
					 "--per-cache: CPU %d has no level %d cache in "
					 "%s/cpu/cpu%d/cache",
					 cpu, level, root, cpu);
	}
	return 0;
}

static int aggr_cmp_int(int a, int b)
{
	return a < b ? -1 : a > b;
}

/* perf's order: socket, die, cache level and id, core; node; CPU. */
static int aggr_cmp(const struct aggr_unit *a, const struct aggr_unit *b)
{
	int c;
	if ((c = aggr_cmp_int(a->node, b->node)) || (c = aggr_cmp_int(a->socket, b->socket)) ||
	    (c = aggr_cmp_int(a->die, b->die)) ||
	    (c = aggr_cmp_int(a->cache_level, b->cache_level)) ||
	    (c = aggr_cmp_int(a->cache_id, b->cache_id)) || (c = aggr_cmp_int(a->core, b->core)))
		return c;
	return aggr_cmp_int(a->cpu, b->cpu);
}

static void aggr_label(enum aggr_mode mode, struct aggr_unit *u)
{
	switch (mode) {
	case AGGR_NONE:
		snprintf(u->id, sizeof u->id, "CPU%d", u->cpu);
		break;
	case AGGR_CORE:
		snprintf(u->id, sizeof u->id, "S%d-D%d-C%d", u->socket, u->die, u->core);
		break;
	case AGGR_DIE:
		snprintf(u->id, sizeof u->id, "S%d-D%d", u->socket, u->die);
		break;
	case AGGR_SOCKET:
		snprintf(u->id, sizeof u->id, "S%d", u->socket);
		break;
	case AGGR_NODE:
		snprintf(u->id, sizeof u->id, "N%d", u->node);
		break;
	case AGGR_CACHE:
		snprintf(u->id, sizeof u->id, "S%d-D%d-L%d-ID%d", u->socket, u->die, u->cache_level,
			 u->cache_id);
		break;
	case AGGR_THREAD:
		snprintf(u->id, sizeof u->id, "%s-%d", u->comm, u->tid);
		break;
	case AGGR_GLOBAL:
		u->id[0] = 0;
		break;
	}
}

/* The units of the CPU modes: one per distinct topology id, sorted. */
static int aggr_build_cpus(struct aggr *ag, int level, const struct counters_at *at, size_t n,
			   const char *root, char **cause)
{
	if (ag->mode == AGGR_CACHE) {
		int top = 0;
		for (size_t k = 0; k < n; k++) {
			int t = aggr_top_level(root, at[k].cpu);
			top = t > top ? t : top;
		}
		if (!top)
			return cause_set(cause, -ENOENT,
					 "--per-cache: no CPU lists its caches in %s/cpu", root);
		if (level > top)
			return cause_set(cause, -EINVAL,
					 "invalid --per-cache 'L%d': the caches here go up to L%d",
					 level, top);
		level = level ? level : top;
	}
	for (size_t k = 0; k < n; k++) {
		struct aggr_unit u = {.tid = -1, .ncpus = 1};
		int r = aggr_topology(root, ag->mode, level, at[k].cpu, &u, cause);
		if (r < 0)
			return r;
		size_t i = 0;
		while (i < ag->n && aggr_cmp(&ag->unit[i], &u) < 0)
			i++;
		if (i < ag->n && aggr_cmp(&ag->unit[i], &u) == 0) {
			ag->unit[i].ncpus++;
			continue;
		}
		aggr_label(ag->mode, &u);
		memmove(&ag->unit[i + 1], &ag->unit[i], (ag->n - i) * sizeof *ag->unit);
		ag->unit[i] = u;
		ag->n++;
	}
	/* each set's unit, now that the order is final */
	for (size_t k = 0; k < n; k++) {
		struct aggr_unit u = {.tid = -1};
		aggr_topology(root, ag->mode, level, at[k].cpu, &u, NULL);
		for (size_t i = 0; i < ag->n; i++)
			if (aggr_cmp(&ag->unit[i], &u) == 0)
				ag->unit_of[k] = i;
	}
	return 0;
}

int aggr_build(struct aggr *ag, enum aggr_mode mode, int cache_level, const struct counters_at *at,
	       size_t n, const char *const *comm, const char *sysfs, char **cause)
{
	memset(ag, 0, sizeof *ag);
	ag->mode = mode;
	ag->nsets = n;
	ag->unit = calloc(n ? n : 1, sizeof *ag->unit);
	ag->unit_of = calloc(n ? n : 1, sizeof *ag->unit_of);
	if (!ag->unit || !ag->unit_of) {
		aggr_release(ag);
		return -ENOMEM;
	}
	for (size_t k = 0; k < n; k++) {
		bool thread = at[k].pid > 0 && at[k].cpu < 0, cpu = at[k].cpu >= 0;
		if (mode == AGGR_THREAD ? !thread : mode != AGGR_GLOBAL && !cpu) {
			aggr_release(ag);
			return cause_set(cause, -EINVAL, "%s needs %s", aggr_option(mode),
					 mode == AGGR_THREAD ? "-p, -t or -a" : "-a or -C");
		}
	}
	int r = 0;
	if (mode == AGGR_GLOBAL) {
		ag->n = 1;
		ag->unit[0] = (struct aggr_unit){.cpu = -1,
						 .socket = -1,
						 .die = -1,
						 .core = -1,
						 .node = -1,
						 .cache_level = -1,
						 .cache_id = -1,
						 .tid = -1};
		for (size_t k = 0; k < n; k++)
			ag->unit[0].ncpus += at[k].cpu >= 0;
	} else if (mode == AGGR_THREAD) {
		for (size_t k = 0; k < n; k++) {
			struct aggr_unit *u = &ag->unit[k];
			*u = (struct aggr_unit){.cpu = -1,
						.socket = -1,
						.die = -1,
						.core = -1,
						.node = -1,
						.cache_level = -1,
						.cache_id = -1,
						.tid = at[k].pid};
			aggr_printable(u->comm, sizeof u->comm, comm ? comm[k] : NULL);
			aggr_label(mode, u);
			ag->unit_of[k] = k;
		}
		ag->n = n;
	} else {
		r = aggr_build_cpus(ag, cache_level, at, n, sysfs ? sysfs : AGGR_SYSFS, cause);
	}
	if (r < 0)
		aggr_release(ag);
	return r;
}

void aggr_release(struct aggr *ag)
{
	free(ag->unit);
	free(ag->unit_of);
	memset(ag, 0, sizeof *ag);
}
