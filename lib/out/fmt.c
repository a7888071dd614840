/* fmt.c: formatting helpers shared by the writers (see fmt.h).  Every
 * floating-point conversion goes through the C locale. */
#include "config.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

/* The C locale, created once; (locale_t)0 when newlocale failed, in which
 * case the decimal point is patched by hand. */
static locale_t fmt_c_locale(void)
{
	static locale_t loc;
	static bool tried;

	if (!tried) {
		loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
		tried = true;
	}
	return loc;
}

/* Replace the current locale's decimal point by '.' (fallback only). */
static void fmt_fix_point(char *buf)
{
	const char *dp = localeconv()->decimal_point;
	size_t dl = strlen(dp);
	char *p;

	if (dl == 0 || strcmp(dp, ".") == 0)
		return;
	while ((p = strstr(buf, dp)) != NULL) {
		*p = '.';
		memmove(p + 1, p + dl, strlen(p + dl) + 1);
	}
}

static int fmt_vc(char *buf, size_t size, const char *fmt, va_list ap)
{
	locale_t c = fmt_c_locale(), old = (locale_t)0;
	int n;

	if (c)
		old = uselocale(c);
	n = vsnprintf(buf, size, fmt, ap);
	if (c)
		uselocale(old);
	else if (size)
		fmt_fix_point(buf);
	return n;
}

