/* linesrc.c: the span line protocol (linesrc.h) into the normaliser.  Bytes are
 * cut into lines (a partial last line waits for the next feed; a line longer
 * than LINES_MAX_LINE is skipped up to its newline), each line is parsed
 * strictly, its time checked against its process's start and the spans it
 * opens in or closes, and its event goes to the decoder's normaliser with a
 * name from the decoder's strings, so that these spans and the binary
 * stream's share one table of names and one set of sinks.  Processes this
 * source starts carry a NULL src (the decoder's are never NULL); a pid the
 * binary stream already has is shared.  Time checks use the normaliser's
 * stacks (each open span's begin) and this file's notes beside them (when
 * the last span it closed inside each ended: norm_inner); a process's start
 * is kept in its `began`. */
#include "config.h"
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "linesrc.h"
#include "grow.h"
#include "wire.h"
#include "norm.h"
#include "spanmetric.h"

struct linesrc {
	struct decoder *dec;
	struct normaliser *norm;
	int64_t rt_off; /* realtime - monotonic, ns */
	uint64_t start; /* no process began before this (0: not checked) */
	char line[LINES_MAX_LINE];
	size_t len;    /* bytes of the line in progress */
	bool skipping; /* in a line too long: up to its newline */
	bool oom;      /* a note could not be kept (lines_raise) */
	struct lines_stats st;
	struct linesrc_procfn procfn; /* what /proc tells of a process */
};

static uint64_t lines_proc_start(uint32_t pid);

static uint64_t lines_start_fn(void *ctx, uint32_t pid)
{
	(void)ctx;
	return lines_proc_start(pid);
}

static size_t lines_comm_fn(void *ctx, uint32_t pid, char *buf, size_t size)
{
	(void)ctx;
	return linesrc_proc_comm(pid, buf, size);
}

void linesrc_set_procfn(struct linesrc *ls, const struct linesrc_procfn *f)
{
	ls->procfn = f ? *f : (struct linesrc_procfn){lines_start_fn, lines_comm_fn, NULL};
}

uint64_t linesrc_proc_start(uint32_t pid)
{
	return lines_proc_start(pid);
}

