/* test_diff.c: spanstat diff's statistics (lib/out/diff.c) on synthetic
 * sessions whose truth is known: Holm's and Benjamini-Hochberg's
 * adjustments against hand-worked values; 200 comparisons of sessions
 * without a difference, whose false alarms must stay at most alpha; the
 * power to see real changes; the families (a secondary change never makes
 * the outcome, a real change is not drowned by thousands of span paths);
 * exact comparisons of quantities without variance; what is not comparable;
 * and the refusal of counts no session has.  The sessions are JSON
 * documents built here, as spanstat --json writes them. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "tap.h"

/* --- a session generator ---------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 0x1p53;
}

static double normal(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

struct gen {
	int runs;
	double task_clock; /* msec, the mean */
	double noise;	   /* relative run-to-run noise of the times, shared by a run */
	int paths;	   /* span paths main;fK under main, 0: no spans */
	double hot_shift;  /* factor on path f0's self time */
	double cold_shift; /* factor on the last path's self time (a secondary one) */
	int count_delta;   /* added to path f1's call count (103 a run) */
	int faults_delta;  /* added to page-faults (400 a run, no variance) */
	bool no_faults;	   /* page-faults not in the event list */
	bool no_hot;	   /* path f0 not in the spans */
	const char *command;
};

/* The document of g, malloc'd. */
static char *gen_doc(const struct gen *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fprintf(f, "{\"schema_version\": 2, \"command\": [\"%s\"], \"runs\": [",
		g->command ? g->command : "./app");
	double *factor = malloc((size_t)g->runs * sizeof *factor);
	for (int r = 0; r < g->runs; r++) {
		/* one run's noise moves its times together, as a busy machine does */
		factor[r] = 1 + g->noise * normal();
		double tc = g->task_clock * factor[r] * (1 + g->noise / 4 * normal());
		fprintf(f,
			"%s{\"run\": %d, \"events\": ["
			"{\"name\": \"task-clock\", \"unit\": \"msec\", \"value\": %.6f},"
			"{\"name\": \"instructions\", \"unit\": \"\", \"value\": %.0f},"
			"{\"name\": \"cycles\", \"unit\": \"\", \"value\": null}",
			r ? "," : "", r, tc, 1e9 * (1 + 0.001 * normal()));
		if (!g->no_faults)
			fprintf(f, ",{\"name\": \"page-faults\", \"unit\": \"\", \"value\": %d}",
				400 + g->faults_delta);
		fprintf(f,
			"], \"rusage\": {\"elapsed_ns\": %.0f, \"user_ns\": %.0f, \"sys_ns\": "
			"null, "
			"\"max_rss_kib\": 2048}}",
			tc * 1.05e6 * (1 + g->noise / 4 * normal()), tc * 0.97e6);
	}
	fprintf(f, "], \"spans\": {\"collected\": %s, \"metrics\": [], \"threads\": [",
		g->paths ? "true" : "false");
	for (int r = 0; g->paths && r < g->runs; r++) {
		fprintf(f, "%s{\"run\": %d, \"nodes\": [", r ? "," : "", r);
		double total = 0;
		char *kids = NULL;
		size_t klen = 0;
		FILE *k = open_memstream(&kids, &klen);
		for (int p = 0; p < g->paths; p++) {
			if (p == 0 && g->no_hot)
				continue;
			/* self times falling with the path's rank: f0 the hottest */
			double self = 4e6 / (1 + p) * factor[r] * (1 + g->noise / 2 * normal());
			self *= p == 0 ? g->hot_shift : p == g->paths - 1 ? g->cold_shift : 1;
			int count = 103 + (p == 1 ? g->count_delta : 0);
			total += self;
			fprintf(k,
				",{\"id\": %d, \"parent\": 0, \"name\": \"f%d\", \"count\": %d, "
				"\"total_ns\": %.0f, \"self_ns\": %.0f, \"cpu_ns\": null}",
				p + 1, p, count, self, self);
		}
		fclose(k);
		fprintf(f,
			"{\"id\": 0, \"parent\": null, \"name\": \"main\", \"count\": 1, "
			"\"total_ns\": %.0f, \"self_ns\": 1000}%s]}",
			total + 1000, kids);
		free(kids);
	}
	fprintf(f, "]}}\n");
	fclose(f);
	free(factor);
	return buf;
}

