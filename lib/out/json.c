/* json.c: the --json writer: one JSON document per session, built with cJSON
 * and written at finish.  The schema (every field, its type, when it is null)
 * is documented in man/spanstat-json.5; keep the two in step and bump
 * JSON_SCHEMA_VERSION on incompatible changes.  Every documented field is
 * always present: what does not apply is null or an empty array.  Integers
 * beyond int range (nanoseconds, large counts) are written as raw integer
 * literals so they are exact and never get an exponent; everything else goes
 * through cJSON numbers, which print in the C locale.  The only state kept while the
 * target runs is the -I samples (bounded by the run length). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "grow.h"
#include "metrics.h"
#include "recfile.h"
#include "rankstat.h"
#include "stats.h"
#include "spannames.h"
#include "spanweight.h"
#include "utf8esc.h"
#include "writer.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif

/* One -I sample, copied: the caller's counts live only for the call. */
struct json_interval {
	unsigned run;
	uint64_t t_ns, length_ns;
	struct count *counts;
	struct count *units; /* per unit (head's aggr), or NULL */
};

struct json {
	struct json_interval *iv;
	size_t niv, cap;
	size_t nev;
};

/* The node lists, written as the document is: every list stands in the
 * document as a placeholder string, "\x01nodes K NONCE" (NONCE: random, so
 * that no name can pass for one), and is streamed node by node where the
 * printed document holds it, so that memory stays with the trees and not
 * with a tree of JSON items and its text (6 KB per span path before). */
struct json_lists {
	struct json_list {
		const struct span_tree *t;
		const struct run_head *h;
	} * l;
	size_t n, cap;
	uint64_t nonce;
	struct span_tree scratch;    /* the merged tree, when it had to be made */
	const char *weight;	     /* --weight's name, NULL for wall time */
	const struct spanweight *by; /* NULL when the run cannot count it */
};

/* Adds an integer exactly: cJSON numbers are doubles and print large
 * integers with an exponent ("1e+15"), so beyond int range use a literal. */
static cJSON *json_u64(cJSON *obj, const char *key, uint64_t v)
{
	if (v <= INT32_MAX)
		return cJSON_AddNumberToObject(obj, key, (double)v);
	char buf[24];
	snprintf(buf, sizeof buf, "%" PRIu64, v);
	return cJSON_AddRawToObject(obj, key, buf);
}

static cJSON *json_i64(cJSON *obj, const char *key, int64_t v)
{
	if (v <= INT32_MAX && v >= INT32_MIN)
		return cJSON_AddNumberToObject(obj, key, (double)v);
	char buf[24];
	snprintf(buf, sizeof buf, "%" PRId64, v);
	return cJSON_AddRawToObject(obj, key, buf);
}

/* A double, or null when it is not finite (JSON has no NaN). */
static cJSON *json_num(cJSON *obj, const char *key, double v)
{
	if (!isfinite(v))
		return cJSON_AddNullToObject(obj, key);
	return cJSON_AddNumberToObject(obj, key, v);
}

/* A string that came from the target or the command line, escaped so the
 * document is valid UTF-8 (utf8esc.h); NULL on -ENOMEM. */
static cJSON *json_text_item(const char *s)
{
	char *e = utf8esc_dup(s);
	cJSON *item = e ? cJSON_CreateString(e) : NULL;
	free(e);
	return item;
}

static cJSON *json_text(cJSON *obj, const char *key, const char *s)
{
	cJSON *item = json_text_item(s);
	if (item)
		cJSON_AddItemToObject(obj, key, item);
	return item;
}

/* A string spanstat names itself (an event's name or unit, the host's):
 * as it is when valid UTF-8, else escaped as json_text does (one read
 * back from a record file may hold any bytes). */
static cJSON *json_name(cJSON *obj, const char *key, const char *s)
{
	if (!utf8esc_valid(s))
		return json_text(obj, key, s);
	return cJSON_AddStringToObject(obj, key, s);
}

static cJSON *json_text_or_null(cJSON *obj, const char *key, const char *s)
{
	if (!s || !*s)
		return cJSON_AddNullToObject(obj, key);
	return json_text(obj, key, s);
}

static const char *json_state(enum count_state s)
{
	switch (s) {
	case COUNT_OK:
		return "ok";
	case COUNT_NOT_SUPPORTED:
		return "not supported";
	case COUNT_NOT_COUNTED:
		return "not counted";
	case COUNT_UNKNOWN:
		break;
	}
	return "unknown";
}

static double json_running_pct(const struct count *c)
{
	if (!c->enabled)
		return c->state == COUNT_OK ? 100.0 : 0.0;
	return 100.0 * (double)c->running / (double)c->enabled;
}

/* One event's counts: shared by the mean (top level) and each run. */
static void json_count(cJSON *o, const struct event *ev, const struct count *c,
		       const struct metric *m)
{
	json_name(o, "name", ev->name);
	if (ev->cgroup) /* -G: counted only in that cgroup */
		json_name(o, "cgroup", ev->cgroup);
	else
		cJSON_AddNullToObject(o, "cgroup");
	if (c->state == COUNT_UNKNOWN) { /* a damaged record's: nothing is known */
		static const char *const keys[] = {"raw", "time_enabled_ns", "time_running_ns",
						   "running_pct", "supported"};
		cJSON_AddNullToObject(o, "value");
		json_name(o, "unit", ev->unit ? ev->unit : "");
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
			cJSON_AddNullToObject(o, keys[i]);
		cJSON_AddStringToObject(o, "state", "unknown");
		cJSON_AddStringToObject(o, "reason", "the results of its runs are lost");
		cJSON_AddArrayToObject(o, "metrics");
		return;
	}
	if (c->state == COUNT_OK)
		json_num(o, "value", c->value);
	else
		cJSON_AddNullToObject(o, "value");
	json_name(o, "unit", ev->unit ? ev->unit : "");
	json_u64(o, "raw", c->raw);
	json_u64(o, "time_enabled_ns", c->enabled);
	json_u64(o, "time_running_ns", c->running);
	json_num(o, "running_pct", json_running_pct(c));
	cJSON_AddBoolToObject(o, "supported", c->state != COUNT_NOT_SUPPORTED);
	cJSON_AddStringToObject(o, "state", json_state(c->state));
	if (c->state == COUNT_NOT_SUPPORTED && c->err)
		cJSON_AddStringToObject(o, "reason", strerror(c->err));
	else if (c->state == COUNT_NOT_COUNTED)
		cJSON_AddStringToObject(o, "reason", "the event never ran");
	else
		cJSON_AddNullToObject(o, "reason");
	cJSON *ms = cJSON_AddArrayToObject(o, "metrics");
	if (ms && m && m->valid && isfinite(m->value)) {
		cJSON *mo = cJSON_CreateObject();
		cJSON_AddItemToArray(ms, mo);
		cJSON_AddStringToObject(mo, "name", m->id ? m->id : "");
		cJSON_AddNumberToObject(mo, "value", m->value);
		cJSON_AddStringToObject(mo, "unit", m->unit);
	}
}

