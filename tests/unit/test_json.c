/* test_json.c: the --json writer (json.c).  Builds a report by hand (two
 * runs, supported, unsupported and uncounted events, -I samples, a span
 * tree from real span events), writes it, and checks the document with
 * cJSON (values) and jq (types), including every field path documented in
 * man/spanstat-json.5 and that nothing undocumented is written. */
#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "writer.h"

static char *slurp(FILE *fp)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	char buf[65536];
	size_t n;
	rewind(fp);
	while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
		fwrite(buf, 1, n, mem);
	fclose(mem);
	return text;
}

/* Runs jq -r PROGRAM on file; returns its output (malloc'd) or NULL. */
static char *jq(const char *file, const char *program)
{
	char prog[] = "/tmp/spanstat-jq-XXXXXX";
	int fd = mkstemp(prog);
	if (fd < 0)
		return NULL;
	if (write(fd, program, strlen(program)) < 0) {
		close(fd);
		return NULL;
	}
	close(fd);
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "jq -r -f '%s' '%s' 2>&1", prog, file);
	FILE *p = popen(cmd, "r");
	char *out = p ? slurp(p) : NULL;
	int st = p ? pclose(p) : -1;
	unlink(prog);
	if (st != 0) {
		printf("# jq failed: %.300s\n", out ? out : "");
		free(out);
		return NULL;
	}
	return out;
}

static const cJSON *get(const cJSON *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *save, *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) {
		char *end;
		long idx = strtol(k, &end, 10);
		o = *end ? cJSON_GetObjectItemCaseSensitive(o, k) : cJSON_GetArrayItem(o, (int)idx);
	}
	return o;
}

