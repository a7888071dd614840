/* diffcmd.c: `spanstat diff [OPTIONS] OLD NEW` (spanstat-diff(1)): two
 * sessions' JSON documents (or record files) compared as a gate
 * (lib/out/diff.h): what is not comparable and the warnings on stderr, a
 * verdict line and the changes in human units on stdout, and the whole
 * comparison as JSON, differential folded stacks and a differential flame
 * graph.  Exit 0: no primary quantity got worse; 1: one did; 2: no verdict
 * (not comparable, or no test); 125: bad input or options. */
#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diff.h"
#include "diffcmd.h"
#include "errline.h"
#include "fmt.h"
#include "outfile.h"
#include "recfile.h"
#include "recreport.h"
#include "writer.h"
#include "svg.h"

enum { DOUT_JSON, DOUT_FOLDED, DOUT_FLAMEGRAPH, DOUT_MAX };
static const char *const dout_opt[DOUT_MAX] = {"--json", "--folded", "--flamegraph"};

/* The exit statuses of spanstat diff (spanstat-diff(1)). */
enum {
	DIFF_EXIT_OK = 0,	  /* no primary quantity got worse */
	DIFF_EXIT_WORSE = 1,	  /* one did, significantly and beyond the threshold */
	DIFF_EXIT_NO_VERDICT = 2, /* not comparable, or no test possible */
};

/* The listing without --all: the first this many changed quantities. */
enum { DIFF_SHOWN = 20 };

static void diff_help(FILE *fp)
{
	fputs("Usage: spanstat diff [OPTIONS] OLD NEW\n"
	      "\n"
	      "Compare two sessions, each a record file (spanstat record) or a JSON document\n"
	      "(spanstat --json), with -r N runs a side (N >= 2; 8 or more add Mann-Whitney U).\n"
	      "Primary quantities (every counter, the elapsed time, the self time of the top\n"
	      "span paths of OLD) are tested with Welch's t-test and Holm's adjustment and make\n"
	      "the verdict; the rest are screened with Benjamini-Hochberg's and only reported.\n"
	      "A quantity without variance on both sides is compared exactly.  Prints a\n"
	      "verdict line, then the changes, largest first.\n"
	      "\n"
	      "Options:\n"
	      "  --threshold=PCT      a change of PCT percent or less is no change (0)\n"
	      "  --alpha=A            the significance level of the tests (0.05)\n"
	      "  --primary-paths=K    span paths in the primary family (5)\n"
	      "  --all                list every quantity, not the first 20 changes\n"
	      "  --json=FILE          write the comparison as JSON to FILE, - for stdout\n"
	      "  --folded=FILE        write differential folded stacks (PATH OLD NEW) to FILE\n"
	      "  --flamegraph=FILE    write a differential SVG flame graph to FILE\n"
	      "  -h, --help           this help\n"
	      "\n"
	      "Exit status: 0 when no primary quantity got worse, 1 when one did\n"
	      "(significantly and beyond the threshold), 2 when the sessions are not\n"
	      "comparable or cannot be tested, 125 on bad input.\n"
	      "`spanstat -- diff ...` runs the diff program instead.  See spanstat-diff(1).\n",
	      fp);
}

/* A number of the whole argument, in [lo, hi]. */
static double diff_number(const char *opt, const char *arg, double lo, double hi, const char *what)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (!*arg || *end || errno || isnan(v) || v < lo || v > hi)
		die("invalid %s '%s': expected %s", opt, arg, what);
	return v;
}

/* path (- is stdin) opened, with its first bytes in head[*len]. */
static FILE *diff_open(const char *path, char *head, size_t size, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	if (!f)
		die("cannot read '%s': %s", path, strerror(errno));
	errno = 0;
	*len = fread(head, 1, size, f);
	if (ferror(f)) /* read(2)'s errno: a directory is EISDIR */
		die("cannot read '%s': %s", path, strerror(errno ? errno : EIO));
	return f;
}

static void diff_warn(void *ctx, const char *msg)
{
	(void)ctx;
	errline(msg);
}

