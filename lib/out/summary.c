/* summary.c: the human output (summary_writer_ops): perf stat's layout --
 * one line per event with its derived metric, spread over runs and running
 * percentage, then elapsed, user and sys seconds, plus rusage perf does not
 * show (max RSS, faults, context switches); -I interval lines; and with
 * --spans the span table by stack path and by name (function names as the
 * name view shows them, with --spans=location a file:line column).  Writes
 * only w->fp. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "fmt.h"
#include "recfile.h"
#include "rankstat.h"
#include "stats.h"
#include "metrics.h"
#include "spantree.h"
#include "strtab.h"
#include "spannames.h"
#include "writer.h"

#define SUMMARY_NAME_WIDTH 32	/* event name column, as perf */
#define SUMMARY_METRIC_WIDTH 34 /* "# " + value + ' ' + unit column */
#define SUMMARY_HEADER_EVERY 25 /* interval lines between headers, as perf */
#define SUMMARY_SPAN_ROWS 40	/* rows per span table; the rest is counted */
#define SUMMARY_WHERE_WIDTH 28	/* the location column, file:line */

struct summary_state {
	unsigned intervals;
};

static int summary_error(FILE *fp)
{
	return ferror(fp) ? -EIO : 0;
}

static int summary_unit_width(const struct evlist *evl)
{
	int w = 4;

	for (size_t i = 0; i < evl->n; i++) {
		int l = evl->ev[i].unit ? (int)strlen(evl->ev[i].unit) : 0;
		if (l > w)
			w = l;
	}
	return w;
}

/* Appends to line[*pos], never past size. */
__attribute__((format(printf, 4, 5))) static void summary_cat(char *line, size_t size, size_t *pos,
							      const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || *pos >= size - 1)
		return;
	snprintf(line + *pos, size - *pos, "%s", buf);
	*pos += strlen(line + *pos);
}

/* One event's line: [prefix] value unit name [cgroup] [# metric] [( +- rel% )]
 * [(run%)]; cg: the cgroup column is there (any event has one), as perf's.
 * The name is printed whole, however long (name= makes it anything). */
static void summary_event_line(FILE *fp, const char *prefix, int unit_width, const struct event *ev,
			       const struct count *c, const struct metric *m, double rel, bool cg)
{
	char head[1024], tail[1024], val[96], small[512], mval[64];
	size_t hpos = 0, tpos = 0;
	bool ok = c->state == COUNT_OK;
	bool running = c->state != COUNT_NOT_SUPPORTED && c->enabled > 0 && c->running < c->enabled;
	bool noise = ok && rel != 0;
	size_t nsize = strlen(ev->name) + 3; /* and ":u" */
	char *name = nsize > sizeof(small) ? malloc(nsize) : NULL;

	if (!name) {
		name = small;
		nsize = sizeof(small);
	}
	head[0] = tail[0] = 0;
	fmt_count_value(val, sizeof(val), ev, c, 1);
	fmt_event_name(name, nsize, ev, c);
	if (prefix)
		summary_cat(head, sizeof(head), &hpos, "%s ", prefix);
	summary_cat(head, sizeof(head), &hpos, "%18s %-*s ", val, unit_width,
		    ev->unit ? ev->unit : "");
	if (cg)
		summary_cat(tail, sizeof(tail), &tpos, "%s ", ev->cgroup ? ev->cgroup : "");
	if (ok && m->valid) {
		fmt_metric_value(mval, sizeof(mval), m, 1);
		summary_cat(tail, sizeof(tail), &tpos, "# %s %-*s", mval,
			    SUMMARY_METRIC_WIDTH - 3 - (int)strlen(mval), m->unit);
	} else if (noise || running) {
		summary_cat(tail, sizeof(tail), &tpos, "%*s", SUMMARY_METRIC_WIDTH, "");
	}
	if (noise) {
		char pct[32];
		fmt_c(pct, sizeof(pct), "%6.2f", rel);
		summary_cat(tail, sizeof(tail), &tpos, "  ( +-%s%% )", pct);
	}
	if (running) {
		char pct[32];
		fmt_c(pct, sizeof(pct), "%.2f", fmt_running_pct(c));
		summary_cat(tail, sizeof(tail), &tpos, "  (%s%%)", pct);
	}
	while (tpos > 0 && tail[tpos - 1] == ' ')
		tail[--tpos] = 0;
	if (*tail)
		fprintf(fp, "%s%-*s %s\n", head, SUMMARY_NAME_WIDTH, name, tail);
	else
		fprintf(fp, "%s%s\n", head, name);
	if (name != small)
		free(name);
}

static int summary_start(struct writer *w, const struct run_head *h)
{
	(void)h;
	if (!w->priv) {
		w->priv = calloc(1, sizeof(struct summary_state));
		if (!w->priv)
			return -ENOMEM;
	}
	return 0;
}

/* A unit's columns before the value, as perf stat prints them (its
 * stat-display.c's widths; newer perf's for --per-cache). */
static void summary_unit(char *buf, size_t size, const struct aggr *ag, size_t u)
{
	const struct aggr_unit *x = &ag->unit[u];
	switch (ag->mode) {
	case AGGR_NONE:
		snprintf(buf, size, "CPU%-7d", x->cpu);
		break;
	case AGGR_CORE:
		snprintf(buf, size, "S%d-D%d-C%-8d %4u", x->socket, x->die, x->core, x->ncpus);
		break;
	case AGGR_DIE:
		snprintf(buf, size, "S%d-D%-8d %4u", x->socket, x->die, x->ncpus);
		break;
	case AGGR_SOCKET:
		snprintf(buf, size, "S%-5d %4u", x->socket, x->ncpus);
		break;
	case AGGR_NODE:
		snprintf(buf, size, "N%-5d %4u", x->node, x->ncpus);
		break;
	case AGGR_CACHE:
		snprintf(buf, size, "%-22s %4u", x->id, x->ncpus);
		break;
	case AGGR_THREAD:
		snprintf(buf, size, "%16s-%-8d", x->comm, x->tid);
		break;
	case AGGR_GLOBAL:
		buf[0] = 0;
		break;
	}
}

/* -I's header line, with the unit's columns of the mode. */
static void summary_interval_header(FILE *fp, const struct aggr *ag, int uw)
{
	const char *cols = "             counts";
	switch (ag ? ag->mode : AGGR_GLOBAL) {
	case AGGR_NONE:
		cols = " CPU                    counts";
		break;
	case AGGR_CORE:
		cols = " core            cpus             counts";
		break;
	case AGGR_DIE:
		cols = " die          cpus             counts";
		break;
	case AGGR_SOCKET:
		cols = " socket cpus             counts";
		break;
	case AGGR_NODE:
		cols = " node   cpus             counts";
		break;
	case AGGR_CACHE:
		cols = " cache                  cpus             counts";
		break;
	case AGGR_THREAD:
		cols = "             comm-pid                  counts";
		break;
	case AGGR_GLOBAL:
		break;
	}
	fprintf(fp, "#           time%s %-*s events\n", cols, uw, "unit");
}

/* The rows of every unit (aggr.h) in perf's order: counts (ag->n rows of
 * evl->n), their spread over runs (NULL: none), each row after lead (the
 * interval's time, or NULL). */