static cJSON *json_events(const struct evlist *evl, const struct count *c, double elapsed_ns,
			  const struct stat_summary *st, unsigned nruns)
{
	cJSON *arr = cJSON_CreateArray();
	struct metric *m = calloc(evl->n ? evl->n : 1, sizeof *m);
	if (!arr || !m) {
		free(m);
		cJSON_Delete(arr);
		return NULL;
	}
	metrics_compute(evl, c, elapsed_ns, m);
	for (size_t i = 0; i < evl->n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, o);
		json_count(o, &evl->ev[i], &c[i], &m[i]);
		cJSON_AddNumberToObject(o, "group", evl->ev[i].group);
		if (st && nruns >= 2 && c[i].state == COUNT_OK) {
			json_num(o, "mean", st[i].mean);
			json_num(o, "stddev", st[i].stddev);
			json_num(o, "rel_stddev_pct", st[i].rel);
		} else {
			cJSON_AddNullToObject(o, "mean");
			cJSON_AddNullToObject(o, "stddev");
			cJSON_AddNullToObject(o, "rel_stddev_pct");
		}
	}
	free(m);
	return arr;
}

/* A number of aggr_unit, null where the mode has none (-1). */
static void json_id(cJSON *o, const char *key, int v)
{
	if (v < 0)
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddNumberToObject(o, key, v);
}

/* The unit's identity: perf's name for it and its topology ids. */
static void json_unit_id(cJSON *o, const struct aggr *ag, size_t u)
{
	const struct aggr_unit *x = &ag->unit[u];
	json_name(o, "id", x->id);
	if (ag->mode == AGGR_THREAD)
		cJSON_AddNullToObject(o, "cpus");
	else
		cJSON_AddNumberToObject(o, "cpus", x->ncpus);
	json_id(o, "cpu", x->cpu);
	json_id(o, "socket", x->socket);
	json_id(o, "die", x->die);
	json_id(o, "core", x->core);
	json_id(o, "node", x->node);
	json_id(o, "cache_level", x->cache_level);
	json_id(o, "cache_id", x->cache_id);
	json_id(o, "tid", x->tid);
	if (ag->mode == AGGR_THREAD)
		json_name(o, "comm", x->comm);
	else
		cJSON_AddNullToObject(o, "comm");
}

/* The rows per unit: counts (ag->n rows of evl->n) with their spread over
 * nruns (st: NULL for none); brief: each unit's id only, not its topology. */
static cJSON *json_units(const struct run_head *h, const struct count *counts,
			 const struct stat_summary *st, unsigned nruns, double elapsed_ns,
			 bool brief)
{
	const struct aggr *ag = h->aggr;
	size_t n = h->evl->n;
	cJSON *arr = cJSON_CreateArray();
	for (size_t u = 0; arr && u < ag->n; u++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, o);
		if (brief)
			json_name(o, "id", ag->unit[u].id);
		else
			json_unit_id(o, ag, u);
		cJSON_AddItemToObject(o, "events",
				      json_events(h->evl, counts + u * n, elapsed_ns,
						  st ? st + u * n : NULL, nruns));
	}
	return arr;
}

/* known: spanstat's children (not attached tasks); with !measured (no
 * run's results) not even the time is known. */
static cJSON *json_rusage(const struct rusage_info *ru, bool known, bool measured)
{
	cJSON *o = cJSON_CreateObject();
	if (measured)
		json_u64(o, "elapsed_ns", ru->elapsed_ns);
	else
		cJSON_AddNullToObject(o, "elapsed_ns");
	if (!known || !measured) { /* attached tasks: not spanstat's children */
		static const char *const keys[] = {
			"user_ns",	"sys_ns",	 "max_rss_kib",	   "minor_faults",
			"major_faults", "voluntary_csw", "involuntary_csw"};
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
			cJSON_AddNullToObject(o, keys[i]);
		return o;
	}
	json_u64(o, "user_ns", ru->utime_ns);
	json_u64(o, "sys_ns", ru->stime_ns);
	json_i64(o, "max_rss_kib", ru->maxrss_kb);
	json_i64(o, "minor_faults", ru->minflt);
	json_i64(o, "major_faults", ru->majflt);
	json_i64(o, "voluntary_csw", ru->nvcsw);
	json_i64(o, "involuntary_csw", ru->nivcsw);
	return o;
}

/* known: false when no run's results are known (all null then). */
static cJSON *json_exit(int exit_code, int wstatus, bool known)
{
	cJSON *o = cJSON_CreateObject();
	if (!known) {
		cJSON_AddNullToObject(o, "exit_code");
		cJSON_AddNullToObject(o, "signal");
		cJSON_AddNullToObject(o, "core_dumped");
		return o;
	}
	cJSON_AddNumberToObject(o, "exit_code", exit_code);
	if (WIFSIGNALED(wstatus)) {
		cJSON_AddNumberToObject(o, "signal", WTERMSIG(wstatus));
		cJSON_AddBoolToObject(o, "core_dumped", WCOREDUMP(wstatus) != 0);
	} else {
		cJSON_AddNullToObject(o, "signal");
		cJSON_AddBoolToObject(o, "core_dumped", 0);
	}
	return o;
}