/* A stream (a pipe, a FIFO, standard input) whose first hlen bytes were
 * read into head, whole in an anonymous file the record reader can open by
 * name; the file's descriptor in *fd. */
static const char *diff_spool(const char *path, FILE *f, const char *head, size_t hlen, int *fd,
			      char *name, size_t size)
{
	*fd = memfd_create("spanstat-diff", MFD_CLOEXEC);
	if (*fd < 0)
		die("cannot read '%s': %s", path, strerror(errno));
	static char chunk[1 << 16];
	const char *p = head;
	size_t n = hlen;
	for (;;) {
		while (n) {
			ssize_t w = write(*fd, p, n);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				die("cannot read '%s': %s", path, strerror(w < 0 ? errno : EIO));
			p += w;
			n -= (size_t)w;
		}
		n = fread(chunk, 1, sizeof chunk, f);
		if (!n)
			break;
		p = chunk;
	}
	if (ferror(f))
		die("cannot read '%s': %s", path, strerror(EIO));
	snprintf(name, size, "/proc/self/fd/%d", *fd);
	return name;
}

/* A record file's JSON document, as spanstat report --json makes it, in
 * place of its bytes.  A record that is not a regular file (a pipe, a
 * FIFO, <(...), standard input) was read in part already: it is read whole
 * into an anonymous file first. */