static double num(const cJSON *o, const char *path)
{
	const cJSON *v = get(o, path);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *path)
{
	const cJSON *v = get(o, path);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- the fixture ----------------------------------------------------------- */

#define NEV 4

struct fixture {
	struct event ev[NEV];
	struct evlist evl;
	char *argv[4];
	struct run_head head;
	struct count runs[2][NEV], mean[NEV];
	struct stat_summary stat[NEV];
	struct run_result run[2];
	struct report rep;
	struct strtab st;
	struct span_trees tree;
	struct decode_stats ds;
	/* with spans, as two ranks of a job (each the same tree) */
	struct span_tree merged;
	struct rank_info rank[2];
	struct report_ranks ranks;
	/* split per core (aggr.h): two cores, each half of every count */
	struct aggr ag;
	struct aggr_unit unit[2];
	size_t unit_of[2];
	struct count unit_runs[2][2 * NEV], unit_mean[2 * NEV];
	struct stat_summary unit_stat[2 * NEV];
	/* open spans per tid (100, 101) as the decoder would track them */
	uint64_t open_ts[2][8];
	uint32_t depth[2];
};

static void span(struct fixture *f, enum span_kind kind, uint32_t tid, uint64_t ts,
		 const char *name, uint32_t flags)
{
	struct span_event ev = {.kind = kind, .pid = 100, .tid = tid, .ts = ts, .flags = flags};
	if (name)
		ev.name = strtab_intern(&f->st, name, strlen(name));
	uint32_t *d = &f->depth[tid - 100];
	if (kind == SPAN_BEGIN) {
		ev.depth = *d;
		f->open_ts[tid - 100][(*d)++] = ts;
	} else if (kind == SPAN_END) {
		ev.depth = --*d;
		ev.begin_ts = f->open_ts[tid - 100][*d];
		/* its values: a tenth off-CPU, 3 faults, 2 allocations of 50
		 * bytes, 1 free of 50, none counted for the unsupported event */
		static uint64_t v[7];
		uint64_t vals[7] = {(ts - ev.begin_ts) / 10, 3, 0, 2, 1, 100, 50};
		memcpy(v, vals, sizeof v);
		ev.vals = v;
	}
	span_trees_event(&f->tree, &ev);
}

/* A typed argument of thread tid's innermost open span: key, type and value
 * (a string's text interned). */
static void fixture_arg(struct fixture *f, uint32_t tid, const char *key, unsigned type,
			uint64_t bits, const char *text)
{
	struct span_event ae = {.kind = SPAN_ARG, .pid = 100, .tid = tid, .ts = 5200};
	ae.name = strtab_intern(&f->st, key, strlen(key));
	ae.flags = type;
	ae.value = (int64_t)(text ? strtab_intern(&f->st, text, strlen(text)) : bits);
	span_trees_event(&f->tree, &ae);
}

static void fixture_init(struct fixture *f, bool spans)
{
	memset(f, 0, sizeof *f);
	f->ev[0] = (struct event){.name = (char *)"task-clock",
				  .unit = "msec",
				  .scale = 1e-6,
				  .group = 0,
				  .leader = true};
	f->ev[0].attr.type = PERF_TYPE_SOFTWARE;
	f->ev[0].attr.config = PERF_COUNT_SW_TASK_CLOCK;
	f->ev[1] = (struct event){
		.name = (char *)"cycles", .unit = "", .scale = 1, .group = 1, .leader = true};
	f->ev[1].attr.type = PERF_TYPE_HARDWARE;
	f->ev[1].attr.config = PERF_COUNT_HW_CPU_CYCLES;
	f->ev[2] = (struct event){
		.name = (char *)"page-faults", .unit = "", .scale = 1, .group = 2, .leader = true};
	f->ev[2].attr.type = PERF_TYPE_SOFTWARE;
	f->ev[2].attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	f->ev[3] = (struct event){.name = (char *)"context-switches",
				  .unit = "",
				  .scale = 1,
				  .group = 3,
				  .leader = true};
	f->ev[3].attr.type = PERF_TYPE_SOFTWARE;
	f->ev[3].attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	f->evl = (struct evlist){.ev = f->ev, .n = NEV, .ngroups = NEV};

	f->argv[0] = (char *)"./app";
	f->argv[1] = (char *)"--size=3";
	f->argv[2] = (char *)"quote\"d arg";
	f->head = (struct run_head){.argc = 3,
				    .argv = f->argv,
				    .evl = &f->evl,
				    .runs = 2,
				    .interval_ms = 100,
				    .spans = spans};
	f->head.start.tv_sec = 1714564800; /* 2024-05-01T12:00:00Z */
	f->head.start.tv_nsec = 123456789;
	f->head.start_mono = 5000000000ull;

	for (int k = 0; k < 2; k++) {
		/* task-clock: 200 ms and 220 ms of CPU; multiplexed in run 1 */
		f->runs[k][0] = (struct count){.state = COUNT_OK,
					       .raw = 200000000ull + k * 20000000ull,
					       .enabled = 400000000,
					       .running = 400000000,
					       .value = 200.0 + k * 20};
		f->runs[k][1] = (struct count){.state = COUNT_NOT_SUPPORTED, .err = ENOENT};
		f->runs[k][2] = (struct count){.state = COUNT_OK,
					       .raw = 5000000000ull + (uint64_t)k * 2,
					       .enabled = 400000000,
					       .running = 300000000,
					       .value = 5000000000.0 + k * 2};
		f->runs[k][3] = (struct count){.state = COUNT_NOT_COUNTED, .enabled = 400000000};
		f->run[k].counts = f->runs[k];
		f->run[k].ru = (struct rusage_info){.elapsed_ns = 400000000ull + k * 100000000ull,
						    .utime_ns = 150000000,
						    .stime_ns = 50000000,
						    .maxrss_kb = 65536,
						    .minflt = 16400,
						    .majflt = 1,
						    .nvcsw = 10,
						    .nivcsw = 3};
	}
	f->run[0].wstatus = 0;
	f->run[0].exit_code = 0;
	f->run[1].wstatus = SIGKILL; /* as wait4 reports a death by SIGKILL */
	f->run[1].exit_code = 128 + SIGKILL;
	memcpy(f->mean, f->runs[0], sizeof f->mean);
	f->mean[0].value = 210;
	f->mean[0].raw = 210000000;
	f->mean[2].value = 5000000001.0;
	f->stat[0] = (struct stat_summary){.mean = 210, .stddev = 14.142135623730951, .rel = 4.76};
	f->stat[2] = (struct stat_summary){.mean = 5000000001.0, .stddev = 1.4142, .rel = 0.00002};
	f->rep = (struct report){.head = &f->head,
				 .nruns = 2,
				 .run = f->run,
				 .count = f->mean,
				 .stat = f->stat,
				 .exit_code = 128 + SIGKILL};
	f->rep.ru = f->run[0].ru;
	f->rep.ru.elapsed_ns = 450000000;
	f->rep.elapsed = (struct stat_summary){.mean = 0.45, .stddev = 0.0707, .rel = 11.1};

	if (!spans)
		return;
	for (int u = 0; u < 2; u++) {
		f->unit[u] = (struct aggr_unit){.ncpus = 1,
						.cpu = -1,
						.socket = 0,
						.die = 0,
						.core = u,
						.node = -1,
						.cache_level = -1,
						.cache_id = -1,
						.tid = -1};
		snprintf(f->unit[u].id, sizeof f->unit[u].id, "S0-D0-C%d", u);
		f->unit_of[u] = (size_t)u;
		for (int i = 0; i < NEV; i++) {
			for (int k = 0; k < 2; k++) {
				f->unit_runs[k][u * NEV + i] = f->runs[k][i];
				f->unit_runs[k][u * NEV + i].raw /= 2;
				f->unit_runs[k][u * NEV + i].value /= 2;
			}
			f->unit_mean[u * NEV + i] = f->mean[i];
			f->unit_mean[u * NEV + i].raw /= 2;
			f->unit_mean[u * NEV + i].value /= 2;
			f->unit_stat[u * NEV + i] = f->stat[i];
		}
	}
	f->ag = (struct aggr){
		.mode = AGGR_CORE, .unit = f->unit, .n = 2, .unit_of = f->unit_of, .nsets = 2};
	f->head.aggr = &f->ag;
	for (int k = 0; k < 2; k++)
		f->run[k].units = f->unit_runs[k];
	f->rep.unit_count = f->unit_mean;
	f->rep.unit_stat = f->unit_stat;
	strtab_init(&f->st);
	span_trees_init(&f->tree);
	span_trees_set_values(&f->tree, 7);
	static const struct spanmetrics ms = {
		.n = 7,
		.m = {{SPANMETRIC_OFF_CPU, "off_cpu_ns", true, true},
		      {SPANMETRIC_EVENT, "page-faults", true, false},
		      {SPANMETRIC_EVENT, "cycles", false, false},
		      {SPANMETRIC_ALLOCS, "allocs", true, false},
		      {SPANMETRIC_FREES, "frees", true, false},
		      {SPANMETRIC_ALLOC_BYTES, "alloc_bytes", true, false},
		      {SPANMETRIC_FREE_BYTES, "free_bytes", true, false}},
		.off_cpu = 0,
		.first_target = 1};
	f->head.metrics = &ms;
	f->head.strings = &f->st;
	struct span_event pe = {.kind = SPAN_PROCESS, .pid = 100, .tid = 100, .ts = 1, .value = 1};
	pe.name = strtab_intern(&f->st, "app", 3);
	span_trees_event(&f->tree, &pe);
	span(f, SPAN_THREAD, 100, 1, "main", 0);
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = 1000 + (uint64_t)i * 1000;
		span(f, SPAN_BEGIN, 100, t0, "load", 0);
		/* typed arguments of every type on the first load */
		if (i == 0) {
			fixture_arg(f, 100, "bytes", SPAN_ARG_U64, 4096, NULL);
			fixture_arg(f, 100, "delta", SPAN_ARG_I64, (uint64_t)-3, NULL);
			fixture_arg(f, 100, "ratio", SPAN_ARG_F64, UINT64_C(0x3fe0000000000000),
				    NULL);
			fixture_arg(f, 100, "hit", SPAN_ARG_BOOL, 1, NULL);
			fixture_arg(f, 100, "route", 0, 0, NULL); /* an i64 0 */
			fixture_arg(f, 100, "route", SPAN_ARG_STR, 0, "/a");
		}
		span(f, SPAN_BEGIN, 100, t0 + 100, "parse", 0);
		span(f, SPAN_END, 100, t0 + 400, "parse", 0);
		span(f, SPAN_BEGIN, 100, t0 + 500, "check", 0);
		span(f, SPAN_END, 100, t0 + 600, "check", 0);
		span(f, SPAN_END, 100, t0 + 900, "load", 0);
	}
	span(f, SPAN_INSTANT, 100, 5000, "mark", 0);
	struct span_event me = {.kind = SPAN_MESSAGE, .pid = 100, .tid = 100, .ts = 5100};
	me.text = "ready\x01";
	me.len = 6;
	span_trees_event(&f->tree, &me);
	/* an async span "task" (id 9) with a child "io" (id 10) begun in it */
	struct span_event ae = {.kind = SPAN_ASYNC_BEGIN, .pid = 100, .tid = 100, .ts = 5200};
	ae.name = strtab_intern(&f->st, "task", 4);
	ae.aid = 9;
	span_trees_event(&f->tree, &ae);
	ae = (struct span_event){.kind = SPAN_ASYNC_BEGIN, .pid = 100, .tid = 101, .ts = 5300};
	ae.name = strtab_intern(&f->st, "io", 2);
	ae.aid = 10;
	ae.parent = 9;
	span_trees_event(&f->tree, &ae);
	ae = (struct span_event){.kind = SPAN_ASYNC_END, .pid = 100, .tid = 101, .ts = 5400};
	ae.name = strtab_intern(&f->st, "io", 2);
	ae.aid = 10;
	ae.begin_ts = 5300;
	ae.value = 60;
	ae.enters = ae.threads = 1;
	ae.flags = SPAN_F_UNFINISHED;
	span_trees_event(&f->tree, &ae);
	ae = (struct span_event){.kind = SPAN_ASYNC_END, .pid = 100, .tid = 100, .ts = 5900};
	ae.name = strtab_intern(&f->st, "task", 4);
	ae.aid = 9;
	ae.begin_ts = 5200;
	ae.value = 300;
	ae.enters = 3;
	ae.threads = 2;
	span_trees_event(&f->tree, &ae);
	fixture_arg(f, 100, "mode", SPAN_ARG_STR, 0, "fast"); /* outside every span */
	fixture_arg(f, 100, "setup", SPAN_ARG_U64, 42, NULL);
	span(f, SPAN_THREAD, 101, 5000, "worker", 0);
	span(f, SPAN_BEGIN, 101, 6000, "parse", 0);
	span(f, SPAN_END, 101, 7000, "parse", SPAN_F_UNFINISHED);
	f->ds = (struct decode_stats){.records = 7,
				      .events = 18,
				      .spans = 8,
				      .dropped = 2,
				      .bad_bytes = 5,
				      .unfinished = 1};
	f->rep.spans = &f->tree;
	f->rep.dstats = &f->ds;
	f->rep.span_wall_ns = 900000000;
	span_trees_merge(&f->tree, &f->merged);
	for (int k = 0; k < 2; k++)
		f->rank[k] = (struct rank_info){.rank = k,
						.host = k ? "node1" : "node0",
						.file = k ? "b.rec" : "a.rec",
						.count = f->runs[k],
						.ru = f->run[k].ru,
						.merged = &f->merged,
						.nruns = 1,
						.dropped = k ? 40 : 0,
						.gaps = k};
	f->ranks = (struct report_ranks){2, f->rank};
	f->rep.ranks = &f->ranks;
}

