/* csv.c: -x SEP output (csv_writer_ops), in perf stat's column order:
 *   value,unit,event,counter-runtime,pcnt-running,metric-value,metric-unit
 * with a cgroup column after the event when any event has one (-G),
 * with -r a variance column ("x.xx%") after the event, and with -I a leading
 * timestamp column.  No header line, as perf, so scripts written for perf
 * read it unchanged.  Numbers are C-locale and ungrouped; text fields that
 * contain the separator, a quote or a newline are quoted (RFC 4180). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "fmt.h"
#include "metrics.h"
#include "writer.h"

static const char *csv_sep(const struct writer *w)
{
	return w->opts.csv_sep ? w->opts.csv_sep : ",";
}

static void csv_text(FILE *fp, const char *sep, const char *s)
{
	if (!(*sep && strstr(s, sep)) && !strpbrk(s, "\"\n\r")) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

/* A unit's columns, as perf's -x: its name, and the number of CPUs it
 * adds up for cores, dies, sockets, nodes and caches. */
static void csv_unit(FILE *fp, const char *sep, const struct aggr *ag, size_t u)
{
	const struct aggr_unit *x = &ag->unit[u];
	csv_text(fp, sep, x->id);
	fputs(sep, fp);
	if (ag->mode != AGGR_NONE && ag->mode != AGGR_THREAD)
		fprintf(fp, "%u%s", x->ncpus, sep);
}

/* One event's row; prefix is the interval timestamp or NULL; with ag,
 * unit u's columns after it. */
static void csv_row(FILE *fp, const char *sep, const char *prefix, const struct aggr *ag, size_t u,
		    const struct event *ev, const struct count *c, const struct metric *m,
		    const double *rel, bool cg)
{
	char val[96], small[512], buf[64];
	size_t nsize = strlen(ev->name) + 3; /* and ":u"; name= makes it anything */
	char *name = nsize > sizeof(small) ? malloc(nsize) : NULL;

	if (!name) {
		name = small;
		nsize = sizeof(small);
	}
	if (prefix)
		fprintf(fp, "%s%s", prefix, sep);
	if (ag)
		csv_unit(fp, sep, ag, u);
	fmt_count_value(val, sizeof(val), ev, c, 0);
	fmt_event_name(name, nsize, ev, c);
	fprintf(fp, "%s%s", val, sep);
	csv_text(fp, sep, ev->unit ? ev->unit : "");
	fputs(sep, fp);
	csv_text(fp, sep, name);
	if (cg) { /* perf's cgroup column, empty for an event counted everywhere */
		fputs(sep, fp);
		csv_text(fp, sep, ev->cgroup ? ev->cgroup : "");
	}
	if (rel && c->state == COUNT_UNKNOWN)
		fputs(sep, fp);
	else if (rel) {
		fmt_c(buf, sizeof(buf), "%.2f%%", c->state == COUNT_OK ? *rel : 0.0);
		fprintf(fp, "%s%s", sep, buf);
	}
	fmt_c(buf, sizeof(buf), "%.2f", fmt_running_pct(c));
	if (c->state == COUNT_UNKNOWN) /* a damaged record's: no times either */
		fprintf(fp, "%s%s%s", sep, sep, sep);
	else
		fprintf(fp, "%s%llu%s%s%s", sep, (unsigned long long)c->running, sep, buf, sep);
	if (c->state == COUNT_OK && m->valid) {
		fmt_metric_value(buf, sizeof(buf), m, 0);
		fprintf(fp, "%s%s", buf, sep);
		csv_text(fp, sep, m->unit);
	} else {
		fputs(sep, fp);
	}
	fputc('\n', fp);
	if (name != small)
		free(name);
}

/* Every unit's rows in perf's order (fmt_aggr_rows); ts: the interval's
 * time or NULL; st: the spread over runs, or NULL (no -r). */
static int csv_units(struct writer *w, const char *ts, const struct count *counts,
		     const struct stat_summary *st, unsigned nruns, double elapsed_ns)
{
	const struct evlist *evl = w->head->evl;
	const struct aggr *ag = w->head->aggr;
	struct fmt_row *rows;
	struct metric *m;
	long nrows = fmt_aggr_rows(ag, evl, counts, elapsed_ns, &rows, &m);
	if (nrows < 0)
		return -ENOMEM;
	for (long k = 0; k < nrows; k++) {
		size_t at = rows[k].unit * evl->n + rows[k].event;
		double rel = st && nruns > 1 ? st[at].rel : 0;
		csv_row(w->fp, csv_sep(w), ts, ag, rows[k].unit, &evl->ev[rows[k].event],
			&counts[at], &m[at], st ? &rel : NULL, cgroup_any(evl));
	}
	free(rows);
	free(m);
	return ferror(w->fp) ? -EIO : 0;
}

static int csv_interval(struct writer *w, const struct interval_sample *s)
{
	const struct evlist *evl = w->head->evl;
	struct metric *m = calloc(evl->n ? evl->n : 1, sizeof(*m));
	char ts[48];

	if (!m)
		return -ENOMEM;
	metrics_compute(evl, s->counts, (double)s->length_ns, m);
	fmt_interval_time(ts, sizeof(ts), s->t_ns);
	if (run_head_aggregated(w->head) && s->units) {
		free(m);
		return csv_units(w, ts, s->units, NULL, 1, (double)s->length_ns);
	}
	for (size_t i = 0; i < evl->n; i++)
		csv_row(w->fp, csv_sep(w), ts, NULL, 0, &evl->ev[i], &s->counts[i], &m[i], NULL,
			cgroup_any(evl));
	free(m);
	return ferror(w->fp) ? -EIO : 0;
}

static int csv_finish(struct writer *w, const struct report *r)
{
	const struct evlist *evl = r->head->evl;
	bool runs = r->head->runs > 1;
	struct metric *m;

	/* -I: the intervals were the output, as perf's -x -I */
	if (r->head->interval_ms || !r->count || evl->n == 0)
		return ferror(w->fp) ? -EIO : 0;
	if (run_head_aggregated(r->head) && r->unit_count)
		return csv_units(w, NULL, r->unit_count, runs ? r->unit_stat : NULL, r->nruns,
				 (double)r->ru.elapsed_ns);
	m = calloc(evl->n, sizeof(*m));
	if (!m)
		return -ENOMEM;
	metrics_compute(evl, r->count, (double)r->ru.elapsed_ns, m);
	for (size_t i = 0; i < evl->n; i++) {
		double rel = r->stat && r->nruns > 1 ? r->stat[i].rel : 0;
		csv_row(w->fp, csv_sep(w), NULL, NULL, 0, &evl->ev[i], &r->count[i], &m[i],
			runs ? &rel : NULL, cgroup_any(evl));
	}
	free(m);
	return ferror(w->fp) ? -EIO : 0;
}

const struct writer_ops csv_writer_ops = {
	.name = "csv",
	.interval = csv_interval,
	.finish = csv_finish,
};
