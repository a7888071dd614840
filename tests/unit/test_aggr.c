/* test_aggr.c: aggr.c's units from a made-up sysfs tree: two sockets, the
 * second with two dies, a kernel without die_id on the first, an L3 named
 * by its id file and an L2 without one (named by its first CPU), NUMA
 * nodes; perf's names and order, the CPU counts, each set's unit, and the
 * refusals (no such cache level, a set of the wrong kind). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aggr.h"
#include "tap.h"

static char root[256];

static void put(const char *rel, const char *text)
{
	char path[512], dir[600];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	snprintf(dir, sizeof dir, "mkdir -p \"$(dirname '%s')\"", path);
	if (system(dir) != 0)
		abort();
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fprintf(f, "%s\n", text);
	fclose(f);
}

/* CPU c: socket s, die d (-1: no die_id file), core k, L3 id l3, L2
 * shared with the CPUs of list l2 (no id file). */
static void cpu(int c, int s, int d, int k, int l3, const char *l2)
{
	char rel[128], v[32];
	snprintf(rel, sizeof rel, "cpu/cpu%d/topology/physical_package_id", c);
	snprintf(v, sizeof v, "%d", s);
	put(rel, v);
	if (d >= 0) {
		snprintf(rel, sizeof rel, "cpu/cpu%d/topology/die_id", c);
		snprintf(v, sizeof v, "%d", d);
		put(rel, v);
	}
	snprintf(rel, sizeof rel, "cpu/cpu%d/topology/core_id", c);
	snprintf(v, sizeof v, "%d", k);
	put(rel, v);
	snprintf(rel, sizeof rel, "cpu/cpu%d/cache/index0/level", c);
	put(rel, "1");
	snprintf(rel, sizeof rel, "cpu/cpu%d/cache/index0/id", c);
	snprintf(v, sizeof v, "%d", c);
	put(rel, v);
	snprintf(rel, sizeof rel, "cpu/cpu%d/cache/index2/level", c);
	put(rel, "2");
	snprintf(rel, sizeof rel, "cpu/cpu%d/cache/index2/shared_cpu_list", c);
	put(rel, l2);
	snprintf(rel, sizeof rel, "cpu/cpu%d/cache/index3/level", c);
	put(rel, "3");
	snprintf(rel, sizeof rel, "cpu/cpu%d/cache/index3/id", c);
	snprintf(v, sizeof v, "%d", l3);
	put(rel, v);
}

