/* diff.c: reading two sessions' JSON documents into samples per quantity,
 * one run and one thread at a time, and the comparison that makes a gate
 * of them: families, tests, adjustments and verdicts (diff.h). */
#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "cause.h"
#include "diff.h"
#include "stats.h"
#include "u64map.h"
#include "writer.h"

/* A value every span carries, and whether each side collected it. */
struct diff_vfam {
	const char *name; /* off_cpu_ns, allocs, alloc_bytes, or an event of --span-events */
	const char *unit; /* as .spans.metrics[] declares it; NULL: undeclared */
	bool event;
	bool on[2];
};

/* No count or time of a session comes near 2^63: beyond is not a session's. */
#define DIFF_ABSURD 0x1p63

int diff_init(struct diff *d)
{
	memset(d, 0, sizeof *d);
	if (strtab_init(&d->keys) < 0 || strtab_init(&d->text) < 0) {
		diff_release(d);
		return -ENOMEM;
	}
	return 0;
}

void diff_release(struct diff *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->item[i].v[0]);
		free(d->item[i].v[1]);
	}
	free(d->item);
	free(d->by_key);
	free(d->gap);
	free(d->vfam);
	for (int s = 0; s < 2; s++) {
		free(d->command[s]);
		free(d->events[s]);
	}
	strtab_release(&d->keys);
	strtab_release(&d->text);
	memset(d, 0, sizeof *d);
}

static const char *diff_text(struct diff *d, const char *s)
{
	uint32_t id = strtab_intern(&d->text, s, strlen(s));
	return id ? strtab_get(&d->text, id) : NULL;
}

/* The index of item (kind, name, field), made without samples when new;
 * -1: out of memory. */
static long diff_item(struct diff *d, enum diff_kind kind, const char *name, const char *field,
		      const char *unit, int vfam)
{
	char *key;
	if (asprintf(&key, "%d\x1f%s\x1f%s", (int)kind, name, field) < 0)
		return -1;
	uint32_t id = strtab_intern(&d->keys, key, strlen(key));
	free(key);
	if (!id)
		return -1;
	if (id >= d->nby_key) {
		size_t old = d->nby_key;
		if (GROW(d->by_key, (size_t)id + 1, d->nby_key, 8) < 0)
			return -1;
		memset(d->by_key + old, 0, (d->nby_key - old) * sizeof *d->by_key);
	}
	if (d->by_key[id])
		return (long)d->by_key[id] - 1;
	if (GROW(d->item, d->n + 1, d->cap, 8) < 0)
		return -1;
	struct diff_item *it = &d->item[d->n];
	memset(it, 0, sizeof *it);
	it->kind = kind;
	it->name = diff_text(d, name);
	it->field = diff_text(d, field);
	it->unit = diff_text(d, unit ? unit : "");
	it->vfam = vfam;
	if (!it->name || !it->field || !it->unit)
		return -1;
	d->by_key[id] = ++d->n;
	return (long)d->n - 1;
}

/* What an item holds in a run without a value: a span path absent from a
 * run ran 0 times there; a counter without a value was not counted. */
static double diff_fill(const struct diff_item *it)
{
	return it->kind == DIFF_SPAN ? 0 : NAN;
}

/* Room for n runs on side s, the new ones filled. */
static int diff_room(struct diff_item *it, int s, size_t n)
{
	if (n <= it->cap[s])
		return 0;
	size_t c = it->cap[s] ? it->cap[s] : 4;
	while (c < n)
		c *= 2;
	double *v = realloc(it->v[s], c * sizeof *v);
	if (!v)
		return -ENOMEM;
	for (size_t k = it->cap[s]; k < c; k++)
		v[k] = diff_fill(it);
	it->v[s] = v;
	it->cap[s] = c;
	return 0;
}

/* x as run r of side s (a span's: added, threads sum). */
static int diff_store(struct diff_item *it, int s, unsigned r, double x)
{
	if (diff_room(it, s, (size_t)r + 1) < 0)
		return -ENOMEM;
	if (it->kind == DIFF_SPAN)
		it->v[s][r] += x;
	else
		it->v[s][r] = x;
	it->seen[s] = true;
	return 0;
}

/* The span value family (name, event), made when new; -1: out of memory. */
static int diff_vfam(struct diff *d, const char *name, bool event)
{
	for (size_t i = 0; i < d->nvfam; i++)
		if (d->vfam[i].event == event && strcmp(d->vfam[i].name, name) == 0)
			return (int)i;
	struct diff_vfam *v = realloc(d->vfam, (d->nvfam + 1) * sizeof *v);
	if (!v)
		return -1;
	d->vfam = v;
	memset(&v[d->nvfam], 0, sizeof *v);
	v[d->nvfam].name = diff_text(d, name);
	v[d->nvfam].event = event;
	return v[d->nvfam].name ? (int)d->nvfam++ : -1;
}

/* --- reading: a JSON document walked member by member ------------------ */

/* The text being read: all of it (fp NULL), or a window that slides over
 * fp, holding at least the value being parsed. */
struct diff_in {
	const char *p, *end; /* what is left of the text read so far */
	char *buf;	     /* the window, when reading fp */
	size_t cap;
	FILE *fp;
	bool eof;   /* nothing more than up to end */
	int errnum; /* a read error's errno */
};

/* The window's first size; it doubles when one value does not fit. */
enum { DIFF_WINDOW = 1 << 20 };