static void json_header(cJSON *doc, const struct run_head *h)
{
	cJSON_AddNumberToObject(doc, "schema_version", JSON_SCHEMA_VERSION);
	cJSON_AddStringToObject(doc, "spanstat_version", PACKAGE_VERSION);
	cJSON *cmd = cJSON_AddArrayToObject(doc, "command");
	for (int i = 0; cmd && i < h->argc && h->argv && h->argv[i]; i++)
		cJSON_AddItemToArray(cmd, json_text_item(h->argv[i]));
	json_text_or_null(doc, "target", h->target); /* attached: what was counted */

	cJSON *start = cJSON_AddObjectToObject(doc, "start");
	struct tm tm;
	char iso[64] = "";
	time_t sec = h->start.tv_sec;
	if (gmtime_r(&sec, &tm))
		strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &tm);
	cJSON_AddStringToObject(start, "time", iso);
	json_u64(start, "unix_ns",
		 (uint64_t)h->start.tv_sec * 1000000000u + (uint64_t)h->start.tv_nsec);
	json_u64(start, "monotonic_ns", h->start_mono);

	cJSON *host = cJSON_AddObjectToObject(doc, "host");
	struct utsname u;
	if (h->uname[0]) {
		static const char *const key[4] = {"nodename", "sysname", "release", "machine"};
		for (int i = 0; i < 4; i++)
			json_name(host, key[i], h->uname[i] ? h->uname[i] : "");
	} else if (uname(&u) == 0) {
		cJSON_AddStringToObject(host, "nodename", u.nodename);
		cJSON_AddStringToObject(host, "sysname", u.sysname);
		cJSON_AddStringToObject(host, "release", u.release);
		cJSON_AddStringToObject(host, "machine", u.machine);
	} else {
		cJSON_AddStringToObject(host, "nodename", "");
		cJSON_AddStringToObject(host, "sysname", "");
		cJSON_AddStringToObject(host, "release", "");
		cJSON_AddStringToObject(host, "machine", "");
	}
	cJSON_AddNumberToObject(doc, "runs_requested", h->runs);
	cJSON_AddNumberToObject(doc, "interval_ms", h->interval_ms);
	cJSON_AddNumberToObject(doc, "interval_count", h->interval_count);
	cJSON_AddNumberToObject(doc, "delay_ms", h->delay_ms);
	cJSON_AddNumberToObject(doc, "timeout_ms", h->timeout_ms);
}

struct json_kid {
	uint64_t total;
	uint32_t node;
};

