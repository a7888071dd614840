/* pprof.c: the --pprof writer: the merged span tree as a gzip-compressed
 * profile.proto (github.com/google/pprof, proto/profile.proto), read by
 * `go tool pprof`, Pyroscope, Grafana and speedscope.
 *
 * One Function (and one Location with one Line) per span name as the other
 * outputs show it, with its source file and line when the name view has
 * them; one Sample per stack path (the shared tree walk, spanwalk.h), its
 * locations leaf first, its values the path's own: spans (count), wall
 * (self ns), then, as the run carries them, cpu and off_cpu (self ns), each
 * event of --span-events (as written there) and the allocation counts.
 * pprof adds samples up the stacks for its cumulative figures, so self
 * values are what it wants.  default_sample_type follows --weight.  Every
 * location is in one Mapping, the main binary's: the program of the
 * command spanstat started, with its build id, as the head names them (a
 * record written before it named them: argv[0], no build id), marked as
 * symbolized so pprof looks for no binary.  Written at finish; the
 * encoder's buffer holds the whole profile before it is compressed with
 * zlib into w->fp. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "grow.h"
#include "pbenc.h"
#include "spannames.h"
#include "spantree.h"
#include "spanwalk.h"
#include "spanweight.h"
#include "u64map.h"
#include "writer.h"

/* Field numbers (profile.proto). */
enum {
	PP_SAMPLE_TYPE = 1,
	PP_SAMPLE = 2,
	PP_MAPPING = 3,
	PP_LOCATION = 4,
	PP_FUNCTION = 5,
	PP_STRING_TABLE = 6,
	PP_TIME_NANOS = 9,
	PP_DURATION_NANOS = 10,
	PP_PERIOD_TYPE = 11,
	PP_PERIOD = 12,
	PP_COMMENT = 13,
	PP_DEFAULT_SAMPLE_TYPE = 14,
	VT_TYPE = 1,
	VT_UNIT = 2,
	SA_LOCATION_ID = 1,
	SA_VALUE = 2,
	MA_ID = 1,
	MA_FILENAME = 5,
	MA_BUILD_ID = 6,
	MA_HAS_FUNCTIONS = 7,
	MA_HAS_FILENAMES = 8,
	MA_HAS_LINE_NUMBERS = 9,
	LO_ID = 1,
	LO_MAPPING_ID = 2,
	LO_LINE = 4,
	LI_FUNCTION_ID = 1,
	LI_LINE = 2,
	FN_ID = 1,
	FN_NAME = 2,
	FN_SYSTEM_NAME = 3,
	FN_FILENAME = 4,
	FN_START_LINE = 5,
};

#define PP_MAX_VALUES (4 + 2 * SPANMETRIC_MAX)
#define PP_MAPPING_ID 1 /* the one mapping's */

/* A sample value: what it is and how a node's is found. */
struct pp_value {
	const char *type, *unit;
	int metric; /* spanmetric index, or -1 */
	int kind;   /* 0 count, 1 self wall, 2 cpu, 3 off-cpu, 4 a metric's self */
};

struct pp {
	struct pbenc samples, rest; /* samples, then the tables after the walk */
	const struct run_head *head;
	struct u64map func; /* strtab id + 1 -> function id */
	uint32_t nfunc;
	bool files;	   /* a function has its source file and line */
	struct u64map str; /* strtab id + 1 -> string table index (names, files) */
	const char **strs; /* the string table */
	size_t nstr, capstr;
	uint64_t *stack; /* location ids by depth */
	size_t capstack;
	struct pp_value val[PP_MAX_VALUES];
	unsigned nval;
	struct spanweight weight;
	int err;
};

/* The string table index of s (kept by pointer: it outlives the writer's
 * finish), interned by key when key is not 0. */