static void diff_from_record(const char *path, FILE *f, const char *head, size_t hlen, char **buf,
			     size_t *len)
{
	struct stat st;
	int spool = -1;
	char spooled[64];
	const char *use = path;
	if (f == stdin || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
		use = diff_spool(path, f, head, hlen, &spool, spooled, sizeof spooled);
	*buf = NULL;
	*len = 0;
	FILE *mem = open_memstream(buf, len);
	if (!mem)
		die("cannot read '%s': %s", path, strerror(ENOMEM));
	struct writer w = {.ops = &json_writer_ops, .fp = mem};
	struct writer *wv[1] = {&w};
	const char *files[1] = {use};
	const struct writer *failed = NULL;
	char *cause = NULL;
	struct recreport_opts ro = {
		.files = files, .nfiles = 1, .writers = wv, .nwriters = 1, .warn = diff_warn};
	int r = recreport_run(&ro, &failed, &cause);
	if (w.ops->release)
		w.ops->release(&w);
	if (fclose(mem) != 0 && r == 0)
		r = -ENOMEM;
	if (spool >= 0)
		close(spool);
	if (r < 0 || failed)
		die("%s", cause ? cause : "cannot read a record file: out of memory");
}

static const char *const verdict_text[] = {
	[DIFF_NO_TEST] = "no test",
	[DIFF_SAME] = "same",
	[DIFF_WORSE] = "worse",
	[DIFF_BETTER] = "better",
	[DIFF_NOT_COMPARABLE] = "not comparable",
	[DIFF_NOT_COUNTED] = "not counted",
};
static const char *const outcome_text[] = {
	[DIFF_OUT_SAME] = "same",	[DIFF_OUT_BETTER] = "better",
	[DIFF_OUT_WORSE] = "worse",	[DIFF_OUT_NOT_COMPARABLE] = "not comparable",
	[DIFF_OUT_NO_TEST] = "no test",
};
static const char *const presence_text[] = {
	[DIFF_BOTH] = "both", [DIFF_GONE] = "gone", [DIFF_NEW] = "new", [DIFF_NEITHER] = "neither"};
static const char *const test_text[] = {
	[DIFF_TEST_NONE] = NULL,
	[DIFF_TEST_WELCH] = "welch",
	[DIFF_TEST_WELCH_MWU] = "welch+mann-whitney",
	[DIFF_TEST_EXACT] = "exact",
};
static const char *const side_text[] = {"OLD", "NEW"};

static int diff_status(const struct diff *d)
{
	switch (d->sum.outcome) {
	case DIFF_OUT_WORSE:
		return DIFF_EXIT_WORSE;
	case DIFF_OUT_NOT_COMPARABLE:
	case DIFF_OUT_NO_TEST:
		return DIFF_EXIT_NO_VERDICT;
	case DIFF_OUT_SAME:
	case DIFF_OUT_BETTER:
		break;
	}
	return DIFF_EXIT_OK;
}

/* What a gap means, in one line (malloc'd; NULL: out of memory). */
static char *diff_gap_text(const struct diff_gap *g)
{
	char *m = NULL;
	const char *has = side_text[g->side], *lacks = side_text[!g->side];
	int r = -1;
	switch (g->kind) {
	case DIFF_GAP_SPANS:
		r = asprintf(&m, "span paths: collected in %s only (%s was run without --spans)",
			     has, lacks);
		break;
	case DIFF_GAP_SPAN_VALUE:
		r = asprintf(&m, "span value '%s': collected in %s only", g->name, has);
		break;
	case DIFF_GAP_EVENT:
		r = asprintf(&m, "event '%s': counted in %s only", g->name, has);
		break;
	case DIFF_GAP_RUSAGE:
		r = asprintf(&m, "rusage %s: measured in %s only", g->name, has);
		break;
	}
	return r < 0 ? NULL : m;
}

/* The warnings: the sessions ran different commands, or counted different
 * event lists.  Up to 2, malloc'd, into w; their number. */
static int diff_warnings(const struct diff *d, char *w[2])
{
	int n = 0;
	if (d->command[0] && d->command[1] && strcmp(d->command[0], d->command[1]) != 0 &&
	    asprintf(&w[n], "warning: the commands differ: OLD ran '%s', NEW ran '%s'",
		     d->command[0], d->command[1]) >= 0)
		n++;
	if (d->events[0] && d->events[1] && strcmp(d->events[0], d->events[1]) != 0 &&
	    asprintf(&w[n], "warning: the event lists differ: OLD counted '%s', NEW '%s'",
		     d->events[0], d->events[1]) >= 0)
		n++;
	return n;
}

/* A duration of ns nanoseconds: ns, us, ms or s, grouped. */
static void diff_time(char *buf, size_t size, double ns)
{
	char num[64];
	const char *unit;
	if (ns < 999.5) {
		fmt_grouped(num, sizeof num, ns, 0);
		unit = "ns";
	} else if (ns < 999995) {
		fmt_grouped(num, sizeof num, ns / 1e3, 2);
		unit = "us";
	} else if (ns < 999995000) {
		fmt_grouped(num, sizeof num, ns / 1e6, 2);
		unit = "ms";
	} else {
		fmt_grouped(num, sizeof num, ns / 1e9, 3);
		unit = "s";
	}
	snprintf(buf, size, "%s %s", num, unit);
}

/* v of an item in human units: times as durations, the rest grouped with
 * dec decimals. */
static void diff_human(char *buf, size_t size, double v, const char *unit, int dec)
{
	if (isnan(v)) {
		snprintf(buf, size, "-");
		return;
	}
	double a = fabs(v);
	if (strcmp(unit, "ns") == 0 || strcmp(unit, "msec") == 0) {
		double ns = a * (*unit == 'm' ? 1e6 : 1);
		diff_time(buf + (v < 0), size - (v < 0), ns);
		if (v < 0)
			buf[0] = '-';
		return;
	}
	char num[64];
	fmt_grouped(num, sizeof num, v, dec);
	const char *suffix = strcmp(unit, "KiB") == 0	  ? " KiB"
			     : strcmp(unit, "bytes") == 0 ? " B"
							  : "";
	snprintf(buf, size, "%s%s", num, suffix);
}

/* The change column: a percentage, or what stands for one. */
static void diff_change(char *buf, size_t size, const struct diff_item *it)
{
	if (it->presence == DIFF_GONE && it->kind == DIFF_SPAN &&
	    it->verdict != DIFF_NOT_COMPARABLE)
		snprintf(buf, size, "gone");
	else if (it->presence == DIFF_NEW && it->kind == DIFF_SPAN &&
		 it->verdict != DIFF_NOT_COMPARABLE)
		snprintf(buf, size, "new");
	else if (isnan(it->change_pct))
		snprintf(buf, size, "-");
	else if (isinf(it->change_pct))
		snprintf(buf, size, "from 0");
	else
		fmt_c(buf, size, "%+.2f%%", it->change_pct);
}

/* One item's row; vw: the verdict column's width. */
static void diff_line(const struct diff_item *it, int vw)
{
	char a[96], b[96], ch[32], p[32], by[128] = "";
	/* a line's counts alike: whole when both means are, else as the larger needs */
	double m0 = isnan(it->mean[0]) ? 0 : it->mean[0], m1 = isnan(it->mean[1]) ? 0 : it->mean[1];
	int dec = m0 == floor(m0) && m1 == floor(m1) ? 0 : fmax(fabs(m0), fabs(m1)) >= 100 ? 1 : 2;
	diff_human(a, sizeof a, it->mean[0], it->unit, dec);
	diff_human(b, sizeof b, it->mean[1], it->unit, dec);
	diff_change(ch, sizeof ch, it);
	if (it->test == DIFF_TEST_EXACT) {
		snprintf(p, sizeof p, "exact");
		if (it->change != 0) {
			char n[96];
			diff_human(n, sizeof n, it->change, it->unit, dec);
			snprintf(by, sizeof by, ", changed by %s%s", it->change > 0 ? "+" : "", n);
		}
	} else if (isnan(it->adj_p)) {
		snprintf(p, sizeof p, "-");
	} else {
		fmt_c(p, sizeof p, "%.2g", it->adj_p);
	}
	printf(" %15s %15s %9s %8s  %-9s  %-*s  %s%s%s%s\n", a, b, ch, p,
	       it->primary ? "primary" : "secondary", vw, verdict_text[it->verdict], it->name,
	       *it->field ? ": " : "", it->field, by);
}

/* "2 of 14 primary quantities changed significantly: 1 worse, 1 better". */
static void diff_counts(const struct diff_count *c, const char *family)
{
	printf("%zu of %zu %s quantit%s changed significantly", c->worse + c->better, c->compared,
	       family, c->compared == 1 ? "y" : "ies");
	if (c->worse && c->better)
		printf(": %zu worse, %zu better", c->worse, c->better);
	if (c->untested)
		printf(" (and %zu without a test)", c->untested);
}

static void diff_report(const struct diff *d, const size_t *order, const char *old, const char *new,
			const struct diff_opts *o, bool all)
{
	char alpha[32], thr[32];
	fmt_c(alpha, sizeof alpha, "%g", o->alpha);
	fmt_c(thr, sizeof thr, "%g", o->threshold_pct);
	printf("spanstat diff: %s: ", outcome_text[d->sum.outcome]);
	switch (d->sum.outcome) {
	case DIFF_OUT_NO_TEST:
		printf("no primary quantity has 2 or more runs with a value on each side "
		       "(OLD %u run%s, NEW %u; spanstat -r N)\n",
		       d->runs[0], d->runs[0] == 1 ? "" : "s", d->runs[1]);
		break;
	case DIFF_OUT_NOT_COMPARABLE:
		printf("OLD and NEW collected different quantities (%zu difference%s, each said "
		       "on stderr); of the rest, ",
		       d->ngap, d->ngap == 1 ? "" : "s");
		/* fall through */
	default:
		diff_counts(&d->sum.primary, "primary");
		printf(" (alpha %s, threshold %s%%)\n", alpha, thr);
	}
	printf(" Comparing '%s' (%u run%s) with '%s' (%u run%s): Welch's t-test, Holm over the "
	       "primary family, Benjamini-Hochberg over the rest\n ",
	       old, d->runs[0], d->runs[0] == 1 ? "" : "s", new, d->runs[1],
	       d->runs[1] == 1 ? "" : "s");
	diff_counts(&d->sum.secondary, "secondary");
	printf(" (reported, never the verdict)\n\n");
	size_t changed = 0, shown = 0;
	int vw = all ? 14 : 7; /* "not comparable" only with --all */
	for (size_t k = 0; k < d->n; k++) {
		const struct diff_item *it = &d->item[order[k]];
		bool ch = it->verdict == DIFF_WORSE || it->verdict == DIFF_BETTER;
		changed += ch;
		if (!all && (!ch || shown >= DIFF_SHOWN))
			continue;
		if (!shown++)
			printf(" %15s %15s %9s %8s  %-9s  %-*s  %s\n", "old mean", "new mean",
			       "change", "p adj.", "family", vw, "verdict", "quantity");
		diff_line(it, vw);
	}
	if (!shown)
		printf(" No quantity changed significantly beyond the threshold.\n");
	else if (!all && changed > shown)
		printf(" ... and %zu more changed quantit%s (--all lists every quantity)\n",
		       changed - shown, changed - shown == 1 ? "y" : "ies");
}

static cJSON *diff_side_json(const struct diff_item *it, int s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "runs", (double)it->n[s]);
	if (isnan(it->mean[s]))
		cJSON_AddNullToObject(o, "mean");
	else
		cJSON_AddNumberToObject(o, "mean", it->mean[s]);
	if (it->n[s] < 2)
		cJSON_AddNullToObject(o, "stddev");
	else
		cJSON_AddNumberToObject(o, "stddev", it->sd[s]);
	return o;
}