int main(void)
{
	snprintf(root, sizeof root, "%s/spanstat-aggr-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		return 99;
	/* socket 1 lists first: the order comes from the ids, not the CPUs */
	cpu(0, 1, 0, 0, 7, "0-1");
	cpu(1, 1, 0, 0, 7, "0-1");
	cpu(2, 1, 1, 3, 8, "2");
	cpu(3, 0, -1, 5, 2, "3");
	put("node/node0/cpulist", "3");
	put("node/node1/cpulist", "0-2");
	put("node/possible", "0-1");
	struct counters_at at[4] = {{-1, 0}, {-1, 1}, {-1, 2}, {-1, 3}};
	struct aggr ag;
	char *cause = NULL;

	is_int(aggr_build(&ag, AGGR_CORE, 0, at, 4, NULL, root, &cause), 0, "--per-core builds");
	is_int(ag.n, 3, "three cores: two CPUs share one");
	is_str(ag.unit[0].id, "S0-D0-C5", "socket 0 first; no die_id is die 0");
	is_str(ag.unit[1].id, "S1-D0-C0", "then socket 1 die 0");
	is_str(ag.unit[2].id, "S1-D1-C3", "then die 1");
	is_int(ag.unit[1].ncpus, 2, "the shared core adds up two CPUs");
	is_int(ag.unit_of[0], 1, "cpu0's unit");
	is_int(ag.unit_of[1], 1, "cpu1's unit");
	is_int(ag.unit_of[3], 0, "cpu3's unit");
	aggr_release(&ag);

	is_int(aggr_build(&ag, AGGR_DIE, 0, at, 4, NULL, root, &cause), 0, "--per-die builds");
	is_int(ag.n, 3, "three dies");
	is_str(ag.unit[2].id, "S1-D1", "S1-D1 last");
	aggr_release(&ag);

	is_int(aggr_build(&ag, AGGR_SOCKET, 0, at, 4, NULL, root, &cause), 0, "--per-socket");
	is_int(ag.n, 2, "two sockets");
	is_str(ag.unit[1].id, "S1", "S1");
	is_int(ag.unit[1].ncpus, 3, "of three CPUs");
	aggr_release(&ag);

	is_int(aggr_build(&ag, AGGR_NODE, 0, at, 4, NULL, root, &cause), 0, "--per-node");
	is_int(ag.n, 2, "two nodes");
	is_str(ag.unit[0].id, "N0", "N0 first");
	is_int(ag.unit[0].ncpus, 1, "N0 has cpu3");
	is_int(ag.unit_of[2], 1, "cpu2 in N1");
	aggr_release(&ag);

	is_int(aggr_build(&ag, AGGR_CACHE, 0, at, 4, NULL, root, &cause), 0, "--per-cache");
	is_int(ag.n, 3, "the highest level, L3: three instances");
	is_str(ag.unit[0].id, "S0-D0-L3-ID2", "named by the id file");
	is_str(ag.unit[1].id, "S1-D0-L3-ID7", "shared L3");
	is_int(ag.unit[1].ncpus, 2, "by two CPUs");
	aggr_release(&ag);

	is_int(aggr_build(&ag, AGGR_CACHE, 2, at, 4, NULL, root, &cause), 0, "--per-cache=L2");
	is_int(ag.n, 3, "three L2s");
	is_str(ag.unit[1].id, "S1-D0-L2-ID0", "no id file: its first CPU names it");
	aggr_release(&ag);

	is_int(aggr_build(&ag, AGGR_CACHE, 4, at, 4, NULL, root, &cause), -EINVAL, "no L4");
	is_str(cause, "invalid --per-cache 'L4': the caches here go up to L3", "said so");
	free(cause);
	cause = NULL;

	is_int(aggr_build(&ag, AGGR_NONE, 0, at, 4, NULL, root, &cause), 0, "-A");
	is_int(ag.n, 4, "a row per CPU");
	is_str(ag.unit[3].id, "CPU3", "CPU3");
	aggr_release(&ag);

	struct counters_at th[2] = {{42, -1}, {7, -1}};
	const char *comm[2] = {"app", "worker"};
	is_int(aggr_build(&ag, AGGR_THREAD, 0, th, 2, comm, root, &cause), 0, "--per-thread");
	is_str(ag.unit[0].id, "app-42", "comm-tid, in the sets' order");
	is_str(ag.unit[1].id, "worker-7", "the second thread");
	aggr_release(&ag);
	is_int(aggr_build(&ag, AGGR_CORE, 0, th, 2, comm, root, &cause), -EINVAL,
	       "--per-core over threads refused");
	free(cause);
	cause = NULL;
	is_int(aggr_build(&ag, AGGR_THREAD, 0, at, 4, NULL, root, &cause), -EINVAL,
	       "--per-thread over CPUs refused");
	free(cause);

	int lv = 0;
	ok(aggr_parse_level("L3", &lv) == 0 && lv == 3, "L3");
	ok(aggr_parse_level("l2", &lv) == 0 && lv == 2, "l2");
	ok(aggr_parse_level("4", &lv) == 0 && lv == 4, "4");
	ok(aggr_parse_level("L0", &lv) < 0 && aggr_parse_level("L", &lv) < 0 &&
		   aggr_parse_level("L3x", &lv) < 0 && aggr_parse_level("", &lv) < 0,
	   "bad levels refused");

	char rm[320];
	snprintf(rm, sizeof rm, "rm -rf '%s'", root);
	if (system(rm) != 0)
		diag("cannot remove %s", root);
	return tap_done();
}