static int64_t pp_str(struct pp *p, const char *s, uint64_t key)
{
	if (key) {
		uint64_t i = u64map_get(&p->str, key);
		if (i)
			return (int64_t)i - 1;
	}
	if (GROW(p->strs, p->nstr + 1, p->capstr, 256) < 0) {
		p->err = -ENOMEM;
		return 0;
	}
	p->strs[p->nstr] = s;
	if (key && u64map_put(&p->str, key, p->nstr + 1) < 0)
		p->err = -ENOMEM;
	return (int64_t)p->nstr++;
}

/* The function (and location: the same id) of span name id. */
static uint64_t pp_func(struct pp *p, uint32_t name)
{
	const struct run_head *h = p->head;
	uint32_t shown = h && h->names ? spannames_shown(h->names, name) : name;
	uint64_t id = u64map_get(&p->func, (uint64_t)shown + 1);
	if (id)
		return id;
	id = ++p->nfunc;
	if (u64map_put(&p->func, (uint64_t)shown + 1, id) < 0) {
		p->err = -ENOMEM;
		return id;
	}
	const char *text = h ? spannames_text(h->names, h->strings, name) : "";
	uint32_t line = 0;
	const char *file = h ? spannames_where(h->names, name, &line) : NULL;
	struct pbenc *e = &p->rest;
	size_t f = pbenc_open(e, PP_FUNCTION);
	pbenc_varint(e, FN_ID, id);
	int64_t sn = pp_str(p, *text ? text : "(empty)", (uint64_t)shown + 1);
	pbenc_int64(e, FN_NAME, sn);
	pbenc_int64(e, FN_SYSTEM_NAME, sn);
	if (file) {
		pbenc_int64(e, FN_FILENAME, pp_str(p, file, 0));
		pbenc_int64(e, FN_START_LINE, line);
		p->files = true;
	}
	pbenc_close(e, f);
	size_t l = pbenc_open(e, PP_LOCATION);
	pbenc_varint(e, LO_ID, id);
	pbenc_varint(e, LO_MAPPING_ID, PP_MAPPING_ID);
	size_t li = pbenc_open(e, LO_LINE);
	pbenc_varint(e, LI_FUNCTION_ID, id);
	if (file)
		pbenc_int64(e, LI_LINE, line);
	pbenc_close(e, li);
	pbenc_close(e, l);
	return id;
}

static int64_t pp_value_of(const struct pp_value *v, const struct span_tree *t, uint32_t i)
{
	const struct span_node *n = &t->node[i];
	uint64_t self = span_node_self(n), off;
	switch (v->kind) {
	case 0:
		return (int64_t)n->count;
	case 1:
		return (int64_t)self;
	case 2:
	case 3:
		off = span_node_val_self(t, i, (unsigned)v->metric);
		if (off > self)
			off = self;
		return (int64_t)(v->kind == 2 ? self - off : off);
	default:
		return (int64_t)span_node_val_self(t, i, (unsigned)v->metric);
	}
}

/* One node of the walk: a sample of its path, leaf first. */
static int pp_visit(void *ctx, const struct span_tree *t, uint32_t i, uint32_t d)
{
	struct pp *p = ctx;
	if (GROW(p->stack, (size_t)d + 1, p->capstack, 64) < 0)
		return -ENOMEM;
	p->stack[d] = pp_func(p, t->node[i].name);
	int64_t v[PP_MAX_VALUES];
	bool any = false;
	for (unsigned k = 0; k < p->nval; k++) {
		v[k] = pp_value_of(&p->val[k], t, i);
		any |= v[k] != 0;
	}
	if (!any)
		return p->err;
	struct pbenc *e = &p->samples;
	size_t s = pbenc_open(e, PP_SAMPLE);
	size_t ids = pbenc_open(e, SA_LOCATION_ID); /* packed */
	for (uint32_t k = d + 1; k-- > 0;) {
		uint8_t *b = pbenc_reserve(e, 10);
		if (b)
			e->len += pbenc_put_varint(b, p->stack[k]);
	}
	pbenc_close(e, ids);
	size_t vals = pbenc_open(e, SA_VALUE);
	for (unsigned k = 0; k < p->nval; k++) {
		uint8_t *b = pbenc_reserve(e, 10);
		if (b)
			e->len += pbenc_put_varint(b, (uint64_t)v[k]);
	}
	pbenc_close(e, vals);
	pbenc_close(e, s);
	return p->err ? p->err : e->err;
}

