/* rawrep.c: the replay of a raw capture (rawrep.h, rawcap.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "grow.h"
#include "linesrc.h"
#include "norm.h"
#include "offcpu.h"
#include "rawrep.h"
#include "recfile.h"
#include "wirepack.h"
#include "spantree.h"
#include "u64map.h"

struct rawrep {
	struct decoder *dec;
	struct offcpu *off;
	struct linesrc *lines;
	struct span_sink *sink;
	size_t nsink, capsink;
	/* the answers that follow the item being replayed */
	struct record_in ans;
	uint8_t setup[128]; /* the first block's RAW_SETUP: every block's */
	size_t nsetup;
	uint64_t missing;
	bool finished;
	/* the stream's end (RAW_FINISHAT) and the running answers
	 * (RAW_RUNNING, pid -> 1 running, 2 not), as the session had them */
	bool finishing;
	uint64_t finish_ns;
	struct u64map running;
	void (*check)(void *ctx, struct rawrep *r); /* RAW_CHECK */
	void *check_ctx;
	bool unvalued, checked;
	bool expect; /* rawrep_expect_values: nval */
	unsigned nval;
	int err;       /* of the check (no memory) */
	uint64_t *dmg; /* rawrep_offcpu_check's */
	size_t ndmg, capdmg;
	/* the file's strings, seeded into the decoder (rawrep_set_strings) */
	const char *(*string)(void *ctx, uint32_t id, size_t *len);
	void *string_ctx;
	uint32_t nstrings;
	/* the blocks' numbers (RAW_BLOCK): the next one expected, those seen,
	 * and whether the replay lost items since the last RAW_STATE it took
	 * (a block missing, or one that did not parse to its end) */
	uint64_t next_block;
	struct u64map seen;
	bool missed;
	struct rawrep_blocks blocks;
	uint32_t version; /* rawrep_set_version's, 0: the latest */
};

struct rawrep *rawrep_new(void)
{
	return calloc(1, sizeof(struct rawrep));
}

void rawrep_free(struct rawrep *r)
{
	if (!r)
		return;
	linesrc_free(r->lines);
	decoder_free(r->dec);
	if (r->off)
		offcpu_close(r->off);
	free(r->sink);
	u64map_release(&r->running);
	u64map_release(&r->seen);
	free(r->dmg);
	free(r);
}

void rawrep_expect_values(struct rawrep *r, unsigned nval)
{
	r->expect = true;
	r->nval = nval;
}

int rawrep_add_sink(struct rawrep *r, struct span_sink sink)
{
	if (GROW(r->sink, r->nsink + 1, r->capsink, 4) < 0)
		return -ENOMEM;
	r->sink[r->nsink++] = sink;
	return 0;
}

/* The next answer, if it is of tag: its bytes in *p, *len. */
static bool rr_answer(struct rawrep *r, unsigned tag, const uint8_t **p, size_t *len)
{
	struct record_in in = r->ans;
	if (in.p >= in.end || *in.p != tag) {
		r->missing++;
		return false;
	}
	in.p++;
	uint64_t n = record_get_u64(&in);
	if (!in.ok || n > (uint64_t)(in.end - in.p)) {
		r->missing++;
		return false;
	}
	*p = in.p;
	*len = (size_t)n;
	in.p += n;
	r->ans = in;
	return true;
}

/* A text answer of tag into buf (size bytes, NUL-terminated): its
 * length, 0 when there is none. */
static size_t rr_text(void *ctx, unsigned tag, char *buf, size_t size)
{
	const uint8_t *p = NULL;
	size_t n = 0;
	if (!rr_answer(ctx, tag, &p, &n))
		n = 0;
	if (n >= size)
		n = size - 1;
	if (n)
		memcpy(buf, p, n);
	buf[n] = '\0';
	return n;
}

static size_t rr_sym_name(void *ctx, const char *path, uint64_t addr, uint64_t base, char *fn,
			  size_t size)
{
	(void)path, (void)addr, (void)base;
	return rr_text(ctx, RAW_SYMNAME, fn, size);
}

static int rr_sym_where(void *ctx, const char *path, uint64_t addr, uint64_t base, char *where,
			size_t size, unsigned *line)
{
	(void)path, (void)addr, (void)base;
	const uint8_t *p = NULL;
	size_t n;
	if (!rr_answer(ctx, RAW_SYMWHERE, &p, &n))
		return -ENOENT;
	struct record_in in = {p, p + n, true};
	int64_t rc = record_unzz(record_get_u64(&in));
	uint64_t ln = record_get_u64(&in);
	if (!in.ok)
		return -ENOENT;
	n = (size_t)(in.end - in.p);
	if (n >= size)
		n = size - 1;
	memcpy(where, in.p, n);
	where[n] = '\0';
	*line = (unsigned)ln;
	return (int)rc;
}

