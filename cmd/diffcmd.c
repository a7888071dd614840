/* diffcmd.c: `spanstat diff [OPTIONS] OLD NEW` (spanstat-diff(1)): two
 * sessions' JSON documents compared quantity by quantity (lib/diff.h), a
 * table on stdout, and the comparison as JSON, differential folded stacks
 * and a differential flame graph.  Exit 1 when a significant change beyond
 * the threshold makes something worse, 0 otherwise, 125 on bad input. */
#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diff.h"
#include "diffcmd.h"
#include "errline.h"
#include "outfile.h"
#include "recfile.h"
#include "recreport.h"
#include "writer.h"
#include "svg.h"

enum { DOUT_JSON, DOUT_FOLDED, DOUT_FLAMEGRAPH, DOUT_MAX };
static const char *const dout_opt[DOUT_MAX] = {"--json", "--folded", "--flamegraph"};

static void diff_help(FILE *fp)
{
	fputs("Usage: spanstat diff [OPTIONS] OLD NEW\n"
	      "\n"
	      "Compare two sessions, each a record file (spanstat record) or a JSON document\n"
	      "(spanstat --json), with -r N runs for a test:\n"
	      "every counter, the rusage and every span path's count, total, self time and\n"
	      "values; old mean, new mean, change, Welch's t-test p (and Mann-Whitney U's\n"
	      "with 8 or more runs a side), adjusted for the number of quantities tested\n"
	      "(Holm), and a verdict.\n"
	      "\n"
	      "Options:\n"
	      "  --threshold=PCT      a change smaller than PCT percent is no change (0)\n"
	      "  --alpha=A            the significance level of the tests (0.05)\n"
	      "  --json=FILE          write the comparison as JSON to FILE, - for stdout\n"
	      "  --folded=FILE        write differential folded stacks (PATH OLD NEW) to FILE\n"
	      "  --flamegraph=FILE    write a differential SVG flame graph to FILE\n"
	      "  -h, --help           this help\n"
	      "\n"
	      "Exit status: 1 when a significant change beyond the threshold makes something\n"
	      "worse (more time, more events), 0 otherwise, 125 on bad input.\n"
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

/* The whole of path (- is stdin) in *buf. */
static void diff_read(const char *path, char **buf, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	if (!f)
		die("cannot read '%s': %s", path, strerror(errno));
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);
	for (size_t got; b && (got = fread(b + n, 1, cap - n, f)) > 0;) {
		n += got;
		if (n == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	int bad = ferror(f);
	if (f != stdin)
		fclose(f);
	if (!b)
		die("cannot read '%s': %s", path, strerror(ENOMEM));
	if (bad)
		die("cannot read '%s': %s", path, strerror(EIO));
	*buf = b;
	*len = n;
}

static void diff_warn(void *ctx, const char *msg)
{
	(void)ctx;
	errline(msg);
}

/* A record file's JSON document, as spanstat report --json makes it, in
 * place of its bytes. */
static void diff_from_record(const char *path, char **buf, size_t *len)
{
	/* the reader maps the file by name: stdin was read already, and a file
	 * named - would be another one */
	if (strcmp(path, "-") == 0)
		die("cannot read '-': a record file is read from a file, not from standard input");
	free(*buf);
	*buf = NULL;
	*len = 0;
	FILE *mem = open_memstream(buf, len);
	if (!mem)
		die("cannot read '%s': %s", path, strerror(ENOMEM));
	struct writer w = {.ops = &json_writer_ops, .fp = mem};
	struct writer *wv[1] = {&w};
	const char *files[1] = {path};
	const struct writer *failed = NULL;
	char *cause = NULL;
	struct recreport_opts ro = {
		.files = files, .nfiles = 1, .writers = wv, .nwriters = 1, .warn = diff_warn};
	int r = recreport_run(&ro, &failed, &cause);
	if (w.ops->release)
		w.ops->release(&w);
	if (fclose(mem) != 0 && r == 0)
		r = -ENOMEM;
	if (r < 0 || failed)
		die("%s", cause ? cause : "cannot read a record file: out of memory");
}

static const char *const verdict_text[] = {"no test", "same", "worse", "better"};

static void diff_num(char *buf, size_t size, double v)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else if (fabs(v) >= 1000 || v == floor(v))
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.4g", v);
}

static void diff_table(const struct diff *d, const char *old, const char *new, double alpha,
		       double threshold)
{
	printf("\n Comparing '%s' (%u run%s) with '%s' (%u run%s): Welch's t-test, p adjusted "
	       "(Holm) at alpha %g, "
	       "threshold %g%%\n\n",
	       old, d->runs[0], d->runs[0] == 1 ? "" : "s", new, d->runs[1],
	       d->runs[1] == 1 ? "" : "s", alpha, threshold);
	printf(" %16s %16s %-5s %9s %9s  %-7s  %s\n", "old mean", "new mean", "unit", "change",
	       "p (Holm)", "verdict", "what");
	int section = -1;
	size_t worse = 0, better = 0, tested = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_item *it = &d->item[i];
		if ((isnan(it->mean[0]) || it->mean[0] == 0) &&
		    (isnan(it->mean[1]) || it->mean[1] == 0))
			continue;
		int sec = it->kind == DIFF_SPAN;
		if (sec != section) {
			if (sec)
				printf("\n spans (PATH: FIELD)\n");
			section = sec;
		}
		char a[32], b[32], ch[32], p[32];
		diff_num(a, sizeof a, it->mean[0]);
		diff_num(b, sizeof b, it->mean[1]);
		if (isnan(it->change_pct))
			snprintf(ch, sizeof ch, "new");
		else
			snprintf(ch, sizeof ch, "%+.2f%%", it->change_pct);
		if (isnan(it->holm_p))
			snprintf(p, sizeof p, "-");
		else
			snprintf(p, sizeof p, "%.3g", it->holm_p);
		printf(" %16s %16s %-5s %9s %9s  %-7s  %s%s%s\n", a, b, it->unit, ch, p,
		       verdict_text[it->verdict], it->name, *it->field ? ": " : "", it->field);
		worse += it->verdict == DIFF_WORSE;
		better += it->verdict == DIFF_BETTER;
		tested += it->verdict != DIFF_NO_TEST;
	}
	if (!tested)
		printf("\n No test was possible: each side needs 2 or more runs (spanstat -r "
		       "N).\n");
	else
		printf("\n %zu worse, %zu better, %zu tested\n", worse, better, tested);
}

static cJSON *diff_side_json(const struct diff_item *it, int s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "runs", (double)it->n[s]);
	if (isnan(it->mean[s]))
		cJSON_AddNullToObject(o, "mean");
	else
		cJSON_AddNumberToObject(o, "mean", it->mean[s]);
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

static int diff_json(FILE *fp, const struct diff *d, const char *old, const char *new, double alpha,
		     double threshold, bool regressed)
{
	static const char *const kinds[] = {"counter", "rusage", "span"};
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "old", old);
	cJSON_AddStringToObject(doc, "new", new);
	cJSON_AddNumberToObject(doc, "old_runs", d->runs[0]);
	cJSON_AddNumberToObject(doc, "new_runs", d->runs[1]);
	cJSON_AddNumberToObject(doc, "alpha", alpha);
	cJSON_AddNumberToObject(doc, "threshold_pct", threshold);
	cJSON_AddBoolToObject(doc, "worse", regressed);
	cJSON *items = cJSON_AddArrayToObject(doc, "items");
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_item *it = &d->item[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(items, o);
		cJSON_AddStringToObject(o, "kind", kinds[it->kind]);
		cJSON_AddStringToObject(o, "name", it->name);
		if (*it->field)
			cJSON_AddStringToObject(o, "field", it->field);
		else
			cJSON_AddNullToObject(o, "field");
		cJSON_AddStringToObject(o, "unit", it->unit);
		cJSON_AddItemToObject(o, "old", diff_side_json(it, 0));
		cJSON_AddItemToObject(o, "new", diff_side_json(it, 1));
		diff_num_or_null(o, "change_pct", it->change_pct);
		diff_num_or_null(o, "welch_p", it->welch_p);
		diff_num_or_null(o, "mann_whitney_p", it->mwu_p);
		diff_num_or_null(o, "p", it->p);
		diff_num_or_null(o, "holm_p", it->holm_p);
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
		char note[512];
		snprintf(note, sizeof note, "self wall time, ns: widths %s, colours against %s",
			 new, old);
		err = svg_flamegraph_diff(fp, &t, &names, olds, new, note);
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
		{"json", required_argument, NULL, 'j'},
		{"folded", required_argument, NULL, 'f'},
		{"flamegraph", required_argument, NULL, 'g'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	double threshold = 0, alpha = 0.05;
	const char *path[DOUT_MAX] = {NULL};
	opterr = 0;
	optind = 1;
	for (int c; (c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1;) {
		switch (c) {
		case 't':
			threshold = diff_number("--threshold", optarg, 0, 1e9,
						"a percentage, 0 or more");
			break;
		case 'a':
			alpha = diff_number("--alpha", optarg, 1e-12, 0.5,
					    "a significance level above 0 and at most 0.5");
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
	for (int a = 0; a < DOUT_MAX; a++)
		for (int b = a + 1; b < DOUT_MAX; b++)
			if (path[a] && path[b] && strcmp(path[a], path[b]) == 0)
				die("%s and %s both write '%s'", dout_opt[a], dout_opt[b], path[a]);
	struct diff d;
	if (diff_init(&d) < 0)
		die("out of memory");
	for (int s = 0; s < 2; s++) {
		char *buf, *cause = NULL;
		size_t len;
		diff_read(name[s], &buf, &len);
		if (recfile_is(buf, len))
			diff_from_record(name[s], &buf, &len);
		int r = diff_add(&d, s, buf, len, &cause);
		free(buf);
		if (r < 0)
			die("'%s': %s", name[s], cause ? cause : strerror(-r));
	}
	diff_compare(&d, alpha, threshold);
	bool regressed = false;
	for (size_t i = 0; i < d.n; i++)
		regressed |= d.item[i].verdict == DIFF_WORSE;
	/* the files first, each whole or not at all; then the table */
	struct outfile out[DOUT_MAX];
	int code = regressed ? 1 : 0;
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
	for (int k = 0; k < DOUT_MAX; k++) {
		if (!path[k])
			continue;
		int err = k == DOUT_JSON     ? diff_json(out[k].fp, &d, name[0], name[1], alpha,
							 threshold, regressed)
			  : k == DOUT_FOLDED ? diff_folded(out[k].fp, &d)
					     : diff_flamegraph(out[k].fp, &d, name[0], name[1]);
		char *cause = NULL;
		if (err) {
			outfile_abort(&out[k]);
			die_soft("cannot write %s '%s': %s", dout_opt[k], path[k], strerror(-err));
			code = EXIT_SPANSTAT;
		} else if (outfile_commit(&out[k], &cause) < 0) {
			die_soft("%s", cause ? cause : "cannot write an output");
			code = EXIT_SPANSTAT;
		}
		free(cause);
	}
	bool json_stdout = path[DOUT_JSON] && strcmp(path[DOUT_JSON], "-") == 0;
	if (!json_stdout)
		diff_table(&d, name[0], name[1], alpha, threshold);
	diff_release(&d);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		errline("cannot write the comparison to standard output");
		return EXIT_SPANSTAT;
	}
	return code;
}