/* Children by total time, largest first; ties in tree order. */
static int json_cmp_total(const void *a, const void *b)
{
	const struct json_kid *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* One node of a flat list: ids are positions in the list, the parent's id
 * (null at the top) always smaller than its children's. */
/* A node's values (spanmetric.h): on- and off-CPU time, the events of
 * --span-events (null where not supported) and the allocation counts (null
 * where the program's allocator could not be counted); all
 * inclusive of the spans below, with self_* beside. */
static void json_node_values(cJSON *o, const struct span_tree *t, uint32_t i,
			     const struct run_head *h)
{
	const struct spanmetrics *ms = h ? h->metrics : NULL;
	if (ms && (!t->nval || ms->n != t->nval))
		ms = NULL;
	const struct span_node *sn = &t->node[i];
	const uint64_t *v = ms ? span_node_vals(t, i) : NULL;
	/* every key always there, null where the run did not measure it */
	static const char *const cpu_keys[] = {"cpu_ns", "off_cpu_ns", "self_cpu_ns",
					       "self_off_cpu_ns"};
	int oc = spanmetric_split(ms);
	if (oc >= 0 && ms->m[oc].supported) {
		uint64_t off = v[oc] < sn->total_ns ? v[oc] : sn->total_ns;
		uint64_t self = span_node_val_self(t, i, (unsigned)oc);
		uint64_t sself = span_node_self(sn), soff = self < sself ? self : sself;
		json_u64(o, "cpu_ns", sn->total_ns - off);
		json_u64(o, "off_cpu_ns", off);
		json_u64(o, "self_cpu_ns", sself - soff);
		json_u64(o, "self_off_cpu_ns", soff);
	} else {
		for (size_t k = 0; k < 4; k++)
			cJSON_AddNullToObject(o, cpu_keys[k]);
	}
	cJSON *m = cJSON_AddObjectToObject(o, "metrics");
	cJSON *sm = cJSON_AddObjectToObject(o, "self_metrics");
	for (unsigned k = 0; ms && m && sm && k < ms->n; k++) {
		const struct spanmetric *x = &ms->m[k];
		if (spanmetric_info(x)->key || spanmetric_info(x)->split)
			continue; /* not one of those kept by name */
		/* a key as json_name writes the name */
		char *esc = utf8esc_valid(x->name) ? NULL : utf8esc_dup(x->name);
		const char *key = esc ? esc : x->name;
		if (!x->supported) {
			cJSON_AddNullToObject(m, key);
			cJSON_AddNullToObject(sm, key);
		} else {
			json_u64(m, key, v[k]);
			json_u64(sm, key, span_node_val_self(t, i, k));
		}
		free(esc);
	}
	/* the metrics with a key of their own, in the table's order */
	for (int kind = 0; kind <= SPANMETRIC_KIND_LAST; kind++) {
		const char *key = spanmetric_table[kind].key;
		int x = key ? spanmetric_find(ms, (enum spanmetric_kind)kind) : -1;
		if (x >= 0 && ms->m[x].supported)
			json_u64(o, key, v[x]);
		else if (key)
			cJSON_AddNullToObject(o, key);
	}
}

/* A node's path is written while its names add up to this many bytes at
 * most, each counted with 3 more for its quotes and comma (so that names
 * of no text are bounded too); a deeper one has "path": null and is found
 * through its parents, so the document stays linear in the nodes for deep
 * recursions. */
#define JSON_PATH_BYTES 4096u

/* The names from the root to node i (whose ancestors by depth are
 * up[0..depth-1]) as an array, or null when they exceed JSON_PATH_BYTES;
 * NULL without memory. */
static cJSON *json_path(const struct span_tree *t, const uint32_t *up, uint32_t depth, uint32_t i,
			uint64_t bytes, const struct run_head *h)
{
	if (bytes > JSON_PATH_BYTES || !h)
		return cJSON_CreateNull();
	cJSON *a = cJSON_CreateArray();
	for (uint32_t d = 0; a && d <= depth; d++) {
		uint32_t k = d < depth ? up[d] : i;
		cJSON *s = json_text_item(spannames_text(h->names, h->strings, t->node[k].name));
		if (!s || !cJSON_AddItemToArray(a, s)) {
			cJSON_Delete(s);
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}

/* An exact integer sum beyond 64 bits as a literal. */
static cJSON *json_i128(cJSON *obj, const char *key, __int128 v)
{
	if (v >= INT64_MIN && v <= INT64_MAX)
		return json_i64(obj, key, (int64_t)v);
	if (v > 0 && v <= (__int128)UINT64_MAX)
		return json_u64(obj, key, (uint64_t)v);
	char buf[48], *q = buf + sizeof buf;
	bool neg = v < 0;
	unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
	*--q = 0;
	do {
		*--q = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u);
	if (neg)
		*--q = '-';
	return cJSON_AddRawToObject(obj, key, q);
}

struct json_arg {
	const char *key;
	const struct span_arg *e;
};

static int json_cmp_arg(const void *a, const void *b)
{
	const struct json_arg *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->e->type > y->e->type) - (x->e->type < y->e->type);
}

/* Node i's typed arguments (spanstat_arg_*), by key then type: count,
 * sum, min, max of numbers, trues of booleans, the most frequent texts. */
static void json_node_args(cJSON *o, const struct span_tree *t, uint32_t i,
			   const struct run_head *h)
{
	cJSON *a = cJSON_AddArrayToObject(o, "args");
	size_t n = 0;
	for (const struct span_arg *e = span_args_first(t->args, i); e;
	     e = span_args_next(t->args, e))
		n++;
	struct json_arg *v = n ? malloc(n * sizeof *v) : NULL;
	if (!a || !v)
		return;
	n = 0;
	for (const struct span_arg *e = span_args_first(t->args, i); e;
	     e = span_args_next(t->args, e))
		v[n++] =
			(struct json_arg){h && h->strings ? strtab_get(h->strings, e->key) : "", e};
	qsort(v, n, sizeof *v, json_cmp_arg);
	for (size_t k = 0; k < n; k++) {
		const struct span_arg *e = v[k].e;
		cJSON *x = cJSON_CreateObject();
		if (!x || !cJSON_AddItemToArray(a, x)) {
			cJSON_Delete(x);
			break;
		}
		json_text(x, "key", v[k].key);
		cJSON_AddStringToObject(x, "type", span_args_type_name(e->type));
		json_u64(x, "count", e->count);
		/* every member in every entry, in one order: null where the
		 * type has none */
		switch (e->type) {
		case SPAN_ARG_I64:
			json_i128(x, "sum", e->sum);
			json_i64(x, "min", e->imin);
			json_i64(x, "max", e->imax);
			break;
		case SPAN_ARG_U64:
			json_i128(x, "sum", e->sum);
			json_u64(x, "min", e->umin);
			json_u64(x, "max", e->umax);
			break;
		case SPAN_ARG_F64:
			json_num(x, "sum", e->fsum);
			json_num(x, "min", e->fmin);
			json_num(x, "max", e->fmax);
			break;
		default:
			cJSON_AddNullToObject(x, "sum");
			cJSON_AddNullToObject(x, "min");
			cJSON_AddNullToObject(x, "max");
			break;
		}
		if (e->type == SPAN_ARG_BOOL)
			json_i128(x, "true", e->sum);
		else
			cJSON_AddNullToObject(x, "true");
		if (e->type != SPAN_ARG_STR) {
			cJSON_AddArrayToObject(x, "top"); /* empty: iterable as the others */
			cJSON_AddNullToObject(x, "others");
			cJSON_AddNullToObject(x, "distinct_capped");
			continue;
		}
		struct span_arg_str top[SPANARGS_TOP];
		unsigned m = span_args_top(e, top);
		uint64_t shown = 0;
		cJSON *ta = cJSON_AddArrayToObject(x, "top");
		for (unsigned j = 0; ta && j < m; j++) {
			cJSON *y = cJSON_CreateObject();
			if (!y || !cJSON_AddItemToArray(ta, y)) {
				cJSON_Delete(y);
				break;
			}
			json_text(y, "value",
				  h && h->strings ? strtab_get(h->strings, top[j].text) : "");
			json_u64(y, "count", top[j].count);
			shown += top[j].count;
		}
		json_u64(x, "others", e->count - shown);
		cJSON_AddBoolToObject(x, "distinct_capped", e->others != 0);
	}
	free(v);
}

static cJSON *json_node(const struct span_tree *t, uint32_t i, uint32_t id, int64_t parent,
			uint32_t depth, cJSON *path, const struct spanweight *by,
			const struct run_head *h)
{
	const struct span_node *sn = &t->node[i];
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	json_u64(o, "id", id);
	if (parent < 0)
		cJSON_AddNullToObject(o, "parent");
	else
		json_u64(o, "parent", (uint64_t)parent);
	json_u64(o, "depth", depth);
	json_text(o, "name", h ? spannames_text(h->names, h->strings, sn->name) : "");
	const char *cat = h ? spannames_cat(h->names, h->strings, sn->name) : NULL;
	if (cat)
		json_text(o, "category", cat);
	else
		cJSON_AddNullToObject(o, "category");
	cJSON_AddItemToObject(o, "path", path);
	/* where the function is defined, from its debug information */
	uint32_t line = 0;
	const char *file = h ? spannames_where(h->names, sn->name, &line) : NULL;
	if (file) {
		json_text(o, "file", file);
		json_u64(o, "line", line);
	} else {
		cJSON_AddNullToObject(o, "file");
		cJSON_AddNullToObject(o, "line");
	}
	json_u64(o, "count", sn->count);
	json_u64(o, "total_ns", sn->total_ns);
	json_u64(o, "self_ns", span_node_self(sn));
	json_u64(o, "unfinished", sn->unfinished);
	json_node_values(o, t, i, h);
	json_node_args(o, t, i, h);
	if (by)
		json_u64(o, "self_weight", spanweight_self(by, t, i));
	else
		cJSON_AddNullToObject(o, "self_weight");
	return o;
}

/* Writes every node of t below the root as one flat array, depth-first
 * pre-order, children by total time (largest first): nesting in the
 * document stays fixed however deep the spans nest.  One node's items at a
 * time; 0, -ENOMEM or -EIO. */
static int json_write_nodes(FILE *fp, const struct span_tree *t, const struct spanweight *by,
			    const struct run_head *h)
{
	if (t->n <= 1)
		return fputs("[]", fp) == EOF ? (errno ? -errno : -EIO) : 0;
	int rc = 0;
	uint32_t *id = malloc(t->n * sizeof *id); /* tree index -> list id */
	uint32_t *depth = malloc(t->n * sizeof *depth);
	uint32_t *stack = malloc(t->n * sizeof *stack); /* nodes still to emit */
	struct json_kid *kids = malloc(t->n * sizeof *kids);
	uint32_t *up = malloc(t->n * sizeof *up);	/* the current path's nodes */
	uint64_t *bytes = malloc(t->n * sizeof *bytes); /* and its names' bytes */
	if (!id || !depth || !stack || !kids || !up || !bytes) {
		rc = -ENOMEM;
		goto out;
	}
	uint32_t sp = 0, next = 0;
	depth[0] = 0;
	uint32_t from = 0; /* the node whose children are pushed next */
	fputc('[', fp);
	for (;;) {
		size_t n = 0;
		for (uint32_t c = t->node[from].first_child; c && c < t->n;
		     c = t->node[c].next_sibling)
			kids[n++] = (struct json_kid){t->node[c].total_ns, c};
		qsort(kids, n, sizeof *kids, json_cmp_total);
		for (size_t k = n; k-- > 0;) { /* largest on top */
			stack[sp++] = kids[k].node;
			depth[kids[k].node] = from ? depth[from] + 1 : 0;
		}
		if (!sp)
			break;
		from = stack[--sp];
		const struct span_node *sn = &t->node[from];
		int64_t parent = sn->parent ? (int64_t)id[sn->parent] : -1;
		id[from] = next;
		/* pre-order: the ancestors at depths below this one are current */
		uint32_t d = depth[from];
		const char *name = h ? spannames_text(h->names, h->strings, sn->name) : "";
		up[d] = from;
		bytes[d] = (d ? bytes[d - 1] : 0) + strlen(name) + 3;
		cJSON *path = json_path(t, up, d, from, bytes[d], h);
		cJSON *o = path ? json_node(t, from, next, parent, d, path, by, h) : NULL;
		if (!o)
			cJSON_Delete(path);
		char *text = o ? cJSON_PrintUnformatted(o) : NULL;
		cJSON_Delete(o);
		if (!text) {
			rc = -ENOMEM;
			goto out;
		}
		fputs(next++ ? ",\n" : "\n", fp);
		fputs(text, fp);
		cJSON_free(text);
	}
	if (fputs("\n]", fp) == EOF || ferror(fp))
		rc = errno ? -errno : -EIO;
out:
	free(id);
	free(depth);
	free(stack);
	free(kids);
	free(up);
	free(bytes);
	return rc;
}

static cJSON *json_tree(const struct span_tree *t, const struct run_head *h, bool thread,
			struct json_lists *lists)
{
	const struct strtab *names = h ? h->strings : NULL;
	cJSON *o = cJSON_CreateObject();
	if (thread) {
		cJSON_AddNumberToObject(o, "pid", t->pid);
		cJSON_AddNumberToObject(o, "tid", t->tid);
		json_text_or_null(o, "thread_name",
				  names && t->thread_name ? strtab_get(names, t->thread_name)
							  : NULL);
		json_text_or_null(o, "process_name",
				  names && t->process_name ? strtab_get(names, t->process_name)
							   : NULL);
		cJSON_AddNumberToObject(o, "run", t->run);
		/* spanstat_message: the first SPANTREE_MESSAGES, and how many in all */
		json_u64(o, "message_count", t->messages);
		cJSON *ma = cJSON_AddArrayToObject(o, "messages");
		for (uint32_t i = 0; ma && i < t->nmsg; i++) {
			cJSON *m = cJSON_CreateObject();
			if (!m || !cJSON_AddItemToArray(ma, m)) {
				cJSON_Delete(m);
				break;
			}
			json_u64(m, "monotonic_ns", t->msg[i].ts);
			json_text(m, "text", t->msg[i].text);
		}
	}
	uint64_t total = 0, count = 0;
	for (uint32_t c = t->n ? t->node[0].first_child : 0; c && c < t->n;
	     c = t->node[c].next_sibling) {
		total += t->node[c].total_ns;
		count += t->node[c].count;
	}
	json_u64(o, "total_ns", total);
	json_u64(o, "count", count);
	json_node_args(o, t, 0, h); /* those recorded outside every span */
	json_u64(o, "args_not_kept", t->args_unkept + t->args_lost);
	cJSON *dmg = cJSON_AddObjectToObject(o, "damage");
	json_u64(dmg, "dropped", t->dmg[SPAN_DMG_DROPPED]);
	json_u64(dmg, "gaps", t->dmg[SPAN_DMG_GAP]);
	json_u64(dmg, "off_cpu_unplaced_ns", t->dmg[SPAN_DMG_OFFCPU]);
	if (GROW(lists->l, lists->n + 1, lists->cap, 16) < 0) {
		cJSON_Delete(o);
		return NULL;
	}
	char mark[64];
	snprintf(mark, sizeof mark, "\x01nodes %zu %016" PRIx64, lists->n, lists->nonce);
	lists->l[lists->n++] = (struct json_list){t, h};
	cJSON_AddStringToObject(o, "nodes", mark);
	return o;
}

/* The span section; the same shape, empty, when spans were not collected. */
/* An async row's numbers, and its name or its path (names from the
 * outermost). */
static cJSON *json_async_row(const struct span_trees *st, const struct span_async_path *a,
			     bool path, const struct run_head *h)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	json_text(o, "name", h ? spannames_text(h->names, h->strings, a->name) : "");
	if (path) {
		uint32_t chain[64], depth = 0;
		for (uint32_t k = (uint32_t)(a - st->apath); k && depth < 64;
		     k = st->apath[k].parent)
			chain[depth++] = k;
		cJSON *p = cJSON_AddArrayToObject(o, "path");
		while (p && depth-- > 0)
			cJSON_AddItemToArray(
				p, json_text_item(h ? spannames_text(h->names, h->strings,
								     st->apath[chain[depth]].name)
						    : ""));
	}
	uint64_t busy = a->busy_ns < a->total_ns ? a->busy_ns : a->total_ns;
	json_u64(o, "count", a->count);
	json_u64(o, "unfinished", a->unfinished);
	json_u64(o, "total_ns", a->total_ns);
	json_u64(o, "busy_ns", busy);
	json_u64(o, "idle_ns", a->total_ns - busy);
	json_u64(o, "enters", a->enters);
	json_u64(o, "moved", a->moved);
	return o;
}

/* .spans.async: the async spans by path and by name. */
static cJSON *json_async(const struct span_trees *st, const struct run_head *h)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *paths = cJSON_AddArrayToObject(o, "paths");
	cJSON *byname = cJSON_AddArrayToObject(o, "names");
	if (!paths || !byname) {
		cJSON_Delete(o);
		return NULL;
	}
	struct span_async_path *names = NULL;
	size_t n = 0;
	if (st && span_trees_async_names(st, &names, &n) < 0) {
		cJSON_Delete(o);
		return NULL;
	}
	for (size_t i = 1; st && i < st->napath; i++)
		if (st->apath[i].count)
			cJSON_AddItemToArray(paths, json_async_row(st, &st->apath[i], true, h));
	for (size_t i = 1; i < n; i++)
		cJSON_AddItemToArray(byname, json_async_row(st, &names[i], false, h));
	free(names);
	return o;
}