static void fixture_release(struct fixture *f)
{
	if (f->head.spans) {
		span_trees_release(&f->tree);
		span_tree_release(&f->merged);
		strtab_release(&f->st);
	}
}

/* Writes the fixture's report through the JSON writer with 3 -I samples. */
static char *write_json(struct fixture *f, char *path, size_t cap)
{
	snprintf(path, cap, "/tmp/spanstat-json-XXXXXX");
	int fd = mkstemp(path);
	FILE *fp = fdopen(fd, "w+");
	struct writer w = {.ops = &json_writer_ops, .fp = fp, .head = &f->head};
	if (w.ops->start)
		w.ops->start(&w, &f->head);
	for (int i = 0; i < 3; i++) {
		struct count c[NEV];
		memcpy(c, f->runs[0], sizeof c);
		c[0].value = 100.0 + i;
		c[2].raw = (uint64_t)i * 10;
		c[2].value = i * 10.0;
		struct interval_sample s = {.run = 0,
					    .t_ns = (uint64_t)(i + 1) * 100000000,
					    .length_ns = 100000000,
					    .counts = c,
					    .units = f->head.aggr ? f->unit_runs[0] : NULL};
		w.ops->interval(&w, &s);
	}
	int rc = w.ops->finish(&w, &f->rep);
	is_int(rc, 0, "json finish succeeds");
	w.ops->release(&w);
	char *text = slurp(fp);
	fclose(fp);
	return text;
}