static void diff_num_or_null(cJSON *o, const char *k, double v)
{
	if (isnan(v) || isinf(v))
		cJSON_AddNullToObject(o, k);
	else
		cJSON_AddNumberToObject(o, k, v);
}

static void diff_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static cJSON *diff_count_json(const struct diff_count *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "compared", (double)c->compared);
	cJSON_AddNumberToObject(o, "untested", (double)c->untested);
	cJSON_AddNumberToObject(o, "significant", (double)c->significant);
	cJSON_AddNumberToObject(o, "worse", (double)c->worse);
	cJSON_AddNumberToObject(o, "better", (double)c->better);
	return o;
}

static int diff_json(FILE *fp, const struct diff *d, const size_t *order, const char *old,
		     const char *new, const struct diff_opts *opt, char **warn, int nwarn)
{
	static const char *const kinds[] = {"counter", "rusage", "span"};
	static const char *const gap_kinds[] = {[DIFF_GAP_SPANS] = "spans",
						[DIFF_GAP_SPAN_VALUE] = "span value",
						[DIFF_GAP_EVENT] = "event",
						[DIFF_GAP_RUSAGE] = "rusage"};
	int status = diff_status(d);
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "old", old);
	cJSON_AddStringToObject(doc, "new", new);
	cJSON_AddNumberToObject(doc, "old_runs", d->runs[0]);
	cJSON_AddNumberToObject(doc, "new_runs", d->runs[1]);
	cJSON_AddNumberToObject(doc, "alpha", opt->alpha);
	cJSON_AddNumberToObject(doc, "threshold_pct", opt->threshold_pct);
	cJSON_AddNumberToObject(doc, "primary_paths", opt->primary_paths);
	cJSON_AddStringToObject(doc, "verdict", outcome_text[d->sum.outcome]);
	cJSON_AddNumberToObject(doc, "status", status);
	cJSON_AddBoolToObject(doc, "worse", status == DIFF_EXIT_WORSE);
	cJSON_AddItemToObject(doc, "primary", diff_count_json(&d->sum.primary));
	cJSON_AddItemToObject(doc, "secondary", diff_count_json(&d->sum.secondary));
	cJSON *gaps = cJSON_AddArrayToObject(doc, "not_comparable");
	for (size_t g = 0; g < d->ngap; g++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(gaps, o);
		cJSON_AddStringToObject(o, "kind", gap_kinds[d->gap[g].kind]);
		diff_str_or_null(o, "name", *d->gap[g].name ? d->gap[g].name : NULL);
		cJSON_AddStringToObject(o, "collected_in", d->gap[g].side ? "new" : "old");
		char *m = diff_gap_text(&d->gap[g]);
		diff_str_or_null(o, "message", m);
		free(m);
	}
	cJSON *warnings = cJSON_AddArrayToObject(doc, "warnings");
	for (int w = 0; w < nwarn; w++)
		cJSON_AddItemToArray(warnings, cJSON_CreateString(warn[w]));
	cJSON *items = cJSON_AddArrayToObject(doc, "items");
	for (size_t k = 0; k < d->n; k++) {
		const struct diff_item *it = &d->item[order[k]];
		bool tested = it->test != DIFF_TEST_NONE && it->test != DIFF_TEST_EXACT;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(items, o);
		cJSON_AddStringToObject(o, "kind", kinds[it->kind]);
		cJSON_AddStringToObject(o, "name", it->name);
		diff_str_or_null(o, "field", *it->field ? it->field : NULL);
		cJSON_AddStringToObject(o, "unit", it->unit);
		cJSON_AddStringToObject(o, "family", it->primary ? "primary" : "secondary");
		cJSON_AddStringToObject(o, "presence", presence_text[it->presence]);
		cJSON_AddItemToObject(o, "old", diff_side_json(it, 0));
		cJSON_AddItemToObject(o, "new", diff_side_json(it, 1));
		diff_num_or_null(o, "change", it->change);
		diff_num_or_null(o, "change_pct", it->change_pct);
		diff_str_or_null(o, "test", test_text[it->test]);
		diff_num_or_null(o, "welch_p", it->welch_p);
		diff_num_or_null(o, "mann_whitney_p", it->mwu_p);
		diff_num_or_null(o, "p", it->p);
		diff_num_or_null(o, "adjusted_p", it->adj_p);
		diff_str_or_null(o, "adjustment",
				 !tested       ? NULL
				 : it->primary ? "holm"
					       : "benjamini-hochberg");
		diff_num_or_null(o, "holm_p", it->primary ? it->adj_p : NAN);
		cJSON_AddBoolToObject(o, "significant", it->significant);
		cJSON_AddStringToObject(o, "verdict", verdict_text[it->verdict]);
	}
	char *text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (!text)
		return -ENOMEM;
	int err = fprintf(fp, "%s\n", text) < 0 ? -EIO : 0;
	free(text);
	return err;
}