static cJSON *json_spans(const struct report *r, struct json_lists *lists)
{
	const struct run_head *names = r->head;
	const struct span_trees *st = r->spans;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "collected", st != NULL);
	/* what each node's self_weight counts (--weight) */
	json_name(o, "weight", lists->weight ? lists->weight : "wall");
	if (r->span_wall_ns) /* 0: no run's wall, or runs lost (analysis.c) */
		json_u64(o, "wall_ns", r->span_wall_ns);
	else
		cJSON_AddNullToObject(o, "wall_ns");
	json_u64(o, "instants", st ? st->instants : 0);
	json_u64(o, "counters", st ? st->counters : 0);
	json_u64(o, "messages", st ? st->messages : 0);
	cJSON *as = json_async(st, names);
	if (!as || !cJSON_AddItemToObject(o, "async", as)) {
		cJSON_Delete(as);
		cJSON_Delete(o);
		return NULL;
	}
	json_u64(o, "args", st ? st->args : 0);
	/* spanstat_arg_* values threads aggregating in the target could not keep */
	json_u64(o, "args_not_kept", st ? st->args_unkept : 0);
	/* what every node carries besides its times */
	cJSON *mlist = cJSON_AddArrayToObject(o, "metrics");
	const struct spanmetrics *ms = r->head ? r->head->metrics : NULL;
	static const char *const kinds[] = {"off_cpu", "event",	      "allocs",
					    "frees",   "alloc_bytes", "free_bytes"};
	for (unsigned k = 0; st && ms && mlist && k < ms->n; k++) {
		cJSON *m = cJSON_CreateObject();
		cJSON_AddItemToArray(mlist, m);
		json_text(m, "name", ms->m[k].name);
		cJSON_AddStringToObject(m, "kind", kinds[ms->m[k].kind]);
		cJSON_AddBoolToObject(m, "supported", ms->m[k].supported);
		cJSON_AddStringToObject(m, "unit", ms->m[k].time ? "ns" : "");
	}
	cJSON *threads = cJSON_AddArrayToObject(o, "threads");
	for (size_t i = 0; st && threads && i < st->nthread; i++)
		cJSON_AddItemToArray(threads, json_tree(st->thread[i], names, true, lists));
	static const struct span_tree empty;
	int err;
	const struct span_tree *merged = report_merged(r, &lists->scratch, &err);
	if (err < 0) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddItemToObject(o, "merged",
			      json_tree(merged ? merged : &empty, names, false, lists));

	/* a --keep-last record's window: null but snapshot when the spans
	 * are the whole session's */
	cJSON *wo = cJSON_AddObjectToObject(o, "window");
	const struct record_window *win = r->window;
	const struct {
		const char *key;
		uint64_t v;
	} wf[] = {{"keep_last", win ? win->size : 0},
		  {"overwritten_spans", win ? win->spans : 0},
		  {"overwritten_events", win ? win->events : 0},
		  {"overwritten_bytes", win ? win->bytes : 0},
		  {"cut", win ? win->cut : 0},
		  {"cut_args", win ? win->cut_args : 0}};
	for (size_t i = 0; wo && i < sizeof wf / sizeof wf[0]; i++)
		if (win)
			cJSON_AddNumberToObject(wo, wf[i].key, (double)wf[i].v);
		else
			cJSON_AddNullToObject(wo, wf[i].key);
	if (wo)
		cJSON_AddBoolToObject(wo, "snapshot", win && win->snapshot);

	cJSON *d = cJSON_AddObjectToObject(o, "decode");
	struct decode_stats zero;
	memset(&zero, 0, sizeof zero);
	const struct decode_stats *ds = r->dstats ? r->dstats : &zero;
	const struct {
		const char *key;
		uint64_t v;
	} dk[] = {{"records", ds->records},
		  {"events", ds->events},
		  {"spans", ds->spans},
		  {"dropped", ds->dropped},
		  {"lost_records", ds->lost_records},
		  {"gaps", ds->gaps},
		  {"unnamed", ds->unnamed},
		  {"switches_lost", ds->switches_lost},
		  {"waited_ns", ds->waited_ns},
		  {"no_exit", ds->no_exit},
		  {"running", ds->running},
		  /* a process that could not count its own: the total unknown */
		  {"late",
		   ds->late_procs && ds->late_procs != DECODE_UNKNOWN ? DECODE_UNKNOWN : ds->late},
		  {"late_counted", ds->late},
		  {"late_uncounted_processes", ds->late_procs},
		  {"bad_bytes", ds->bad_bytes},
		  {"bad_records", ds->bad_records},
		  {"bad_ids", ds->bad_ids},
		  {"unmatched", ds->unmatched},
		  {"unfinished", ds->unfinished},
		  {"over_limit", ds->over_limit},
		  {"clock_unknown", ds->clock_unknown},
		  {"lines", ds->lines},
		  {"bad_lines", ds->bad_lines},
		  {"misnested", ds->misnested},
		  {"unfollowed_objects", ds->unfollowed},
		  {"unfollowed_slots", ds->unfol_slots},
		  {"processes", ds->processes},
		  {"file_lost_records", ds->file_records},
		  {"file_lost_processes", ds->file_procs},
		  {"file_missing_answers", ds->file_answers},
		  {"unvalued_processes", ds->unvalued}};
	for (size_t k = 0; k < sizeof dk / sizeof dk[0]; k++)
		if (r->dstats_lost || dk[k].v == DECODE_UNKNOWN) /* a record whose END is lost,
								  * or older than the count */
			cJSON_AddNullToObject(d, dk[k].key);
		else
			json_u64(d, dk[k].key, dk[k].v);
	json_u64(d, "untracked", r->spans ? r->spans->untracked : 0);

	cJSON *ov = cJSON_AddObjectToObject(o, "overhead");
	uint64_t events = report_library_events(r);
	double cpu = (double)(r->ru.utime_ns + r->ru.stime_ns) * (r->nruns ? r->nruns : 1);
	if (r->dstats_lost)
		cJSON_AddNullToObject(ov, "events");
	else
		json_u64(ov, "events", events);
	if (r->event_cost_ns > 0 && !r->dstats_lost) {
		cJSON_AddNumberToObject(ov, "ns_per_event", r->event_cost_ns);
		double total = r->event_cost_ns * (double)events; /* a record file's: any size */
		json_u64(ov, "total_ns", stats_sat_u64(total));
	} else {
		cJSON_AddNullToObject(ov, "ns_per_event");
		cJSON_AddNullToObject(ov, "total_ns");
	}
	if (r->event_cost_ns > 0 && cpu > 0)
		cJSON_AddNumberToObject(ov, "cpu_fraction",
					r->event_cost_ns * (double)events / cpu);
	else
		cJSON_AddNullToObject(ov, "cpu_fraction");
	if (r->dstats_lost) {
		cJSON_AddNullToObject(ov, "waited_ns");
		cJSON_AddNullToObject(ov, "waited_placed_ns");
	} else {
		json_u64(ov, "waited_ns", ds->waited_ns);
		json_u64(ov, "waited_placed_ns", report_waited_placed(r));
	}
	cJSON_AddBoolToObject(ov, "compensated", r->compensated);
	json_u64(ov, "removed_ns", r->removed_ns);
	return o;
}