/* ---- value checks ------------------------------------------------------------ */

static void test_values(void)
{
	struct fixture f;
	fixture_init(&f, true);
	char path[64];
	char *text = write_json(&f, path, sizeof path);
	cJSON *doc = cJSON_Parse(text);
	ok(doc != NULL, "the output is one JSON document");
	if (!doc) {
		free(text);
		unlink(path);
		fixture_release(&f);
		return;
	}
	is_int(num(doc, "schema_version"), 2, "schema_version 2");
	ok(str(doc, "spanstat_version") && *str(doc, "spanstat_version"), "spanstat_version set");
	is_int(cJSON_GetArraySize(get(doc, "command")), 3, "command has 3 words");
	is_str(str(doc, "command.2"), "quote\"d arg", "command words survive quoting");
	is_str(str(doc, "start.time"), "2024-05-01T12:00:00Z", "start time in ISO 8601 UTC");
	ok(strstr(text, "\"unix_ns\":\t1714564800123456789") != NULL,
	   "start.unix_ns is the exact integer literal");
	ok(!strstr(text, "e+"), "no number is written with an exponent");
	ok(str(doc, "host.sysname") && str(doc, "host.machine") && str(doc, "host.nodename") &&
		   str(doc, "host.release"),
	   "host has nodename, sysname, release, machine");

	is_str(str(doc, "spans.async.paths.1.path.1"), "io", "async: a child's path");
	is_int(num(doc, "spans.async.paths.1.unfinished"), 1, "async: the child unfinished");
	is_int(num(doc, "spans.async.paths.0.busy_ns"), 300, "async: busy");
	is_int(num(doc, "spans.async.paths.0.idle_ns"), 400, "async: idle = total - busy");
	is_int(num(doc, "spans.async.paths.0.moved"), 1, "async: moved");
	is_int(num(doc, "spans.async.names.1.enters"), 1, "async: by name");
	is_str(str(doc, "events.0.name"), "task-clock", "event 0 is task-clock");
	is_dbl(num(doc, "events.0.value"), 210, 1e-9, "task-clock value is the mean, scaled");
	is_str(str(doc, "events.0.unit"), "msec", "task-clock unit msec");
	is_int(num(doc, "events.0.raw"), 210000000, "task-clock raw count");
	is_dbl(num(doc, "events.0.running_pct"), 100, 1e-9, "task-clock ran 100%%");
	is_str(str(doc, "events.0.metrics.0.name"), "cpus_utilized",
	       "task-clock has CPUs utilized");
	is_dbl(num(doc, "events.0.metrics.0.value"), 210e6 / 450e6, 1e-9,
	       "CPUs utilized = task-clock / elapsed");
	is_str(str(doc, "events.0.metrics.0.unit"), "CPUs utilized",
	       "metric unit as perf words it");
	is_dbl(num(doc, "events.0.stddev"), 14.142135623730951, 1e-9, "stddev over the runs");
	is_dbl(num(doc, "events.0.rel_stddev_pct"), 4.76, 1e-9, "rel_stddev_pct over the runs");
	ok(cJSON_IsNull(get(doc, "events.1.value")), "unsupported cycles has a null value");
	ok(cJSON_IsFalse(get(doc, "events.1.supported")), "cycles is not supported");
	is_str(str(doc, "events.1.state"), "not supported", "cycles state");
	is_str(str(doc, "events.1.reason"), strerror(ENOENT), "cycles reason is the open's error");
	ok(cJSON_IsNull(get(doc, "events.1.mean")), "no mean for an unsupported event");
	is_dbl(num(doc, "events.2.value"), 5000000001.0, 1e-3, "page-faults value");
	is_dbl(num(doc, "events.2.running_pct"), 75, 1e-9, "page-faults multiplexed at 75%%");
	ok(strstr(text, "\"raw\":\t5000000000,") != NULL, "a raw count above 2^32 is exact");
	is_str(str(doc, "events.3.state"), "not counted", "context-switches not counted");
	ok(cJSON_IsTrue(get(doc, "events.3.supported")), "not counted is still supported");
	ok(cJSON_IsNull(get(doc, "events.3.value")), "not counted has a null value");
	ok(cJSON_IsNull(get(doc, "events.0.reason")), "a counted event has a null reason");

	is_int(num(doc, "rusage.elapsed_ns"), 450000000, "rusage elapsed is the mean");
	is_int(num(doc, "rusage.max_rss_kib"), 65536, "max_rss_kib");
	is_int(num(doc, "rusage.minor_faults"), 16400, "minor_faults");
	is_dbl(num(doc, "elapsed.stddev_ns"), 0.0707e9, 1, "elapsed stddev in ns");
	is_int(num(doc, "exit.exit_code"), 137, "exit code 128+9 after SIGKILL");
	is_int(num(doc, "exit.signal"), SIGKILL, "exit signal 9");

	is_int(cJSON_GetArraySize(get(doc, "runs")), 2, "two runs");
	is_dbl(num(doc, "runs.1.events.0.value"), 220, 1e-9, "run 1 has its own task-clock");
	is_int(num(doc, "runs.1.rusage.elapsed_ns"), 500000000, "run 1 elapsed");
	ok(cJSON_IsNull(get(doc, "runs.0.exit.signal")), "run 0 exited normally");
	is_int(num(doc, "runs.0.exit.exit_code"), 0, "run 0 exit code 0");
	is_int(num(doc, "runs.1.exit.signal"), SIGKILL, "run 1 died of SIGKILL");

	is_int(cJSON_GetArraySize(get(doc, "intervals")), 3, "three interval samples");
	is_int(num(doc, "intervals.2.t_ns"), 300000000, "interval t_ns");
	is_dbl(num(doc, "intervals.1.events.0.value"), 101, 1e-9, "interval value scaled");
	is_int(num(doc, "intervals.2.events.2.raw"), 20, "interval raw delta");
	ok(cJSON_IsNull(get(doc, "intervals.0.events.1.value")), "interval unsupported is null");

	ok(cJSON_IsTrue(get(doc, "spans.collected")), "spans collected");
	is_int(cJSON_GetArraySize(get(doc, "spans.threads")), 2, "two threads");
	is_str(str(doc, "spans.threads.0.thread_name"), "main", "thread 0 named main");
	is_str(str(doc, "spans.threads.0.process_name"), "app", "process name");
	is_str(str(doc, "spans.threads.0.nodes.0.name"), "load", "main's root span is load");
	ok(cJSON_IsNull(get(doc, "spans.threads.0.nodes.0.parent")), "a root's parent is null");
	is_int(num(doc, "spans.threads.0.nodes.0.id"), 0, "ids are list positions");
	is_int(num(doc, "spans.threads.0.nodes.0.depth"), 0, "a root is at depth 0");
	is_int(num(doc, "spans.threads.0.nodes.0.count"), 3, "load ran 3 times");
	is_int(num(doc, "spans.threads.0.nodes.0.total_ns"), 2700, "load total 3 x 900");
	is_int(num(doc, "spans.threads.0.nodes.0.self_ns"), 2700 - 900 - 300,
	       "load self = total - children");
	is_str(str(doc, "spans.threads.0.nodes.1.name"), "parse",
	       "pre-order, children sorted by total: parse before check");
	is_int(num(doc, "spans.threads.0.nodes.1.parent"), 0, "parse's parent is load");
	is_int(num(doc, "spans.threads.0.nodes.1.depth"), 1, "parse at depth 1");
	is_str(str(doc, "spans.threads.0.nodes.2.name"), "check", "then check");
	is_int(num(doc, "spans.threads.0.nodes.2.total_ns"), 300, "check total");
	is_int(num(doc, "spans.threads.0.nodes.2.parent"), 0, "check's parent is load");
	is_int(num(doc, "spans.threads.1.nodes.0.unfinished"), 1, "worker's parse unfinished");
	is_int(num(doc, "spans.merged.nodes.0.total_ns"), 2700, "merged: load first");
	is_str(str(doc, "spans.merged.nodes.1.name"), "parse", "merged: load;parse next");
	is_int(num(doc, "spans.merged.nodes.1.count"), 3, "merged: load;parse x3");
	is_int(num(doc, "spans.merged.nodes.3.count"), 1, "merged: top-level parse from worker");
	ok(cJSON_IsNull(get(doc, "spans.merged.nodes.3.parent")), "merged: a second root");
	is_int(num(doc, "spans.decode.dropped"), 2, "decode dropped");
	is_int(num(doc, "spans.decode.bad_bytes"), 5, "decode bad_bytes");
	is_int(num(doc, "spans.instants"), 1, "one instant");
	cJSON_Delete(doc);
	free(text);
	unlink(path);
	fixture_release(&f);
}