/* One side being read. */
struct diff_read {
	struct diff *d;
	int s;
	char **cause;
	unsigned runs, threads;
	bool version, have_runs, have_spans, collected;
	double schema;	  /* its schema_version */
	uint64_t top_run; /* the largest run a thread named, + 1 */
	uint64_t end_run; /* the largest .runs[].run, + 1: a report that lost some
			   * runs' results lists the others by their numbers */
	unsigned top_thread;
	size_t *evcache; /* a run's k-th event: its item + 1, as the last run had it */
	size_t evcap;
	long rucache[4];
	size_t path_bytes; /* the text of its span paths so far (DIFF_PATH_BYTES) */
};

/* The text of one document's span paths, every node's path in full, at
 * most: a long name in a deep tree repeats in every path below it (a 1 MiB
 * name 4,000 deep took 13 GB), so such a document is refused instead. */
#define DIFF_PATH_BYTES ((size_t)128 << 20)

static int diff_not_json(struct diff_read *r)
{
	return cause_set(r->cause, -EINVAL, "not JSON (or not a whole document)");
}

static int diff_not_ours(struct diff_read *r)
{
	return cause_set(r->cause, -EINVAL,
			 "not a spanstat JSON document with a run (spanstat --json)");
}

/* More text after end: false at the end of fp (or on a read error). */
static bool din_more(struct diff_in *in)
{
	if (in->eof)
		return false;
	size_t left = (size_t)(in->end - in->p);
	if (in->p != in->buf)
		memmove(in->buf, in->p, left);
	if (left == in->cap) { /* one value fills the window: a larger one */
		if (GROW(in->buf, in->cap + 1, in->cap, 4096) < 0) {
			in->errnum = ENOMEM;
			in->eof = true;
			return false;
		}
	}
	size_t got = fread(in->buf + left, 1, in->cap - left, in->fp);
	in->p = in->buf;
	in->end = in->buf + left + got;
	if (!got) {
		in->eof = true;
		if (ferror(in->fp))
			in->errnum = EIO;
	}
	return got > 0;
}