/* One event's row of an interval (or of a unit's): its name, its cgroup
 * (--for-each-cgroup repeats names: told apart), value, raw and state. */
static void json_interval_event(cJSON *arr, const struct event *ev, const struct count *c)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddItemToArray(arr, e);
	json_name(e, "name", ev->name);
	if (ev->cgroup)
		json_name(e, "cgroup", ev->cgroup);
	else
		cJSON_AddNullToObject(e, "cgroup");
	if (c->state == COUNT_OK)
		json_num(e, "value", c->value);
	else
		cJSON_AddNullToObject(e, "value");
	json_u64(e, "raw", c->raw);
	cJSON_AddStringToObject(e, "state", json_state(c->state));
}

static cJSON *json_intervals(const struct json *j, const struct run_head *h,
			     const struct evlist *evl)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t k = 0; arr && j && k < j->niv; k++) {
		const struct json_interval *iv = &j->iv[k];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, o);
		cJSON_AddNumberToObject(o, "run", iv->run);
		json_u64(o, "t_ns", iv->t_ns);
		json_u64(o, "length_ns", iv->length_ns);
		cJSON *evs = cJSON_AddArrayToObject(o, "events");
		for (size_t i = 0; evs && i < j->nev && i < evl->n; i++) {
			json_interval_event(evs, &evl->ev[i], &iv->counts[i]);
		}
		cJSON *us = cJSON_AddArrayToObject(o, "units");
		for (size_t u = 0; us && iv->units && run_head_aggregated(h) && u < h->aggr->n;
		     u++) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddItemToArray(us, x);
			json_name(x, "id", h->aggr->unit[u].id);
			cJSON *ue = cJSON_AddArrayToObject(x, "events");
			for (size_t i = 0; ue && i < j->nev && i < evl->n; i++) {
				json_interval_event(ue, &evl->ev[i], &iv->units[u * evl->n + i]);
			}
		}
	}
	return arr;
}