static void test_no_spans(void)
{
	struct fixture f;
	fixture_init(&f, false);
	f.rep.nruns = 1;
	char path[64];
	char *text = write_json(&f, path, sizeof path);
	cJSON *doc = cJSON_Parse(text);
	ok(doc && cJSON_IsFalse(get(doc, "spans.collected")), "without spans: collected false");
	ok(doc && cJSON_GetArraySize(get(doc, "spans.threads")) == 0 &&
		   cJSON_IsArray(get(doc, "spans.merged.nodes")),
	   "without spans the section keeps its shape, empty");
	ok(doc && cJSON_IsNull(get(doc, "events.0.stddev")) &&
		   cJSON_IsNull(get(doc, "elapsed.stddev_ns")) &&
		   cJSON_IsNumber(get(doc, "elapsed.mean_ns")) &&
		   get(doc, "elapsed.mean_ns")->valuedouble ==
			   get(doc, "rusage.elapsed_ns")->valuedouble,
	   "one run: no spread, and the mean is its time");
	cJSON_Delete(doc);
	free(text);
	unlink(path);
	fixture_release(&f);
}

/* ---- the man page's field list, checked with jq -------------------------------- */

struct field {
	char path[160];
	char types[80];
};

static char man_path[4096];

static int find_man(void)
{
	return tap_find_source("man/spanstat-json.5", man_path, sizeof man_path);
}