static void din_ws(struct diff_in *in)
{
	do {
		while (in->p < in->end &&
		       (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r'))
			in->p++;
	} while (in->p == in->end && din_more(in));
}

static bool din_eat(struct diff_in *in, char c)
{
	din_ws(in);
	if (in->p < in->end && *in->p == c) {
		in->p++;
		return true;
	}
	return false;
}

static bool din_at(struct diff_in *in, char c)
{
	din_ws(in);
	return in->p < in->end && *in->p == c;
}

/* The next value, parsed whole (the caller deletes it); NULL: not JSON.
 * A value that fails, or ends where the text read so far ends, may be cut
 * there: it is parsed again with more text. */
static cJSON *din_value(struct diff_in *in)
{
	for (;;) {
		din_ws(in);
		if (in->p >= in->end)
			return NULL;
		const char *e = NULL;
		cJSON *v = cJSON_ParseWithLengthOpts(in->p, (size_t)(in->end - in->p), &e, 0);
		if (v && (!e || e <= in->p || e > in->end)) {
			cJSON_Delete(v);
			return NULL;
		}
		if (v && (e < in->end || in->eof)) {
			in->p = e;
			return v;
		}
		cJSON_Delete(v);
		if (in->eof)
			return NULL;
		din_more(in); /* at the end of fp, the next round decides */
	}
}

/* The next member's key and ':' (the caller deletes it); NULL: not JSON. */
static cJSON *din_key(struct diff_in *in)
{
	cJSON *k = din_value(in);
	if (!cJSON_IsString(k) || !din_eat(in, ':')) {
		cJSON_Delete(k);
		return NULL;
	}
	return k;
}

/* Past the next value, checked: arrays and objects down to depth 4 one
 * member at a time, so that no large part is ever parsed whole. */
static int din_skip(struct diff_read *r, struct diff_in *in, int depth)
{
	if (depth < 4 && (din_at(in, '[') || din_at(in, '{'))) {
		bool obj = *in->p == '{';
		in->p++;
		if (din_eat(in, obj ? '}' : ']'))
			return 0;
		for (;;) {
			if (obj) {
				cJSON *k = din_key(in);
				if (!k)
					return diff_not_json(r);
				cJSON_Delete(k);
			}
			int err = din_skip(r, in, depth + 1);
			if (err)
				return err;
			if (din_eat(in, ','))
				continue;
			if (din_eat(in, obj ? '}' : ']'))
				return 0;
			return diff_not_json(r);
		}
	}
	cJSON *v = din_value(in);
	if (!v)
		return diff_not_json(r);
	cJSON_Delete(v);
	return 0;
}

/* Opens the array or object (`open`, `close`) next in the text: 1 when it
 * holds something, 0 when empty (and read), else an error; anything else
 * there means the document is not ours (or not JSON). */
static int din_open(struct diff_read *r, struct diff_in *in, char open, char close)
{
	if (!din_eat(in, open)) {
		int err = din_skip(r, in, 4);
		return err ? err : diff_not_ours(r);
	}
	return din_eat(in, close) ? 0 : 1;
}

/* Calls fn on each element of the array next in the text, one parsed at a
 * time. */
static int din_array(struct diff_read *r, struct diff_in *in,
		     int (*fn)(struct diff_read *r, const cJSON *el))
{
	int open = din_open(r, in, '[', ']');
	if (open <= 0)
		return open;
	for (;;) {
		cJSON *el = din_value(in);
		if (!el)
			return diff_not_json(r);
		int err = fn(r, el);
		cJSON_Delete(el);
		if (err)
			return err;
		if (din_eat(in, ','))
			continue;
		if (din_eat(in, ']'))
			return 0;
		return diff_not_json(r);
	}
}

/* The number num as a sample: 1 with *v, 0 when null or absent (not
 * counted), or -EINVAL with *cause saying where (fmt) and what is wrong. */
__attribute__((format(printf, 4, 5))) static int diff_number(struct diff_read *r, const cJSON *num,
							     double *v, const char *fmt, ...)
{
	if (!num || cJSON_IsNull(num))
		return 0;
	const char *why = NULL;
	if (!cJSON_IsNumber(num))
		why = "a value that is not a number";
	else if (!isfinite(num->valuedouble))
		why = "a value that is not finite";
	else if (num->valuedouble < 0)
		why = "a negative value";
	else if (num->valuedouble > DIFF_ABSURD)
		why = "an absurd value, beyond 2^63";
	if (!why) {
		*v = num->valuedouble;
		return 1;
	}
	char *where = NULL, val[40] = "";
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&where, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	if (cJSON_IsNumber(num) && isfinite(num->valuedouble))
		snprintf(val, sizeof val, " (%g)", num->valuedouble);
	int err = cause_set(r->cause, -EINVAL, "%s: %s%s", where, why, val);
	free(where);
	return err;
}

static const char *const diff_rusage[] = {"elapsed_ns", "user_ns", "sys_ns", "max_rss_kib"};

/* A node id or run number: a whole number JSON can hold exactly. */
static bool diff_id(const cJSON *n, uint64_t *id)
{
	if (!cJSON_IsNumber(n) || !(n->valuedouble >= 0) || n->valuedouble > 0x1p53 ||
	    n->valuedouble != floor(n->valuedouble))
		return false;
	*id = (uint64_t)n->valuedouble;
	return true;
}

/* One element of .runs: its counters and rusage as run r->runs. */
static int diff_run(struct diff_read *r, const cJSON *run)
{
	struct diff *d = r->d;
	unsigned k = r->runs;
	if (!cJSON_IsObject(run))
		return cause_set(r->cause, -EINVAL, "run %u is not an object", k);
	uint64_t no = k;
	const cJSON *rn = cJSON_GetObjectItemCaseSensitive(run, "run");
	if (rn && (!diff_id(rn, &no) || no >= UINT32_MAX))
		return cause_set(r->cause, -EINVAL, "run %u: a run number that is not one", k);
	if (no + 1 > r->end_run)
		r->end_run = no + 1;
	const cJSON *ev;
	size_t e = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(run, "events"))
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
		const cJSON *unit = cJSON_GetObjectItemCaseSensitive(ev, "unit");
		if (!cJSON_IsString(name))
			return cause_set(r->cause, -EINVAL, "run %u: an event without its name", k);
		/* the runs list their events alike: the last run's item first */
		long at = e < r->evcap ? (long)r->evcache[e] - 1 : -1;
		if (at < 0 || d->item[at].kind != DIFF_COUNTER ||
		    strcmp(d->item[at].name, name->valuestring) != 0) {
			at = diff_item(d, DIFF_COUNTER, name->valuestring, "",
				       cJSON_IsString(unit) ? unit->valuestring : "", -1);
			size_t had = r->evcap;
			if (at < 0 || GROW(r->evcache, e + 1, r->evcap, 8) < 0)
				return -ENOMEM;
			memset(r->evcache + had, 0, (r->evcap - had) * sizeof *r->evcache);
			r->evcache[e] = (size_t)at + 1;
		}
		e++;
		double v;
		int got = diff_number(r, cJSON_GetObjectItemCaseSensitive(ev, "value"), &v,
				      "run %u, event '%s'", k, name->valuestring);
		if (got < 0)
			return got;
		if (got && diff_store(&d->item[at], r->s, k, v) < 0)
			return -ENOMEM;
	}
	const cJSON *ru = cJSON_GetObjectItemCaseSensitive(run, "rusage");
	for (size_t f = 0; f < sizeof diff_rusage / sizeof *diff_rusage; f++) {
		if (!r->rucache[f]) {
			long at = diff_item(d, DIFF_RUSAGE, diff_rusage[f], "",
					    strstr(diff_rusage[f], "_ns") ? "ns" : "KiB", -1);
			if (at < 0)
				return -ENOMEM;
			r->rucache[f] = at + 1;
		}
		double v;
		int got = diff_number(r, cJSON_GetObjectItemCaseSensitive(ru, diff_rusage[f]), &v,
				      "run %u, rusage %s", k, diff_rusage[f]);
		if (got < 0)
			return got;
		if (got && diff_store(&d->item[r->rucache[f] - 1], r->s, k, v) < 0)
			return -ENOMEM;
	}
	r->runs++;
	return 0;
}

/* A name as a frame of a path: ';' written %3B (a JSON name has its '%'
 * escaped already, so this stays reversible). */
static char *diff_frame(const char *name)
{
	size_t semis = 0;
	for (const char *p = name; *p; p++)
		semis += *p == ';';
	char *f = malloc(strlen(name) + 2 * semis + 1), *o = f;
	for (const char *p = name; f && *p; p++) {
		if (*p == ';') {
			memcpy(o, "%3B", 3);
			o += 3;
		} else {
			*o++ = *p;
		}
	}
	if (f)
		*o = '\0';
	return f;
}

/* A node's field as a sample of run k. */
static int diff_node_value(struct diff_read *r, unsigned k, const char *path, const char *field,
			   const char *unit, int vfam, const cJSON *num)
{
	double v;
	int got = diff_number(r, num, &v, "run %u, span path '%s', %s", k, path, field);
	if (got <= 0)
		return got;
	long at = diff_item(r->d, DIFF_SPAN, path, field, unit, vfam);
	if (at < 0 || diff_store(&r->d->item[at], r->s, k, v) < 0)
		return -ENOMEM;
	return 0;
}