/* flamegraph.pl's difference input: PATH OLD NEW, the self times' means. */
static int diff_folded(FILE *fp, const struct diff *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_item *it = &d->item[i];
		if (it->kind != DIFF_SPAN || strcmp(it->field, "self_ns") != 0)
			continue;
		double a = isnan(it->mean[0]) ? 0 : it->mean[0],
		       b = isnan(it->mean[1]) ? 0 : it->mean[1];
		if (llround(a) == 0 && llround(b) == 0)
			continue;
		/* a frame never holds a space before its value: flamegraph.pl
		 * splits at the last two spaces */
		fprintf(fp, "%s %lld %lld\n", it->name, llround(a), llround(b));
	}
	return fflush(fp) != 0 || ferror(fp) ? -EIO : 0;
}

static int diff_flamegraph(FILE *fp, const struct diff *d, const char *old, const char *new)
{
	struct span_tree t;
	struct strtab names;
	uint64_t *olds;
	if (strtab_init(&names) < 0)
		return -ENOMEM;
	int err = diff_tree(d, &t, &names, &olds);
	if (!err) {
		err = svg_flamegraph_diff(fp, &t, &names, olds, old, new);
		span_tree_release(&t);
		free(olds);
	}
	strtab_release(&names);
	return err;
}

int diff_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"threshold", required_argument, NULL, 't'},
		{"alpha", required_argument, NULL, 'a'},
		{"primary-paths", required_argument, NULL, 'k'},
		{"all", no_argument, NULL, 'A'},
		{"json", required_argument, NULL, 'j'},
		{"folded", required_argument, NULL, 'f'},
		{"flamegraph", required_argument, NULL, 'g'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct diff_opts opt = {.alpha = 0.05, .threshold_pct = 0, .primary_paths = 5};
	bool all = false;
	const char *path[DOUT_MAX] = {NULL};
	opterr = 0;
	optind = 1;
	/* a reader that goes away (spanstat diff ... | head) is an output that
	 * cannot be written, status 125 with its line, not death by SIGPIPE */
	signal(SIGPIPE, SIG_IGN);
	for (int c; (c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1;) {
		switch (c) {
		case 't':
			opt.threshold_pct = diff_number("--threshold", optarg, 0, 1e9,
							"a percentage, 0 or more");
			break;
		case 'a':
			opt.alpha = diff_number("--alpha", optarg, 1e-12, 0.5,
						"a significance level above 0 and at most 0.5");
			break;
		case 'k': {
			double k = diff_number("--primary-paths", optarg, 0, 1000,
					       "a whole number from 0 to 1000");
			if (k != floor(k))
				die("invalid --primary-paths '%s': expected a whole number from 0 "
				    "to 1000",
				    optarg);
			opt.primary_paths = (unsigned)k;
			break;
		}
		case 'A':
			all = true;
			break;
		case 'j':
		case 'f':
		case 'g': {
			int k = c == 'j' ? DOUT_JSON : c == 'f' ? DOUT_FOLDED : DOUT_FLAMEGRAPH;
			if (!*optarg)
				die("invalid %s '': expected a file name, or - for standard output",
				    dout_opt[k]);
			path[k] = optarg;
			break;
		}
		case 'h':
			diff_help(stdout);
			return fflush(stdout) == 0 && !ferror(stdout) ? 0 : EXIT_SPANSTAT;
		case ':':
			die("option '%s' needs an argument", argv[optind - 1]);
		default:
			die("unknown option '%s' (see 'spanstat diff --help')", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		die("diff takes two files, OLD and NEW (see 'spanstat diff --help')");
	const char *name[2] = {argv[optind], argv[optind + 1]};
	if (strcmp(name[0], "-") == 0 && strcmp(name[1], "-") == 0)
		die("OLD and NEW are both standard input ('-'): it can be read once");
	for (int a = 0; a < DOUT_MAX; a++)
		for (int b = a + 1; b < DOUT_MAX; b++)
			if (path[a] && path[b] && strcmp(path[a], path[b]) == 0)
				die("%s and %s both write '%s'", dout_opt[a], dout_opt[b], path[a]);
	struct diff d;
	if (diff_init(&d) < 0)
		die("out of memory");
	/* one side at a time, a piece of its text at a time (a record file: as
	 * its report's JSON, whole) */
	static char head[1 << 16];
	for (int s = 0; s < 2; s++) {
		char *cause = NULL;
		size_t len;
		FILE *f = diff_open(name[s], head, sizeof head, &len);
		int r;
		if (recfile_is(head, len)) {
			char *buf;
			diff_from_record(name[s], f, head, len, &buf, &len);
			r = diff_add(&d, s, buf, len, &cause);
			free(buf);
		} else {
			r = diff_add_file(&d, s, head, len, f, &cause);
		}
		if (f != stdin)
			fclose(f);
		if (r < 0)
			die("'%s': %s", name[s], cause ? cause : strerror(-r));
	}
	size_t *order = NULL;
	if (diff_compare(&d, &opt) < 0 || diff_order(&d, &order) < 0)
		die("out of memory");
	int code = diff_status(&d);
	/* a differential picture of spans one side lacks would show its
	 * unknown times as zeros: not written */
	bool spans_gap = false;
	const char *unwritten[DOUT_MAX] = {NULL};
	for (size_t g = 0; g < d.ngap; g++)
		spans_gap |= d.gap[g].kind == DIFF_GAP_SPANS;
	for (int k = DOUT_FOLDED; spans_gap && k <= DOUT_FLAMEGRAPH; k++) {
		unwritten[k] = path[k];
		path[k] = NULL;
	}
	/* the files first, each whole or not at all; then the report */
	struct outfile out[DOUT_MAX];
	for (int k = 0; k < DOUT_MAX; k++) {
		char *cause = NULL;
		if (path[k] && outfile_open(&out[k], path[k], 0, &cause) < 0) {
			for (int j = 0; j < k; j++)
				if (path[j])
					outfile_abort(&out[j]);
			die("%s", cause ? cause : "cannot open an output");
		}
	}
	/* never write over an input, nor two outputs into one file */
	for (int k = 0; k < DOUT_MAX; k++) {
		char *why = NULL;
		struct stat st;
		for (int s = 0; path[k] && s < 2 && !why; s++)
			if (strcmp(name[s], "-") != 0 && stat(name[s], &st) == 0 &&
			    outfile_is(&out[k], st.st_dev, st.st_ino) &&
			    asprintf(&why, "%s '%s' would overwrite the input '%s'", dout_opt[k],
				     path[k], name[s]) < 0)
				why = NULL;
		for (int j = k + 1; path[k] && j < DOUT_MAX && !why; j++)
			if (path[j] && outfile_same(&out[k], &out[j]) &&
			    asprintf(&why, "%s and %s name one file ('%s', '%s')", dout_opt[k],
				     dout_opt[j], path[k], path[j]) < 0)
				why = NULL;
		if (why) {
			for (int j = 0; j < DOUT_MAX; j++)
				if (path[j])
					outfile_abort(&out[j]);
			die("%s", why);
		}
	}
	/* what was not compared, and what may make the comparison unfair */
	char *warn[2] = {NULL, NULL};
	int nwarn = diff_warnings(&d, warn);
	for (int w = 0; w < nwarn; w++)
		errline(warn[w]);
	for (size_t g = 0; g < d.ngap; g++) {
		char *m = diff_gap_text(&d.gap[g]);
		die_soft("not comparable: %s", m ? m : "out of memory");
		free(m);
	}
	for (int k = 0; k < DOUT_MAX; k++)
		if (unwritten[k])
			die_soft("%s '%s' not written: the span paths are not comparable",
				 dout_opt[k], unwritten[k]);
	bool stdout_failed = false; /* said once, by the output that met it */
	for (int k = 0; k < DOUT_MAX; k++) {
		if (!path[k])
			continue;
		errno = 0;
		int err = k == DOUT_JSON ? diff_json(out[k].fp, &d, order, name[0], name[1], &opt,
						     warn, nwarn)
			  : k == DOUT_FOLDED ? diff_folded(out[k].fp, &d)
					     : diff_flamegraph(out[k].fp, &d, name[0], name[1]);
		int wrote_errno = errno;
		char *cause = NULL;
		bool to_stdout = strcmp(path[k], "-") == 0;
		if (err) {
			err = outfile_why(&out[k], err);
			if (to_stdout && err == -EIO && wrote_errno) /* stdout's own stream */
				err = -wrote_errno;
			outfile_abort(&out[k]);
			if (to_stdout)
				die_soft("cannot write %s to standard output: %s", dout_opt[k],
					 strerror(-err));
			else
				die_soft("cannot write %s '%s': %s", dout_opt[k], path[k],
					 strerror(-err));
			code = EXIT_SPANSTAT;
			stdout_failed |= to_stdout;
		} else if (outfile_commit(&out[k], &cause) < 0) {
			die_soft("%s", cause ? cause : "cannot write an output");
			code = EXIT_SPANSTAT;
		}
		free(cause);
	}
	/* an output on standard output has it alone: no listing in its lines */
	bool std_out = false;
	for (int k = 0; k < DOUT_MAX; k++)
		std_out |= path[k] && strcmp(path[k], "-") == 0;
	if (!std_out)
		diff_report(&d, order, name[0], name[1], &opt, all);
	for (int w = 0; w < nwarn; w++)
		free(warn[w]);
	free(order);
	diff_release(&d);
	errno = 0;
	if ((fflush(stdout) != 0 || ferror(stdout)) && !stdout_failed) {
		die_soft("cannot write the comparison to standard output: %s",
			 strerror(errno ? errno : EIO));
		return EXIT_SPANSTAT;
	}
	return code;
}