/* d: the comparison of a and b (0), or the error of reading them. */
static int compare(struct diff *d, const struct gen *a, const struct gen *b, double alpha,
		   double threshold, char **cause)
{
	char *doc[2] = {gen_doc(a), gen_doc(b)};
	int err = diff_init(d);
	for (int s = 0; !err && s < 2; s++)
		err = diff_add(d, s, doc[s], strlen(doc[s]), cause);
	struct diff_opts o = {.alpha = alpha, .threshold_pct = threshold, .primary_paths = 5};
	if (!err)
		err = diff_compare(d, &o);
	free(doc[0]);
	free(doc[1]);
	return err;
}

static const struct diff_item *find(const struct diff *d, const char *name, const char *field)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->item[i].name, name) == 0 && strcmp(d->item[i].field, field) == 0)
			return &d->item[i];
	return NULL;
}

static const struct gen base = {
	.runs = 5, .task_clock = 100, .noise = 0.01, .paths = 8, .hot_shift = 1, .cold_shift = 1};

/* --- the adjustments ----------------------------------------------------- */

static void test_adjustments(void)
{
	/* R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02,
	 * "BH" = 0.02 0.04 0.04 0.02 */
	const double p[] = {0.01, 0.04, NAN, 0.03, 0.005};
	const double holm[] = {0.03, 0.06, NAN, 0.06, 0.02}, bh[] = {0.02, 0.04, NAN, 0.04, 0.02};
	double adj[5];
	ok(diff_holm(p, adj, 5) == 0, "Holm adjusts");
	for (int i = 0; i < 5; i++)
		ok(isnan(holm[i]) ? isnan(adj[i]) : fabs(adj[i] - holm[i]) < 1e-12,
		   "Holm of p[%d] = %g: %g", i, p[i], adj[i]);
	ok(diff_bh(p, adj, 5) == 0, "Benjamini-Hochberg adjusts");
	for (int i = 0; i < 5; i++)
		ok(isnan(bh[i]) ? isnan(adj[i]) : fabs(adj[i] - bh[i]) < 1e-12,
		   "BH of p[%d] = %g: %g", i, p[i], adj[i]);
	const double big[] = {0.5, 0.9, 0.7};
	diff_holm(big, adj, 3);
	ok(adj[0] == 1 && adj[1] == 1 && adj[2] == 1, "Holm stops at 1");
	diff_bh(big, adj, 3);
	ok(adj[0] == 0.9 && adj[1] == 0.9 && adj[2] == 0.9, "BH: never above a larger p's");
}

/* --- sessions without a difference ---------------------------------------- */

static void test_null(void)
{
	const int trials = 200;
	const double alpha = 0.05;
	int alarms = 0, secondary = 0, raw = 0, failed = 0;
	size_t family = 0;
	for (int t = 0; t < trials; t++) {
		struct diff d;
		char *cause = NULL;
		if (compare(&d, &base, &base, alpha, 0, &cause) != 0) {
			failed++;
			free(cause);
			diff_release(&d);
			continue;
		}
		alarms += d.sum.outcome != DIFF_OUT_SAME;
		secondary += d.sum.secondary.worse + d.sum.secondary.better > 0;
		family = d.sum.primary.compared;
		const struct diff_item *tc = find(&d, "task-clock", "");
		raw += tc && tc->p < alpha;
		diff_release(&d);
	}
	ok(failed == 0, "200 null comparisons read and compared (%d failed)", failed);
	diag("primary family of %zu; false alarms: %d of %d (alpha %g); raw task-clock p < alpha: "
	     "%d; comparisons with a secondary discovery: %d",
	     family, alarms, trials, alpha, raw, secondary);
	ok(family == 9, "the primary family: 3 counters, the elapsed time, 5 span paths (%zu)",
	   family);
	ok(alarms <= alpha * trials,
	   "false alarms over %d null comparisons at most alpha: %d <= %g", trials, alarms,
	   alpha * trials);
	/* a test that never rejects would pass the line above: the raw p of one
	 * quantity must reject at about alpha (binomial 200 x 0.05: 10 +- 3) */
	ok(raw >= 2 && raw <= 20, "one quantity's raw p rejects at about alpha: %d of %d", raw,
	   trials);
}

/* --- known effects ------------------------------------------------------------ */