static uint64_t rr_proc_start(void *ctx, uint32_t pid)
{
	(void)pid;
	const uint8_t *p = NULL;
	size_t n;
	if (!rr_answer(ctx, RAW_PSTART, &p, &n))
		return 0;
	struct record_in in = {p, p + n, true};
	uint64_t v = record_get_u64(&in);
	return in.ok ? v : 0;
}

static size_t rr_proc_comm(void *ctx, uint32_t pid, char *buf, size_t size)
{
	(void)pid;
	return rr_text(ctx, RAW_PCOMM, buf, size);
}

static uint64_t rr_off_cpu_at(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns)
{
	return offcpu_at(((struct rawrep *)ctx)->off, pid, tid, ns);
}

/* As session_end_at: a thread of a process still running at the stream's
 * end ends then, unless the kernel told it ended. */
static uint64_t rr_end_at(void *ctx, uint32_t pid, uint32_t tid, uint64_t after)
{
	struct rawrep *r = ctx;
	if (r->finishing && u64map_get(&r->running, pid) == 1) {
		uint64_t e = offcpu_ended(r->off, pid, tid, after);
		return e ? e : r->finish_ns > after ? r->finish_ns : after;
	}
	return offcpu_end(r->off, pid, tid, after);
}

/* The answer the live decoder got (RAW_RUNNING); none: damage, not running */
static bool rr_running(void *ctx, uint32_t pid)
{
	struct rawrep *r = ctx;
	uint64_t v = u64map_get(&r->running, pid);
	if (!v)
		r->missing++;
	return v == 1;
}

static void rr_unvalued(void *ctx, uint32_t pid)
{
	(void)pid;
	((struct rawrep *)ctx)->unvalued = true;
}

/* RAW_SETUP: the decoder, off-CPU table and line source the live session
 * had, as it set them up. */
static int rr_setup(struct rawrep *r, struct record_in *in)
{
	uint64_t v[10];
	for (int i = 0; i < 10; i++)
		v[i] = record_get_u64(in);
	/* the layout of the target's values, since it was told (before, 0:
	 * not checked); judged with the rest, before anything is made: a
	 * setup refused leaves no decoder for the next block's to pass as set */
	uint64_t layout = in->p < in->end ? record_get_u64(in) : 0;
	if (!in->ok || r->dec || v[5] > DEMANGLE_NO || v[7] > SPANMETRIC_MAX || v[8] > v[7] ||
	    v[9] > v[7] || v[4] > 63 || (r->expect && v[7] != r->nval) || layout > UINT32_MAX)
		return -EINVAL;
	struct spanclock clk = {.valid = v[0] != 0,
				.tsc0 = v[1],
				.mono0 = v[2],
				.mult = (uint32_t)v[3],
				.shift = (uint32_t)v[4]};
	r->dec = decoder_new(clk.valid ? &clk : NULL);
	r->off = offcpu_new();
	if (!r->dec || !r->off)
		return -ENOMEM;
	struct decoder_values dv = {.n = (unsigned)v[7],
				    .first_target = (unsigned)v[8],
				    .off_cpu = (int)v[9] - 1,
				    .off_cpu_at = rr_off_cpu_at,
				    .ctx = r,
				    .end_at = rr_end_at,
				    .unvalued = rr_unvalued,
				    .layout = (uint32_t)layout};
	if (decoder_set_values(r->dec, &dv) < 0)
		return -EINVAL;
	for (size_t i = 0; i < r->nsink; i++)
		if (decoder_add_sink(r->dec, r->sink[i]) < 0)
			return -ENOMEM;
	decoder_set_demangle(r->dec, (enum demangle_mode)v[5]);
	if (r->version && r->version < 4)
		decoder_restate_unnamed(r->dec);
	decoder_set_running(r->dec, rr_running, r);
	decoder_set_symfn(r->dec, &(struct decoder_symfn){rr_sym_name, rr_sym_where, r});
	r->lines = linesrc_new(r->dec, record_unzz(v[6]));
	if (!r->lines)
		return -ENOMEM;
	/* the capture's string ids, whatever items the replay loses: a string
	 * the file lost takes its id with a text no lookup finds (a NUL) */
	for (uint32_t id = 1; r->string && id < r->nstrings; id++) {
		size_t len = 0;
		const char *str = r->string(r->string_ctx, id, &len);
		char lost[16];
		if (!str) {
			lost[0] = '\0';
			len = 1 + (size_t)snprintf(lost + 1, sizeof lost - 1, "%u", (unsigned)id);
			str = lost;
		}
		uint32_t got = decoder_seed_string(r->dec, str, len);
		if (!got)
			return -ENOMEM;
		if (got != id) /* two alike (no writer writes it): ids from here as interned */
			break;
	}
	linesrc_set_procfn(r->lines, &(struct linesrc_procfn){rr_proc_start, rr_proc_comm, r});
	return 0;
}