/* The values every sample carries, as the run's metrics allow. */
static void pp_values(struct pp *p, const struct spanmetrics *ms)
{
	p->val[p->nval++] = (struct pp_value){"spans", "count", -1, 0};
	p->val[p->nval++] = (struct pp_value){"wall", "nanoseconds", -1, 1};
	for (unsigned k = 0; ms && k < ms->n; k++) {
		const struct spanmetric *m = &ms->m[k];
		if (!m->supported)
			continue;
		const struct spanmetric_info *info = spanmetric_info(m);
		if (info->split) {
			p->val[p->nval++] = (struct pp_value){"cpu", "nanoseconds", (int)k, 2};
			p->val[p->nval++] = (struct pp_value){"off_cpu", "nanoseconds", (int)k, 3};
			continue;
		}
		static const char *const units[] = {[SPANMETRIC_COUNT] = "count",
						    [SPANMETRIC_NS] = "nanoseconds",
						    [SPANMETRIC_BYTES] = "bytes"};
		p->val[p->nval++] = (struct pp_value){info->sample ? info->sample : m->name,
						      units[spanmetric_unit(m)], (int)k, 4};
	}
}

/* The index (into p->val) of the sample type --weight names. */
static unsigned pp_default(const struct pp *p)
{
	const struct spanweight *w = &p->weight;
	for (unsigned k = 0; k < p->nval; k++) {
		const struct pp_value *v = &p->val[k];
		if ((w->kind == SPAN_WEIGHT_WALL && v->kind == 1) ||
		    (w->kind == SPAN_WEIGHT_CPU && v->kind == 2) ||
		    (w->kind == SPAN_WEIGHT_OFF_CPU && v->kind == 3) ||
		    (w->kind == SPAN_WEIGHT_VALUE && v->kind == 4 && v->metric == (int)w->index))
			return k;
	}
	return 1;
}

/* The main binary's mapping, which every location is in: pprof names the
 * profile's binary after it.  No addresses: the locations come symbolized. */
static void pp_mapping(struct pp *p, struct pbenc *e, const struct run_head *h)
{
	const char *file = !h ? NULL : h->exe ? h->exe : !h->target && h->argc ? h->argv[0] : NULL;
	const char *id = h && h->exe ? h->build_id : NULL;
	size_t m = pbenc_open(e, PP_MAPPING);
	pbenc_varint(e, MA_ID, PP_MAPPING_ID);
	if (file && *file)
		pbenc_int64(e, MA_FILENAME, pp_str(p, file, 0));
	if (id && *id)
		pbenc_int64(e, MA_BUILD_ID, pp_str(p, id, 0));
	pbenc_varint(e, MA_HAS_FUNCTIONS, 1);
	if (p->files) {
		pbenc_varint(e, MA_HAS_FILENAMES, 1);
		pbenc_varint(e, MA_HAS_LINE_NUMBERS, 1);
	}
	pbenc_close(e, m);
}

/* Compresses the profile into fp, gzip-wrapped. */
static int pp_gzip(FILE *fp, const uint8_t *data, size_t len)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	uint8_t out[65536];
	int err = 0, rc;
	z.next_in = (Bytef *)(uintptr_t)data;
	z.avail_in = (uInt)len;
	do {
		z.next_out = out;
		z.avail_out = sizeof out;
		rc = deflate(&z, Z_FINISH);
		size_t n = sizeof out - z.avail_out;
		if (n && fwrite(out, 1, n, fp) != n)
			err = -EIO;
	} while (rc == Z_OK && !err);
	if (rc != Z_STREAM_END && !err)
		err = -EIO;
	deflateEnd(&z);
	return err;
}

