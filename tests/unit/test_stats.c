/* test_stats.c: the statistics behind -r (Welford against a two-pass
 * computation, perf's relative "+-") and the counts they summarise:
 * counters.c on real children with software events (no PMU needed), hardware
 * events reported not supported, group reads, enable_on_exec, inherit,
 * interval deltas, and the perf_event_paranoid fallback and message. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis.h"
#include "counters.h"
#include "perfev.h"
#include "stats.h"
#include "tap.h"

/* --- statistics ------------------------------------------------------- */

static void test_welford(void)
{
	static const double x[] = {10.5, 11.25, 9.75, 10.0, 12.5, 1e3, 3.0, 7.125};
	size_t n = sizeof(x) / sizeof(x[0]);
	double sum = 0, ss = 0, mean, sd;
	struct stats s;

	stats_init(&s);
	is_dbl(stats_stddev(&s), 0, 0, "stddev of nothing is 0");
	for (size_t i = 0; i < n; i++) {
		stats_add(&s, x[i]);
		sum += x[i];
	}
	mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	sd = sqrt(ss / (double)(n - 1));
	is_dbl(s.mean, mean, 1e-12, "Welford mean matches the two-pass mean");
	is_dbl(stats_stddev(&s), sd, 1e-9, "Welford sample stddev matches two-pass");

	stats_init(&s);
	stats_add(&s, 42);
	is_dbl(stats_stddev(&s), 0, 0, "one sample: stddev 0");
	is_dbl(stats_summary(&s).rel, 0, 0, "one sample: no relative spread");

	/* large offset, tiny spread: where the naive sum-of-squares fails */
	stats_init(&s);
	for (int i = 0; i < 1000; i++)
		stats_add(&s, 1e9 + (i % 2 ? 1 : -1));
	is_dbl(stats_stddev(&s), sqrt(1000.0 / 999.0), 1e-6, "stable with a large offset");
}

static void test_rel(void)
{
	/* perf: rel = 100 * stddev_stats / avg with stddev_stats = sqrt(var / n):
	 * for 2, 4, 4, 4, 5, 5, 7, 9: mean 5, var (n-1) = 32/7,
	 * sqrt(32/7/8) = 0.7559289, rel = 15.118579% */
	static const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
	struct stats s;
	struct stat_summary sum;

	stats_init(&s);
	for (size_t i = 0; i < 8; i++)
		stats_add(&s, x[i]);
	sum = stats_summary(&s);
	is_dbl(sum.mean, 5, 1e-12, "summary mean");
	is_dbl(sum.stddev, sqrt(32.0 / 7.0), 1e-12, "summary keeps the sample stddev");
	is_dbl(sum.rel, 15.118578920369089, 1e-9, "rel is perf's stddev of the mean over the mean");

	/* perf's elapsed line: 1.0760 ms +- 0.0568 ms is ( +- 5.28% ) */
	stats_init(&s);
	stats_add(&s, 0);
	stats_add(&s, 0);
	is_dbl(stats_summary(&s).rel, 0, 0, "mean 0: rel 0, not a division by zero");
}

/* --- counters on real children ------------------------------------------ */

static struct event test_ev(const char *name, int group, bool leader, __u32 type, __u64 config,
			    double scale, const char *unit)
{
	struct event ev;

	memset(&ev, 0, sizeof(ev));
	ev.name = (char *)name;
	ev.attr.size = sizeof(ev.attr);
	ev.attr.type = type;
	ev.attr.config = config;
	ev.group = group;
	ev.leader = leader;
	ev.scale = scale;
	ev.unit = unit;
	return ev;
}

struct child {
	pid_t pid;
	int go; /* write end: closing it releases the child */
};

/* Forks a child that waits on a pipe, then runs argv (or exits when argv is NULL). */
static int child_start(struct child *ch, char *const argv[])
{
	int p[2];

	if (pipe(p) < 0)
		return -errno;
	ch->pid = fork();
	if (ch->pid < 0)
		return -errno;
	if (ch->pid == 0) {
		char c;
		close(p[1]);
		if (read(p[0], &c, 1) < 0)
			_exit(126);
		if (argv)
			execv(argv[0], argv);
		_exit(argv ? 127 : 0);
	}
	close(p[0]);
	ch->go = p[1];
	return 0;
}