/* One element of .spans.threads: every node's path (its parent's and its
 * name) and every field that is a number, added to its run's. */
static int diff_thread(struct diff_read *r, const cJSON *th)
{
	static const struct {
		const char *name, *unit, *vfam;
	} fields[] = {{"count", "", NULL},
		      {"total_ns", "ns", NULL},
		      {"self_ns", "ns", NULL},
		      {"cpu_ns", "ns", "off_cpu_ns"},
		      {"off_cpu_ns", "ns", "off_cpu_ns"},
		      {"allocs", "", "allocs"},
		      {"alloc_bytes", "bytes", "alloc_bytes"}};
	int vf[sizeof fields / sizeof *fields];
	for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
		vf[f] = -1;
		if (fields[f].vfam && (vf[f] = diff_vfam(r->d, fields[f].vfam, false)) < 0)
			return -ENOMEM;
	}
	const cJSON *rn = cJSON_GetObjectItemCaseSensitive(th, "run");
	uint64_t run = 0;
	if (rn && !diff_id(rn, &run))
		return cause_set(r->cause, -EINVAL,
				 "span thread %u: a run that is not a run number", r->threads);
	if (run >= UINT32_MAX)
		return cause_set(r->cause, -EINVAL, "span thread %u: of run %" PRIu64, r->threads,
				 run);
	if (run + 1 > r->top_run) { /* checked against the runs at the end */
		r->top_run = run + 1;
		r->top_thread = r->threads;
	}
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(th, "nodes");
	if (!cJSON_IsArray(nodes))
		return cause_set(r->cause, -EINVAL,
				 "span thread %u: no list of nodes (schema version 2 or later)",
				 r->threads);
	unsigned k = (unsigned)run;
	int n = cJSON_GetArraySize(nodes), err = 0, i = 0;
	char **path = calloc(n ? (size_t)n : 1, sizeof *path);
	struct u64map ids; /* a node's id -> its index + 1 */
	memset(&ids, 0, sizeof ids);
	if (!path)
		return -ENOMEM;
	const cJSON *nd;
	cJSON_ArrayForEach(nd, nodes)
	{
		if (err || i >= n)
			break;
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(nd, "name");
		const cJSON *parent = cJSON_GetObjectItemCaseSensitive(nd, "parent");
		uint64_t id, up = 0, at = 0;
		if (!cJSON_IsString(name) ||
		    !diff_id(cJSON_GetObjectItemCaseSensitive(nd, "id"), &id) ||
		    !(cJSON_IsNull(parent) || diff_id(parent, &up))) {
			err = cause_set(r->cause, -EINVAL,
					"span thread %u: a node without its name, id or parent",
					r->threads);
			break;
		}
		/* the outermost spans' parent is null (the root is not listed) */
		if (!cJSON_IsNull(parent) && !(at = u64map_get(&ids, up))) {
			err = cause_set(r->cause, -EINVAL,
					"span thread %u: node %" PRIu64
					" has a parent not listed before it",
					r->threads, id);
			break;
		}
		if (u64map_put(&ids, id, (uint64_t)i + 1) < 0) {
			err = -ENOMEM;
			break;
		}
		char *frame = diff_frame(name->valuestring);
		int pr = !frame ? -1
			 : at	? asprintf(&path[i], "%s;%s", path[at - 1], frame)
				: asprintf(&path[i], "%s", frame);
		free(frame);
		if (pr < 0) {
			path[i] = NULL;
			err = -ENOMEM;
			break;
		}
		r->path_bytes += (size_t)pr + 1;
		if (r->path_bytes > DIFF_PATH_BYTES) {
			err = cause_set(
				r->cause, -EINVAL,
				"span thread %u: its span paths add up to more than %zu MiB "
				"of text (long names in a deep tree): not compared",
				r->threads, DIFF_PATH_BYTES >> 20);
			break;
		}
		for (size_t f = 0; f < sizeof fields / sizeof *fields && !err; f++)
			err = diff_node_value(r, k, path[i], fields[f].name, fields[f].unit, vf[f],
					      cJSON_GetObjectItemCaseSensitive(nd, fields[f].name));
		const cJSON *m;
		cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(nd, "metrics"))
		{
			if (err || !m->string)
				continue;
			int fam = diff_vfam(r->d, m->string, true);
			err = fam < 0 ? -ENOMEM
				      : diff_node_value(r, k, path[i], m->string, "", fam, m);
		}
		i++;
	}
	for (int j = 0; j < n; j++)
		free(path[j]);
	free(path);
	u64map_release(&ids);
	r->threads++;
	return err;
}

/* .spans.metrics: the values each side declares collected. */
static int diff_declared(struct diff_read *r, const cJSON *list)
{
	static const struct {
		const char *kind, *family;
	} kinds[] = {
		{"off_cpu", "off_cpu_ns"}, {"allocs", "allocs"}, {"alloc_bytes", "alloc_bytes"}};
	const cJSON *m;
	cJSON_ArrayForEach(m, list)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name");
		const cJSON *kind = cJSON_GetObjectItemCaseSensitive(m, "kind");
		const cJSON *unit = cJSON_GetObjectItemCaseSensitive(m, "unit");
		if (!cJSON_IsString(name) || !cJSON_IsString(kind))
			continue;
		const char *family = NULL;
		bool event = strcmp(kind->valuestring, "event") == 0;
		if (event)
			family = name->valuestring;
		for (size_t k = 0; !family && k < sizeof kinds / sizeof *kinds; k++)
			if (strcmp(kind->valuestring, kinds[k].kind) == 0)
				family = kinds[k].family;
		if (!family)
			continue; /* frees and free_bytes: not compared */
		int f = diff_vfam(r->d, family, event);
		if (f < 0)
			return -ENOMEM;
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "supported")))
			r->d->vfam[f].on[r->s] = true;
		if (cJSON_IsString(unit) && !r->d->vfam[f].unit)
			r->d->vfam[f].unit = diff_text(r->d, unit->valuestring);
	}
	return 0;
}