static int pprof_finish(struct writer *w, const struct report *r)
{
	const struct run_head *h = r && r->head ? r->head : w->head;
	struct pp p;
	memset(&p, 0, sizeof p);
	p.head = h;
	int err = w->opts.weight_err;
	if (err)
		return err;
	p.weight = w->opts.weight_by;
	if (pbenc_init(&p.samples, 1 << 16) < 0 || pbenc_init(&p.rest, 1 << 16) < 0) {
		pbenc_release(&p.samples);
		return -ENOMEM;
	}
	pp_str(&p, "", 0); /* string 0 is always "" */
	pp_values(&p, h ? h->metrics : NULL);
	int64_t type[PP_MAX_VALUES][2];
	for (unsigned k = 0; k < p.nval; k++) {
		type[k][0] = pp_str(&p, p.val[k].type, 0);
		type[k][1] = pp_str(&p, p.val[k].unit, 0);
	}
	struct span_tree scratch;
	const struct span_tree *t = r ? report_merged(r, &scratch, &err) : NULL;
	if (t && !err)
		err = spanwalk(t, pp_visit, &p);
	if (r)
		span_tree_release(&scratch);
	/* the profile: types, samples, tables */
	struct pbenc out;
	if (!err && pbenc_init(&out, p.samples.len + p.rest.len + 4096) < 0)
		err = -ENOMEM;
	if (!err) {
		for (unsigned k = 0; k < p.nval; k++) {
			size_t m = pbenc_open(&out, PP_SAMPLE_TYPE);
			pbenc_int64(&out, VT_TYPE, type[k][0]);
			pbenc_int64(&out, VT_UNIT, type[k][1]);
			pbenc_close(&out, m);
		}
		uint8_t *b = pbenc_reserve(&out, p.samples.len);
		if (b) {
			memcpy(b, p.samples.buf, p.samples.len);
			out.len += p.samples.len;
		}
		pp_mapping(&p, &out, h);
		b = pbenc_reserve(&out, p.rest.len);
		if (b) {
			memcpy(b, p.rest.buf, p.rest.len);
			out.len += p.rest.len;
		}
		for (size_t k = 0; k < p.nstr; k++)
			pbenc_bytes(&out, PP_STRING_TABLE, p.strs[k], strlen(p.strs[k]));
		if (h)
			pbenc_int64(&out, PP_TIME_NANOS,
				    (int64_t)((uint64_t)h->start.tv_sec * 1000000000u +
					      (uint64_t)h->start.tv_nsec));
		if (r)
			pbenc_int64(&out, PP_DURATION_NANOS, (int64_t)r->span_wall_ns);
		size_t m = pbenc_open(&out, PP_PERIOD_TYPE);
		pbenc_int64(&out, VT_TYPE, type[0][0]);
		pbenc_int64(&out, VT_UNIT, type[0][1]);
		pbenc_close(&out, m);
		pbenc_int64(&out, PP_PERIOD, 1);
		pbenc_int64(&out, PP_DEFAULT_SAMPLE_TYPE, type[pp_default(&p)][0]);
		err = out.err	      ? out.err
		      : p.err	      ? p.err
		      : p.samples.err ? p.samples.err
				      : p.rest.err;
		if (!err)
			err = pp_gzip(w->fp, out.buf, out.len);
		if (!err && (fflush(w->fp) != 0 || ferror(w->fp)))
			err = -EIO;
		pbenc_release(&out);
	}
	pbenc_release(&p.samples);
	pbenc_release(&p.rest);
	u64map_release(&p.func);
	u64map_release(&p.str);
	free(p.strs);
	free(p.stack);
	return err;
}

const struct writer_ops pprof_writer_ops = {
	.name = "pprof",
	.finish = pprof_finish,
};
