/* test_format.c: the human and CSV output: thousands grouping, the C-locale
 * numbers, durations, perf's derived metrics on constructed counts, summary
 * lines (counted, not supported, not counted, multiplexed, -r, -I, the
 * paranoid fallback's ":u"), CSV rows checked against perf stat -x output,
 * and the span table from a tree built through the real aggregation sink. */
#include "config.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmt.h"
#include "metrics.h"
#include "spantree.h"
#include "stats.h"
#include "strtab.h"
#include "tap.h"
#include "writer.h"

static void test_grouping(void)
{
	static const struct {
		double v;
		int dec;
		const char *want;
	} t[] = {
		{0, 0, "0"},
		{7, 0, "7"},
		{999, 0, "999"},
		{1000, 0, "1,000"},
		{1234567, 0, "1,234,567"},
		{100000, 0, "100,000"},
		{-1, 0, "-1"},
		{-999, 0, "-999"},
		{-1000, 0, "-1,000"},
		{-1234567, 0, "-1,234,567"},
		{1234.5, 2, "1,234.50"},
		{999.999, 2, "1,000.00"},
		{-0.001, 2, "0.00"},
		{0.54, 2, "0.54"},
		{1e15, 0, "1,000,000,000,000,000"},
		{12345678901234.56, 2, "12,345,678,901,234.56"},
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		fmt_grouped(buf, sizeof(buf), t[i].v, t[i].dec);
		is_str(buf, t[i].want, "grouped %s", t[i].want);
	}
	fmt_grouped_u64(buf, sizeof(buf), UINT64_MAX);
	is_str(buf, "18,446,744,073,709,551,615", "grouped UINT64_MAX");
	fmt_grouped_u64(buf, sizeof(buf), 0);
	is_str(buf, "0", "grouped u64 0");
	is_int(fmt_grouped(buf, 4, 1234567, 0), 9, "truncates like snprintf, returns full length");
	is_str(buf, "1,2", "truncated output is terminated");
}

static void test_duration(void)
{
	static const struct {
		uint64_t ns;
		const char *want;
	} t[] = {
		{0, "0 ns"},	      {950, "950 ns"},		{1000, "1.00 us"},
		{12345, "12.35 us"},  {999994, "999.99 us"},	{999995, "1.00 ms"},
		{1200000, "1.20 ms"}, {999994999, "999.99 ms"}, {2345000000, "2.345 s"},
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		fmt_duration(buf, sizeof(buf), t[i].ns);
		is_str(buf, t[i].want, "duration %llu ns", (unsigned long long)t[i].ns);
	}
}

/* --- events and counts built by hand --------------------------------------- */

static struct event ev_make(const char *name, __u32 type, __u64 config)
{
	struct event e;

	memset(&e, 0, sizeof(e));
	e.name = (char *)name;
	e.attr.size = sizeof(e.attr);
	e.attr.type = type;
	e.attr.config = config;
	e.scale = 1;
	e.unit = "";
	if (type == PERF_TYPE_SOFTWARE &&
	    (config == PERF_COUNT_SW_TASK_CLOCK || config == PERF_COUNT_SW_CPU_CLOCK)) {
		e.scale = 1e-6;
		e.unit = "msec";
	}
	return e;
}

static struct count cnt_ok(const struct event *e, double raw)
{
	struct count c;

	memset(&c, 0, sizeof(c));
	c.state = COUNT_OK;
	c.raw = (uint64_t)raw;
	c.enabled = c.running = 1000000;
	c.value = raw * e->scale;
	return c;
}

static struct count cnt_state(enum count_state s)
{
	struct count c;

	memset(&c, 0, sizeof(c));
	c.state = s;
	return c;
}

#define HWC(id, op, res) ((id) | ((op) << 8) | ((res) << 16))