/* The .spans object next in the text. */
static int diff_spans(struct diff_read *r, struct diff_in *in)
{
	int open = din_open(r, in, '{', '}');
	if (open <= 0)
		return open;
	for (;;) {
		cJSON *key = din_key(in);
		if (!key)
			return diff_not_json(r);
		const char *k = key->valuestring;
		int err = 0;
		if (strcmp(k, "threads") == 0) {
			err = din_array(r, in, diff_thread);
		} else if (strcmp(k, "collected") == 0 || strcmp(k, "metrics") == 0) {
			cJSON *v = din_value(in);
			if (!v)
				err = diff_not_json(r);
			else if (*k == 'c')
				r->collected = cJSON_IsTrue(v);
			else
				err = diff_declared(r, v);
			cJSON_Delete(v);
		} else {
			err = din_skip(r, in, 2);
		}
		cJSON_Delete(key);
		if (err)
			return err;
		if (din_eat(in, ','))
			continue;
		if (din_eat(in, '}'))
			return 0;
		return diff_not_json(r);
	}
}

/* The strings of a list (the command, or the events' names) joined by sep;
 * NULL (and 0) when it is not a list. */
static int diff_join(const cJSON *list, const char *key, char sep, char **out)
{
	*out = NULL;
	if (!cJSON_IsArray(list))
		return 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	if (!fp)
		return -ENOMEM;
	const cJSON *el;
	bool first = true;
	cJSON_ArrayForEach(el, list)
	{
		const cJSON *s = key ? cJSON_GetObjectItemCaseSensitive(el, key) : el;
		if (!cJSON_IsString(s))
			continue;
		if (!first)
			fputc(sep, fp);
		fputs(s->valuestring, fp);
		first = false;
	}
	if (fclose(fp) != 0 || !buf) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}

/* Every item of side s: as many samples as the side has runs. */
static int diff_settle(struct diff *d, int s)
{
	for (size_t i = 0; i < d->n; i++) {
		struct diff_item *it = &d->item[i];
		size_t n = d->runs[s] ? d->runs[s] : 1;
		if (diff_room(it, s, n) < 0)
			return -ENOMEM;
		if (it->cap[s] > n) { /* the growth's slack back */
			double *v = realloc(it->v[s], n * sizeof *v);
			if (v) {
				it->v[s] = v;
				it->cap[s] = n;
			}
		}
		if (it->vfam >= 0 && d->vfam[it->vfam].unit && !*it->unit)
			it->unit = d->vfam[it->vfam].unit;
	}
	return 0;
}

/* The document's members, one at a time. */
static int diff_document(struct diff_read *r, struct diff_in *in)
{
	struct diff *d = r->d;
	int s = r->s, err = 0;
	if (!din_eat(in, '{')) {
		err = din_skip(r, in, 4);
		din_ws(in);
		return err ? err : in->p != in->end ? diff_not_json(r) : diff_not_ours(r);
	}
	if (!din_eat(in, '}')) {
		for (;;) {
			cJSON *key = din_key(in), *v = NULL;
			if (!key)
				return diff_not_json(r);
			const char *k = key->valuestring;
			if (strcmp(k, "runs") == 0) {
				err = r->have_runs ? diff_not_ours(r) : din_array(r, in, diff_run);
				r->have_runs = true;
			} else if (strcmp(k, "spans") == 0) {
				err = r->have_spans ? diff_not_ours(r) : diff_spans(r, in);
				r->have_spans = true;
			} else if (strcmp(k, "schema_version") == 0 || strcmp(k, "command") == 0 ||
				   strcmp(k, "events") == 0) {
				if (!(v = din_value(in)))
					err = diff_not_json(r);
				else if (*k == 's')
					r->schema = (r->version = cJSON_IsNumber(v))
							    ? v->valuedouble
							    : 0;
				else if (*k == 'c' && !d->command[s])
					err = diff_join(v, NULL, ' ', &d->command[s]);
				else if (*k == 'e' && !d->events[s])
					err = diff_join(v, "name", ',', &d->events[s]);
			} else {
				err = din_skip(r, in, 1);
			}
			cJSON_Delete(v);
			cJSON_Delete(key);
			if (err)
				return err;
			if (din_eat(in, ','))
				continue;
			if (din_eat(in, '}'))
				break;
			return diff_not_json(r);
		}
	}
	din_ws(in);
	if (in->p != in->end)
		return diff_not_json(r);
	/* a newer schema changed what some field means: not compared as ours */
	if (r->version && r->schema > JSON_SCHEMA_VERSION)
		return cause_set(
			r->cause, -EINVAL,
			"schema_version %g is newer than this spanstat reads (%d): compare it "
			"with the spanstat that wrote it",
			r->schema, JSON_SCHEMA_VERSION);
	if (r->version && r->have_runs && r->runs < 1) /* a damaged record's, or a cut run */
		return cause_set(r->cause, -EINVAL,
				 "no run's results are known (a damaged or partial recording): "
				 "nothing to compare");
	if (!r->version || !r->have_runs)
		return diff_not_ours(r);
	if (r->top_run > r->runs && r->top_run > r->end_run)
		return cause_set(r->cause, -EINVAL,
				 "span thread %u: of run %" PRIu64
				 ", but the document has %u run%s",
				 r->top_thread, r->top_run - 1, r->runs, r->runs == 1 ? "" : "s");
	return 0;
}