/* Reads the `.TP` / `\fB<path>\fR (<types>)` entries. */
static int man_fields(struct field *out, int max)
{
	FILE *fp = fopen(man_path, "r");
	if (!fp)
		return -1;
	char line[1024];
	int n = 0, tp = 0;
	while (fgets(line, sizeof line, fp)) {
		if (!strncmp(line, ".TP", 3)) {
			tp = 1;
			continue;
		}
		if (tp && !strncmp(line, "\\fB.", 4) && n < max) {
			char *end = strstr(line, "\\fR (");
			char *close = end ? strchr(end, ')') : NULL;
			if (end && close) {
				size_t k = 0;
				for (char *p = line + 3; p < end && k + 1 < sizeof out[n].path; p++)
					if (!(p[0] == '\\' && p[1] == '-'))
						out[n].path[k++] = *p;
				out[n].path[k] = 0;
				*close = 0;
				snprintf(out[n].types, sizeof out[n].types, "%s", end + 5);
				n++;
			}
		}
		tp = 0;
	}
	fclose(fp);
	return n;
}

static void test_documented(void)
{
	if (find_man() < 0) {
		ok(!getenv("SRCDIR"), "# SKIP man/spanstat-json.5 not found from the cwd");
		return;
	}
	if (system("jq --version >/dev/null 2>&1") != 0) {
		ok(1, "# SKIP jq not installed");
		return;
	}
	static struct field fld[800];
	int n = man_fields(fld, 800);
	ok(n > 100, "the man page documents %d fields", n);
	struct fixture f;
	fixture_init(&f, true);
	char path[64];
	char *text = write_json(&f, path, sizeof path);

	/* every documented path exists, with one of the documented types */
	char *prog = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&prog, &len);
	for (int i = 0; i < n; i++)
		fprintf(mem, "%s\"%s\\t\" + ([%s] | map(type) | unique | join(\",\"))",
			i ? ",\n" : "", fld[i].path, fld[i].path);
	fclose(mem);
	char *out = jq(path, prog);
	int bad = 0, checked = 0;
	for (char *save, *l = out ? strtok_r(out, "\n", &save) : NULL; l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(l, '\t');
		if (!tab)
			continue;
		*tab = 0;
		const char *types = tab + 1;
		const struct field *fd = NULL;
		for (int i = 0; i < n; i++)
			if (!strcmp(fld[i].path, l))
				fd = &fld[i];
		checked++;
		if (!fd || !*types) {
			printf("#   %s: missing from the document\n", l);
			bad++;
			continue;
		}
		char tbuf[80];
		snprintf(tbuf, sizeof tbuf, "%s", types);
		for (char *s2, *t = strtok_r(tbuf, ",", &s2); t; t = strtok_r(NULL, ",", &s2)) {
			if (!strstr(fd->types, t)) {
				printf("#   %s is %s, documented as (%s)\n", l, t, fd->types);
				bad++;
			}
		}
	}
	is_int(checked, n, "jq evaluated every documented path");
	is_int(bad, 0, "every documented field is present with a documented type");
	free(out);
	free(prog);

	/* every path in the document is documented */
	out = jq(path, "[paths | map(if type == \"number\" then \"[]\" else \".\" + . end) | "
		       "join(\"\")] | unique | .[]");
	int undocumented = 0, seen = 0;
	for (char *save, *l = out ? strtok_r(out, "\n", &save) : NULL; l;
	     l = strtok_r(NULL, "\n", &save)) {
		char p[256];
		snprintf(p, sizeof p, "%s", l);
		/* the keys of metrics objects are the events' names: the object
		 * is what is documented */
		char *m = strstr(p, "metrics.");
		if (m)
			m[strlen("metrics")] = '\0';
		int found = 0;
		for (int i = 0; i < n && !found; i++)
			found = !strcmp(fld[i].path, p);
		seen++;
		if (!found) {
			printf("#   %s is written but not documented\n", p);
			undocumented++;
		}
	}
	ok(seen > 100, "jq listed %d paths of the document", seen);
	is_int(undocumented, 0, "everything written is documented");
	free(out);
	free(text);
	unlink(path);
	fixture_release(&f);
}

static void test_write_error(void)
{
	FILE *full = fopen("/dev/full", "w");
	if (!full) {
		ok(1, "# SKIP no /dev/full");
		return;
	}
	struct fixture f;
	fixture_init(&f, false);
	struct writer w = {.ops = &json_writer_ops, .fp = full, .head = &f.head};
	int rc = w.ops->finish(&w, &f.rep);
	is_int(rc, -ENOSPC, "a full disk is reported by finish");
	w.ops->release(&w);
	fclose(full);
	fixture_release(&f);
}

int main(void)
{
	test_values();
	test_no_spans();
	test_documented();
	test_write_error();
	return tap_done();
}