static void test_metrics(void)
{
	struct event ev[] = {
		ev_make("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK),
		ev_make("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES),
		ev_make("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS),
		ev_make("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
		ev_make("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS),
		ev_make("branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS),
		ev_make("branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES),
		ev_make("cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES),
		ev_make("cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES),
		ev_make("L1-dcache-loads", PERF_TYPE_HW_CACHE,
			HWC(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
			    PERF_COUNT_HW_CACHE_RESULT_ACCESS)),
		ev_make("L1-dcache-load-misses", PERF_TYPE_HW_CACHE,
			HWC(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
			    PERF_COUNT_HW_CACHE_RESULT_MISS)),
		ev_make("stalled-cycles-frontend", PERF_TYPE_HARDWARE,
			PERF_COUNT_HW_STALLED_CYCLES_FRONTEND),
		ev_make("LLC-load-misses", PERF_TYPE_HW_CACHE,
			HWC(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ,
			    PERF_COUNT_HW_CACHE_RESULT_MISS)),
		ev_make("cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS),
		ev_make("dTLB-load-misses:u", PERF_TYPE_HW_CACHE,
			HWC(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ,
			    PERF_COUNT_HW_CACHE_RESULT_MISS)),
		ev_make("dTLB-loads", PERF_TYPE_HW_CACHE,
			HWC(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ,
			    PERF_COUNT_HW_CACHE_RESULT_ACCESS)),
	};
	enum { N = sizeof(ev) / sizeof(ev[0]) };
	static const double raw[N] = {2e9, 5000, 1234567, 6e9,	 9e9, 1e9, 2.5e7, 4e6,
				      1e6, 3e9,	 3e7,	  1.5e9, 1e5, 0,   10,	  100};
	struct evlist evl = {ev, N, N};
	struct count c[N];
	struct metric m[N];

	ev[14].attr.exclude_kernel = 1; /* :u, and dTLB-loads counts both: no ratio */
	for (int i = 0; i < N; i++)
		c[i] = cnt_ok(&ev[i], raw[i]);
	c[12].state = COUNT_OK;
	metrics_compute(&evl, c, 1e9, m);

	ok(m[0].valid && !strcmp(m[0].unit, "CPUs utilized") && !strcmp(m[0].id, "cpus_utilized"),
	   "task-clock: CPUs utilized");
	is_dbl(m[0].value, 2.0, 1e-12, "2 s of task-clock in 1 s: 2 CPUs");
	is_dbl(m[1].value, 2.5, 1e-12, "5000 switches in 2 s: 2.5 K/sec");
	is_str(m[1].unit, "K/sec", "rate unit K/sec");
	is_dbl(m[2].value, 617.2835, 1e-9, "1234567 faults in 2 s: 617.284 K/sec");
	is_dbl(m[3].value, 3.0, 1e-12, "6e9 cycles over 2e9 ns: 3 GHz");
	is_str(m[3].unit, "GHz", "cycles: GHz");
	is_dbl(m[4].value, 1.5, 1e-12, "9e9 insn / 6e9 cycles: 1.5 IPC");
	is_str(m[4].unit, "insn per cycle", "instructions: insn per cycle");
	is_int(m[4].decimals, 2, "IPC printed with two decimals");
	is_str(m[5].unit, "M/sec", "branches: M/sec");
	is_dbl(m[5].value, 500, 1e-9, "1e9 branches in 2 s: 500 M/sec");
	is_dbl(m[6].value, 2.5, 1e-12, "2.5e7 of 1e9 branches missed: 2.5%%");
	ok(m[6].percent && !strcmp(m[6].unit, "of all branches"), "branch-misses: of all branches");
	is_dbl(m[8].value, 25, 1e-12, "cache-misses: 25%% of all cache refs");
	is_str(m[8].unit, "of all cache refs", "cache-misses unit");
	is_dbl(m[10].value, 1, 1e-12, "L1-dcache-load-misses: 1%%");
	is_str(m[10].unit, "of all L1-dcache accesses", "L1 unit");
	is_dbl(m[11].value, 25, 1e-12, "stalled-cycles-frontend: 25%% of cycles");
	is_str(m[11].unit, "frontend cycles idle", "stalled unit");
	/* LLC-load-misses without LLC-loads: perf falls back to a rate */
	is_str(m[12].unit, "K/sec", "a miss count without its total: per-second rate");
	is_dbl(m[12].value, 50, 1e-9, "1e5 in 2 s: 50 K/sec");
	is_str(m[13].unit, "/sec", "zero migrations: /sec");
	is_dbl(m[13].value, 0, 0, "zero migrations: 0");
	ok(!m[14].valid, "a ratio (or rate) needs the same privilege levels on both sides");

	/* inputs missing or not counted: no metric */
	c[3] = cnt_state(COUNT_NOT_SUPPORTED);
	c[0] = cnt_state(COUNT_NOT_COUNTED);
	metrics_compute(&evl, c, 1e9, m);
	ok(!m[4].valid, "no IPC without cycles");
	ok(!m[11].valid, "no stalled ratio without cycles");
	ok(!m[0].valid && !m[1].valid && !m[2].valid, "no rates without a counted clock");
	ok(!m[3].valid, "no metric for an unsupported event");
	is_dbl(m[6].value, 2.5, 1e-12, "ratios need no clock");

	char buf[32];
	struct metric pm = {.valid = true, .value = 0.5603, .decimals = 3};
	fmt_metric_value(buf, sizeof(buf), &pm, 1);
	is_str(buf, "   0.560", "metric padded as %%8.3f");
	fmt_metric_value(buf, sizeof(buf), &pm, 0);
	is_str(buf, "0.560", "metric bare");
	pm.percent = true;
	pm.decimals = 2;
	pm.value = 2.154;
	fmt_metric_value(buf, sizeof(buf), &pm, 1);
	is_str(buf, "   2.15%", "percent padded as %%7.2f%%%%");
	fmt_metric_value(buf, sizeof(buf), &pm, 0);
	is_str(buf, "2.15", "percent bare, no sign, as perf -x");
	pm.percent = false;
	pm.value = 1.234;
	fmt_metric_value(buf, sizeof(buf), &pm, 1);
	is_str(buf, "   1.23 ", "IPC padded as %%7.2f + space");
}

/* --- writers ----------------------------------------------------------------- */

struct out {
	char *buf;
	size_t len;
	FILE *fp;
	struct writer w;
};

static void out_open(struct out *o, const struct writer_ops *ops, const struct run_head *h)
{
	memset(o, 0, sizeof(*o));
	o->fp = open_memstream(&o->buf, &o->len);
	o->w.ops = ops;
	o->w.fp = o->fp;
	o->w.head = h;
	o->w.opts.csv_sep = ",";
}

static const char *out_text(struct out *o)
{
	fflush(o->fp);
	return o->buf;
}

static void out_close(struct out *o)
{
	if (o->w.ops->release)
		o->w.ops->release(&o->w);
	fclose(o->fp);
	free(o->buf);
}

/* The first line of s containing needle, as a static copy. */
static const char *line_with(const char *s, const char *needle)
{
	static char line[512];
	const char *p = s ? strstr(s, needle) : NULL, *b, *e;

	if (!p)
		return "";
	for (b = p; b > s && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	if (!e)
		e = p + strlen(p);
	snprintf(line, sizeof(line), "%.*s", (int)(e - b), b);
	return line;
}

struct fixture {
	struct event ev[4];
	struct evlist evl;
	struct count c[4];
	struct stat_summary st[4];
	char *argv[3];
	struct run_head h;
	struct report r;
};

/* perf stat -e task-clock,page-faults,cycles,context-switches true, as
 * measured here: 1087051 ns task-clock, 50 faults, 1.939995 ms elapsed. */
static void fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->ev[0] = ev_make("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	f->ev[1] = ev_make("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
	f->ev[2] = ev_make("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	f->ev[3] = ev_make("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	f->evl = (struct evlist){f->ev, 4, 4};
	f->c[0] = cnt_ok(&f->ev[0], 1087051);
	f->c[1] = cnt_ok(&f->ev[1], 50);
	f->c[2] = cnt_state(COUNT_NOT_SUPPORTED);
	f->c[2].err = 2;
	f->c[3] = cnt_ok(&f->ev[3], 0);
	f->c[0].running = f->c[0].enabled = f->c[1].running = f->c[1].enabled = 1087051;
	f->c[3].running = f->c[3].enabled = 1087051;
	f->argv[0] = "true";
	f->h = (struct run_head){.argc = 1, .argv = f->argv, .evl = &f->evl, .runs = 1};
	f->r.head = &f->h;
	f->r.nruns = 1;
	f->r.count = f->c;
	f->r.stat = f->st;
	f->r.ru = (struct rusage_info){.elapsed_ns = 1939995,
				       .utime_ns = 1817000,
				       .stime_ns = 0,
				       .maxrss_kb = 3584,
				       .minflt = 49,
				       .majflt = 0,
				       .nvcsw = 1,
				       .nivcsw = 2};
}

static void test_summary(void)
{
	struct fixture f;
	struct out o;

	fixture_init(&f);
	out_open(&o, &summary_writer_ops, &f.h);
	is_int(o.w.ops->finish(&o.w, &f.r), 0, "summary finish");
	is_str(out_text(&o),
	       "\n"
	       " Performance counter stats for 'true':\n"
	       "\n"
	       "              1.09 msec task-clock                       #    0.560 CPUs utilized\n"
	       "                50      page-faults                      #   45.996 K/sec\n"
	       "   <not supported>      cycles\n"
	       "                 0      context-switches                 #    0.000 /sec\n"
	       "\n"
	       "       0.001939995 seconds time elapsed\n"
	       "\n"
	       "       0.001817000 seconds user\n"
	       "       0.000000000 seconds sys\n"
	       "             3,584 KiB max RSS\n"
	       "                49 / 0 page faults (minor / major)\n"
	       "                 1 / 2 context switches (voluntary / involuntary)\n"
	       "\n",
	       "summary: perf's layout, trailing blanks trimmed, plus rusage");
	out_close(&o);

	/* multiplexed, not counted, the paranoid fallback, big grouped numbers */
	fixture_init(&f);
	f.c[1] = cnt_ok(&f.ev[1], 1234567);
	f.c[1].value = 2469134;
	f.c[1].enabled = 2000;
	f.c[1].running = 1000;
	f.c[2] = cnt_state(COUNT_NOT_COUNTED);
	f.c[2].enabled = 5000;
	f.c[0].user_only = true;
	f.c[3] = cnt_state(COUNT_NOT_COUNTED);
	out_open(&o, &summary_writer_ops, &f.h);
	o.w.ops->finish(&o.w, &f.r);
	is_str(line_with(out_text(&o), "page-faults"),
	       "         2,469,134      page-faults                      #    2.271 G/sec"
	       "                    (50.00%)",
	       "multiplexed: scaled value grouped, running percentage");
	is_str(line_with(out_text(&o), "cycles"),
	       "     <not counted>      cycles                                                     "
	       " "
	       "         (0.00%)",
	       "enabled but never running: not counted (0.00%%)");
	is_str(line_with(out_text(&o), "context-switches"),
	       "     <not counted>      context-switches", "never enabled: no percentage");
	is_str(line_with(out_text(&o), "task-clock"),
	       "              1.09 msec task-clock:u                     #    0.560 CPUs utilized",
	       "user-only fallback shown as :u");
	out_close(&o);
}

static void test_summary_runs(void)
{
	struct fixture f;
	struct out o;

	fixture_init(&f);
	f.h.runs = 3;
	f.r.nruns = 3;
	f.st[0].rel = 9.8;
	f.st[1].rel = 0.68;
	f.r.elapsed = (struct stat_summary){.mean = 0.0010760, .stddev = 0.0000568 * sqrt(3)};
	f.r.elapsed.rel = 100 * 0.0000568 / 0.0010760;
	out_open(&o, &summary_writer_ops, &f.h);
	o.w.ops->finish(&o.w, &f.r);
	is_str(line_with(out_text(&o), "Performance"),
	       " Performance counter stats for 'true' (3 runs):", "-r header");
	is_str(line_with(out_text(&o), "task-clock"),
	       "              1.09 msec task-clock                       #    0.560 CPUs utilized"
	       "            ( +-  9.80% )",
	       "-r: ( +- x.xx%% ) after the metric, in perf's column");
	is_str(line_with(out_text(&o), "context-switches"),
	       "                 0      context-switches                 #    0.000 /sec",
	       "-r: no +- when the spread is 0, as perf");
	is_str(line_with(out_text(&o), "elapsed"),
	       "         0.0010760 +- 0.0000568 seconds time elapsed  ( +-  5.28% )",
	       "-r: elapsed with perf's precision");
	out_close(&o);

	f.r.nruns = 2;
	out_open(&o, &summary_writer_ops, &f.h);
	o.w.ops->finish(&o.w, &f.r);
	is_str(line_with(out_text(&o), "Performance"),
	       " Performance counter stats for 'true' (2 of 3 runs):", "interrupted -r says so");
	out_close(&o);
}

static void test_summary_interval(void)
{
	struct fixture f;
	struct out o;
	struct interval_sample s;

	fixture_init(&f);
	f.h.interval_ms = 100;
	f.c[0] = cnt_ok(&f.ev[0], 818970);
	f.c[1] = cnt_ok(&f.ev[1], 75);
	s = (struct interval_sample){.t_ns = 100255981, .length_ns = 100255981, .counts = f.c};
	out_open(&o, &summary_writer_ops, &f.h);
	o.w.ops->start(&o.w, &f.h);
	is_int(o.w.ops->interval(&o.w, &s), 0, "interval");
	s.t_ns = 1200608656;
	o.w.ops->interval(&o.w, &s);
	is_str(out_text(&o),
	       "#           time             counts unit events\n"
	       "     0.100255981               0.82 msec task-clock                       #    "
	       "0.008 CPUs utilized\n"
	       "     0.100255981                 75      page-faults                      #   "
	       "91.578 K/sec\n"
	       "     0.100255981    <not supported>      cycles\n"
	       "     0.100255981                  0      context-switches                 #    "
	       "0.000 /sec\n"
	       "     1.200608656               0.82 msec task-clock                       #    "
	       "0.008 CPUs utilized\n"
	       "     1.200608656                 75      page-faults                      #   "
	       "91.578 K/sec\n"
	       "     1.200608656    <not supported>      cycles\n"
	       "     1.200608656                  0      context-switches                 #    "
	       "0.000 /sec\n",
	       "interval lines as perf -I, one header");
	for (int i = 0; i < 30; i++)
		o.w.ops->interval(&o.w, &s);
	const char *t = out_text(&o);
	int headers = 0;
	for (const char *p = t; (p = strstr(p, "#           time")); p++)
		headers++;
	is_int(headers, 2, "header repeated every 25 intervals");
	out_close(&o);
}

static void test_csv(void)
{
	struct fixture f;
	struct out o;

	/* perf stat -x, -e task-clock,page-faults,cycles,context-switches true:
	 * 0.54,msec,task-clock,535949,100.00,0.479,CPUs utilized
	 * 49,,page-faults,535949,100.00,91.427,K/sec
	 * <not supported>,,cycles,0,100.00,,
	 * 0,,context-switches,535949,100.00,0.000,/sec */
	fixture_init(&f);
	f.c[0] = cnt_ok(&f.ev[0], 535949);
	f.c[1] = cnt_ok(&f.ev[1], 49);
	f.c[3] = cnt_ok(&f.ev[3], 0);
	for (int i = 0; i < 4; i++)
		if (i != 2)
			f.c[i].running = f.c[i].enabled = 535949;
	f.r.ru.elapsed_ns = 1118891;
	out_open(&o, &csv_writer_ops, &f.h);
	is_int(o.w.ops->finish(&o.w, &f.r), 0, "csv finish");
	is_str(out_text(&o),
	       "0.54,msec,task-clock,535949,100.00,0.479,CPUs utilized\n"
	       "49,,page-faults,535949,100.00,91.427,K/sec\n"
	       "<not supported>,,cycles,0,100.00,,\n"
	       "0,,context-switches,535949,100.00,0.000,/sec\n",
	       "csv rows as perf stat -x,");
	out_close(&o);

	/* -r 3: 0.53,msec,task-clock,6.06%,531613,100.00,0.513,CPUs utilized */
	f.h.runs = 3;
	f.r.nruns = 3;
	f.st[0].rel = 6.0649;
	f.st[1].rel = 0.68;
	f.c[1].running = 500;
	f.c[1].enabled = 1000;
	f.c[1].value = 98;
	o.w.opts.csv_sep = NULL;
	out_open(&o, &csv_writer_ops, &f.h);
	o.w.ops->finish(&o.w, &f.r);
	is_str(out_text(&o),
	       "0.54,msec,task-clock,6.06%,535949,100.00,0.479,CPUs utilized\n"
	       "98,,page-faults,0.68%,500,50.00,182.853,K/sec\n"
	       "<not supported>,,cycles,0.00%,0,100.00,,\n"
	       "0,,context-switches,0.00%,535949,100.00,0.000,/sec\n",
	       "csv -r: variance column after the event");
	out_close(&o);

	/* any separator string; text containing it is quoted */
	f.h.runs = 1;
	f.r.nruns = 1;
	f.ev[1].name = "we::ird\"name";
	out_open(&o, &csv_writer_ops, &f.h);
	o.w.opts.csv_sep = "::";
	o.w.ops->finish(&o.w, &f.r);
	is_str(line_with(out_text(&o), "ird"),
	       "98::::\"we::ird\"\"name\"::500::50.00::182.853::K/sec",
	       "multi-character separator, RFC 4180 quoting of names");
	out_close(&o);

	/* -I with ';': 0.100251503;0.83;msec;task-clock;828015;100.00;0.008;CPUs utilized */
	fixture_init(&f);
	f.h.interval_ms = 100;
	f.c[0] = cnt_ok(&f.ev[0], 828015);
	f.c[0].running = f.c[0].enabled = 828015;
	f.c[1] = cnt_state(COUNT_NOT_COUNTED);
	struct interval_sample s = {.t_ns = 100251503, .length_ns = 100251503, .counts = f.c};
	out_open(&o, &csv_writer_ops, &f.h);
	o.w.opts.csv_sep = ";";
	is_int(o.w.ops->interval(&o.w, &s), 0, "csv interval");
	is_int(o.w.ops->finish(&o.w, &f.r), 0, "csv finish after intervals");
	is_str(out_text(&o),
	       "     0.100251503;0.83;msec;task-clock;828015;100.00;0.008;CPUs utilized\n"
	       "     0.100251503;<not counted>;;page-faults;0;100.00;;\n"
	       "     0.100251503;<not supported>;;cycles;0;100.00;;\n"
	       "     0.100251503;0;;context-switches;1087051;100.00;0.000;/sec\n",
	       "csv -I rows with perf's timestamp column, no totals afterwards");
	out_close(&o);
}

/* --- the span table -------------------------------------------------------- */

static void span(struct span_trees *st, uint32_t tid, uint32_t name, uint32_t depth, uint64_t b,
		 uint64_t e, int *phase)
{
	struct span_event ev = {.kind = *phase ? SPAN_END : SPAN_BEGIN,
				.pid = 1,
				.tid = tid,
				.ts = *phase ? e : b,
				.name = name,
				.depth = depth,
				.begin_ts = b};
	span_trees_event(st, &ev);
}

#define BEGIN(tid, name, depth, b) span(&st, tid, name, depth, b, 0, &(int){0})
#define END(tid, name, depth, b, e) span(&st, tid, name, depth, b, e, &(int){1})

static void test_spans(void)
{
	struct strtab names;
	struct span_trees st;
	struct fixture f;
	struct out o;
	uint32_t main_, work, leaf, rec;
	const char *t;

	strtab_init(&names);
	main_ = strtab_intern(&names, "main", 4);
	work = strtab_intern(&names, "work", 4);
	leaf = strtab_intern(&names, "leaf", 4);
	rec = strtab_intern(&names, "rec", 3);
	span_trees_init(&st);
	/* thread 1: main 100 ms { work 10 ms { leaf 4 ms } x2, rec 20 ms { rec 5 ms } } */
	BEGIN(1, main_, 0, 0);
	for (int i = 0; i < 2; i++) {
		uint64_t b = 1000000 + (uint64_t)i * 20000000;
		BEGIN(1, work, 1, b);
		BEGIN(1, leaf, 2, b + 1000);
		END(1, leaf, 2, b + 1000, b + 1000 + 4000000);
		END(1, work, 1, b, b + 10000000);
	}
	BEGIN(1, rec, 1, 50000000);
	BEGIN(1, rec, 2, 51000000);
	END(1, rec, 2, 51000000, 56000000);
	END(1, rec, 1, 50000000, 70000000);
	END(1, main_, 0, 0, 100000000);
	/* thread 2: work 30 ms */
	BEGIN(2, work, 0, 0);
	END(2, work, 0, 0, 30000000);

	fixture_init(&f);
	f.h.strings = &names;
	f.h.spans = true;
	f.r.spans = &st;
	f.r.span_wall_ns = 100000000;
	struct decode_stats ds = {.dropped = 3, .bad_bytes = 1234, .unfinished = 1};
	f.r.dstats = &ds;
	out_open(&o, &summary_writer_ops, &f.h);
	o.w.opts.spans_table = true;
	is_int(o.w.ops->finish(&o.w, &f.r), 0, "summary with spans");
	t = out_text(&o);
	t = t ? strstr(t, " Spans by stack path:") : NULL;
	is_str(t,
	       " Spans by stack path:\n"
	       "\n"
	       "       count        total         self         mean    wall  path\n"
	       "           1    100.00 ms     60.00 ms    100.00 ms  100.0%  main\n"
	       "           1     30.00 ms     30.00 ms     30.00 ms   30.0%  work\n"
	       "           2     20.00 ms     12.00 ms     10.00 ms   20.0%  main;work\n"
	       "           1     20.00 ms     15.00 ms     20.00 ms   20.0%  main;rec\n"
	       "           2      8.00 ms      8.00 ms      4.00 ms    8.0%  main;work;leaf\n"
	       "           1      5.00 ms      5.00 ms      5.00 ms    5.0%  main;rec;rec\n"
	       "\n"
	       " Spans by name:\n"
	       "\n"
	       "       count        total         self         mean    wall  name\n"
	       "           1    100.00 ms     60.00 ms    100.00 ms  100.0%  main\n"
	       "           3     50.00 ms     42.00 ms     16.67 ms   50.0%  work\n"
	       "           2     20.00 ms     20.00 ms     10.00 ms   20.0%  rec\n"
	       "           2      8.00 ms      8.00 ms      4.00 ms    8.0%  leaf\n"
	       "\n"
	       " span data: 3 events dropped by the target, 1,234 bad bytes skipped, 1 unfinished "
	       "span closed at exit\n"
	       "\n",
	       "span tables by path and by name (recursion counted once in total)");
	out_close(&o);

	/* --spans but nothing came */
	struct span_trees empty;
	span_trees_init(&empty);
	f.r.spans = &empty;
	f.r.dstats = NULL;
	out_open(&o, &summary_writer_ops, &f.h);
	o.w.opts.spans_table = true;
	o.w.ops->finish(&o.w, &f.r);
	is_str(line_with(out_text(&o), "spans"), " no spans collected", "no spans: said so");
	out_close(&o);
	f.r.spans = NULL;
	out_open(&o, &summary_writer_ops, &f.h);
	o.w.ops->finish(&o.w, &f.r);
	ok(!strstr(out_text(&o), "pans"), "no span table without --spans");
	out_close(&o);
	span_trees_release(&empty);
	span_trees_release(&st);
	strtab_release(&names);
}

/* Numbers stay C-locale under a locale whose decimal point is ','. */
static void test_locale(void)
{
	char dir[] = "/tmp/test_format.XXXXXX", cmd[256], buf[64];
	struct fixture f;
	struct out o;

	if (!mkdtemp(dir)) {
		ok(1, "# SKIP no temporary directory");
		return;
	}
	snprintf(cmd, sizeof(cmd), "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1",
		 dir);
	if (system(cmd) != 0 || setenv("LOCPATH", dir, 1) < 0 ||
	    !setlocale(LC_ALL, "de_DE.UTF-8")) {
		ok(1, "# SKIP cannot build a de_DE locale here");
	} else {
		snprintf(buf, sizeof(buf), "%.2f", 1.5);
		is_str(buf, "1,50", "the locale is active (plain printf says 1,50)");
		fmt_c(buf, sizeof(buf), "%.2f", 1.5);
		is_str(buf, "1.50", "fmt_c ignores it");
		fmt_grouped(buf, sizeof(buf), 1234.5, 2);
		is_str(buf, "1,234.50", "grouping ignores it");
		fixture_init(&f);
		out_open(&o, &csv_writer_ops, &f.h);
		o.w.ops->finish(&o.w, &f.r);
		is_str(line_with(out_text(&o), "task-clock"),
		       "1.09,msec,task-clock,1087051,100.00,0.560,CPUs utilized",
		       "csv numbers stay C-locale");
		out_close(&o);
		out_open(&o, &summary_writer_ops, &f.h);
		o.w.ops->finish(&o.w, &f.r);
		is_str(line_with(out_text(&o), "elapsed"),
		       "       0.001939995 seconds time elapsed", "summary numbers stay C-locale");
		out_close(&o);
		setlocale(LC_ALL, "C");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		ok(0, "remove %s", dir);
}

int main(void)
{
	test_grouping();
	test_duration();
	test_metrics();
	test_summary();
	test_summary_runs();
	test_summary_interval();
	test_csv();
	test_spans();
	test_locale();
	return tap_done();
}