int diff_add_file(struct diff *d, int s, const char *head, size_t len, FILE *fp, char **cause)
{
	if (s < 0 || s > 1 || d->runs[s])
		return cause_set(cause, -EINVAL, "a side read twice");
	struct diff_read r = {.d = d, .s = s, .cause = cause};
	struct diff_in in = {.p = head, .end = head + len, .fp = fp, .eof = !fp};
	if (fp) { /* the window starts with head */
		in.cap = len > DIFF_WINDOW ? len : DIFF_WINDOW;
		if (!(in.buf = malloc(in.cap)))
			return -ENOMEM;
		if (len)
			memcpy(in.buf, head, len);
		in.p = in.buf;
		in.end = in.buf + len;
	}
	int err = diff_document(&r, &in);
	if (in.errnum && err != -ENOMEM) { /* cut short by the reading, not the text */
		if (cause) {
			free(*cause);
			*cause = NULL;
		}
		err = in.errnum == ENOMEM ? -ENOMEM
					  : cause_set(cause, -in.errnum, "cannot read it: %s",
						      strerror(in.errnum));
	}
	free(in.buf);
	free(r.evcache);
	if (err)
		return err;
	d->runs[s] = r.runs;
	d->spans[s] = r.collected || r.threads > 0;
	return diff_settle(d, s);
}

int diff_add(struct diff *d, int s, const char *json, size_t len, char **cause)
{
	return diff_add_file(d, s, json, len, NULL, cause);
}

/* --- comparing ----------------------------------------------------------- */

struct diff_pi {
	double p;
	size_t i;
};

static int diff_by_p(const void *a, const void *b)
{
	const struct diff_pi *x = a, *y = b;
	if (x->p != y->p)
		return (x->p > y->p) - (x->p < y->p);
	return (x->i > y->i) - (x->i < y->i);
}

/* The p-values that are numbers, smallest first; *m of them. */
static struct diff_pi *diff_sorted(const double *p, double *adj, size_t n, size_t *m)
{
	struct diff_pi *s = malloc((n ? n : 1) * sizeof *s);
	*m = 0;
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		adj[i] = NAN;
		if (!isnan(p[i]))
			s[(*m)++] = (struct diff_pi){p[i], i};
	}
	qsort(s, *m, sizeof *s, diff_by_p);
	return s;
}

int diff_holm(const double *p, double *adj, size_t n)
{
	size_t m;
	struct diff_pi *s = diff_sorted(p, adj, n, &m);
	if (!s)
		return -ENOMEM;
	double run = 0;
	for (size_t k = 0; k < m; k++) {
		run = fmax(run, fmin(1, s[k].p * (double)(m - k)));
		adj[s[k].i] = run;
	}
	free(s);
	return 0;
}

int diff_bh(const double *p, double *adj, size_t n)
{
	size_t m;
	struct diff_pi *s = diff_sorted(p, adj, n, &m);
	if (!s)
		return -ENOMEM;
	double run = 1;
	for (size_t k = m; k-- > 0;) {
		run = fmin(run, s[k].p * (double)m / (double)(k + 1));
		adj[s[k].i] = run;
	}
	free(s);
	return 0;
}

static int diff_add_gap(struct diff *d, enum diff_gap_kind kind, const char *name, int side)
{
	if (GROW(d->gap, d->ngap + 1, d->gapcap, 8) < 0)
		return -ENOMEM;
	d->gap[d->ngap++] = (struct diff_gap){.kind = kind, .name = name, .side = side};
	return 0;
}

/* The statistics of one side of it, from the runs with a value (into x). */
static void diff_side(const struct diff *d, struct diff_item *it, int s, double *x)
{
	size_t n = 0;
	for (unsigned r = 0; r < d->runs[s]; r++)
		if (!isnan(it->v[s][r]))
			x[n++] = it->v[s][r];
	struct stats st;
	stats_init(&st);
	for (size_t k = 0; k < n; k++)
		stats_add(&st, x[k]);
	it->n[s] = n;
	it->mean[s] = n ? st.mean : NAN;
	it->sd[s] = stats_stddev(&st);
}

/* What can be compared of it, its presence, and its test. */
static int diff_item_test(struct diff *d, struct diff_item *it, bool spans_gap, double *x[2])
{
	for (int s = 0; s < 2; s++)
		diff_side(d, it, s, x[s]);
	it->change = it->mean[1] - it->mean[0];
	it->change_pct = isnan(it->change)  ? NAN
			 : it->mean[0] != 0 ? 100 * it->change / it->mean[0]
			 : it->change == 0  ? 0
					    : copysign(INFINITY, it->change);
	it->presence = it->seen[0] && it->seen[1] ? DIFF_BOTH
		       : it->seen[0]		  ? DIFF_GONE
		       : it->seen[1]		  ? DIFF_NEW
						  : DIFF_NEITHER;
	it->test = DIFF_TEST_NONE;
	it->welch_p = it->mwu_p = it->p = it->adj_p = NAN;
	it->significant = false;
	if (it->kind != DIFF_SPAN && it->presence == DIFF_NEITHER) {
		it->verdict = DIFF_NOT_COUNTED;
		return 0;
	}
	if (it->kind != DIFF_SPAN && it->presence != DIFF_BOTH) {
		it->verdict = DIFF_NOT_COMPARABLE;
		return diff_add_gap(d, it->kind == DIFF_COUNTER ? DIFF_GAP_EVENT : DIFF_GAP_RUSAGE,
				    it->name, it->seen[1]);
	}
	if (it->kind == DIFF_SPAN &&
	    (spans_gap || (it->vfam >= 0 && d->vfam[it->vfam].on[0] != d->vfam[it->vfam].on[1]))) {
		it->verdict = DIFF_NOT_COMPARABLE;
		return 0;
	}
	if (it->n[0] < 2 || it->n[1] < 2) {
		it->verdict = DIFF_NO_TEST;
		return 0;
	}
	it->verdict = DIFF_SAME;
	if (it->sd[0] == 0 && it->sd[1] == 0) {
		it->test = DIFF_TEST_EXACT;
		return 0;
	}
	it->welch_p = stats_welch_p(x[0], it->n[0], x[1], it->n[1]);
	it->test = DIFF_TEST_WELCH;
	if (it->n[0] >= 8 && it->n[1] >= 8) {
		it->mwu_p = stats_mwu_p(x[0], it->n[0], x[1], it->n[1]);
		it->test = DIFF_TEST_WELCH_MWU;
	}
	it->p = isnan(it->mwu_p) || it->mwu_p < it->welch_p ? it->welch_p : it->mwu_p;
	return 0;
}