static int child_finish(struct child *ch)
{
	int st;

	close(ch->go);
	if (waitpid(ch->pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Counts evl over one child running argv; returns counters_open's result. */
static int count_child(const struct evlist *evl, char *const argv[], struct count *out,
		       char **cause)
{
	struct counters cs;
	struct child ch;
	int err;

	if (child_start(&ch, argv) < 0)
		return -1;
	err = counters_open(&cs, evl, ch.pid, cause);
	if (err < 0) {
		child_finish(&ch);
		return err;
	}
	child_finish(&ch);
	err = counters_read(&cs, out);
	counters_close(&cs);
	return err;
}

static void test_counting(void)
{
	struct event ev[] = {
		test_ev("task-clock", 0, true, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1e-6,
			"msec"),
		test_ev("page-faults", 1, true, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1,
			""),
		test_ev("cycles", 2, true, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1, ""),
		test_ev("context-switches", 3, true, PERF_TYPE_SOFTWARE,
			PERF_COUNT_SW_CONTEXT_SWITCHES, 1, ""),
	};
	struct evlist evl = {ev, 4, 4};
	char *tru[] = {"/bin/true", NULL};
	struct count c[4];
	char *cause = NULL;
	int err = count_child(&evl, tru, c, &cause);

	is_int(err, 0, "counting /bin/true opens and reads");
	free(cause);
	if (err)
		return;
	is_int(c[0].state, COUNT_OK, "task-clock counted");
	ok(c[0].raw > 0 && c[0].value > 0, "task-clock > 0 (%llu ns)",
	   (unsigned long long)c[0].raw);
	is_dbl(c[0].value, (double)c[0].raw * 1e-6 * (double)c[0].enabled / (double)c[0].running,
	       1e-9, "task-clock value is ns scaled to msec");
	ok(c[0].running > 0 && c[0].running <= c[0].enabled, "running <= enabled");
	is_int(c[1].state, COUNT_OK, "page-faults counted");
	ok(c[1].value > 10, "/bin/true takes page faults (%.0f)", c[1].value);
	/* no PMU here: ENOENT; on real hardware the same path counts */
	if (c[2].state == COUNT_NOT_SUPPORTED) {
		ok(c[2].err != 0, "cycles not supported here, errno kept (%s)", strerror(c[2].err));
	} else {
		is_int(c[2].state, COUNT_OK, "cycles counted on a machine with a PMU");
	}
	ok(c[3].state == COUNT_OK, "context-switches counted despite the unsupported event");
}

static void test_enable_on_exec(void)
{
	struct event ev[] = {
		test_ev("task-clock", 0, true, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1e-6,
			"msec"),
	};
	struct evlist evl = {ev, 1, 1};
	struct count c[1];
	int err = count_child(&evl, NULL, c, NULL);

	is_int(err, 0, "counting a child that never execs");
	is_int(c[0].state, COUNT_NOT_COUNTED,
	       "nothing counted before exec (enable_on_exec): not counted");
}

static void test_inherit(void)
{
	struct event ev[] = {
		test_ev("page-faults", 0, true, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1,
			""),
	};
	struct evlist evl = {ev, 1, 1};
	char *one[] = {"/bin/sh", "-c", ":", NULL};
	char *three[] = {"/bin/sh", "-c", "/bin/true; /bin/true; /bin/true; :", NULL};
	struct count a[1], b[1];

	is_int(count_child(&evl, one, a, NULL), 0, "sh alone counted");
	is_int(count_child(&evl, three, b, NULL), 0, "sh with children counted");
	ok(b[0].value > a[0].value + 30, "children's faults are inherited (%.0f vs %.0f)",
	   b[0].value, a[0].value);
}

static void test_group(void)
{
	/* {cycles,task-clock,page-faults}: cycles cannot open here, so
	 * task-clock leads the group; on a PMU machine cycles leads */
	struct event ev[] = {
		test_ev("cycles", 0, true, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1, ""),
		test_ev("task-clock", 0, false, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1e-6,
			"msec"),
		test_ev("page-faults", 0, false, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1,
			""),
	};
	struct evlist evl = {ev, 3, 1};
	char *tru[] = {"/bin/true", NULL};
	struct counters cs;
	struct child ch;
	struct count c[3], d[3];

	if (child_start(&ch, tru) < 0)
		return;
	is_int(counters_open(&cs, &evl, ch.pid, NULL), 0, "group opens");
	if (!cs.c) {
		child_finish(&ch);
		return;
	}
	if (cs.c[0].fd < 0)
		is_int(cs.c[1].leader, 1, "first member that opens leads the group");
	is_int(cs.c[2].leader, cs.c[0].fd < 0 ? 1 : 0, "the others join that leader");
	child_finish(&ch);
	is_int(counters_read(&cs, c), 0, "group read");
	ok(c[1].state == COUNT_OK && c[1].value > 0, "task-clock counted in the group");
	ok(c[2].state == COUNT_OK && c[2].value > 10, "page-faults counted in the group");
	is_int(c[1].enabled, c[2].enabled, "group members share enabled time");
	/* interval deltas: the first covers everything, the next nothing */
	is_int(counters_delta(&cs, d), 0, "first delta");
	is_int(d[2].raw, c[2].raw, "first delta is the total so far");
	is_int(counters_delta(&cs, d), 0, "second delta");
	is_int(d[2].raw, 0, "no faults after exit");
	is_int(d[2].state, COUNT_NOT_COUNTED, "an interval in which it never ran: not counted");
	counters_close(&cs);
	ok(cs.c == NULL, "close releases");
}

/* As nobody: task-clock falls back to user space; task-clock:k is refused
 * with a perf_event_paranoid explanation.  Results come back as a byte. */
static void test_paranoid(void)
{
	int p[2], st;
	pid_t pid;
	char res[512] = "";
	ssize_t n;

	if (geteuid() != 0 || perfev_paranoid() != 2) {
		ok(1, "# SKIP needs root (to become nobody) and perf_event_paranoid 2");
		return;
	}
	if (pipe(p) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		struct event u[] = {test_ev("task-clock", 0, true, PERF_TYPE_SOFTWARE,
					    PERF_COUNT_SW_TASK_CLOCK, 1e-6, "msec")};
		struct event k[] = {test_ev("task-clock:k", 0, true, PERF_TYPE_SOFTWARE,
					    PERF_COUNT_SW_TASK_CLOCK, 1e-6, "msec")};
		struct evlist evu = {u, 1, 1}, evk = {k, 1, 1};
		char *tru[] = {"/bin/true", NULL}, *cause = NULL, out[512];
		struct count c[2];
		int e1, e2;

		k[0].attr.exclude_user = 1;
		close(p[0]);
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(1);
		/* setuid made us undumpable, which perf_event_open refuses as
		 * another user's process; a user's shell has no such history */
		prctl(PR_SET_DUMPABLE, 1);
		e1 = count_child(&evu, tru, c, NULL);
		e2 = count_child(&evk, tru, c + 1, &cause);
		snprintf(out, sizeof(out), "%d %d %d|%s", e1, e1 == 0 && c[0].user_only, e2,
			 cause ? cause : "(null)");
		if (write(p[1], out, strlen(out)) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], res, sizeof(res) - 1);
	close(p[0]);
	waitpid(pid, &st, 0);
	res[n > 0 ? n : 0] = 0;
	int e1 = 1, user_only = 0, e2 = 0;
	char *msg = strchr(res, '|');
	if (sscanf(res, "%d %d %d", &e1, &user_only, &e2) != 3)
		e1 = -1;
	is_int(e1, 0, "as nobody, task-clock opens by excluding the kernel");
	is_int(user_only, 1, "and its count says user_only (shown as task-clock:u)");
	ok(e2 == -EACCES || e2 == -EPERM, "as nobody, task-clock:k is refused (%d)", e2);
	ok(msg && strstr(msg, "perf_event_paranoid is 2") && strstr(msg, "\nhint: ") &&
		   strstr(msg, "sysctl -w kernel.perf_event_paranoid=1") &&
		   strstr(msg, "CAP_PERFMON"),
	   "the refusal explains perf_event_paranoid");
	for (char *l = strtok(msg ? msg + 1 : res, "\n"); l; l = strtok(NULL, "\n"))
		printf("# %s\n", l);
}

/* user_only is set by the fallback; test it in the parent (root) too: not set */
static void test_runs(void)
{
	struct event ev[] = {
		test_ev("page-faults", 0, true, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1,
			""),
	};
	struct evlist evl = {ev, 1, 1};
	char *tru[] = {"/bin/true", NULL};
	struct stats s;
	struct count c[1];

	stats_init(&s);
	for (int i = 0; i < 3; i++)
		if (count_child(&evl, tru, c, NULL) == 0 && c[0].state == COUNT_OK)
			stats_add(&s, c[0].value);
	is_int((int)s.n, 3, "three runs counted");
	ok(s.mean > 10 && stats_summary(&s).rel >= 0 && stats_summary(&s).rel < 50,
	   "page-faults over runs: mean %.1f +- %.2f%%", s.mean, stats_summary(&s).rel);
	ok(!c[0].user_only || geteuid() != 0, "no user-only fallback for root");
}

/* p-values against values computed independently (the t density
 * integrated numerically; the U formula by hand). */
static void test_tests(void)
{
	static const double a[] = {1, 2, 3, 4, 5}, b[] = {2, 3, 4, 5, 6};
	is_dbl(stats_welch_p(a, 5, b, 5), 0.3465935, 1e-6, "Welch: t = -1, df = 8");
	static const double c[] = {19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0};
	static const double d[] = {28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7,
				   23.2, 17.5, 20.6, 18.0, 23.9, 21.6, 24.3, 20.4, 23.9, 13.3};
	is_dbl(stats_welch_p(c, 10, d, 20), 0.0354845, 1e-6,
	       "Welch: unequal sizes and variances (t = -2.23, df = 24.5)");
	is_dbl(stats_welch_p(c, 10, c, 10), 1, 1e-9, "Welch: the same samples: p = 1");
	ok(isnan(stats_welch_p(a, 1, b, 5)), "Welch: one run a side is no test");
	static const double k[] = {7, 7, 7}, l[] = {8, 8, 8};
	is_dbl(stats_welch_p(k, 3, l, 3), 0, 0, "Welch: no spread, different means: p = 0");
	is_dbl(stats_welch_p(k, 3, k, 3), 1, 0, "Welch: no spread, same means: p = 1");
	static const double lo[] = {1, 2, 3, 4, 5, 6, 7, 8}, hi[] = {9, 10, 11, 12, 13, 14, 15, 16};
	is_dbl(stats_mwu_p(lo, 8, hi, 8), 0.0009391, 1e-6, "U: apart (U = 0)");
	is_dbl(stats_mwu_p(hi, 8, lo, 8), 0.0009391, 1e-6, "U: symmetric");
	static const double mix[] = {1, 3, 5, 7, 9, 11, 13, 15},
			    mix2[] = {2, 4, 6, 8, 10, 12, 14, 16};
	ok(stats_mwu_p(mix, 8, mix2, 8) > 0.5, "U: interleaved: no difference");
	is_dbl(stats_mwu_p(k, 3, k, 3), 1, 0, "U: all tied: p = 1");
}

/* Means and sums of what a damaged record claims: near 2^64 each, they
 * saturate instead of overflowing a conversion (a fuzz finding). */
static void test_saturate(void)
{
	is_int(stats_sat_u64(0x1p65) == UINT64_MAX, 1, "a double beyond 2^64 saturates");
	is_int(stats_sat_u64(-1.0), 0, "a negative double is 0");
	is_int(stats_sat_u64(NAN), 0, "NaN is 0");
	is_int(stats_sat_u64(12345.9), 12345, "a double in range is its integer part");
	is_int(stats_sat_long(0x1p70) == LONG_MAX, 1, "a double beyond LONG_MAX saturates");
	struct run_result run[2];
	memset(run, 0, sizeof run);
	run[0].ru.elapsed_ns = run[1].ru.elapsed_ns = UINT64_C(17870283321406128128);
	run[0].ru.maxrss_kb = run[1].ru.maxrss_kb = LONG_MAX;
	struct run_end e = {.run = run, .nruns = 2};
	struct report rep;
	memset(&rep, 0, sizeof rep);
	analysis_rusage(&e, &rep);
	is_int(rep.span_wall_ns == UINT64_MAX, 1, "two runs' wall time beyond 2^64 saturates");
	is_int(rep.ru.elapsed_ns == UINT64_C(17870283321406128128), 1, "their mean is exact");
	is_int(rep.ru.maxrss_kb == LONG_MAX, 1, "a mean of LONG_MAX stays LONG_MAX");
}

int main(void)
{
	test_saturate();
	test_welford();
	test_tests();
	test_rel();
	test_counting();
	test_enable_on_exec();
	test_inherit();
	test_group();
	test_paranoid();
	test_runs();
	return tap_done();
}