static void test_effects(void)
{
	struct diff d;
	char *cause = NULL;
	/* 10% faster: seen, better, status 0 */
	struct gen fast = base;
	fast.task_clock = 90;
	fast.hot_shift = 0.9;
	int detected = 0;
	for (int t = 0; t < 20; t++) {
		if (compare(&d, &base, &fast, 0.05, 0, &cause) == 0)
			detected += d.sum.outcome == DIFF_OUT_BETTER;
		diff_release(&d);
	}
	ok(detected >= 19, "a 10%% speed-up with 1%% noise is better: %d of 20", detected);

	/* 20% slower: worse */
	struct gen slow = base;
	slow.task_clock = 120;
	compare(&d, &base, &slow, 0.05, 0, &cause);
	ok(d.sum.outcome == DIFF_OUT_WORSE, "a 20%% slow-down is worse");
	const struct diff_item *tc = find(&d, "task-clock", "");
	ok(tc && tc->primary && tc->verdict == DIFF_WORSE && tc->adj_p < 0.05 && tc->adj_p >= tc->p,
	   "task-clock: primary, worse, its Holm p significant and not below its p");
	diff_release(&d);
	/* beyond the threshold only */
	compare(&d, &base, &slow, 0.05, 25, &cause);
	ok(d.sum.outcome == DIFF_OUT_SAME, "a 20%% slow-down within --threshold=25 is the same");
	diff_release(&d);

	/* the top paths are primary; the coldest is secondary: its change is
	 * reported and never the outcome */
	struct gen cold = base;
	cold.cold_shift = 3;
	compare(&d, &base, &cold, 0.05, 0, &cause);
	const struct diff_item *f7 = find(&d, "main;f7", "self_ns"),
			       *f0 = find(&d, "main;f0", "self_ns");
	ok(f0 && f0->primary, "the hottest path's self time is primary");
	ok(f7 && !f7->primary && f7->verdict == DIFF_WORSE,
	   "the coldest path's tripled self time: secondary, worse");
	ok(d.sum.outcome == DIFF_OUT_SAME && d.sum.secondary.worse >= 1,
	   "a secondary change never makes the outcome (%d)", (int)d.sum.outcome);
	diff_release(&d);
}

/* --- the many span paths of a real program ------------------------------ */

static void test_many_paths(void)
{
	/* thousands of span paths (21,659 quantities in the report: Lua's
	 * interpreter, -finstrument-functions) and a 10% improvement of
	 * task-clock: the primary family stays small, the change is seen, and
	 * call counts that differ by one without variance do not fail it */
	struct gen a = base, b = base;
	a.paths = b.paths = 3000;
	b.task_clock = 90;
	b.count_delta = 1;
	struct diff d;
	char *cause = NULL;
	int err = compare(&d, &a, &b, 0.05, 0, &cause);
	ok(err == 0, "3,000 span paths read (%s)", cause ? cause : "");
	ok(d.n > 9000, "%zu quantities", d.n);
	ok(d.sum.primary.compared == 9, "9 primary quantities of them (%zu)",
	   d.sum.primary.compared);
	const struct diff_item *tc = find(&d, "task-clock", "");
	ok(tc && tc->verdict == DIFF_BETTER, "task-clock 10%% lower: better (Holm p %g)",
	   tc ? tc->adj_p : NAN);
	const struct diff_item *calls = find(&d, "main;f1", "count");
	ok(calls && calls->test == DIFF_TEST_EXACT && calls->change == 1 &&
		   calls->verdict == DIFF_WORSE && !calls->primary,
	   "103 -> 104 calls, no variance: exact, changed by 1, secondary");
	ok(d.sum.outcome == DIFF_OUT_BETTER, "the outcome is better (%d)", (int)d.sum.outcome);
	free(cause);
	diff_release(&d);
}

/* --- exact comparisons ---------------------------------------------------- */

static void test_exact(void)
{
	struct gen b = base;
	b.faults_delta = 4; /* 400 -> 404 in every run: +1% */
	struct diff d;
	char *cause = NULL;
	compare(&d, &base, &b, 0.05, 0, &cause);
	const struct diff_item *pf = find(&d, "page-faults", "");
	ok(pf && pf->test == DIFF_TEST_EXACT && isnan(pf->p) && pf->change == 4 &&
		   pf->significant && pf->verdict == DIFF_WORSE,
	   "page-faults 400 -> 404 without variance: exact, worse");
	ok(d.sum.outcome == DIFF_OUT_WORSE, "an exact primary change beyond 0%% is a regression");
	diff_release(&d);
	compare(&d, &base, &b, 0.05, 1, &cause);
	pf = find(&d, "page-faults", "");
	ok(pf && pf->verdict == DIFF_SAME && d.sum.outcome == DIFF_OUT_SAME,
	   "within --threshold=1 it is not");
	diff_release(&d);
	compare(&d, &base, &base, 0.05, 0, &cause);
	pf = find(&d, "page-faults", "");
	ok(pf && pf->test == DIFF_TEST_EXACT && pf->verdict == DIFF_SAME && !pf->significant,
	   "the same count in every run: exact, the same");
	diff_release(&d);
}