static const struct diff *diff_top_of;
static int diff_by_old_self(const void *a, const void *b)
{
	const struct diff_item *x = &diff_top_of->item[*(const size_t *)a],
			       *y = &diff_top_of->item[*(const size_t *)b];
	if (x->mean[0] != y->mean[0])
		return x->mean[0] < y->mean[0] ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The primary family: every counter, the elapsed time, and the self time
 * of the k comparable span paths with the most of it in OLD, among those
 * NEW has too: a path gone is a change of structure, not of speed, and is
 * reported as secondary. */
static int diff_primary(struct diff *d, unsigned k)
{
	size_t *ix = malloc((d->n ? d->n : 1) * sizeof *ix), m = 0;
	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++) {
		struct diff_item *it = &d->item[i];
		it->primary = it->kind == DIFF_COUNTER ||
			      (it->kind == DIFF_RUSAGE && strcmp(it->name, "elapsed_ns") == 0);
		if (it->kind == DIFF_SPAN && strcmp(it->field, "self_ns") == 0 &&
		    it->verdict != DIFF_NOT_COMPARABLE && it->presence == DIFF_BOTH &&
		    it->mean[0] > 0)
			ix[m++] = i;
	}
	diff_top_of = d;
	qsort(ix, m, sizeof *ix, diff_by_old_self);
	for (size_t j = 0; j < m && j < k; j++)
		d->item[ix[j]].primary = true;
	free(ix);
	return 0;
}

/* Each family's p adjusted: Holm's for the primary, BH's for the rest. */
static int diff_adjust(struct diff *d)
{
	double *p = malloc((d->n ? d->n : 1) * sizeof *p);
	double *adj = malloc((d->n ? d->n : 1) * sizeof *adj);
	size_t *ix = malloc((d->n ? d->n : 1) * sizeof *ix);
	int err = p && adj && ix ? 0 : -ENOMEM;
	for (int fam = 0; !err && fam < 2; fam++) {
		size_t m = 0;
		for (size_t i = 0; i < d->n; i++)
			if (d->item[i].primary == !fam && !isnan(d->item[i].p)) {
				ix[m] = i;
				p[m++] = d->item[i].p;
			}
		err = fam == 0 ? diff_holm(p, adj, m) : diff_bh(p, adj, m);
		for (size_t j = 0; !err && j < m; j++)
			d->item[ix[j]].adj_p = adj[j];
	}
	free(p);
	free(adj);
	free(ix);
	return err;
}

int diff_compare(struct diff *d, const struct diff_opts *o)
{
	d->ngap = 0;
	memset(&d->sum, 0, sizeof d->sum);
	size_t most = d->runs[0] > d->runs[1] ? d->runs[0] : d->runs[1];
	double *x[2] = {malloc((most ? most : 1) * sizeof(double)),
			malloc((most ? most : 1) * sizeof(double))};
	int err = x[0] && x[1] ? 0 : -ENOMEM;
	for (int s = 0; !err && s < 2; s++) /* items the other side made: their samples here */
		err = diff_settle(d, s);
	/* what each side collected: span paths, and each value of theirs */
	bool spans_gap = d->spans[0] != d->spans[1];
	if (!err && spans_gap)
		err = diff_add_gap(d, DIFF_GAP_SPANS, "", d->spans[1]);
	for (size_t i = 0; i < d->n; i++)
		for (int s = 0; d->item[i].vfam >= 0 && s < 2; s++)
			d->vfam[d->item[i].vfam].on[s] |= d->item[i].seen[s];
	for (size_t f = 0; !err && !spans_gap && f < d->nvfam; f++)
		if (d->vfam[f].on[0] != d->vfam[f].on[1])
			err = diff_add_gap(d, DIFF_GAP_SPAN_VALUE, d->vfam[f].name,
					   d->vfam[f].on[1]);
	for (size_t i = 0; !err && i < d->n; i++)
		err = diff_item_test(d, &d->item[i], spans_gap, x);
	free(x[0]);
	free(x[1]);
	if (!err)
		err = diff_primary(d, o->primary_paths);
	if (!err)
		err = diff_adjust(d);
	if (err)
		return err;
	for (size_t i = 0; i < d->n; i++) {
		struct diff_item *it = &d->item[i];
		struct diff_count *c = it->primary ? &d->sum.primary : &d->sum.secondary;
		if (it->verdict == DIFF_NO_TEST)
			c->untested++;
		if (it->test == DIFF_TEST_NONE)
			continue;
		it->significant =
			it->test == DIFF_TEST_EXACT ? it->change != 0 : it->adj_p < o->alpha;
		if (it->significant && fabs(it->change_pct) > o->threshold_pct)
			it->verdict = it->change > 0 ? DIFF_WORSE : DIFF_BETTER;
		c->compared++;
		c->significant += it->significant;
		c->worse += it->verdict == DIFF_WORSE;
		c->better += it->verdict == DIFF_BETTER;
	}
	d->sum.outcome = d->ngap		    ? DIFF_OUT_NOT_COMPARABLE
			 : !d->sum.primary.compared ? DIFF_OUT_NO_TEST
			 : d->sum.primary.worse	    ? DIFF_OUT_WORSE
			 : d->sum.primary.better    ? DIFF_OUT_BETTER
						    : DIFF_OUT_SAME;
	return 0;
}