int fmt_c(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fmt_vc(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int fmt_fprintf_c(FILE *fp, const char *fmt, ...)
{
	char small[512], *buf = small;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fmt_vc(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return n;
	if ((size_t)n >= sizeof(small)) {
		buf = malloc((size_t)n + 1);
		if (!buf)
			return -1;
		va_start(ap, fmt);
		fmt_vc(buf, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	n = fputs(buf, fp) == EOF ? -1 : n;
	if (buf != small)
		free(buf);
	return n;
}

/* Copy digits into buf inserting ',' every three integer digits. */
static int fmt_group_digits(char *buf, size_t size, const char *plain)
{
	char out[512];
	const char *p = plain, *dot;
	size_t o = 0, ndig;

	if (*p == '-' || *p == '+')
		out[o++] = *p++;
	dot = p;
	while (*dot >= '0' && *dot <= '9')
		dot++;
	ndig = (size_t)(dot - p);
	for (size_t i = 0; i < ndig && o < sizeof(out) - 2; i++) {
		if (i > 0 && (ndig - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = p[i];
	}
	for (const char *q = dot; *q && o < sizeof(out) - 1; q++)
		out[o++] = *q;
	out[o] = 0;
	return snprintf(buf, size, "%s", out);
}

int fmt_grouped(char *buf, size_t size, double v, int decimals)
{
	char plain[360];

	if (!isfinite(v))
		return fmt_c(buf, size, "%f", v);
	fmt_c(plain, sizeof(plain), "%.*f", decimals, v);
	/* "-0" after rounding reads oddly: perf prints 0 */
	if (plain[0] == '-' && strspn(plain + 1, "0.") == strlen(plain + 1))
		memmove(plain, plain + 1, strlen(plain));
	return fmt_group_digits(buf, size, plain);
}

int fmt_grouped_u64(char *buf, size_t size, uint64_t v)
{
	char plain[32];

	snprintf(plain, sizeof(plain), "%llu", (unsigned long long)v);
	return fmt_group_digits(buf, size, plain);
}

const char *fmt_count_state(const struct count *c)
{
	switch (c->state) {
	case COUNT_NOT_SUPPORTED:
		return "<not supported>";
	case COUNT_NOT_COUNTED:
		return "<not counted>";
	case COUNT_UNKNOWN:
		return "-";
	case COUNT_OK:
		break;
	}
	return NULL;
}

int fmt_count_decimals(const struct event *ev)
{
	double s = ev->scale;

	return s != 0 && floor(s) != s ? 2 : 0;
}

int fmt_count_value(char *buf, size_t size, const struct event *ev, const struct count *c,
		    int grouped)
{
	const char *state = fmt_count_state(c);
	int dec = fmt_count_decimals(ev);

	if (state)
		return snprintf(buf, size, "%s", state);
	if (grouped)
		return fmt_grouped(buf, size, c->value, dec);
	return fmt_c(buf, size, "%.*f", dec, c->value);
}

int fmt_event_name(char *buf, size_t size, const struct event *ev, const struct count *c)
{
	if (c && c->user_only)
		return snprintf(buf, size, "%s:u", ev->name);
	return snprintf(buf, size, "%s", ev->name);
}

double fmt_running_pct(const struct count *c)
{
	if (c->enabled == 0 || c->running >= c->enabled)
		return 100.0;
	return 100.0 * (double)c->running / (double)c->enabled;
}

int fmt_metric_value(char *buf, size_t size, const struct metric *m, int padded)
{
	if (padded) {
		if (m->percent)
			return fmt_c(buf, size, "%7.2f%%", m->value);
		if (m->decimals == 2)
			return fmt_c(buf, size, "%7.2f ", m->value);
		return fmt_c(buf, size, "%8.3f", m->value);
	}
	return fmt_c(buf, size, "%.*f", m->percent || m->decimals == 2 ? 2 : 3, m->value);
}

int fmt_interval_time(char *buf, size_t size, uint64_t t_ns)
{
	return snprintf(buf, size, "%6llu.%09llu", (unsigned long long)(t_ns / 1000000000u),
			(unsigned long long)(t_ns % 1000000000u));
}

int fmt_duration(char *buf, size_t size, uint64_t ns)
{
	double v = (double)ns;

	if (ns < 1000)
		return snprintf(buf, size, "%llu ns", (unsigned long long)ns);
	/* switch units where "%.2f" would round up to 1000.00 */
	if (ns < 999995)
		return fmt_c(buf, size, "%.2f us", v / 1e3);
	if (ns < 999995000)
		return fmt_c(buf, size, "%.2f ms", v / 1e6);
	return fmt_c(buf, size, "%.3f s", v / 1e9);
}

/* The value a row sorts by: its count's, 0 when it has none. */
static double fmt_row_value(const struct count *units, size_t ne, const struct fmt_row *r)
{
	const struct count *c = &units[r->unit * ne + r->event];
	return c->state == COUNT_OK ? c->value : 0;
}

long fmt_aggr_rows(const struct aggr *ag, const struct evlist *evl, const struct count *units,
		   double elapsed_ns, struct fmt_row **rows, struct metric **m)
{
	size_t n = 0, ne = evl->n;
	*rows = malloc((ag->n * ne > 0 ? ag->n * ne : 1) * sizeof **rows);
	*m = calloc(ag->n * ne > 0 ? ag->n * ne : 1, sizeof **m);
	if (!*rows || !*m) {
		free(*rows);
		free(*m);
		return -ENOMEM;
	}
	for (size_t u = 0; u < ag->n; u++)
		metrics_compute(evl, units + u * ne, elapsed_ns, *m + u * ne);
	if (ag->mode != AGGR_THREAD && ag->mode != AGGR_NONE) {
		for (size_t u = 0; u < ag->n; u++)
			for (size_t i = 0; i < ne; i++)
				(*rows)[n++] = (struct fmt_row){u, i};
		return (long)n;
	}
	for (size_t i = 0; i < ne; i++) {
		size_t first = n;
		for (size_t u = 0; u < ag->n; u++) {
			const struct count *c = &units[u * ne + i];
			if (ag->skip_zero && !(c->state == COUNT_OK && c->value != 0))
				continue;
			(*rows)[n++] = (struct fmt_row){u, i};
		}
		/* an event no thread counted (<not supported>, or 0 everywhere)
		 * still gets a row, the first thread's, so that it shows */
		if (n == first && ag->n > 0)
			(*rows)[n++] = (struct fmt_row){0, i};
		/* threads by value, largest first; ties in their order (stable) */
		for (size_t k = first + 1; ag->mode == AGGR_THREAD && k < n; k++) {
			struct fmt_row r = (*rows)[k];
			double v = fmt_row_value(units, ne, &r);
			size_t j = k;
			for (; j > first && fmt_row_value(units, ne, &(*rows)[j - 1]) < v; j--)
				(*rows)[j] = (*rows)[j - 1];
			(*rows)[j] = r;
		}
	}
	return (long)n;
}