static bool rr_is_answer(unsigned tag)
{
	return tag == RAW_SYMNAME || tag == RAW_SYMWHERE || tag == RAW_PSTART || tag == RAW_PCOMM;
}

/* RAW_BLOCK n: false when the block is to be left out (seen before, or
 * come after later ones). */
static int rr_block(struct rawrep *r, uint64_t n)
{
	if (u64map_get(&r->seen, n + 1)) {
		r->blocks.repeated++;
		return 0;
	}
	if (n < r->next_block) { /* counted missing when its successor came */
		r->blocks.missing--;
		r->blocks.late++;
		if (u64map_put(&r->seen, n + 1, 1) < 0)
			return -ENOMEM;
		return 0;
	}
	if (n > r->next_block) {
		r->blocks.missing += n - r->next_block;
		r->missed = true;
	}
	r->next_block = n + 1;
	return u64map_put(&r->seen, n + 1, 1) < 0 ? -ENOMEM : 1;
}

static int rr_feed(struct rawrep *r, const void *buf, size_t len);

int rawrep_feed(struct rawrep *r, const void *buf, size_t len)
{
	int e = rr_feed(r, buf, len);
	if (e == -EINVAL) /* the rest of the block is lost */
		r->missed = true;
	return e;
}

static int rr_feed(struct rawrep *r, const void *buf, size_t len)
{
	struct record_in in = {buf, (const uint8_t *)buf + len, true};
	const uint8_t *first = in.p;
	while (in.p < in.end) {
		const uint8_t *at = in.p;
		unsigned tag = *in.p++;
		uint64_t n = record_get_u64(&in);
		if (!in.ok || n > (uint64_t)(in.end - in.p) || tag == 0 || tag > RAW_TAG_LAST)
			return -EINVAL;
		const uint8_t *p = in.p;
		in.p += n;
		struct record_in it = {p, p + n, true};
		if (rr_is_answer(tag)) /* one no item asked for: damage, skipped */
			continue;
		if (tag == RAW_SETUP) { /* a block's first item, the same in every one */
			if (at != first)
				return -EINVAL;
			if (r->dec) {
				if ((size_t)(in.p - at) != r->nsetup ||
				    memcmp(at, r->setup, r->nsetup))
					return -EINVAL;
				continue;
			}
			if ((size_t)(in.p - at) > sizeof r->setup)
				return -EINVAL;
			r->nsetup = (size_t)(in.p - at);
			memcpy(r->setup, at, r->nsetup);
			int e = rr_setup(r, &it);
			if (e < 0)
				return e;
			continue;
		}
		if (tag == RAW_BLOCK) { /* second, after the setup */
			uint64_t b = record_get_u64(&it);
			if (!r->dec || at == first || !it.ok || it.p != it.end)
				return -EINVAL;
			int e = rr_block(r, b);
			if (e <= 0)
				return e;
			continue;
		}
		if (tag == RAW_STATE) { /* third: taken only after a loss */
			if (!r->dec || at == first)
				return -EINVAL;
			if (r->missed && n) {
				int e = decoder_restate(r->dec, p, (size_t)n);
				if (e < 0)
					return e;
				r->missed = false;
			}
			continue;
		}
		if (!r->dec ||
		    (r->finished && tag != RAW_SWLOST && tag != RAW_DAMAGE && tag != RAW_CHECK))
			return -EINVAL;
		r->ans = in; /* what the item asks comes right after it */
		int e = 0;
		switch (tag) {
		case RAW_REC:
			e = decoder_record(r->dec, p, (size_t)n);
			break;
		case RAW_RECP: {
			uint8_t rec[WIREPACK_RECORD_MAX];
			size_t len = wireunpack(p, (size_t)n, rec);
			if (!len)
				return -EINVAL;
			e = decoder_record(r->dec, rec, len);
			break;
		}
		case RAW_OFF:
			e = offcpu_feed(r->off, p, (size_t)n);
			break;
		case RAW_LINES: {
			uint64_t now = record_get_u64(&it);
			if (!it.ok)
				return -EINVAL;
			e = linesrc_feed(r->lines, it.p, (size_t)(it.end - it.p), now);
			break;
		}
		case RAW_LSTART: {
			uint64_t at = record_get_u64(&it);
			if (!it.ok)
				return -EINVAL;
			linesrc_set_start(r->lines, at);
			break;
		}
		case RAW_LFINISH:
			linesrc_finish(r->lines);
			break;
		case RAW_FINISH: {
			uint64_t bad = record_get_u64(&it), cut = record_get_u64(&it),
				 late = record_get_u64(&it);
			if (!it.ok)
				return -EINVAL;
			decoder_finish(r->dec);
			decoder_count_frame(r->dec, bad, cut);
			decoder_set_late(r->dec, late);
			r->finished = true;
			break;
		}
		case RAW_FINISHAT: {
			uint64_t ns = record_get_u64(&it);
			if (!it.ok)
				return -EINVAL;
			r->finishing = true;
			r->finish_ns = ns;
			break;
		}
		case RAW_RUNNING: {
			uint64_t pid = record_get_u64(&it), live = record_get_u64(&it);
			if (!it.ok || pid > UINT32_MAX || live > 1)
				return -EINVAL;
			if (u64map_put(&r->running, pid, live ? 1 : 2) < 0)
				return -ENOMEM;
			break;
		}
		case RAW_CHECK: /* once: a second (damage) would find other damage */
			if (r->check && !r->checked)
				r->check(r->check_ctx, r);
			r->checked = true;
			if (r->err < 0)
				return r->err;
			break;
		case RAW_SWLOST: {
			uint64_t lost = record_get_u64(&it);
			if (!it.ok)
				return -EINVAL;
			decoder_count_switches_lost(r->dec, lost);
			break;
		}
		case RAW_DAMAGE: {
			uint64_t v[5];
			for (int i = 0; i < 5; i++)
				v[i] = record_get_u64(&it);
			if (!it.ok || v[0] > UINT32_MAX || v[1] > UINT32_MAX || v[3] == 0 ||
			    v[3] >= SPAN_DAMAGE_KINDS)
				return -EINVAL;
			norm_damage(decoder_norm(r->dec), (uint32_t)v[0], (uint32_t)v[1], v[2],
				    (enum span_damage)v[3], v[4]);
			break;
		}
		}
		if (e < 0)
			return e;
		in = r->ans; /* past the answers the item took */
	}
	return 0;
}