/* --- report order ---------------------------------------------------------- */

struct diff_rank {
	int family, group;
	double effect;
	size_t i;
};

static int diff_by_rank(const void *a, const void *b)
{
	const struct diff_rank *x = a, *y = b;
	if (x->family != y->family)
		return x->family - y->family;
	if (x->group != y->group)
		return x->group - y->group;
	if (x->effect != y->effect)
		return x->effect < y->effect ? 1 : -1;
	return (x->i > y->i) - (x->i < y->i);
}

int diff_order(const struct diff *d, size_t **order)
{
	static const int group[] = {
		[DIFF_WORSE] = 0,   [DIFF_BETTER] = 0,	       [DIFF_SAME] = 1,
		[DIFF_NO_TEST] = 2, [DIFF_NOT_COMPARABLE] = 3, [DIFF_NOT_COUNTED] = 4,
	};
	struct diff_rank *r = malloc((d->n ? d->n : 1) * sizeof *r);
	size_t *o = malloc((d->n ? d->n : 1) * sizeof *o);
	if (!r || !o) {
		free(r);
		free(o);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_item *it = &d->item[i];
		double e = fabs(it->change_pct);
		r[i] = (struct diff_rank){.family = !it->primary,
					  .group = group[it->verdict],
					  .effect = isnan(e) ? -1 : e,
					  .i = i};
	}
	qsort(r, d->n, sizeof *r, diff_by_rank);
	for (size_t i = 0; i < d->n; i++)
		o[i] = r[i].i;
	free(r);
	*order = o;
	return 0;
}

/* --- the differential flame graph's tree ------------------------------------ */

/* The child of parent named name (a strtab id), made when missing. */
static uint32_t diff_child(struct span_tree *t, uint32_t parent, uint32_t name)
{
	uint32_t last = 0;
	for (uint32_t c = t->node[parent].first_child; c; c = t->node[c].next_sibling) {
		if (t->node[c].name == name)
			return c;
		last = c;
	}
	if (GROW(t->node, t->n + 1, t->cap, 64) < 0)
		return 0;
	uint32_t i = t->n++;
	memset(&t->node[i], 0, sizeof t->node[i]);
	t->node[i].name = name;
	t->node[i].parent = parent;
	if (last)
		t->node[last].next_sibling = i;
	else
		t->node[parent].first_child = i;
	return i;
}

int diff_tree(const struct diff *d, struct span_tree *t, struct strtab *names, uint64_t **old_self)
{
	memset(t, 0, sizeof *t);
	*old_self = NULL;
	uint64_t *old = NULL;
	size_t oldcap = 0;
	t->node = calloc(1, sizeof *t->node);
	if (!t->node)
		return -ENOMEM;
	t->n = t->cap = 1;
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_item *it = &d->item[i];
		if (it->kind != DIFF_SPAN || strcmp(it->field, "self_ns") != 0)
			continue;
		uint32_t at = 0;
		for (const char *p = it->name; at != UINT32_MAX;) {
			size_t len = strcspn(p, ";");
			uint32_t id = strtab_intern(names, p, len);
			uint32_t c = id ? diff_child(t, at, id) : 0;
			if (!c)
				goto nomem;
			at = c;
			if (!p[len])
				break;
			p += len + 1;
		}
		if (t->cap > oldcap) {
			uint64_t *o = realloc(old, t->cap * sizeof *o);
			if (!o)
				goto nomem;
			memset(o + oldcap, 0, (t->cap - oldcap) * sizeof *o);
			old = o;
			oldcap = t->cap;
		}
		/* a width: a time in ns, never negative, within uint64_t */
		double nw = isnan(it->mean[1]) || it->mean[1] < 0 ? 0 : fmin(it->mean[1], 9e18);
		double od = isnan(it->mean[0]) || it->mean[0] < 0 ? 0 : fmin(it->mean[0], 9e18);
		t->node[at].total_ns = (uint64_t)llround(nw); /* self for now */
		old[at] = (uint64_t)llround(od);
	}
	/* totals: self plus the children's, bottom up (children come later) */
	for (uint32_t i = t->n; i-- > 1;) {
		struct span_node *p = &t->node[t->node[i].parent];
		p->total_ns += t->node[i].total_ns;
		p->child_ns += t->node[i].total_ns;
	}
	if (t->n > oldcap) { /* no span at all */
		uint64_t *o = realloc(old, t->n * sizeof *o);
		if (!o)
			goto nomem;
		memset(o + oldcap, 0, (t->n - oldcap) * sizeof *o);
		old = o;
	}
	*old_self = old;
	return 0;
nomem:
	free(old);
	span_tree_release(t);
	return -ENOMEM;
}