/* --- what is not comparable, and runs too few --------------------------- */

static void test_gaps(void)
{
	struct gen nospans = base, nofaults = base;
	nospans.paths = 0;
	nofaults.no_faults = true;
	struct diff d;
	char *cause = NULL;
	compare(&d, &nospans, &base, 0.05, 0, &cause);
	ok(d.sum.outcome == DIFF_OUT_NOT_COMPARABLE && d.ngap == 1 &&
		   d.gap[0].kind == DIFF_GAP_SPANS && d.gap[0].side == 1,
	   "OLD without spans, NEW with: not comparable, one gap (NEW has the spans)");
	const struct diff_item *f0 = find(&d, "main;f0", "self_ns");
	ok(f0 && f0->verdict == DIFF_NOT_COMPARABLE && f0->test == DIFF_TEST_NONE,
	   "their span paths are not compared");
	diff_release(&d);
	compare(&d, &base, &nofaults, 0.05, 0, &cause);
	ok(d.sum.outcome == DIFF_OUT_NOT_COMPARABLE && d.ngap == 1 &&
		   d.gap[0].kind == DIFF_GAP_EVENT && strcmp(d.gap[0].name, "page-faults") == 0 &&
		   d.gap[0].side == 0,
	   "an event counted in OLD only: not comparable");
	const struct diff_item *cy = find(&d, "cycles", "");
	ok(cy && cy->verdict == DIFF_NOT_COUNTED, "an event counted on neither side: not counted");
	diff_release(&d);
	struct gen one = base;
	one.runs = 1;
	compare(&d, &one, &one, 0.05, 0, &cause);
	ok(d.sum.outcome == DIFF_OUT_NO_TEST && d.sum.primary.compared == 0,
	   "one run a side: no test");
	diff_release(&d);
	/* a path only in OLD is gone, only in NEW new */
	struct gen fewer = base;
	fewer.paths = 7;
	compare(&d, &base, &fewer, 0.05, 0, &cause);
	const struct diff_item *gone = find(&d, "main;f7", "self_ns");
	ok(gone && gone->presence == DIFF_GONE, "a path in OLD only is gone");
	diff_release(&d);
	/* the hottest path gone: reported, secondary; the next 5 are primary */
	struct gen nohot = base;
	nohot.no_hot = true;
	compare(&d, &base, &nohot, 0.05, 0, &cause);
	gone = find(&d, "main;f0", "self_ns");
	const struct diff_item *f5 = find(&d, "main;f5", "self_ns");
	ok(gone && gone->presence == DIFF_GONE && !gone->primary && gone->verdict == DIFF_BETTER &&
		   f5 && f5->primary && d.sum.primary.compared == 9 &&
		   d.sum.outcome == DIFF_OUT_SAME,
	   "the hottest path gone from NEW: secondary, its time gone is not a speed-up (%d)",
	   (int)d.sum.outcome);
	diff_release(&d);
	compare(&d, &fewer, &base, 0.05, 0, &cause);
	const struct diff_item *nw = find(&d, "main;f7", "count");
	ok(nw && nw->presence == DIFF_NEW && isinf(nw->change_pct), "a path in NEW only is new");
	diff_release(&d);
	free(cause);
}

/* --- input that no session writes ------------------------------------------ */

static void bad(const char *doc, const char *want)
{
	struct diff d;
	char *cause = NULL;
	diff_init(&d);
	int err = diff_add(&d, 0, doc, strlen(doc), &cause);
	ok(err == -EINVAL && cause && strcmp(cause, want) == 0, "refused: %s (%s)", want,
	   cause ? cause : "no message");
	free(cause);
	diff_release(&d);
}