static int summary_units(FILE *fp, const struct run_head *h, const char *lead,
			 const struct count *counts, const struct stat_summary *st, unsigned nruns,
			 double elapsed_ns)
{
	const struct evlist *evl = h->evl;
	const struct aggr *ag = h->aggr;
	int uw = summary_unit_width(evl);
	struct fmt_row *rows;
	struct metric *m;
	long nrows = fmt_aggr_rows(ag, evl, counts, elapsed_ns, &rows, &m);
	if (nrows < 0)
		return -ENOMEM;
	for (long k = 0; k < nrows; k++) {
		char unit[96], prefix[160];
		size_t at = rows[k].unit * evl->n + rows[k].event;
		summary_unit(unit, sizeof unit, ag, rows[k].unit);
		snprintf(prefix, sizeof prefix, "%s%s%s", lead ? lead : "", lead ? " " : "", unit);
		summary_event_line(fp, prefix, uw, &evl->ev[rows[k].event], &counts[at], &m[at],
				   nruns > 1 && st ? st[at].rel : 0, cgroup_any(evl));
	}
	free(rows);
	free(m);
	return 0;
}

static int summary_interval(struct writer *w, const struct interval_sample *s)
{
	const struct evlist *evl = w->head->evl;
	struct summary_state *st;
	struct metric *m;
	char ts[48];
	int uw = summary_unit_width(evl);

	if (summary_start(w, w->head) < 0)
		return -ENOMEM;
	st = w->priv;
	m = calloc(evl->n ? evl->n : 1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	metrics_compute(evl, s->counts, (double)s->length_ns, m);
	bool units = run_head_aggregated(w->head) && s->units;
	if (st->intervals++ % SUMMARY_HEADER_EVERY == 0)
		summary_interval_header(w->fp, units ? w->head->aggr : NULL, uw);
	fmt_interval_time(ts, sizeof(ts), s->t_ns);
	if (units) {
		free(m);
		if (summary_units(w->fp, w->head, ts, s->units, NULL, 1, (double)s->length_ns) < 0)
			return -ENOMEM;
		return summary_error(w->fp);
	}
	for (size_t i = 0; i < evl->n; i++)
		summary_event_line(w->fp, ts, uw, &evl->ev[i], &s->counts[i], &m[i], 0,
				   cgroup_any(evl));
	free(m);
	return summary_error(w->fp);
}

/* perf's precision for "mean +- stddev": two digits past the stddev's first. */
static int summary_precision(double sd)
{
	int p;

	if (!(sd > 0))
		return 9;
	if (sd > 1)
		return 2;
	p = (int)lround(ceil(-log10(sd))) + 2;
	return p > 9 ? 9 : p;
}

/* When the on/off-CPU split of spans is incomplete: switch records the
 * kernel lost, or threads whose spans hold more CPU time than the thread
 * ran (a switch missed). */
static void summary_offcpu_damage(FILE *fp, const struct report *r, const struct decode_stats *d)
{
	uint64_t ns = 0, threads = 0;
	for (size_t i = 0; i < r->spans->nthread; i++) {
		uint64_t u = r->spans->thread[i]->dmg[SPAN_DMG_OFFCPU];
		threads += u != 0;
		ns = ns + u < ns ? UINT64_MAX : ns + u;
	}
	/* a damaged record file's lost RAW blocks held switch records too: the
	 * spans open across them lack what those told */
	bool file = d->file_records && d->file_records != DECODE_UNKNOWN && r->head &&
		    spanmetric_off_cpu(r->head->metrics) >= 0;
	if (!ns && !d->switches_lost && !file)
		return;
	char n[48];
	fputs(" on/off-CPU split incomplete:", fp);
	if (file)
		fprintf(fp,
			" the switch records of the record file's lost RAW blocks are lost with "
			"them%s",
			ns || d->switches_lost ? ";" : "");
	if (d->switches_lost) {
		fmt_grouped_u64(n, sizeof n, d->switches_lost);
		fprintf(fp,
			" %s switch %s lost (records the kernel lost or got too late, or notes of "
			"switched spans the target found no room for)%s",
			n, d->switches_lost == 1 ? "record" : "records", ns ? ";" : "");
	}
	if (ns) {
		fmt_duration(n, sizeof n, ns);
		fprintf(fp, " the spans of %" PRIu64 " %s hold %s more CPU time than %s ran",
			threads, threads == 1 ? "thread" : "threads", n,
			threads == 1 ? "it" : "they");
	}
	fputs("; cpu times may be too high and off-cpu times too low\n\n", fp);
}

/* When the target dropped span events, one line saying what that did to
 * the numbers below it: at the top of the summary, and again above the
 * rank and span tables, so that no reader of a table misses it. */
static void summary_damage(FILE *fp, const struct report *r)
{
	const struct decode_stats *d = r->dstats;
	if (!d || !r->spans)
		return;
	uint64_t dropped = d->dropped, lost = d->lost_records, gaps = d->gaps;
	const char *least = "";
	if (r->dstats_lost) {
		/* a record whose end is lost: its totals are unknown, but its
		 * threads told what they dropped on the way (SPAN_DAMAGE) */
		dropped = gaps = lost = 0;
		for (size_t k = 0; k < r->spans->nthread; k++) {
			dropped =
				stats_sat_add(dropped, r->spans->thread[k]->dmg[SPAN_DMG_DROPPED]);
			gaps = stats_sat_add(gaps, r->spans->thread[k]->dmg[SPAN_DMG_GAP]);
		}
		least = "at least ";
	} else {
		summary_offcpu_damage(fp, r, d);
	}
	if (!dropped && !lost)
		return;
	char n[48];
	fmt_grouped_u64(n, sizeof n, dropped ? dropped : lost);
	fprintf(fp, " span data damaged: %s%s %s lost by the target", least, n,
		dropped ? (dropped == 1 ? "event" : "events") : (lost == 1 ? "record" : "records"));
	if (gaps)
		fputs("; spans open across a drop are kept whole, those begun or ended "
		      "inside one are marked unfinished",
		      fp);
	else
		fputs("; spans open at a drop are closed there, marked unfinished", fp);
	fputs("; span counts and times leave out what was lost\n\n", fp);
}

/* What a damaged record file lost of the capture, apart from the target's
 * own losses: said where they are. */
static void summary_file_damage(FILE *fp, const struct report *r)
{
	const struct decode_stats *d = r->dstats;
	if (!d || !r->spans || r->dstats_lost || !d->file_records ||
	    d->file_records == DECODE_UNKNOWN)
		return;
	char n[48];
	fmt_grouped_u64(n, sizeof n, d->file_records);
	fprintf(fp,
		" span data damaged: %s %s lost from the record %s (damaged or missing RAW "
		"blocks), not by the target; span counts and times leave out what was lost\n\n",
		n, d->file_records == 1 ? "record" : "records",
		r->ranks && r->ranks->n > 1 ? "files" : "file");
}

static void summary_header(FILE *fp, const struct report *r)
{
	const struct run_head *h = r->head;

	if (h->target) { /* as perf stat: process id '1234', 'system wide' */
		fprintf(fp, "\n Performance counter stats for %s", h->target);
	} else {
		fputs("\n Performance counter stats for '", fp);
		for (int i = 0; i < h->argc; i++)
			fprintf(fp, "%s%s", i ? " " : "", h->argv[i]);
		fputc('\'', fp);
	}
	if (r->ranks && r->nruns != r->ranks->n)
		fprintf(fp, " (%u ranks, %u runs)", r->ranks->n, r->nruns);
	else if (r->ranks)
		fprintf(fp, " (%u ranks)", r->ranks->n);
	else if (r->nruns != h->runs) /* a damaged record's: some results are lost */
		fprintf(fp, " (%u of %u run%s)", r->nruns, h->runs, h->runs == 1 ? "" : "s");
	else if (h->runs > 1)
		fprintf(fp, " (%u runs)", h->runs);
	fputs(":\n\n", fp);
	summary_damage(fp, r);
	summary_file_damage(fp, r);
}

static int summary_counts(FILE *fp, const struct report *r)
{
	const struct evlist *evl = r->head->evl;
	int uw = summary_unit_width(evl);
	struct metric *m;

	if (!r->count || evl->n == 0)
		return 0;
	if (run_head_aggregated(r->head) && r->unit_count) {
		if (summary_units(fp, r->head, NULL, r->unit_count, r->unit_stat, r->nruns,
				  (double)r->ru.elapsed_ns) < 0)
			return -ENOMEM;
		fputc('\n', fp);
		return 0;
	}
	m = calloc(evl->n, sizeof(*m));
	if (!m)
		return -ENOMEM;
	metrics_compute(evl, r->count, (double)r->ru.elapsed_ns, m);
	for (size_t i = 0; i < evl->n; i++)
		summary_event_line(fp, NULL, uw, &evl->ev[i], &r->count[i], &m[i],
				   r->nruns > 1 && r->stat ? r->stat[i].rel : 0, cgroup_any(evl));
	free(m);
	fputc('\n', fp);
	return 0;
}

/* The times and rusage of a report whose runs' results are all lost. */
static void summary_times_unknown(FILE *fp, const struct report *r)
{
	fprintf(fp, " %17s seconds time elapsed\n\n", "-");
	if (r->head->rusage_unknown)
		return;
	fprintf(fp, " %17s seconds user\n", "-");
	fprintf(fp, " %17s seconds sys\n", "-");
	fprintf(fp, " %17s KiB max RSS\n", "-");
	fprintf(fp, " %17s / - page faults (minor / major)\n", "-");
	fprintf(fp, " %17s / - context switches (voluntary / involuntary)\n\n", "-");
}

static void summary_times(FILE *fp, const struct report *r)
{
	const struct rusage_info *ru = &r->ru;
	char a[64], b[64];

	if (!r->nruns) {
		summary_times_unknown(fp, r);
		return;
	}
	if (r->nruns > 1) {
		double sd = r->elapsed.stddev / sqrt((double)r->nruns);
		int p = summary_precision(sd);

		fmt_fprintf_c(fp, " %17.*f +- %.*f seconds time elapsed", p, r->elapsed.mean, p,
			      sd);
		if (r->elapsed.rel != 0)
			fmt_fprintf_c(fp, "  ( +-%6.2f%% )", r->elapsed.rel);
		fputc('\n', fp);
	} else {
		fmt_fprintf_c(fp, " %17.9f seconds time elapsed\n", (double)ru->elapsed_ns / 1e9);
	}
	fputc('\n', fp);
	if (r->head->rusage_unknown) { /* not our child: its rusage is not ours */
		fputs(" (user and sys time and the rest of rusage are not known for tasks spanstat "
		      "did not start)\n\n",
		      fp);
		return;
	}
	fmt_fprintf_c(fp, " %17.9f seconds user\n", (double)ru->utime_ns / 1e9);
	fmt_fprintf_c(fp, " %17.9f seconds sys\n", (double)ru->stime_ns / 1e9);
	fmt_grouped(a, sizeof(a), (double)ru->maxrss_kb, 0);
	fprintf(fp, " %17s KiB max RSS\n", a);
	fmt_grouped(a, sizeof(a), (double)ru->minflt, 0);
	fmt_grouped(b, sizeof(b), (double)ru->majflt, 0);
	fprintf(fp, " %17s / %s page faults (minor / major)\n", a, b);
	fmt_grouped(a, sizeof(a), (double)ru->nvcsw, 0);
	fmt_grouped(b, sizeof(b), (double)ru->nivcsw, 0);
	fprintf(fp, " %17s / %s context switches (voluntary / involuntary)\n", a, b);
	fputc('\n', fp);
}

/* --- the span table ---------------------------------------------------- */

struct summary_row {
	uint32_t key; /* node index or name id */
	uint64_t count, total, self;
	const uint64_t *v;   /* the span values' totals (spanmetric.h), or NULL */
	uint64_t unfinished; /* of count, closed by spanstat */
};

static int summary_row_cmp(const void *pa, const void *pb)
{
	const struct summary_row *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total < b->total ? 1 : -1;
	return a->key < b->key ? -1 : a->key > b->key;
}

/* A span name as a table shows it: control characters as \xNN, so one
 * span stays one row whatever bytes the target sent. */
static void summary_name(FILE *fp, const struct run_head *h, uint32_t id)
{
	const unsigned char *s = (const unsigned char *)spannames_text(h->names, h->strings, id);

	if (!*s)
		fputs("\"\"", fp);
	for (; *s; s++) {
		if (*s < 0x20 || *s == 0x7f)
			fprintf(fp, "\\x%02x", *s);
		else
			fputc(*s, fp);
	}
}

/* The stack path of node i as "a;b;c". */
static void summary_path(FILE *fp, const struct span_tree *t, const struct run_head *h, uint32_t i)
{
	uint32_t depth = 0, chain_small[64], *chain = chain_small;

	for (uint32_t k = i; k != 0 && depth < t->n; k = t->node[k].parent)
		depth++;
	if (depth > 64) {
		chain = malloc(depth * sizeof(*chain));
		if (!chain) {
			summary_name(fp, h, t->node[i].name);
			return;
		}
	}
	depth = 0;
	for (uint32_t k = i; k != 0 && depth < t->n; k = t->node[k].parent)
		chain[depth++] = k;
	while (depth-- > 0) {
		summary_name(fp, h, t->node[chain[depth]].name);
		if (depth)
			fputc(';', fp);
	}
	if (chain != chain_small)
		free(chain);
}

/* The mark of a row whose spans spanstat closed (JSON's "unfinished",
 * Perfetto's "unfinished" argument), after its path or name. */
static void summary_unfinished(FILE *fp, const struct summary_row *row)
{
	char n[48];
	if (!row->unfinished)
		return;
	fmt_grouped_u64(n, sizeof n, row->unfinished);
	fprintf(fp, "  (%s unfinished)", n);
}

/* The location column (--spans=location): basename:line of name id's
 * definition, "-" when unknown. */
static void summary_where(FILE *fp, const struct run_head *h, uint32_t id)
{
	char buf[SUMMARY_WHERE_WIDTH + 1];
	uint32_t line;
	const char *file = spannames_where(h->names, id, &line);
	if (file) {
		const char *slash = strrchr(file, '/');
		snprintf(buf, sizeof buf, "%s:%" PRIu32, slash ? slash + 1 : file, line);
	} else {
		snprintf(buf, sizeof buf, "-");
	}
	fprintf(fp, "%-*s  ", SUMMARY_WHERE_WIDTH, buf);
}

/* The category column's width: 0 (no column) when no name has a category
 * (spanstat_category), else the widest category shown, at least the head's
 * and at most SUMMARY_CAT_WIDTH (longer ones overflow it). */
#define SUMMARY_CAT_WIDTH 24
static int summary_cat_width(const struct strtab *names)
{
	int w = 0;
	for (uint32_t i = 0; names && i < names->ncatlog; i++) {
		size_t n = 0;
		for (const unsigned char *c = (const unsigned char *)strtab_get(
			     names, strtab_cat(names, names->catlog[i]));
		     *c; c++)
			n += *c < 0x20 || *c == 0x7f ? 4 : 1;
		if (n > (size_t)w)
			w = n > SUMMARY_CAT_WIDTH ? SUMMARY_CAT_WIDTH : (int)n;
	}
	return w ? (w < 8 ? 8 : w) : 0;
}

/* The category column: name id's category, control characters as \xNN,
 * "-" for none. */
static void summary_category(FILE *fp, const struct run_head *h, uint32_t id, int width)
{
	const unsigned char *c = (const unsigned char *)spannames_cat(h->names, h->strings, id);
	int n = 0;
	if (!c)
		n = fprintf(fp, "-");
	for (; c && *c; c++)
		n += *c < 0x20 || *c == 0x7f ? fprintf(fp, "\\x%02x", *c) : (fputc(*c, fp), 1);
	fprintf(fp, "%*s  ", n < width ? width - n : 0, "");
}

static void summary_row_cells(FILE *fp, const struct summary_row *row, uint64_t wall_ns)
{
	char count[48], total[32], self[32], mean[32], pct[32];

	fmt_grouped_u64(count, sizeof(count), row->count);
	fmt_duration(total, sizeof(total), row->total);
	fmt_duration(self, sizeof(self), row->self);
	fmt_duration(mean, sizeof(mean), row->count ? row->total / row->count : 0);
	if (wall_ns)
		fmt_c(pct, sizeof(pct), "%.1f%%", 100.0 * (double)row->total / (double)wall_ns);
	else
		snprintf(pct, sizeof(pct), "-");
	fprintf(fp, " %11s %12s %12s %12s %7s  ", count, total, self, mean, pct);
}

/* ---- span values: a column per metric, per call, and derived ones ---- */

#define SUMMARY_VAL_WIDTH 15 /* fits "<not supported>" */

/* The index of the metric named `name` (an event's), or -1. */
static int summary_event(const struct spanmetrics *ms, const char *name)
{
	for (unsigned i = 0; ms && i < ms->n; i++)
		if (strcmp(ms->m[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int summary_val_width(const char *head)
{
	int n = (int)strlen(head);
	return n > SUMMARY_VAL_WIDTH ? n : SUMMARY_VAL_WIDTH;
}

/* The column head of a value (not the on/off-CPU split: three columns). */
static const char *summary_val_head(const struct spanmetric *m, char *h, size_t size)
{
	const char *c = spanmetric_info(m)->column;
	snprintf(h, size, "%s/call", c ? c : m->name);
	return h;
}

static void summary_val_headers(FILE *fp, const struct spanmetrics *ms)
{
	char h[96];
	for (unsigned i = 0; ms && i < ms->n; i++) {
		const struct spanmetric *m = &ms->m[i];
		if (spanmetric_info(m)->split) {
			fprintf(fp, "%12s %12s %6s ", "cpu/call", "off-cpu/call", "off%");
			continue;
		}
		const char *head = summary_val_head(m, h, sizeof h);
		fprintf(fp, "%*s ", summary_val_width(head), head);
	}
	if (summary_event(ms, "instructions") >= 0 && summary_event(ms, "cycles") >= 0)
		fprintf(fp, "%6s ", "IPC");
	if (ms && ms->n)
		fputs(" ", fp);
}

static void summary_val_cells(FILE *fp, const struct spanmetrics *ms, const struct summary_row *row)
{
	char c[64], d[64];
	double per = row->count ? (double)row->count : 1.0;
	for (unsigned i = 0; ms && i < ms->n; i++) {
		const struct spanmetric *m = &ms->m[i];
		uint64_t v = row->v ? row->v[i] : 0;
		char h[96];
		const struct spanmetric_info *info = spanmetric_info(m);
		int w = info->split ? 0 : summary_val_width(summary_val_head(m, h, sizeof h));
		if (info->split) {
			if (!m->supported) {
				fprintf(fp, "%12s %12s %6s ", "-", "-", "-");
				continue;
			}
			uint64_t off = v < row->total ? v : row->total;
			fmt_duration(c, sizeof c,
				     (row->total - off) / (row->count ? row->count : 1));
			fmt_duration(d, sizeof d, off / (row->count ? row->count : 1));
			char pct[16];
			if (row->total)
				fmt_c(pct, sizeof pct, "%.1f%%",
				      100.0 * (double)off / (double)row->total);
			else
				snprintf(pct, sizeof pct, "-");
			fprintf(fp, "%12s %12s %6s ", c, d, pct);
			continue;
		}
		if (!m->supported) {
			snprintf(c, sizeof c, "<not supported>");
		} else if (info->net_of >= 0) { /* e.g. the change in bytes in use */
			int of = spanmetric_find(ms, (enum spanmetric_kind)info->net_of);
			double net =
				((of >= 0 && row->v ? (double)row->v[of] : 0) - (double)v) / per;
			fmt_grouped(c, sizeof c, net, 1);
		} else if (spanmetric_unit(m) == SPANMETRIC_NS) {
			fmt_duration(c, sizeof c, (uint64_t)((double)v / per));
		} else {
			fmt_grouped(c, sizeof c, (double)v / per, 1);
		}
		fprintf(fp, "%*s ", w, c);
	}
	int in = summary_event(ms, "instructions"), cy = summary_event(ms, "cycles");
	if (in >= 0 && cy >= 0) {
		if (row->v && row->v[cy] && ms->m[in].supported && ms->m[cy].supported)
			fmt_c(c, sizeof c, "%.2f", (double)row->v[in] / (double)row->v[cy]);
		else
			snprintf(c, sizeof c, "-");
		fprintf(fp, "%6s ", c);
	}
	if (ms && ms->n)
		fputs(" ", fp);
}

static void summary_more(FILE *fp, size_t n, const char *what)
{
	if (n > SUMMARY_SPAN_ROWS)
		fprintf(fp, " %11s ... %zu more %s (--folded has them all)\n", "",
			n - SUMMARY_SPAN_ROWS, what);
}

/* Whether an ancestor of node i has the same name (recursion). */
static bool summary_nested_in_self(const struct span_tree *t, uint32_t i)
{
	uint32_t steps = 0;

	for (uint32_t k = t->node[i].parent; k != 0 && steps < t->n; k = t->node[k].parent, steps++)
		if (t->node[k].name == t->node[i].name)
			return true;
	return false;
}

static int summary_span_tables(FILE *fp, const struct report *r, const struct span_tree *t,
			       bool where)
{
	const struct strtab *names = r->head->strings;
	const struct spanmetrics *ms = r->head->metrics && t->nval ? r->head->metrics : NULL;
	unsigned nv = ms ? t->nval : 0;
	uint32_t nnames = names ? names->n : 0;
	struct summary_row *rows = calloc(t->n, sizeof(*rows));
	struct summary_row *byname = calloc(nnames + 1, sizeof(*byname));
	uint64_t *byv = nv ? calloc((size_t)(nnames + 1) * nv, sizeof(*byv)) : NULL;
	size_t nrows = 0, nby = 0;
	int catw = summary_cat_width(names);

	if (!rows || !byname || (nv && !byv)) {
		free(rows);
		free(byname);
		free(byv);
		return -ENOMEM;
	}
	for (uint32_t i = 1; i < t->n; i++) {
		const struct span_node *nd = &t->node[i];
		uint32_t name = nd->name < nnames ? nd->name : 0;

		if (nd->count == 0)
			continue;
		rows[nrows++] = (struct summary_row){i,
						     nd->count,
						     nd->total_ns,
						     span_node_self(nd),
						     nv ? span_node_vals(t, i) : NULL,
						     nd->unfinished};
		byname[name].key = name;
		byname[name].count += nd->count;
		byname[name].unfinished += nd->unfinished;
		byname[name].self += span_node_self(nd);
		byname[name].v = nv ? byv + (size_t)name * nv : NULL;
		/* inclusive time and values count the outermost of a recursion only */
		if (!summary_nested_in_self(t, i)) {
			byname[name].total += nd->total_ns;
			for (unsigned k = 0; k < nv; k++)
				byv[(size_t)name * nv + k] += span_node_vals(t, i)[k];
		}
	}
	for (uint32_t k = 0; k <= nnames; k++)
		if (byname[k].count)
			byname[nby++] = byname[k];
	qsort(rows, nrows, sizeof(*rows), summary_row_cmp);
	qsort(byname, nby, sizeof(*byname), summary_row_cmp);

	fprintf(fp, " Spans by stack path:\n\n %11s %12s %12s %12s %7s  ", "count", "total", "self",
		"mean", "wall");
	summary_val_headers(fp, ms);
	if (where)
		fprintf(fp, "%-*s  ", SUMMARY_WHERE_WIDTH, "location");
	if (catw)
		fprintf(fp, "%-*s  ", catw, "category");
	fputs("path\n", fp);
	for (size_t i = 0; i < nrows && i < SUMMARY_SPAN_ROWS; i++) {
		summary_row_cells(fp, &rows[i], r->span_wall_ns);
		summary_val_cells(fp, ms, &rows[i]);
		if (where)
			summary_where(fp, r->head, t->node[rows[i].key].name);
		if (catw)
			summary_category(fp, r->head, t->node[rows[i].key].name, catw);
		summary_path(fp, t, r->head, rows[i].key);
		summary_unfinished(fp, &rows[i]);
		fputc('\n', fp);
	}
	summary_more(fp, nrows, "paths");
	fprintf(fp, "\n Spans by name:\n\n %11s %12s %12s %12s %7s  ", "count", "total", "self",
		"mean", "wall");
	summary_val_headers(fp, ms);
	if (where)
		fprintf(fp, "%-*s  ", SUMMARY_WHERE_WIDTH, "location");
	if (catw)
		fprintf(fp, "%-*s  ", catw, "category");
	fputs("name\n", fp);
	for (size_t i = 0; i < nby && i < SUMMARY_SPAN_ROWS; i++) {
		summary_row_cells(fp, &byname[i], r->span_wall_ns);
		summary_val_cells(fp, ms, &byname[i]);
		if (where)
			summary_where(fp, r->head, byname[i].key);
		if (catw)
			summary_category(fp, r->head, byname[i].key, catw);
		summary_name(fp, r->head, byname[i].key);
		summary_unfinished(fp, &byname[i]);
		fputc('\n', fp);
	}
	summary_more(fp, nby, "names");
	fputc('\n', fp);
	free(rows);
	free(byname);
	free(byv);
	return 0;
}

/* One line naming what the decoder had to reject, when it rejected anything
 * (files: the sum of several record files'). */
static void summary_span_problems(FILE *fp, const struct decode_stats *d, uint64_t untracked,
				  bool files)
{
	/* one and many; with drops (gaps); with processes running at the end */
	static const char *const unfinished[] = {
		"unfinished span closed at exit",
		"unfinished span closed at exit or at the run's end",
		"unfinished span (closed at exit, or begun or ended in a drop)",
		"unfinished span (closed at exit or at the run's end, or begun or ended in a drop)",
		"unfinished spans closed at exit",
		"unfinished spans closed at exit or at the run's end",
		"unfinished spans (closed at exit, or begun or ended in a drop)",
		"unfinished spans (closed at exit or at the run's end, or begun or ended in a "
		"drop)"};
	int running = d->running && d->running != DECODE_UNKNOWN;
	const struct {
		uint64_t n;
		const char *one, *many;
	} item[] = {
		{d->dropped, "event dropped by the target", "events dropped by the target"},
		{d->lost_records, "record lost by the target", "records lost by the target"},
		{d->file_records == DECODE_UNKNOWN ? 0 : d->file_records,
		 files ? "record lost from the record files (a damaged or missing RAW block)"
		       : "record lost from the record file (a damaged or missing RAW block)",
		 files ? "records lost from the record files (damaged or missing RAW blocks)"
		       : "records lost from the record file (damaged or missing RAW blocks)"},
		{d->file_procs == DECODE_UNKNOWN ? 0 : d->file_procs,
		 files ? "process lost from the record files (its every record was in lost RAW "
			 "blocks)"
		       : "process lost from the record file (its every record was in lost RAW "
			 "blocks)",
		 files ? "processes lost from the record files (their every record was in lost "
			 "RAW blocks)"
		       : "processes lost from the record file (their every record was in lost "
			 "RAW blocks)"},
		{d->file_answers == DECODE_UNKNOWN ? 0 : d->file_answers,
		 files ? "answer to the decoder missing from the record files (taken as unknown)"
		       : "answer to the decoder missing from the record file (taken as unknown)",
		 files ? "answers to the decoder missing from the record files (taken as unknown)"
		       : "answers to the decoder missing from the record file (taken as "
			 "unknown)"},
		{d->bad_bytes, "bad byte skipped", "bad bytes skipped"},
		{d->bad_records, "bad record", "bad records"},
		{d->bad_ids, "event with an unknown name", "events with unknown names"},
		{d->unmatched, "unmatched end", "unmatched ends"},
		{d->misnested == DECODE_UNKNOWN ? 0 : d->misnested,
		 "span nested under a span that began after it (its thread's library and "
		 "line-protocol events came out of time order)",
		 "spans nested under spans that began after them (their thread's library and "
		 "line-protocol events came out of time order)"},
		{d->unnamed,
		 "span begun in a drop whose name the target could not tell (not shown)",
		 "spans begun in a drop whose names the target could not tell (not shown)"},
		{d->unfinished, unfinished[2 * !!d->gaps + running],
		 unfinished[4 + 2 * !!d->gaps + running]},
		{untracked, "span beyond the aggregation limit",
		 "spans beyond the aggregation limit"},
		{d->over_limit, "event beyond the decoder's limits",
		 "events beyond the decoder's limits"},
		{d->bad_lines, "bad line skipped", "bad lines skipped"},
		{d->clock_unknown, "process with an uncalibrated clock",
		 "processes with an uncalibrated clock"},
		{d->unvalued == DECODE_UNKNOWN ? 0 : d->unvalued,
		 "process whose spans came without the values asked for (its SPANSTAT_VALUES "
		 "gone or changed: the span events' sums are unknown)",
		 "processes whose spans came without the values asked for (their SPANSTAT_VALUES "
		 "gone or changed: the span events' sums are unknown)"},
		{d->no_exit, "process whose end was not seen (killed, _exit or records lost)",
		 "processes whose end was not seen (killed, _exit or records lost)"},
		{d->running == DECODE_UNKNOWN ? 0 : d->running,
		 "process still running when the run ended (what it records from then on is not "
		 "seen)",
		 "processes still running when the run ended (what they record from then on is not "
		 "seen)"},
		/* with a process that could not count its own: the line below */
		{d->late == DECODE_UNKNOWN || (d->late_procs && d->late_procs != DECODE_UNKNOWN)
			 ? 0
			 : d->late,
		 "event recorded after its process's exit path, not in the spans (a destructor "
		 "or exit handler that ran after the library's, or a thread still running then)",
		 "events recorded after their process's exit path, not in the spans (destructors "
		 "or exit handlers that ran after the library's, or threads still running then)"},
	};
	bool any = false;

	for (size_t i = 0; i < sizeof(item) / sizeof(item[0]); i++) {
		char n[48];

		if (!item[i].n)
			continue;
		fmt_grouped_u64(n, sizeof(n), item[i].n);
		fprintf(fp, "%s%s %s", any ? ", " : " span data: ", n,
			item[i].n == 1 ? item[i].one : item[i].many);
		any = true;
	}
	if (any)
		fputs("\n\n", fp);
	if (d->late_procs && d->late_procs != DECODE_UNKNOWN && d->late != DECODE_UNKNOWN) {
		char n[48], p[48];
		fmt_grouped_u64(n, sizeof n, d->late);
		fmt_grouped_u64(p, sizeof p, d->late_procs);
		if (d->late)
			fprintf(fp,
				" span data: events recorded after their process's exit path, not "
				"in "
				"the spans: at least %s; ",
				n);
		else
			fputs(" span data: events recorded after their process's exit path, not in "
			      "the spans: not known; ",
			      fp);
		fprintf(fp, "%s process%s without the ring file could not count %s\n\n", p,
			d->late_procs == 1 ? "" : "es", d->late_procs == 1 ? "its own" : "theirs");
	}
}

/* The loaded objects whose library calls --lib-calls could not follow (no
 * room left for their stubs, WIRE_UNFOLLOWED): none of their calls are spans. */
static void summary_unfollowed(FILE *fp, const struct decode_stats *d)
{
	if (!d->unfollowed || d->unfollowed == DECODE_UNKNOWN)
		return;
	char n[48], s[48];
	fmt_grouped_u64(n, sizeof n, d->unfollowed);
	if (d->unfol_slots == DECODE_UNKNOWN)
		snprintf(s, sizeof s, "unknown");
	else
		fmt_grouped_u64(s, sizeof s, d->unfol_slots);
	fprintf(fp,
		" lib calls: %s loaded object%s not followed, with %s PLT slot%s the glob matched "
		"(--lib-calls follows at most 16,384 objects and 262,144 slots at once): none of "
		"their calls are spans\n\n",
		n, d->unfollowed == 1 ? "" : "s", s, d->unfol_slots == 1 ? "" : "s");
}

/* The time the target's threads waited for room in spanstat's pipe or
 * rings: instrumentation too, inside the spans open meanwhile unless
 * --compensate took out what the streams placed. */
static void summary_waited(FILE *fp, const struct report *r, bool alone)
{
	uint64_t w = r->dstats ? r->dstats->waited_ns : 0;
	uint64_t placed = report_waited_placed(r);
	if (placed > w) /* a process whose total never came (killed) */
		w = placed;
	if (!w) {
		if (!alone)
			fputs("\n\n", fp);
		return;
	}
	uint64_t lost = w - placed;
	char d[48], u[48];
	fmt_duration(d, sizeof d, w);
	fmt_duration(u, sizeof u, lost);
	fprintf(fp, "%s waiting for room in spanstat's buffers: %s",
		alone ? " instrumentation:" : ";", d);
	if (!r->compensated && !lost)
		fputs(", inside the times of the spans open meanwhile (--compensate takes it out)",
		      fp);
	else if (!r->compensated && lost < w)
		fprintf(fp,
			", inside the times of the spans open meanwhile (--compensate takes it out "
			"but "
			"for %s not told in place)",
			u);
	else if (!r->compensated)
		fputs(", inside the times of the spans open meanwhile, not told in place", fp);
	else if (!lost)
		fputs(", taken out of the spans open meanwhile", fp);
	else if (lost < w)
		fprintf(fp, ", taken out of the spans open meanwhile but for %s not told in place",
			u);
	else
		fputs(", not told in place: left in the times of the spans open meanwhile", fp);
	fputs("\n\n", fp);
}

/* The instrumentation's own cost: events recorded, what each costs the
 * target as the library measured it, their share of the target's CPU time,
 * and whether --compensate took it out of the span times above. */
static void summary_overhead(FILE *fp, const struct report *r)
{
	uint64_t events = report_library_events(r);
	if (!events || r->event_cost_ns <= 0) {
		summary_waited(fp, r, true);
		return;
	}
	char n[48], total[48];
	double ns = r->event_cost_ns * (double)events;
	double cpu = (double)(r->ru.utime_ns + r->ru.stime_ns) * (r->nruns ? r->nruns : 1);
	fmt_grouped_u64(n, sizeof n, events);
	fmt_duration(total, sizeof total, stats_sat_u64(ns)); /* any size */
	fprintf(fp, " instrumentation: %s events, about %.1f ns each: %s", n, r->event_cost_ns,
		total);
	if (cpu > 0)
		fprintf(fp, ", %.0f%% of the target's CPU time", 100.0 * ns / cpu);
	if (r->compensated) {
		fmt_duration(total, sizeof total, r->removed_ns);
		fprintf(fp, "; taken out of the span times above (--compensate: %s of self time)",
			total);
	}
	summary_waited(fp, r, false);
}

/* "no spans collected", and why: whether the span library started in the
 * target at all (its records), and what would give spans. */
static void summary_why_none(FILE *fp, const struct report *r)
{
	if (r->dstats && !r->dstats_lost && r->dstats->file_records &&
	    r->dstats->file_records != DECODE_UNKNOWN)
		fputs(" no spans collected: the record file lost the raw capture's blocks that "
		      "held them (damaged or missing RAW blocks; below)\n\n",
		      fp);
	else if (r->dstats && !r->dstats_lost && r->dstats->records == 0)
		fputs(" no spans collected: the span library never started in the command (a "
		      "statically linked or set-user-ID program ignores LD_PRELOAD); link it "
		      "dynamically with -lspanstat, or write spans as lines to SPANSTAT_LINES "
		      "(spanstat-lines(5))\n\n",
		      fp);
	else if (r->dstats && !r->dstats_lost && r->dstats->late &&
		 r->dstats->late != DECODE_UNKNOWN && !r->dstats->late_procs)
		fputs(" no spans collected: the command's only span events came after its exit "
		      "path (below)\n\n",
		      fp);
	else if (r->dstats && !r->dstats_lost)
		fputs(" no spans collected: the command ran with the span library but began no "
		      "span; spans come from its API (spanstat(3)), a build with "
		      "-finstrument-functions or -pg, the line protocol (spanstat-lines(5)), and "
		      "the "
		      "Python module and bash helper; without a rebuild, --lib-calls makes its "
		      "library calls spans, and --python a Python program's function calls\n\n",
		      fp);
	else
		fputs(" no spans collected\n\n", fp);
}

/* A --keep-last window: the span tables are its spans, not the run's. */
static void summary_window(FILE *fp, const struct record_window *w)
{
	if (!w)
		return;
	char spans[64], events[64];
	fmt_grouped(spans, sizeof spans, (double)w->spans, 0);
	fmt_grouped(events, sizeof events, (double)w->events, 0);
	if (w->files > 1)
		fprintf(fp,
			" span window: %u of the %u files hold the last bytes of their events "
			"(--keep-last, %" PRIu64 " bytes in all)%s; %s spans (%s events) before "
			"them were overwritten",
			w->windows, w->files, w->size, w->snapshot ? ", snapshots among them" : "",
			spans, events);
	else
		fprintf(fp,
			" span window: the last %" PRIu64
			" bytes of events (--keep-last)%s; %s spans "
			"(%s events) before them were overwritten",
			w->size, w->snapshot ? ", a snapshot taken while the target ran" : "",
			spans, events);
	if (w->cut)
		fprintf(fp, ", %" PRIu64 " cut at the window's start left out", w->cut);
	if (w->cut_args)
		fprintf(fp, " (with %" PRIu64 " of their arguments)", w->cut_args);
	fputs("\n\n", fp);
}

/* The span table's footer for spanstat_message: how many, from how many
 * threads; nothing when there were none. */
static void summary_messages(FILE *fp, const struct span_trees *st)
{
	char n[48], k[48];
	size_t threads = 0;
	if (!st || !st->messages)
		return;
	for (size_t i = 0; i < st->nthread; i++)
		threads += st->thread[i]->messages != 0;
	fmt_grouped_u64(n, sizeof n, st->messages);
	fmt_grouped_u64(k, sizeof k, threads);
	fprintf(fp, " %s %s from %s %s (--json lists each thread's first %u, --perfetto all)\n\n",
		n, st->messages == 1 ? "message" : "messages", k,
		threads == 1 ? "thread" : "threads", SPANTREE_MESSAGES);
}

/* One async row: its counts, times and what it is (path or name). */
static void summary_async_row(FILE *fp, const struct run_head *h, const struct span_trees *st,
			      const struct span_async_path *a, bool path)
{
	char c[48], tot[32], busy[32], idle[32], en[48], mv[48];
	uint64_t b = a->busy_ns < a->total_ns ? a->busy_ns : a->total_ns;
	fmt_grouped_u64(c, sizeof c, a->count);
	fmt_duration(tot, sizeof tot, a->total_ns);
	fmt_duration(busy, sizeof busy, b);
	fmt_duration(idle, sizeof idle, a->total_ns - b);
	fmt_grouped_u64(en, sizeof en, a->enters);
	fmt_grouped_u64(mv, sizeof mv, a->moved);
	fprintf(fp, " %11s %12s %12s %12s %9s %7s  ", c, tot, busy, idle, en, mv);
	if (path) {
		uint32_t chain[64], depth = 0;
		for (uint32_t k = (uint32_t)(a - st->apath); k && depth < 64;
		     k = st->apath[k].parent)
			chain[depth++] = k;
		if (depth == 64)
			fputs("...;", fp);
		while (depth-- > 0) {
			summary_name(fp, h, st->apath[chain[depth]].name);
			if (depth)
				fputc(';', fp);
		}
	} else {
		summary_name(fp, h, a->name);
	}
	if (a->unfinished) {
		fmt_grouped_u64(c, sizeof c, a->unfinished);
		fprintf(fp, "  (%s unfinished)", c);
	}
	fputc('\n', fp);
}

/* The rows, depth first, each one's children in the order they appeared
 * (a parent's index is below its children's); -ENOMEM. */
static int summary_async_paths(FILE *fp, const struct run_head *h, const struct span_trees *st)
{
	uint32_t *first = calloc(st->napath, sizeof *first); /* 0: none */
	uint32_t *next = calloc(st->napath, sizeof *next);
	if (!first || !next) {
		free(first);
		free(next);
		return -ENOMEM;
	}
	for (size_t i = st->napath; --i > 0;) {
		uint32_t up = st->apath[i].parent;
		next[i] = first[up];
		first[up] = (uint32_t)i;
	}
	for (uint32_t at = first[0]; at;) {
		if (st->apath[at].count)
			summary_async_row(fp, h, st, &st->apath[at], true);
		if (first[at]) {
			at = first[at];
			continue;
		}
		while (at && !next[at])
			at = st->apath[at].parent;
		if (at)
			at = next[at];
	}
	free(first);
	free(next);
	return 0;
}

/* The async spans (spanstat_async_begin) by path and by name: busy is
 * when some thread had one entered, idle the rest of its begin..end;
 * nothing when there were none. */
static int summary_async(FILE *fp, const struct report *r)
{
	const struct span_trees *st = r->spans;
	struct span_async_path *names;
	size_t n;
	if (!st || st->napath < 2)
		return 0;
	if (span_trees_async_names(st, &names, &n) < 0)
		return -ENOMEM;
	static const char head[] = "       count        total         busy         idle    "
				   "enters   moved  %s\n";
	fputs(" Async spans by path (busy: entered on a thread; idle: begun, not entered; "
	      "moved: entered on more than one thread):\n\n",
	      fp);
	fprintf(fp, head, "path");
	if (summary_async_paths(fp, r->head, st) < 0) {
		free(names);
		return -ENOMEM;
	}
	fputs("\n Async spans by name:\n\n", fp);
	fprintf(fp, head, "name");
	for (size_t i = 1; i < n; i++)
		summary_async_row(fp, r->head, st, &names[i], false);
	fputc('\n', fp);
	free(names);
	return 0;
}

/* Typed arguments threads aggregating in the target could not keep: said,
 * never dropped silently; nothing when there were none. */
static void summary_args(FILE *fp, const struct span_trees *st)
{
	char n[48];
	if (!st || !st->args_unkept)
		return;
	fmt_grouped_u64(n, sizeof n, st->args_unkept);
	fprintf(fp,
		" %s span %s not kept: threads aggregated their spans in the target "
		"(--span-args keeps them)\n\n",
		n, st->args_unkept == 1 ? "argument" : "arguments");
}

/* What the span data lost or could not hold: the window of a --keep-last
 * record, the span data line, the objects --lib-calls did not follow. */
static void summary_span_losses(FILE *fp, const struct report *r)
{
	summary_window(fp, r->window);
	if (r->dstats && r->dstats_lost)
		fputs(" span data: what the target dropped or sent damaged is not known (the "
		      "recording's end is lost)\n\n",
		      fp);
	else if (r->dstats)
		summary_span_problems(fp, r->dstats, r->spans ? r->spans->untracked : 0,
				      r->ranks && r->ranks->n > 1);
	if (r->dstats && !r->dstats_lost)
		summary_unfollowed(fp, r->dstats);
}

static int summary_spans(FILE *fp, const struct report *r, bool where)
{
	struct span_tree scratch;
	int err = 0;
	bool any = false;

	const struct span_tree *merged = report_merged(r, &scratch, &err);
	if (err < 0) {
		span_tree_release(&scratch);
		return err;
	}
	for (uint32_t i = 1; merged && i < merged->n && !any; i++)
		any = merged->node[i].count > 0;
	if (any) {
		summary_damage(fp, r);
		summary_file_damage(fp, r);
		err = summary_span_tables(fp, r, merged, where);
	} else if (!r->spans || r->spans->napath < 2) { /* async spans are spans too */
		summary_why_none(fp, r);
	}
	if (err == 0)
		err = summary_async(fp, r);
	summary_messages(fp, r->spans);
	summary_args(fp, r->spans);
	span_tree_release(&scratch);
	summary_span_losses(fp, r);
	if (any && r->dstats)
		summary_overhead(fp, r);
	return err;
}

/* Without the span table (spans collected for other outputs: --folded, a
 * graph, a trace), what the spans lost is said all the same, under the
 * counters (the header said the damage): not the tables. */
static void summary_span_only_losses(FILE *fp, const struct report *r)
{
	if (r->dstats)
		summary_span_losses(fp, r);
}

/* A value of a counter across ranks, in its unit ("37.52 msec"). */
static void summary_rank_value(char *buf, size_t size, const struct event *ev, double v)
{
	int dec = fmt_count_decimals(ev);
	char num[64];
	fmt_grouped(num, sizeof num, v, dec);
	size_t pos = 0;
	buf[0] = '\0';
	summary_cat(buf, size, &pos, "%s%s%s", num, ev->unit && *ev->unit ? " " : "",
		    ev->unit ? ev->unit : "");
}

static void summary_rank_cells(FILE *fp, const char *min, const char *mean, const char *max,
			       const struct rank_stat *st)
{
	char at[48], imb[32];
	snprintf(at, sizeof at, "rank %ld", st->max_rank);
	fmt_c(imb, sizeof imb, "%.1f%%", 100.0 * st->imbalance);
	if (!st->n) /* no rank has it */
		fprintf(fp, " %16s %16s %16s  %-9s %9s  ", "-", "-", "-", "-", "-");
	else
		fprintf(fp, " %16s %16s %16s  %-9s %9s  ", min, mean, max, at, imb);
}

/* "(9 of 10 ranks)" after a row that leaves ranks out. */
static void summary_rank_over(FILE *fp, const struct rank_stat *st, unsigned nranks)
{
	if (st->n && st->n < nranks)
		fprintf(fp, " (%u of %u ranks)", st->n, nranks);
}

/* Which ranks lost span data, and how much: a rank's shorter span times
 * may be its drop's doing, not an imbalance. */
static void summary_rank_damage(FILE *fp, const struct report *r)
{
	unsigned n = 0;
	for (unsigned i = 0; i < r->ranks->n; i++) {
		const struct rank_info *ri = &r->ranks->r[i];
		if (!ri->dropped && !ri->lost_records && !ri->damage_unknown)
			continue;
		char d[48];
		fputs(n++ ? ", " : " span data lost by rank ", fp);
		if (ri->damage_unknown) {
			fprintf(fp, "%ld (not known: its record's end is lost)", ri->rank);
			continue;
		}
		fmt_grouped_u64(d, sizeof d, ri->dropped ? ri->dropped : ri->lost_records);
		fprintf(fp, "%ld (%s %s", ri->rank, d, ri->dropped ? "events" : "records");
		if (ri->gaps)
			fprintf(fp, ", %" PRIu64 " %s", ri->gaps, ri->gaps == 1 ? "gap" : "gaps");
		fputc(')', fp);
	}
	if (n)
		fprintf(fp,
			": %s span times leave out what was lost, so an imbalance may be the "
			"drop's\n\n",
			n == 1 ? "its" : "their");
}

/* The ranks of a job side by side (spanstat report over several files). */
static int summary_ranks(FILE *fp, const struct report *r)
{
	const struct evlist *evl = r->head->evl;
	struct rank_summary rs;
	int err = rankstat_build(r, &rs);
	if (err < 0)
		return err;
	summary_damage(fp, r);
	summary_file_damage(fp, r);
	fprintf(fp, " Across %u ranks (the max's rank; imbalance = (max - mean) / max):\n\n",
		rs.nranks);
	if (rs.nlost) /* what they lack is left out, not counted as 0 */
		fprintf(fp,
			" %u of %u ranks %s no results: left out of the counters and the time "
			"elapsed\n\n",
			rs.nlost, rs.nranks, rs.nlost == 1 ? "has" : "have");
	summary_rank_damage(fp, r);
	fprintf(fp, " %16s %16s %16s  %-9s %9s  %s\n", "min", "mean", "max", "max at", "imbalance",
		"");
	char a[64], b[64], c[64];
	for (size_t e = 0; e < evl->n; e++) {
		const struct event *ev = &evl->ev[e];
		const struct rank_stat *st = &rs.counter[e];
		if (!rs.counted[e]) { /* "-": no rank with results to have counted it */
			fprintf(fp, " %16s %16s %16s  %-9s %9s  %s\n", "",
				rs.nlost < rs.nranks ? "<not counted>" : "-", "", "", "", ev->name);
			continue;
		}
		summary_rank_value(a, sizeof a, ev, st->min);
		summary_rank_value(b, sizeof b, ev, st->mean);
		summary_rank_value(c, sizeof c, ev, st->max);
		summary_rank_cells(fp, a, b, c, st);
		fprintf(fp, "%s", ev->name);
		summary_rank_over(fp, st, rs.nranks);
		fputc('\n', fp);
	}
	fmt_duration(a, sizeof a, (uint64_t)rs.elapsed.min);
	fmt_duration(b, sizeof b, (uint64_t)rs.elapsed.mean);
	fmt_duration(c, sizeof c, (uint64_t)rs.elapsed.max);
	summary_rank_cells(fp, a, b, c, &rs.elapsed);
	fputs("time elapsed", fp);
	summary_rank_over(fp, &rs.elapsed, rs.nranks);
	fputs("\n\n", fp);
	if (rs.paths.n > 1) {
		fprintf(fp, " Span paths across %u ranks (total time):\n\n", rs.nranks);
		fprintf(fp, " %16s %16s %16s  %-9s %9s  %s\n", "min", "mean", "max", "max at",
			"imbalance", "path");
		for (uint32_t i = 1; i < rs.paths.n; i++) {
			const struct rank_stat *st = &rs.total[i];
			fmt_duration(a, sizeof a, (uint64_t)st->min);
			fmt_duration(b, sizeof b, (uint64_t)st->mean);
			fmt_duration(c, sizeof c, (uint64_t)st->max);
			summary_rank_cells(fp, a, b, c, st);
			summary_path(fp, &rs.paths, r->head, i);
			fputc('\n', fp);
		}
		fputc('\n', fp);
	}
	rankstat_release(&rs);
	return 0;
}

static int summary_finish(struct writer *w, const struct report *r)
{
	int err;

	summary_header(w->fp, r);
	err = summary_counts(w->fp, r);
	if (err < 0)
		return err;
	summary_times(w->fp, r);
	if (r->ranks) {
		err = summary_ranks(w->fp, r);
		if (err < 0)
			return err;
	}
	if (w->opts.spans_table && r->spans) {
		err = summary_spans(w->fp, r, w->opts.spans_location);
		if (err < 0)
			return err;
	} else {
		summary_span_only_losses(w->fp, r);
	}
	return summary_error(w->fp);
}

static void summary_release(struct writer *w)
{
	free(w->priv);
	w->priv = NULL;
}

const struct writer_ops summary_writer_ops = {
	.name = "summary",
	.start = summary_start,
	.interval = summary_interval,
	.finish = summary_finish,
	.release = summary_release,
};