/* The whole document for report r; NULL on -ENOMEM. */
static void json_rank_none(cJSON *o);

static void json_rank_stat(cJSON *o, const struct rank_stat *st)
{
	if (!st->n) {
		json_rank_none(o);
		return;
	}
	cJSON_AddNumberToObject(o, "ranks", st->n);
	json_num(o, "min", st->min);
	json_num(o, "mean", st->mean);
	json_num(o, "max", st->max);
	cJSON_AddNumberToObject(o, "max_rank", (double)st->max_rank);
	json_num(o, "imbalance", st->imbalance);
}

static void json_rank_none(cJSON *o)
{
	cJSON_AddNumberToObject(o, "ranks", 0);
	static const char *const k[] = {"min", "mean", "max", "max_rank", "imbalance"};
	for (size_t q = 0; q < sizeof k / sizeof k[0]; q++)
		cJSON_AddNullToObject(o, k[q]);
}

/* The ranks of a job side by side (report over several files); empty lists
 * and null statistics otherwise. */
static cJSON *json_ranks(const struct report *r)
{
	if (!r->ranks) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddArrayToObject(o, "ranks");
		cJSON_AddArrayToObject(o, "counters");
		json_rank_none(cJSON_AddObjectToObject(o, "elapsed_ns"));
		cJSON_AddArrayToObject(o, "spans");
		return o;
	}
	const struct run_head *h = r->head;
	struct rank_summary rs;
	if (rankstat_build(r, &rs) < 0)
		return NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(o, "ranks");
	for (unsigned i = 0; i < r->ranks->n; i++) {
		const struct rank_info *ri = &r->ranks->r[i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddItemToArray(list, x);
		cJSON_AddNumberToObject(x, "rank", (double)ri->rank);
		json_text(x, "host", ri->host);
		json_text(x, "file", ri->file);
		cJSON_AddNumberToObject(x, "runs", ri->nruns);
		if (ri->damage_unknown) {
			cJSON_AddNullToObject(x, "dropped");
			cJSON_AddNullToObject(x, "lost_records");
			cJSON_AddNullToObject(x, "gaps");
		} else {
			json_u64(x, "dropped", ri->dropped);
			json_u64(x, "lost_records", ri->lost_records);
			json_u64(x, "gaps", ri->gaps);
		}
	}
	cJSON *cs = cJSON_AddArrayToObject(o, "counters");
	for (size_t e = 0; e < h->evl->n; e++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddItemToArray(cs, x);
		json_text(x, "name", h->evl->ev[e].name);
		json_text(x, "unit", h->evl->ev[e].unit ? h->evl->ev[e].unit : "");
		json_rank_stat(x, &rs.counter[e]);
	}
	json_rank_stat(cJSON_AddObjectToObject(o, "elapsed_ns"), &rs.elapsed);
	cJSON *sp = cJSON_AddArrayToObject(o, "spans");
	for (uint32_t i = 1; i < rs.paths.n; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddItemToArray(sp, x);
		cJSON *path = cJSON_CreateArray();
		for (uint32_t k = i; k != 0; k = rs.paths.node[k].parent)
			cJSON_InsertItemInArray(
				path, 0,
				json_text_item(spannames_text(h->names, h->strings,
							      rs.paths.node[k].name)));
		cJSON_AddItemToObject(x, "path", path);
		json_rank_stat(cJSON_AddObjectToObject(x, "count"), &rs.count[i]);
		json_rank_stat(cJSON_AddObjectToObject(x, "total_ns"), &rs.total[i]);
		json_rank_stat(cJSON_AddObjectToObject(x, "self_ns"), &rs.self[i]);
	}
	rankstat_release(&rs);
	return o;
}

static cJSON *json_build(const struct json *j, const struct run_head *h, const struct report *r,
			 struct json_lists *lists)
{
	static const struct evlist no_events;
	const struct evlist *evl = h->evl ? h->evl : &no_events;
	cJSON *doc = cJSON_CreateObject();
	if (!doc)
		return NULL;
	json_header(doc, h);
	cJSON_AddNumberToObject(doc, "runs_completed", r->nruns);
	static const struct count none;
	const struct count *mean = r->count;
	struct count *zeros = NULL;
	if (!mean) {
		zeros = calloc(evl->n ? evl->n : 1, sizeof *zeros);
		for (size_t i = 0; zeros && i < evl->n; i++)
			zeros[i] = none, zeros[i].state = COUNT_NOT_COUNTED;
		mean = zeros;
	}
	if (mean)
		cJSON_AddItemToObject(doc, "events",
				      json_events(evl, mean, (double)r->ru.elapsed_ns,
						  r->stat ? r->stat : NULL, r->nruns));
	free(zeros);
	/* -A, --per-core ...: the rows per unit; without, "global" and none */
	cJSON *agg = cJSON_AddObjectToObject(doc, "aggregation");
	bool units = run_head_aggregated(h) && r->unit_count;
	cJSON_AddStringToObject(agg, "mode", aggr_name(units ? h->aggr->mode : AGGR_GLOBAL));
	if (units)
		cJSON_AddItemToObject(agg, "units",
				      json_units(h, r->unit_count, r->unit_stat, r->nruns,
						 (double)r->ru.elapsed_ns, false));
	else
		cJSON_AddArrayToObject(agg, "units");
	cJSON_AddItemToObject(doc, "rusage",
			      json_rusage(&r->ru, !r->head->rusage_unknown, r->nruns > 0));
	cJSON *el = cJSON_AddObjectToObject(doc, "elapsed");
	if (r->nruns == 1) { /* one run: its own time, exactly; no spread */
		json_u64(el, "mean_ns", r->ru.elapsed_ns);
		cJSON_AddNullToObject(el, "stddev_ns");
		cJSON_AddNullToObject(el, "rel_stddev_pct");
	} else if (r->nruns >= 2) {
		json_num(el, "mean_ns", r->elapsed.mean * 1e9);
		json_num(el, "stddev_ns", r->elapsed.stddev * 1e9);
		json_num(el, "rel_stddev_pct", r->elapsed.rel);
	} else {
		cJSON_AddNullToObject(el, "mean_ns");
		cJSON_AddNullToObject(el, "stddev_ns");
		cJSON_AddNullToObject(el, "rel_stddev_pct");
	}
	int last_status = r->nruns && r->run ? r->run[r->nruns - 1].wstatus : 0;
	cJSON_AddItemToObject(doc, "exit", json_exit(r->exit_code, last_status, r->nruns > 0));