void rawrep_end(struct rawrep *r)
{
	if (!r->dec || r->finished)
		return;
	decoder_finish(r->dec);
	decoder_set_late(r->dec, DECODE_UNKNOWN);
	r->finished = true;
}

const struct decode_stats *rawrep_stats(const struct rawrep *r)
{
	return r->dec ? decoder_stats(r->dec) : NULL;
}

double rawrep_event_cost_ns(const struct rawrep *r)
{
	return r->dec ? decoder_event_cost_ns(r->dec) : 0;
}

uint64_t rawrep_missing(const struct rawrep *r)
{
	return r->missing;
}

void rawrep_set_check(struct rawrep *r, void (*fn)(void *ctx, struct rawrep *r), void *ctx)
{
	r->check = fn;
	r->check_ctx = ctx;
}

static void rr_damage_found(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t excess)
{
	struct rawrep *r = ctx;
	if (GROW(r->dmg, r->ndmg + 4, r->capdmg, 16) < 0) {
		r->err = -ENOMEM;
		return;
	}
	uint64_t *q = r->dmg + r->ndmg;
	q[0] = pid, q[1] = tid, q[2] = ts, q[3] = excess;
	r->ndmg += 4;
}

int rawrep_offcpu_check(struct rawrep *r, const struct span_trees *st, uint32_t pid_base,
			int64_t ts_shift, uint64_t **v, size_t *n)
{
	*v = NULL;
	*n = 0;
	if (!r->dec || !r->off)
		return 0;
	r->ndmg = 0;
	span_trees_offcpu_check(st, decoder_values_of(r->dec)->off_cpu, pid_base, ts_shift,
				rr_off_cpu_at, rr_damage_found, r);
	if (r->err < 0)
		return r->err;
	*n = r->ndmg / 4;
	if (*n && !(*v = malloc(r->ndmg * sizeof **v)))
		return -ENOMEM;
	if (*n)
		memcpy(*v, r->dmg, r->ndmg * sizeof **v);
	return 0;
}

void rawrep_damage(struct rawrep *r, const uint64_t *v, size_t n)
{
	for (size_t i = 0; r->dec && i < n; i++, v += 4)
		norm_damage(decoder_norm(r->dec), (uint32_t)v[0], (uint32_t)v[1], v[2],
			    SPAN_DMG_OFFCPU, v[3]);
}

bool rawrep_unvalued(const struct rawrep *r)
{
	return r->unvalued;
}

void rawrep_set_strings(struct rawrep *r, const char *(*fn)(void *ctx, uint32_t id, size_t *len),
			void *ctx, uint32_t n)
{
	r->string = fn;
	r->string_ctx = ctx;
	r->nstrings = n;
}

const struct rawrep_blocks *rawrep_blocks(const struct rawrep *r)
{
	return &r->blocks;
}

void rawrep_set_version(struct rawrep *r, uint32_t version)
{
	r->version = version;
}