static void test_refused(void)
{
	const char *run = "{\"schema_version\": 2, \"runs\": [{\"events\": [{\"name\": \"cycles\", "
			  "\"value\": %s}]}]}";
	char doc[512];
	snprintf(doc, sizeof doc, run, "-5");
	bad(doc, "run 0, event 'cycles': a negative value (-5)");
	snprintf(doc, sizeof doc, run, "1e400");
	bad(doc, "run 0, event 'cycles': a value that is not finite");
	snprintf(doc, sizeof doc, run, "1e308");
	bad(doc, "run 0, event 'cycles': an absurd value, beyond 2^63 (1e+308)");
	snprintf(doc, sizeof doc, run, "\"12\"");
	bad(doc, "run 0, event 'cycles': a value that is not a number");
	bad("{\"schema_version\": 2, \"runs\": [{}], \"spans\": {\"threads\": [{\"run\": 0, "
	    "\"nodes\": [{\"id\": 0, \"parent\": null, \"name\": \"a\", \"self_ns\": -1}]}]}}",
	    "run 0, span path 'a', self_ns: a negative value (-1)");
	bad("{\"schema_version\": 2, \"runs\": [{}], \"spans\": {\"threads\": [{\"run\": 3, "
	    "\"nodes\": []}]}}",
	    "span thread 0: of run 3, but the document has 1 run");
	bad("{\"schema_version\": 2, \"runs\": [{}], \"spans\": {\"threads\": [{\"run\": 0, "
	    "\"nodes\": [{\"id\": 1, \"parent\": 0, \"name\": \"a\"}]}]}}",
	    "span thread 0: node 1 has a parent not listed before it");
	bad("{\"schema_version\": 2, \"runs\": [{}]", "not JSON (or not a whole document)");
	bad("{\"schema_version\": 2, \"runs\": []}",
	    "no run's results are known (a damaged or partial recording): nothing to compare");
	bad("[1, 2]", "not a spanstat JSON document with a run (spanstat --json)");
	/* spans before runs, and members diff does not read, are fine */
	struct diff d;
	char *cause = NULL;
	diff_init(&d);
	const char *ok_doc = "{\"spans\": {\"threads\": [{\"run\": 1, \"nodes\": [{\"id\": 0, "
			     "\"parent\": null, \"name\": \"a\", \"count\": 2}]}]}, \"x\": "
			     "[{\"y\": [1, {\"z\": null}]}], \"schema_version\": 2, \"runs\": "
			     "[{}, {}]}";
	int err = diff_add(&d, 0, ok_doc, strlen(ok_doc), &cause);
	const struct diff_item *a = find(&d, "a", "count");
	ok(err == 0 && a && d.runs[0] == 2 && a->v[0][0] == 0 && a->v[0][1] == 2,
	   "spans before runs: read, run 1's count in run 1 (%s)", cause ? cause : "");
	free(cause);
	diff_release(&d);
}

/* --- a document read from a stream, a window at a time ------------------- */

/* g's document read from a stream as from memory: the same samples. */
static void stream_as_memory(const struct gen *g, const char *what)
{
	char *doc = gen_doc(g);
	size_t len = strlen(doc);
	struct diff a, b;
	char *cause = NULL;
	diff_init(&a);
	diff_init(&b);
	int e1 = diff_add(&a, 0, doc, len, &cause);
	FILE *fp = fmemopen(doc + 10, len - 10, "r");
	int e2 = diff_add_file(&b, 0, doc, 10, fp, &cause);
	fclose(fp);
	bool same = e1 == 0 && e2 == 0 && a.n == b.n && a.runs[0] == b.runs[0];
	for (size_t i = 0; same && i < a.n; i++)
		same = memcmp(a.item[i].v[0], b.item[i].v[0], a.runs[0] * sizeof(double)) == 0;
	ok(same, "%s: %zu bytes read from a stream as from memory (%zu items, %u runs)", what, len,
	   b.n, b.runs[0]);
	diff_release(&a);
	diff_release(&b);
	/* cut anywhere, a stream is never a document */
	diff_init(&b);
	fp = fmemopen(doc, len / 2, "r");
	ok(diff_add_file(&b, 0, "", 0, fp, &cause) == -EINVAL, "%s: half of it is not one", what);
	fclose(fp);
	free(cause);
	diff_release(&b);
	free(doc);
}

static void test_stream(void)
{
	struct gen g = base;
	g.runs = 3000; /* 8 MB: the 1 MB window slides */
	g.paths = 20;
	stream_as_memory(&g, "many small runs");
	g.runs = 2; /* a thread of 2.5 MB: the window grows */
	g.paths = 20000;
	stream_as_memory(&g, "threads larger than the window");
}

int main(void)
{
	test_adjustments();
	test_null();
	test_effects();
	test_many_paths();
	test_exact();
	test_gaps();
	test_refused();
	test_stream();
	return tap_done();
}