	cJSON *runs = cJSON_AddArrayToObject(doc, "runs");
	for (unsigned k = 0; runs && r->run && k < r->nruns; k++) {
		const struct run_result *rr = &r->run[k];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(runs, o);
		cJSON_AddNumberToObject(o, "run", rr->index);
		if (rr->counts)
			cJSON_AddItemToObject(
				o, "events",
				json_events(evl, rr->counts, (double)rr->ru.elapsed_ns, NULL, 1));
		else
			cJSON_AddArrayToObject(o, "events");
		if (run_head_aggregated(h) && rr->units)
			cJSON_AddItemToObject(
				o, "units",
				json_units(h, rr->units, NULL, 1, (double)rr->ru.elapsed_ns, true));
		else
			cJSON_AddArrayToObject(o, "units");
		cJSON_AddItemToObject(o, "rusage",
				      json_rusage(&rr->ru, !r->head->rusage_unknown, true));
		cJSON_AddItemToObject(o, "exit", json_exit(rr->exit_code, rr->wstatus, true));
	}
	cJSON_AddItemToObject(doc, "intervals", json_intervals(j, h, evl));
	cJSON *spans = json_spans(r, lists);
	if (!spans) {
		cJSON_Delete(doc);
		return NULL;
	}
	cJSON_AddItemToObject(doc, "spans", spans);
	cJSON *ranks = json_ranks(r);
	if (!ranks) {
		cJSON_Delete(doc);
		return NULL;
	}
	cJSON_AddItemToObject(doc, "ranks", ranks);
	return doc;
}

static struct json *json_state_of(struct writer *w)
{
	if (!w->priv)
		w->priv = calloc(1, sizeof(struct json));
	return w->priv;
}

static int json_interval(struct writer *w, const struct interval_sample *s)
{
	struct json *j = json_state_of(w);
	size_t nev = w->head && w->head->evl ? w->head->evl->n : 0;
	if (!j)
		return -ENOMEM;
	if (GROW(j->iv, j->niv + 1, j->cap, 64) < 0)
		return -ENOMEM;
	struct json_interval *iv = &j->iv[j->niv];
	iv->counts = malloc((nev ? nev : 1) * sizeof *iv->counts);
	if (!iv->counts)
		return -ENOMEM;
	if (nev)
		memcpy(iv->counts, s->counts, nev * sizeof *iv->counts);
	iv->units = NULL;
	if (s->units && run_head_aggregated(w->head) && nev) {
		size_t nu = w->head->aggr->n * nev;
		iv->units = malloc(nu * sizeof *iv->units);
		if (!iv->units) {
			free(iv->counts);
			return -ENOMEM;
		}
		memcpy(iv->units, s->units, nu * sizeof *iv->units);
	}
	iv->run = s->run;
	iv->t_ns = s->t_ns;
	iv->length_ns = s->length_ns;
	j->nev = nev;
	j->niv++;
	return 0;
}

/* A number no name can guess: the placeholders' (see struct json_lists). */
static uint64_t json_nonce(void)
{
	uint64_t n = 0;
	if (getrandom(&n, sizeof n, GRND_NONBLOCK) != (ssize_t)sizeof n) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		n = (uint64_t)ts.tv_nsec * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)(uintptr_t)&ts;
	}
	return n;
}

static int json_finish(struct writer *w, const struct report *r)
{
	const struct run_head *h = r && r->head ? r->head : w->head;
	if (!h || !r)
		return -EINVAL;
	struct json_lists lists = {0};
	lists.nonce = json_nonce();
	lists.weight = w->opts.weight;
	lists.by = w->opts.weight_err ? NULL : &w->opts.weight_by;
	cJSON *doc = json_build(w->priv, h, r, &lists);
	char *text = doc ? cJSON_Print(doc) : NULL;
	cJSON_Delete(doc);
	int rc = text ? 0 : -ENOMEM;
	/* the document, each placeholder replaced by its list, in order */
	char mark[64];
	const char *at = text;
	for (size_t k = 0; rc == 0 && k < lists.n; k++) {
		int len = snprintf(mark, sizeof mark, "\"\\u0001nodes %zu %016" PRIx64 "\"", k,
				   lists.nonce);
		const char *m = strstr(at, mark);
		if (!m) {
			rc = -EIO;
			break;
		}
		if (fwrite(at, 1, (size_t)(m - at), w->fp) != (size_t)(m - at))
			rc = errno ? -errno : -EIO;
		else
			rc = json_write_nodes(w->fp, lists.l[k].t, lists.by, lists.l[k].h);
		at = m + len;
	}
	if (rc == 0 && (fputs(at, w->fp) == EOF || fputc('\n', w->fp) == EOF || fflush(w->fp) != 0))
		rc = errno ? -errno : -EIO;
	cJSON_free(text);
	free(lists.l);
	span_tree_release(&lists.scratch);
	return rc;
}

static void json_release(struct writer *w)
{
	struct json *j = w->priv;
	if (!j)
		return;
	for (size_t k = 0; k < j->niv; k++) {
		free(j->iv[k].counts);
		free(j->iv[k].units);
	}
	free(j->iv);
	free(j);
	w->priv = NULL;
}

const struct writer_ops json_writer_ops = {
	.name = "json",
	.interval = json_interval,
	.finish = json_finish,
	.release = json_release,
};