size_t linesrc_proc_comm(uint32_t pid, char *buf, size_t size)
{
	char path[64];
	if (!size)
		return 0;
	buf[0] = '\0';
	snprintf(path, sizeof path, "/proc/%u/comm", pid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (!fgets(buf, (int)size, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return strlen(buf);
}

struct linesrc *linesrc_new(struct decoder *d, int64_t realtime_minus_mono)
{
	struct linesrc *ls = calloc(1, sizeof *ls);
	if (!ls)
		return NULL;
	ls->dec = d;
	ls->norm = decoder_norm(d);
	ls->rt_off = realtime_minus_mono;
	linesrc_set_procfn(ls, NULL);
	return ls;
}

void linesrc_free(struct linesrc *ls)
{
	free(ls);
}

void linesrc_set_start(struct linesrc *ls, uint64_t mono_ns)
{
	ls->start = mono_ns;
}

const struct lines_stats *linesrc_stats(const struct linesrc *ls)
{
	return &ls->st;
}

/* A decimal field ending at a space (or at the end when last); 0 or -1. */
static int lines_u64(const char **p, const char *end, uint64_t *out, bool last)
{
	const char *s = *p;
	uint64_t v = 0;
	if (s == end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		uint64_t digit = (uint64_t)(*s - '0');
		if (v > (UINT64_MAX - digit) / 10)
			return -1;
		v = v * 10 + digit;
	}
	if (s < end && *s != ' ')
		return -1;
	if (!last && s == end)
		return -1;
	*out = v;
	*p = s < end ? s + 1 : s;
	return 0;
}

/* TIME: ns, '-' (now) or '@' realtime seconds with a fraction. */
static int lines_time(struct linesrc *ls, const char **p, const char *end, uint64_t now,
		      uint64_t *ns, bool last)
{
	const char *s = *p;
	if (s < end && *s == '-' && (s + 1 == end || s[1] == ' ')) {
		*ns = now;
		*p = s + 1 < end ? s + 2 : s + 1;
		return last || s + 1 < end ? 0 : -1;
	}
	if (s < end && *s == '@') {
		uint64_t sec = 0, frac = 0, scale = 1000000000u;
		s++;
		if (s == end || *s < '0' || *s > '9')
			return -1;
		for (; s < end && *s >= '0' && *s <= '9'; s++) {
			if (sec > UINT64_MAX / 1000000000u / 10)
				return -1;
			sec = sec * 10 + (uint64_t)(*s - '0');
		}
		if (s < end && (*s == '.' || *s == ',')) /* bash: the locale's point */
			for (s++; s < end && *s >= '0' && *s <= '9'; s++)
				if (scale > 1) {
					scale /= 10;
					frac += (uint64_t)(*s - '0') * scale;
				}
		if ((s < end && *s != ' ') || (!last && s == end))
			return -1;
		int64_t mono = (int64_t)(sec * 1000000000u + frac) - ls->rt_off;
		*ns = mono > 0 ? (uint64_t)mono : 1;
		*p = s < end ? s + 1 : s;
		return 0;
	}
	return lines_u64(p, end, ns, last);
}

/* The values of a begin or end at ns: what a source other than the target
 * knows (off-CPU); the target's own are unknown here (0). */
static const uint64_t *lines_values(struct linesrc *ls, uint32_t pid, uint32_t tid, uint64_t ns,
				    uint64_t *v)
{
	const struct decoder_values *dv = decoder_values_of(ls->dec);
	if (!dv->n)
		return NULL;
	memset(v, 0, dv->n * sizeof *v);
	if (dv->off_cpu >= 0 && dv->off_cpu_at)
		v[dv->off_cpu] = dv->off_cpu_at(dv->ctx, pid, tid, ns);
	return v;
}

static uint64_t lines_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* When process pid began, in CLOCK_MONOTONIC ns, no later than it did: its
 * start time in /proc/PID/stat (clock ticks of CLOCK_BOOTTIME), less a tick
 * for the rounding and the clocks read apart; 0: unknown. */
static uint64_t lines_proc_start(uint32_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%u/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* after the name, which may hold anything */
	unsigned long long ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	/* ") state ppid ... starttime": the start is the 20th field after it */
	for (int field = 0; p && field < 19; field++)
		p = strchr(p + 1, ' ');
	if (!p || hz <= 0 || sscanf(p, " %*s %llu", &ticks) != 1)
		return 0;
	uint64_t boot = lines_clock(CLOCK_BOOTTIME), mono = lines_clock(CLOCK_MONOTONIC);
	uint64_t tick = 1000000000u / (uint64_t)hz;
	if (ticks > UINT64_MAX / 1000000000u)
		return 0;
	uint64_t at = ticks * 1000000000u / (uint64_t)hz; /* boot time */
	uint64_t slept = boot > mono ? boot - mono : 0;	  /* suspended */
	return at > slept + tick ? at - slept - tick : 0;
}

/* When the process began, as far as can be told (lines_proc_start and the
 * session's start); 0: not checked. */
static uint64_t lines_began(const struct linesrc *ls, uint32_t pid)
{
	if (!ls->start)
		return 0;
	uint64_t at = ls->procfn.start(ls->procfn.ctx, pid);
	return at > ls->start ? at : ls->start;
}

/* The process pid, started at ts (named from /proc when it can be read);
 * NULL with *early set when ts is before it began. */
static struct norm_proc *lines_proc(struct linesrc *ls, uint32_t pid, uint64_t ts, bool *early)
{
	struct norm_proc *p = norm_process(ls->norm, pid);
	*early = false;
	if (p) {
		p->shared = true;
		if (!p->began)
			p->began = lines_began(ls, pid);
		*early = ts < p->began;
		return *early ? NULL : p;
	}
	uint64_t began = lines_began(ls, pid);
	if (ts < began) {
		*early = true;
		return NULL;
	}
	char comm[64] = "";
	size_t clen = ls->procfn.comm(ls->procfn.ctx, pid, comm, sizeof comm);
	uint32_t name = clen ? decoder_intern(ls->dec, comm, clen) : 0;
	p = norm_process_start(ls->norm, pid, 0, name, ts);
	if (p) {
		p->shared = true;
		p->began = began;
	}
	return p;
}

/* The latest time inside t's open spans from depth k on: their begins and
 * the ends of the spans closed inside them. */
static uint64_t lines_inner(const struct norm_thread *t, uint32_t k)
{
	uint64_t at = 0;
	for (uint32_t j = k; j < t->depth; j++) {
		uint64_t b = t->stk[j].begin;
		uint64_t in = j < t->ninner && t->inner[j].begin == b && t->inner[j].end > b
				      ? t->inner[j].end
				      : b;
		if (in > at)
			at = in;
	}
	return at;
}

/* The depth + 1 of the open span an end of `name` closes (0: none, the
 * normaliser counts it unmatched), and in *early whether ts contradicts
 * the spans it closes: before one's begin or the end of one closed inside. */
static uint32_t lines_end_at(const struct norm_thread *t, uint32_t name, uint64_t ts, bool *early)
{
	uint32_t k = t->depth;
	*early = false;
	if (t->over) /* it ends a span beyond the depth limit: not on the stack */
		return k;
	while (k > 0 && t->stk[k - 1].name != name)
		k--;
	*early = k > 0 && ts < lines_inner(t, k - 1);
	return k;
}

/* A span ended at ts inside t's open span d: notes it (a note of another
 * span that began at d before is replaced). */
static int lines_raise(struct norm_thread *t, uint32_t d, uint64_t ts)
{
	if (d >= t->ninner) {
		uint32_t old = t->ninner;
		if (GROW(t->inner, (size_t)d + 1, t->ninner, 16) < 0)
			return -ENOMEM;
		memset(t->inner + old, 0, (t->ninner - old) * sizeof *t->inner);
	}
	struct norm_inner *e = &t->inner[d];
	uint64_t b = t->stk[d].begin;
	if (e->begin != b)
		*e = (struct norm_inner){b, b};
	if (e->end < ts)
		e->end = ts;
	return 0;
}

/* Whether an X at ts contradicts an open span of p's threads. */
static bool lines_exit_early(const struct norm_proc *p, uint64_t ts)
{
	for (const struct norm_thread *t = p->threads; t; t = t->next)
		if (ts < lines_inner(t, 0))
			return true;
	return false;
}

/* An A line's type, key and value (p at the type): false when they do
 * not parse. */
static bool lines_arg(struct linesrc *ls, const char *p, const char *end, uint32_t *key,
		      unsigned *type, uint64_t *bits)
{
	static const char types[] = "iufbs"; /* enum span_arg_type's order */
	const char *tp = p < end ? memchr(types, *p, 5) : NULL;
	if (!tp || p + 1 >= end || p[1] != ' ')
		return false;
	*type = (unsigned)(tp - types);
	p += 2;
	const char *sp = memchr(p, ' ', (size_t)(end - p));
	if (!sp || sp == p || sp - p > WIRE_ARG_STR_MAX)
		return false;
	const char *k = p, *v = sp + 1;
	size_t klen = (size_t)(sp - p), vlen = (size_t)(end - v);
	char buf[64];
	uint64_t u;
	double d;
	switch (*type) {
	case SPAN_ARG_I64: {
		bool neg = v < end && *v == '-';
		const char *q = v + neg;
		if (lines_u64(&q, end, &u, true) < 0 || q != end || u > (uint64_t)INT64_MAX + neg)
			return false;
		*bits = neg ? 0 - u : u;
		break;
	}
	case SPAN_ARG_U64:
		if (lines_u64(&v, end, &u, true) < 0 || v != end)
			return false;
		*bits = u;
		break;
	case SPAN_ARG_F64: {
		if (!vlen || vlen >= sizeof buf)
			return false;
		memcpy(buf, v, vlen);
		buf[vlen] = 0;
		char *e;
		d = strtod(buf, &e); /* the C locale's, as every reader of spanstat */
		if (*e || buf[0] == ' ')
			return false;
		memcpy(bits, &d, sizeof d);
		break;
	}
	case SPAN_ARG_BOOL:
		if (vlen != 1 || (*v != '0' && *v != '1'))
			return false;
		*bits = *v == '1';
		break;
	default:
		if (vlen > WIRE_ARG_STR_MAX || memchr(v, '\0', vlen))
			return false;
		*bits = decoder_intern(ls->dec, v, vlen);
		if (!*bits)
			return false;
		break;
	}
	*key = memchr(k, '\0', klen) ? 0 : decoder_intern(ls->dec, k, klen);
	return *key != 0;
}

/* One whole line (no newline); false when it does not parse. */
static bool lines_take(struct linesrc *ls, const char *s, size_t n, uint64_t now)
{
	const char *p = s, *end = s + n;
	if (n < 2 || p[1] != ' ')
		return false;
	char op = p[0];
	if (!strchr("BEICNXKMAbnxe", op))
		return false;
	p += 2;
	uint64_t pid, tid, ts;
	if (lines_u64(&p, end, &pid, false) < 0 || pid == 0 || pid > UINT32_MAX)
		return false;
	if (p < end && *p == '-' && p + 1 < end && p[1] == ' ') {
		tid = pid;
		p += 2;
	} else if (lines_u64(&p, end, &tid, false) < 0 || tid == 0 || tid > UINT32_MAX) {
		return false;
	}
	if (lines_time(ls, &p, end, now, &ts, op == 'X') < 0)
		return false;
	int64_t value = 0;
	if (op == 'C') {
		bool neg = p < end && *p == '-';
		uint64_t u;
		if (neg)
			p++;
		if (lines_u64(&p, end, &u, false) < 0 || u > (uint64_t)INT64_MAX + neg)
			return false;
		value = neg ? (int64_t)(0 - u) : (int64_t)u;
	}
	uint64_t aid = 0; /* an async span's ID: b n x e */
	bool async = op >= 'a' && op <= 'z';
	if (async && (lines_u64(&p, end, &aid, op != 'b') < 0 || aid == 0 ||
		      (op != 'b' && p != end) || (size_t)(end - p) > WIRE_ASYNC_NAME_MAX))
		return false;
	if (op != 'X' && memchr(p, '\0', (size_t)(end - p)))
		return false; /* a NUL in the name: not the name it was meant to be */
	if (op == 'M' && (size_t)(end - p) > SPAN_MESSAGE_MAX)
		return false; /* before its process and thread are made */
	if (op == 'K') {      /* a category, one word, then the name it is of */
		const char *sp = memchr(p, ' ', (size_t)(end - p));
		if (!sp || sp == p || sp - p > WIRE_CATEGORY_MAX)
			return false;
		uint32_t cat = decoder_intern(ls->dec, p, (size_t)(sp - p));
		uint32_t name = cat ? decoder_intern(ls->dec, sp + 1, (size_t)(end - sp - 1)) : 0;
		if (name)
			decoder_category(ls->dec, name, cat);
		return true;
	}
	uint32_t key = 0;
	unsigned type = 0;
	uint64_t bits = 0;
	if (op == 'A' && !lines_arg(ls, p, end, &key, &type, &bits))
		return false; /* before its process and thread are made */
	bool early;
	struct norm_proc *np = lines_proc(ls, (uint32_t)pid, ts, &early);
	if (!np)
		return !early; /* refused by a limit: counted there */
	if (op == 'X') {
		if (lines_exit_early(np, ts))
			return false;
		/* a process the binary stream also has ends at its EXIT: the X
		 * closes its spans */
		if (!np->src)
			norm_process_end(ls->norm, np, ts, 0);
		else
			norm_process_close(ls->norm, np, ts);
		return true;
	}
	if (async) { /* b: the rest of the line is the name */
		uint32_t name = op == 'b' ? decoder_intern(ls->dec, p, (size_t)(end - p)) : 0;
		struct norm_thread *t = norm_thread(ls->norm, np, (uint32_t)tid, ts);
		if (t) {
			ls->st.events++;
			norm_async(ls->norm, t, ts, (unsigned)(strchr("bnxe", op) - "bnxe"), aid,
				   name);
		}
		return true;
	}
	if (op == 'A') { /* a typed argument of the thread's innermost span */
		struct norm_thread *t = norm_thread(ls->norm, np, (uint32_t)tid, ts);
		if (t) {
			ls->st.events++;
			norm_arg(ls->norm, t, ts, key, type, bits);
		}
		return true;
	}
	if (op == 'M') { /* a message: the rest of the line, not interned */
		struct norm_thread *t = norm_thread(ls->norm, np, (uint32_t)tid, ts);
		if (t) {
			ls->st.events++;
			norm_message(ls->norm, t, ts, p, (uint32_t)(end - p));
		}
		return true;
	}
	uint32_t name = decoder_intern(ls->dec, p, (size_t)(end - p));
	if (op == 'N') {
		if (name)
			norm_thread_name(ls->norm, np, (uint32_t)tid, name);
		return true;
	}
	struct norm_thread *t = norm_thread(ls->norm, np, (uint32_t)tid, ts);
	if (!t || !name)
		return true;
	uint64_t vbuf[SPANMETRIC_MAX];
	if (op == 'B' && t->depth && !t->over && ts < t->stk[t->depth - 1].begin)
		return false; /* before the span it would open in */
	uint32_t closes = op == 'E' ? lines_end_at(t, name, ts, &early) : 0;
	if (op == 'E' && early)
		return false;
	ls->st.events++;
	switch (op) {
	case 'B':
		/* a note left at this depth is another span's */
		if (!t->over && t->depth < t->ninner)
			t->inner[t->depth].begin = t->inner[t->depth].end = 0;
		norm_begin(ls->norm, t, ts, name, lines_values(ls, t->pid, t->tid, ts, vbuf));
		break;
	case 'E':
		norm_end(ls->norm, t, ts, name, lines_values(ls, t->pid, t->tid, ts, vbuf));
		/* the span it opened in holds it: nothing in it ends before */
		if (closes && t->depth && !t->over && lines_raise(t, t->depth - 1, ts) < 0)
			ls->oom = true;
		break;
	case 'I':
		norm_instant(ls->norm, t, ts, name);
		break;
	default:
		norm_counter(ls->norm, t, ts, name, value);
		break;
	}
	return true;
}

int linesrc_feed(struct linesrc *ls, const void *buf, size_t len, uint64_t now_ns)
{
	const char *b = buf;
	uint64_t bad = 0, events = ls->st.events;
	while (len) {
		const char *nl = memchr(b, '\n', len);
		size_t n = nl ? (size_t)(nl - b) : len;
		if (ls->skipping) {
			if (nl)
				ls->skipping = false;
		} else if (ls->len + n + 1 > LINES_MAX_LINE) { /* too long, newline counted */
			bad++;
			ls->len = 0;
			ls->skipping = !nl;
		} else {
			memcpy(ls->line + ls->len, b, n);
			ls->len += n;
			if (nl) {
				if (lines_take(ls, ls->line, ls->len, now_ns))
					ls->st.lines++;
				else
					bad++;
				ls->len = 0;
			}
		}
		b += n + (nl != NULL);
		len -= n + (nl != NULL);
	}
	ls->st.bad += bad;
	decoder_count_lines(ls->dec, ls->st.events - events, bad);
	bool oom = ls->oom;
	ls->oom = false;
	return norm_oom(ls->norm) || oom ? -ENOMEM : 0;
}

void linesrc_finish(struct linesrc *ls)
{
	if (ls->len || ls->skipping) {
		ls->st.bad++;
		decoder_count_lines(ls->dec, 0, 1);
	}
	ls->len = 0;
	ls->skipping = false;
	/* this source's processes end; the decoder ends its own */
	for (struct norm_proc *p = norm_first_process(ls->norm), *next; p; p = next) {
		next = p->next;
		if (!p->src)
			norm_process_end(ls->norm, p, 0, 0);
	}
}
