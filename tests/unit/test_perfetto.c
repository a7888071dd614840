/* test_perfetto.c: the Perfetto writer (perfetto.c) and its protobuf encoder
 * (pbenc.c).  Traces are decoded by a real consumer, protoc, against the
 * official schema in ../shared/perfetto, and the decoded text is replayed
 * (interning, track descriptors, slice stacks) and compared with what went
 * in: hand-made streams, -I counter samples, and a seeded random round trip. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pbenc.h"
#include "tap.h"
#include "writer.h"

/* ---- pbenc ------------------------------------------------------------- */

/* Decodes one varint from p; returns its length or 0. */
static size_t dec_varint(const uint8_t *p, size_t n, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < n && i < 10; i++) {
		*v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80))
			return i + 1;
	}
	return 0;
}

static void test_pbenc(void)
{
	static const uint64_t vals[] = {0,	    1,
					127,	    128,
					16383,	    16384,
					2097151,    2097152,
					268435455,  268435456,
					UINT32_MAX, (1ull << 35) - 1,
					1ull << 35, (1ull << 63) - 1,
					1ull << 63, UINT64_MAX};
	static const size_t sizes[] = {1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 5, 6, 9, 10, 10};
	int good = 1;
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		uint8_t buf[16];
		uint64_t back;
		size_t n = pbenc_put_varint(buf, vals[i]);
		if (n != sizes[i] || pbenc_varint_size(vals[i]) != n ||
		    dec_varint(buf, n, &back) != n || back != vals[i]) {
			printf("# varint %" PRIu64 ": %zu bytes\n", vals[i], n);
			good = 0;
		}
	}
	ok(good, "varints round-trip at every 7-bit boundary with the right size");

	struct pbenc e;
	ok(pbenc_init(&e, 8) == 0, "pbenc_init");
	pbenc_varint(&e, 1, 150);
	static const uint8_t want1[] = {0x08, 0x96, 0x01};
	ok(e.len == 3 && memcmp(e.buf, want1, 3) == 0, "field 1 = 150 encodes as 08 96 01");
	pbenc_reset(&e);
	pbenc_int64(&e, 2, -1);
	ok(e.len == 11 && e.buf[0] == 0x10 && e.buf[10] == 0x01,
	   "negative int64 is a 10-byte two's complement varint");
	pbenc_reset(&e);
	pbenc_string(&e, 2, "testing");
	static const uint8_t want2[] = {0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'};
	ok(e.len == 9 && memcmp(e.buf, want2, 9) == 0, "string field encodes tag, length, bytes");
	pbenc_reset(&e);
	pbenc_fixed64(&e, 44, 0x0102030405060708ull);
	ok(e.len == 10 && e.buf[0] == 0xe1 && e.buf[1] == 0x02 && e.buf[2] == 0x08 &&
		   e.buf[9] == 0x01,
	   "fixed64 is a 2-byte tag and 8 little-endian bytes");

	pbenc_reset(&e);
	size_t outer = pbenc_open(&e, 3);
	size_t inner = pbenc_open(&e, 4);
	pbenc_varint(&e, 1, 300);
	pbenc_close(&e, inner);
	pbenc_close(&e, outer);
	static const uint8_t want3[] = {0x1a, 0x88, 0x80, 0x80, 0x00, 0x22, 0x83,
					0x80, 0x80, 0x00, 0x08, 0xac, 0x02};
	ok(e.len == sizeof want3 && memcmp(e.buf, want3, sizeof want3) == 0,
	   "nested messages get 4-byte padded varint lengths");
	uint64_t v;
	ok(dec_varint(e.buf + 1, 4, &v) == 4 && v == 8, "the padded length decodes to 8");

	/* shrinking short messages on close */
	pbenc_reset(&e);
	outer = pbenc_open(&e, 3);
	inner = pbenc_open(&e, 4);
	pbenc_varint(&e, 1, 300);
	pbenc_close_min(&e, inner);
	pbenc_close_min(&e, outer);
	static const uint8_t want4[] = {0x1a, 0x05, 0x22, 0x03, 0x08, 0xac, 0x02};
	ok(e.len == sizeof want4 && memcmp(e.buf, want4, sizeof want4) == 0,
	   "pbenc_close_min gives short messages 1-byte lengths");
	pbenc_reset(&e);
	outer = pbenc_open(&e, 3);
	for (int i = 0; i < 100; i++)
		pbenc_varint(&e, 1, 300);
	pbenc_close_min(&e, outer);
	ok(e.len == 305 && dec_varint(e.buf + 1, 4, &v) == 4 && v == 300,
	   "pbenc_close_min keeps the padded length for 128 bytes and more");

	/* growth: a large nested message is still patched correctly */
	pbenc_reset(&e);
	size_t big = pbenc_open(&e, 1);
	for (int i = 0; i < 100000; i++)
		pbenc_varint(&e, 2, (uint64_t)i);
	pbenc_close(&e, big);
	ok(e.err == 0 && dec_varint(e.buf + 1, 4, &v) == 4 && v == e.len - 5,
	   "a 480 KB nested message grows the buffer and records its length");
	uint8_t pad[4];
	pbenc_put_varint4(pad, PBENC_MAX_NESTED);
	ok(dec_varint(pad, 4, &v) == 4 && v == PBENC_MAX_NESTED,
	   "the largest 4-byte padded length round-trips");
	pbenc_release(&e);
}

/* Bounded string copy (names longer than 63 bytes are cut in both the
 * expected and the decoded records). */
static void scopy(char *dst, const char *src)
{
	size_t n = strlen(src);
	if (n > 63)
		n = 63;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/* ---- running protoc ------------------------------------------------------ */

/* tests/perfetto/pf-decode: protoc with the schema the tree keeps, checked
 * against the official one when it is beside the tree. */
static char pf_decode[4096];

static int find_schema(void)
{
	return tap_find_source("tests/perfetto/pf-decode", pf_decode, sizeof pf_decode);
}

/* Decodes the trace in fp with protoc; returns the malloc'd text or NULL. */
static char *protoc_decode(FILE *fp)
{
	char in[] = "/tmp/spanstat-pf-XXXXXX";
	int fd = mkstemp(in);
	if (fd < 0)
		return NULL;
	rewind(fp);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
		if (write(fd, buf, n) != (ssize_t)n)
			break;
	close(fd);
	char cmd[9000];
	snprintf(cmd, sizeof cmd, "'%s' < '%s' 2>&1", pf_decode, in);
	FILE *p = popen(cmd, "r");
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	while (p && (n = fread(buf, 1, sizeof buf, p)) > 0)
		fwrite(buf, 1, n, mem);
	fclose(mem);
	int st = p ? pclose(p) : -1;
	unlink(in);
	if (st != 0) {
		printf("# protoc failed: %.400s\n", text ? text : "");
		free(text);
		return NULL;
	}
	return text;
}

/* ---- replaying protoc's text output -------------------------------------- */

enum rec_kind { REC_SLICE = 'S', REC_INSTANT = 'I', REC_COUNTER = 'C' };

struct rec {
	int kind;
	uint32_t pid, tid; /* tid 0 for counters */
	char name[64];
	uint32_t depth;
	uint64_t ts, end;
	bool unfinished;
	double value;
};

struct recs {
	struct rec *r;
	size_t n, cap;
};

static void recs_add(struct recs *rs, const struct rec *r)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 64;
		rs->r = realloc(rs->r, rs->cap * sizeof *rs->r);
	}
	rs->r[rs->n++] = *r;
}

struct track {
	uint64_t uuid, parent;
	int kind; /* 'p' process, 't' thread, 'c' counter, 'g' other */
	uint32_t pid, tid;
	char name[64];
	/* open slices */
	char stack[64][64];
	uint64_t stack_ts[64];
	uint32_t depth;
};

/* A packet sequence as the importer keeps it: cleared once its first
 * packet cleared it; interned names, defaults and clocks are its own. */
struct seqstate {
	uint64_t id;
	bool cleared;
	char (*iname)[64]; /* by iid */
	size_t niname;
	uint64_t def_clock, def_track; /* TracePacketDefaults, 0: none */
	uint64_t clk_id, clk_value;    /* its incremental clock, 0: none */
	int64_t clk_to_mono;	       /* MONOTONIC = clock + this */
};

struct replay {
	struct track *t;
	size_t nt;
	struct seqstate *seq;
	size_t nseq;
	struct recs out;
	/* what the trace as a whole looked like */
	int packets, begins, ends, instants, counters, interned_defs, snapshot, te_named;
	int seq_snapshots, te_with_track, needs_flags;
	bool boottime; /* a snapshot paired BOOTTIME with MONOTONIC */
	int errors;
	char first_error[200];
};

struct clk {
	uint64_t id, ts;
	bool incremental;
};

struct pkt {
	uint64_t ts, seq_id, seq_flags, clock_id;
	bool has_ts, has_te, has_td, has_td_process, has_td_thread, has_td_counter, has_snapshot;
	bool has_defaults;
	uint64_t def_clock, def_track;
	struct clk clk[8], cur_clk;
	int nclk;
	int te_type;
	uint64_t te_track, te_iid;
	char te_name[64];
	bool te_has_track, te_has_iid, te_has_name, te_unfinished, te_has_counter;
	double te_counter;
	char da_name[64];
	bool da_bool;
	uint64_t td_uuid, td_parent;
	uint32_t td_pid, td_tid;
	char td_name[64], td_pname[64], td_tname[64];
	uint64_t en_iid;
	char en_name[64];
	uint64_t iids[256];
	char inames[256][64];
	int ninterned;
};

static void rp_error(struct replay *rp, const char *msg)
{
	if (!rp->errors++)
		snprintf(rp->first_error, sizeof rp->first_error, "packet %d: %s", rp->packets,
			 msg);
}

static struct track *rp_track(struct replay *rp, uint64_t uuid)
{
	for (size_t i = 0; i < rp->nt; i++)
		if (rp->t[i].uuid == uuid)
			return &rp->t[i];
	return NULL;
}

static struct seqstate *rp_seq(struct replay *rp, uint64_t id, bool *fresh)
{
	*fresh = false;
	for (size_t i = 0; i < rp->nseq; i++)
		if (rp->seq[i].id == id)
			return &rp->seq[i];
	*fresh = true;
	rp->seq = realloc(rp->seq, (rp->nseq + 1) * sizeof *rp->seq);
	struct seqstate *q = &rp->seq[rp->nseq++];
	memset(q, 0, sizeof *q);
	q->id = id;
	return q;
}

/* SEQ_INCREMENTAL_STATE_CLEARED: interned names, defaults and clocks go. */
static void rp_seq_clear(struct seqstate *q)
{
	free(q->iname);
	uint64_t id = q->id;
	memset(q, 0, sizeof *q);
	q->id = id;
	q->cleared = true;
}

/* The packet's timestamp as MONOTONIC ns, as the importer resolves it; false
 * when it cannot be resolved. */
static bool rp_timestamp(struct replay *rp, struct seqstate *q, const struct pkt *k, uint64_t *ts)
{
	uint64_t clock = k->clock_id ? k->clock_id : q->def_clock;
	if (clock == 3) {
		*ts = k->ts;
		return true;
	}
	if (clock && clock == q->clk_id) {
		q->clk_value += k->ts;
		*ts = (uint64_t)((int64_t)q->clk_value + q->clk_to_mono);
		return true;
	}
	rp_error(rp, clock ? "timestamp on a clock with no snapshot on its sequence"
			   : "timestamp on no clock (BOOTTIME taken as MONOTONIC)");
	return false;
}

static void rp_packet(struct replay *rp, struct pkt *k)
{
	rp->packets++;
	if (!k->seq_id) {
		rp_error(rp, "packet without a sequence id");
		return;
	}
	bool fresh;
	struct seqstate *q = rp_seq(rp, k->seq_id, &fresh);
	if (k->seq_flags & 1)
		rp_seq_clear(q);
	else if (fresh)
		rp_error(rp, "a sequence's first packet does not clear incremental state");
	if (k->seq_flags & 2) {
		rp->needs_flags++;
		if (!q->cleared)
			rp_error(rp, "NEEDS_INCREMENTAL_STATE before the state was cleared");
	}
	if (k->has_defaults) {
		if (!(k->seq_flags & 1))
			rp_error(rp, "defaults outside a packet clearing the state");
		q->def_clock = k->def_clock;
		q->def_track = k->def_track;
	}
	for (int i = 0; i < k->ninterned; i++) {
		uint64_t iid = k->iids[i];
		if (iid >= q->niname) {
			size_t n = iid * 2 + 16;
			q->iname = realloc(q->iname, n * sizeof *q->iname);
			memset(q->iname + q->niname, 0, (n - q->niname) * sizeof *q->iname);
			q->niname = n;
		}
		if (q->iname[iid][0])
			rp_error(rp, "name interned twice on one sequence");
		scopy(q->iname[iid], k->inames[i]);
		rp->interned_defs++;
	}
	if (k->has_snapshot) {
		const struct clk *mono = NULL, *boot = NULL, *incr = NULL;
		for (int i = 0; i < k->nclk; i++) {
			const struct clk *c = &k->clk[i];
			if (c->id == 3)
				mono = c;
			else if (c->id == 6)
				boot = c;
			else if (c->id >= 64 && c->id < 128)
				incr = c;
			if (c->incremental && (c->id < 64 || c->id >= 128))
				rp_error(rp, "an incremental clock that is not sequence-scoped");
		}
		if (boot && mono) {
			rp->snapshot++;
			rp->boottime = true;
		}
		if (incr) {
			rp->seq_snapshots++;
			if (!mono || !incr->incremental)
				rp_error(rp, "a sequence clock not incremental or not tied to "
					     "MONOTONIC");
			else if (!rp->boottime)
				rp_error(rp, "a sequence clock before the BOOTTIME snapshot");
			q->clk_id = incr->id;
			q->clk_value = incr->ts;
			q->clk_to_mono = mono ? (int64_t)(mono->ts - incr->ts) : 0;
		}
		return; /* the importer reads nothing else of a snapshot packet */
	}
	uint64_t ts = 0;
	if (k->has_ts && !rp_timestamp(rp, q, k, &ts))
		return;
	if (k->has_td) {
		if (!k->has_ts)
			rp_error(rp, "track descriptor without a timestamp");
		struct track *t = rp_track(rp, k->td_uuid);
		if (!t) {
			rp->t = realloc(rp->t, (rp->nt + 1) * sizeof *rp->t);
			t = &rp->t[rp->nt++];
			memset(t, 0, sizeof *t);
			t->uuid = k->td_uuid;
		}
		t->parent = k->td_parent;
		if (k->has_td_thread) {
			t->kind = 't';
			t->pid = k->td_pid;
			t->tid = k->td_tid;
			scopy(t->name, k->td_tname);
			struct track *pt = rp_track(rp, k->td_parent);
			if (!pt || pt->kind != 'p' || pt->pid != t->pid)
				rp_error(rp, "thread track without its process track before it");
		} else if (k->has_td_process) {
			t->kind = 'p';
			t->pid = k->td_pid;
			scopy(t->name, k->td_pname);
		} else if (k->has_td_counter) {
			t->kind = 'c';
			scopy(t->name, k->td_name);
			struct track *pt = rp_track(rp, k->td_parent);
			if (!pt)
				rp_error(rp, "counter track parent not described first");
			t->pid = pt ? pt->pid : 0;
		} else {
			t->kind = 'g';
			scopy(t->name, k->td_name);
		}
	}
	if (!k->has_te)
		return;
	if (!k->has_ts)
		rp_error(rp, "track event without a timestamp");
	rp->te_with_track += k->te_has_track;
	struct track *t = rp_track(rp, k->te_has_track ? k->te_track : q->def_track);
	if (!t) {
		rp_error(rp, "track event before its track descriptor");
		return;
	}
	const char *name = k->te_name;
	rp->te_named += k->te_has_name;
	if (k->te_has_iid) {
		if (!q->cleared || k->te_iid >= q->niname || !q->iname[k->te_iid][0]) {
			rp_error(rp, "name iid used before its definition on its sequence");
			name = "?";
		} else {
			name = q->iname[k->te_iid];
		}
	}
	struct rec r = {0};
	r.pid = t->pid;
	r.tid = t->tid;
	r.ts = ts;
	switch (k->te_type) {
	case 1:
		rp->begins++;
		if (t->kind != 't' || t->depth >= 64) {
			rp_error(rp, "slice begin on a non-thread track");
			return;
		}
		scopy(t->stack[t->depth], name);
		t->stack_ts[t->depth++] = ts;
		return;
	case 2:
		rp->ends++;
		if (!t->depth) {
			rp_error(rp, "slice end with nothing open");
			return;
		}
		t->depth--;
		r.kind = REC_SLICE;
		scopy(r.name, t->stack[t->depth]);
		r.depth = t->depth;
		r.ts = t->stack_ts[t->depth];
		r.end = ts;
		r.unfinished = k->te_unfinished;
		break;
	case 3:
		rp->instants++;
		r.kind = REC_INSTANT;
		scopy(r.name, name);
		break;
	case 4:
		rp->counters++;
		r.kind = REC_COUNTER;
		scopy(r.name, t->name);
		r.tid = 0;
		r.value = k->te_counter;
		if (!k->te_has_counter || t->kind != 'c')
			rp_error(rp, "counter event without value or counter track");
		break;
	default:
		rp_error(rp, "unknown track event type");
		return;
	}
	recs_add(&rp->out, &r);
}

/* Unescapes a protoc text-format string literal (with its quotes) into out. */
static void unquote(const char *s, char *out, size_t cap)
{
	size_t n = 0;
	if (*s == '"')
		s++;
	while (*s && *s != '"' && n + 1 < cap) {
		if (*s != '\\') {
			out[n++] = *s++;
			continue;
		}
		s++;
		if (*s >= '0' && *s <= '7') {
			int v = 0;
			for (int i = 0; i < 3 && *s >= '0' && *s <= '7'; i++)
				v = v * 8 + (*s++ - '0');
			out[n++] = (char)v;
			continue;
		}
		switch (*s) {
		case 'n':
			out[n++] = '\n';
			break;
		case 't':
			out[n++] = '\t';
			break;
		case 'r':
			out[n++] = '\r';
			break;
		default:
			out[n++] = *s;
			break;
		}
		if (*s)
			s++;
	}
	out[n] = 0;
}

static int replay_text(struct replay *rp, const char *text)
{
	char path[8][64];
	int depth = 0;
	struct pkt *k = calloc(1, sizeof *k);
	const char *line = text;
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[512];
		while (len && (*line == ' '))
			line++, len--;
		if (len >= sizeof buf)
			len = sizeof buf - 1;
		memcpy(buf, line, len);
		buf[len] = 0;
		line = nl ? nl + 1 : NULL;
		if (!*buf)
			continue;
		if (len > 2 && strcmp(buf + len - 2, " {") == 0) {
			buf[len - 2] = 0;
			if (depth < 8)
				scopy(path[depth], buf);
			depth++;
			if (depth == 1)
				memset(k, 0, sizeof *k);
			if (depth == 2 && strcmp(buf, "track_event") == 0)
				k->has_te = true;
			if (depth == 2 && strcmp(buf, "track_descriptor") == 0)
				k->has_td = true;
			if (depth == 2 && strcmp(buf, "clock_snapshot") == 0)
				k->has_snapshot = true;
			if (depth == 2 && strcmp(buf, "trace_packet_defaults") == 0)
				k->has_defaults = true;
			if (depth == 3 && strcmp(buf, "clocks") == 0)
				memset(&k->cur_clk, 0, sizeof k->cur_clk);
			if (depth == 3 && strcmp(path[1], "track_descriptor") == 0) {
				k->has_td_process |= strcmp(buf, "process") == 0;
				k->has_td_thread |= strcmp(buf, "thread") == 0;
				k->has_td_counter |= strcmp(buf, "counter") == 0;
			}
			continue;
		}
		if (strcmp(buf, "}") == 0) {
			depth--;
			if (depth == 2 && strcmp(path[1], "interned_data") == 0 &&
			    k->ninterned < 256) {
				k->iids[k->ninterned] = k->en_iid;
				scopy(k->inames[k->ninterned++], k->en_name);
			}
			if (depth == 2 && strcmp(path[2], "clocks") == 0 && k->nclk < 8)
				k->clk[k->nclk++] = k->cur_clk;
			if (depth == 2 && strcmp(path[2], "debug_annotations") == 0 &&
			    strcmp(k->da_name, "unfinished") == 0 && k->da_bool)
				k->te_unfinished = true;
			if (depth == 0)
				rp_packet(rp, k);
			continue;
		}
		char *colon = strstr(buf, ": ");
		if (!colon || depth < 1 || depth > 8)
			continue;
		*colon = 0;
		const char *key = buf, *val = colon + 2;
		uint64_t u = strtoull(val, NULL, 10);
		const char *sect = depth >= 2 ? path[1] : "";
		const char *sub = depth >= 3 ? path[2] : "";
		if (depth == 1) {
			if (!strcmp(key, "timestamp"))
				k->ts = u, k->has_ts = true;
			else if (!strcmp(key, "trusted_packet_sequence_id"))
				k->seq_id = u;
			else if (!strcmp(key, "sequence_flags"))
				k->seq_flags = u;
			else if (!strcmp(key, "timestamp_clock_id"))
				k->clock_id = u;
		} else if (depth == 2 && !strcmp(sect, "track_event")) {
			if (!strcmp(key, "type"))
				k->te_type = !strcmp(val, "TYPE_SLICE_BEGIN") ? 1
					     : !strcmp(val, "TYPE_SLICE_END") ? 2
					     : !strcmp(val, "TYPE_INSTANT")   ? 3
					     : !strcmp(val, "TYPE_COUNTER")   ? 4
									      : -1;
			else if (!strcmp(key, "track_uuid"))
				k->te_track = u, k->te_has_track = true;
			else if (!strcmp(key, "name_iid"))
				k->te_iid = u, k->te_has_iid = true;
			else if (!strcmp(key, "name"))
				unquote(val, k->te_name, 64), k->te_has_name = true;
			else if (!strcmp(key, "counter_value"))
				k->te_counter = (double)strtoll(val, NULL, 10),
				k->te_has_counter = true;
			else if (!strcmp(key, "double_counter_value"))
				k->te_counter = strtod(val, NULL), k->te_has_counter = true;
		} else if (depth == 2 && !strcmp(sect, "trace_packet_defaults")) {
			if (!strcmp(key, "timestamp_clock_id"))
				k->def_clock = u;
		} else if (depth == 3 && !strcmp(sect, "trace_packet_defaults") &&
			   !strcmp(sub, "track_event_defaults")) {
			if (!strcmp(key, "track_uuid"))
				k->def_track = u;
		} else if (depth == 3 && !strcmp(sect, "clock_snapshot") &&
			   !strcmp(sub, "clocks")) {
			if (!strcmp(key, "clock_id"))
				k->cur_clk.id = u;
			else if (!strcmp(key, "timestamp"))
				k->cur_clk.ts = u;
			else if (!strcmp(key, "is_incremental"))
				k->cur_clk.incremental = !strcmp(val, "true");
		} else if (depth == 3 && !strcmp(sub, "debug_annotations")) {
			if (!strcmp(key, "name"))
				unquote(val, k->da_name, 64);
			else if (!strcmp(key, "bool_value"))
				k->da_bool = !strcmp(val, "true");
		} else if (depth == 2 && !strcmp(sect, "track_descriptor")) {
			if (!strcmp(key, "uuid"))
				k->td_uuid = u;
			else if (!strcmp(key, "parent_uuid"))
				k->td_parent = u;
			else if (!strcmp(key, "name"))
				unquote(val, k->td_name, 64);
		} else if (depth == 3 && !strcmp(sect, "track_descriptor")) {
			if (!strcmp(key, "pid"))
				k->td_pid = (uint32_t)u;
			else if (!strcmp(key, "tid"))
				k->td_tid = (uint32_t)u;
			else if (!strcmp(key, "process_name"))
				unquote(val, k->td_pname, 64);
			else if (!strcmp(key, "thread_name"))
				unquote(val, k->td_tname, 64);
		} else if (depth == 3 && !strcmp(sect, "interned_data")) {
			if (!strcmp(key, "iid"))
				k->en_iid = u;
			else if (!strcmp(key, "name"))
				unquote(val, k->en_name, 64);
		}
	}
	free(k);
	return depth == 0 ? 0 : -1;
}

static void replay_free(struct replay *rp)
{
	free(rp->t);
	for (size_t i = 0; i < rp->nseq; i++)
		free(rp->seq[i].iname);
	free(rp->seq);
	free(rp->out.r);
}

/* ---- feeding the writer -------------------------------------------------- */

struct feed {
	struct strtab st;
	struct run_head head;
	struct writer w;
	FILE *fp;
	struct recs want;
	/* expected open stacks, by (pid, tid) slot */
	struct {
		uint32_t pid, tid, depth;
		uint32_t name[64];
		uint64_t ts[64];
	} th[256];
	int nth;
};

static void feed_init(struct feed *f, const struct evlist *evl, unsigned interval_ms)
{
	memset(f, 0, sizeof *f);
	strtab_init(&f->st);
	f->head.strings = &f->st;
	f->head.spans = true;
	f->head.evl = evl;
	f->head.interval_ms = interval_ms;
	f->head.start_mono = 1000;
	f->fp = tmpfile();
	f->w.ops = &perfetto_writer_ops;
	f->w.fp = f->fp;
	f->w.head = &f->head;
	f->w.ops->start(&f->w, &f->head);
}

static uint32_t feed_name(struct feed *f, const char *s)
{
	return strtab_intern(&f->st, s, strlen(s));
}

static int feed_thread(struct feed *f, uint32_t pid, uint32_t tid)
{
	for (int i = 0; i < f->nth; i++)
		if (f->th[i].pid == pid && f->th[i].tid == tid)
			return i;
	f->th[f->nth].pid = pid;
	f->th[f->nth].tid = tid;
	f->th[f->nth].depth = 0;
	return f->nth++;
}

/* Sends one event to the writer and records what the trace must show. */
static void feed(struct feed *f, enum span_kind kind, uint32_t pid, uint32_t tid, uint64_t ts,
		 const char *name, int64_t value, uint32_t flags)
{
	struct span_event ev = {
		.kind = kind, .pid = pid, .tid = tid, .ts = ts, .flags = flags, .value = value};
	ev.name = name ? feed_name(f, name) : 0;
	int t = kind == SPAN_PROCESS ? -1 : feed_thread(f, pid, tid);
	struct rec r = {.pid = pid, .tid = tid, .ts = ts};
	switch (kind) {
	case SPAN_BEGIN:
		ev.depth = f->th[t].depth;
		f->th[t].name[f->th[t].depth] = ev.name;
		f->th[t].ts[f->th[t].depth++] = ts;
		break;
	case SPAN_END:
		ev.depth = --f->th[t].depth;
		ev.name = f->th[t].name[ev.depth];
		ev.begin_ts = f->th[t].ts[ev.depth];
		r.kind = REC_SLICE;
		scopy(r.name, strtab_get(&f->st, ev.name));
		r.depth = ev.depth;
		r.ts = ev.begin_ts;
		r.end = ts;
		r.unfinished = flags & SPAN_F_UNFINISHED;
		recs_add(&f->want, &r);
		break;
	case SPAN_INSTANT:
		r.kind = REC_INSTANT;
		scopy(r.name, name);
		recs_add(&f->want, &r);
		break;
	case SPAN_COUNTER:
		r.kind = REC_COUNTER;
		r.tid = 0;
		scopy(r.name, name);
		r.value = (double)value;
		recs_add(&f->want, &r);
		break;
	default:
		break;
	}
	f->w.ops->span(&f->w, &ev);
}

static void feed_release(struct feed *f)
{
	f->w.ops->release(&f->w);
	fclose(f->fp);
	strtab_release(&f->st);
	free(f->want.r);
}

/* Compares the replayed records with the expected ones; prints the first
 * difference. */
static int recs_same(const struct recs *got, const struct recs *want)
{
	if (got->n != want->n) {
		printf("#   %zu records decoded, %zu expected\n", got->n, want->n);
		return 0;
	}
	for (size_t i = 0; i < got->n; i++) {
		const struct rec *g = &got->r[i], *w = &want->r[i];
		if (g->kind != w->kind || g->pid != w->pid || g->tid != w->tid ||
		    strcmp(g->name, w->name) != 0 || g->ts != w->ts ||
		    (g->kind == REC_SLICE && (g->depth != w->depth || g->end != w->end ||
					      g->unfinished != w->unfinished)) ||
		    (g->kind == REC_COUNTER && g->value != w->value)) {
			printf("#   record %zu: got %c %u/%u '%s' d%u %" PRIu64 "-%" PRIu64
			       " u%d v%g\n#   want %c %u/%u '%s' d%u %" PRIu64 "-%" PRIu64
			       " u%d v%g\n",
			       i, g->kind, g->pid, g->tid, g->name, g->depth, g->ts, g->end,
			       g->unfinished, g->value, w->kind, w->pid, w->tid, w->name, w->depth,
			       w->ts, w->end, w->unfinished, w->value);
			return 0;
		}
	}
	return 1;
}

static int count_str(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static const struct track *find_thread(const struct replay *rp, uint32_t tid)
{
	for (size_t i = 0; i < rp->nt; i++)
		if (rp->t[i].kind == 't' && rp->t[i].tid == tid)
			return &rp->t[i];
	return NULL;
}

static const struct track *find_process(const struct replay *rp, uint32_t pid)
{
	for (size_t i = 0; i < rp->nt; i++)
		if (rp->t[i].kind == 'p' && rp->t[i].pid == pid)
			return &rp->t[i];
	return NULL;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_handmade(void)
{
	struct feed f;
	feed_init(&f, NULL, 0);
	feed(&f, SPAN_PROCESS, 100, 100, 2000, "main", 1, 0);
	feed(&f, SPAN_THREAD, 100, 100, 2000, "main", 0, 0);
	feed(&f, SPAN_BEGIN, 100, 100, 2100, "load", 0, 0);
	feed(&f, SPAN_BEGIN, 100, 100, 2200, "parse", 0, 0);
	feed(&f, SPAN_INSTANT, 100, 100, 2250, "checkpoint", 0, 0);
	feed(&f, SPAN_BEGIN, 100, 100, 2300, "lex", 0, 0);
	feed(&f, SPAN_END, 100, 100, 2400, NULL, 0, 0);
	feed(&f, SPAN_END, 100, 100, 2500, NULL, 0, 0);
	feed(&f, SPAN_THREAD, 100, 101, 2510, "worker", 0, 0);
	feed(&f, SPAN_BEGIN, 100, 101, 2520, "parse", 0, 0);
	/* a time before the thread's last one: absolute, the clock stays put */
	feed(&f, SPAN_INSTANT, 100, 101, 2515, "late", 0, 0);
	feed(&f, SPAN_COUNTER, 100, 101, 2530, "queue", 42, 0);
	feed(&f, SPAN_COUNTER, 100, 100, 2540, "queue", -7, 0);
	feed(&f, SPAN_END, 100, 101, 2600, NULL, 0, 0);
	feed(&f, SPAN_END, 100, 100, 2700, NULL, 0, 0);
	/* a child process whose thread is never announced, dying inside a span */
	feed(&f, SPAN_PROCESS, 200, 200, 3000, "child", 100, 0);
	feed(&f, SPAN_BEGIN, 200, 200, 3100, "load", 0, 0);
	feed(&f, SPAN_BEGIN, 200, 200, 3200, "work", 0, 0);
	feed(&f, SPAN_END, 200, 200, 3900, NULL, 0, SPAN_F_UNFINISHED);
	feed(&f, SPAN_END, 200, 200, 3900, NULL, 0, SPAN_F_UNFINISHED);
	feed(&f, SPAN_PROCESS_END, 200, 200, 3900, NULL, 0, 0);
	/* a thread of a process never announced */
	feed(&f, SPAN_BEGIN, 300, 301, 4000, "orphan", 0, 0);
	feed(&f, SPAN_END, 300, 301, 4100, NULL, 0, 0);
	/* rename after events */
	feed(&f, SPAN_THREAD, 100, 101, 4200, "worker-2", 0, 0);
	is_int(f.w.ops->finish(&f.w, NULL), 0, "finish succeeds");

	char *text = protoc_decode(f.fp);
	ok(text != NULL, "protoc decodes the hand-made trace");
	if (!text) {
		feed_release(&f);
		return;
	}
	struct replay rp = {0};
	ok(replay_text(&rp, text) == 0, "decoded text is well nested");
	if (!ok(rp.errors == 0, "the trace follows the importer's rules"))
		printf("#   %s\n", rp.first_error);
	is_int(count_str(text, "TYPE_SLICE_BEGIN"), 7, "7 slice begins");
	is_int(count_str(text, "TYPE_SLICE_END"), 7, "7 slice ends");
	is_int(count_str(text, "TYPE_INSTANT"), 2, "2 instants");
	is_int(count_str(text, "TYPE_COUNTER"), 2, "2 counter values");
	is_int(rp.snapshot, 1, "one clock snapshot pairs BOOTTIME and MONOTONIC");
	is_int((int)rp.nseq, 5, "one packet sequence for the trace and one per thread (4)");
	is_int(rp.seq_snapshots, 4, "each thread sequence starts an incremental clock");
	is_int(count_str(text, "is_incremental: true"), 4, "the thread clocks are incremental");
	is_int(count_str(text, "timestamp_clock_id: 64"), 4, "each thread sequence defaults to it");
	is_int(count_str(text, "timestamp_clock_id: 3"), 3 + 1 + 2 + 1,
	       "MONOTONIC only on the global sequence (3 process tracks, a counter track, 2 "
	       "values) and the late instant");
	is_int(rp.interned_defs, 9, "each name is interned once per thread that uses it (4+2+2+1)");
	is_int(rp.te_named, 0, "no track event carries its name inline (all interned)");
	is_int(rp.te_with_track, 2, "only the counter values name their track");
	ok(recs_same(&rp.out, &f.want), "slices, instants and counters match what was fed");

	const struct track *t100 = find_thread(&rp, 100), *t101 = find_thread(&rp, 101);
	const struct track *t200 = find_thread(&rp, 200), *t301 = find_thread(&rp, 301);
	ok(t100 && t100->pid == 100 && !strcmp(t100->name, "main"),
	   "thread 100 is 'main' in pid 100");
	ok(t101 && t101->pid == 100 && !strcmp(t101->name, "worker-2"),
	   "thread 101 is in pid 100 and its rename is the last descriptor");
	ok(t200 && t200->pid == 200, "an unannounced thread gets a track in its process");
	ok(t301 && t301->pid == 300 && find_process(&rp, 300),
	   "an unannounced process gets a process track");
	const struct track *p100 = find_process(&rp, 100), *p200 = find_process(&rp, 200);
	ok(p100 && !strcmp(p100->name, "main"), "process 100 is named 'main'");
	ok(p200 && !strcmp(p200->name, "child"), "process 200 is named 'child'");
	ok(p100 && t101 && t101->parent == p100->uuid, "thread tracks hang under their process");
	int ctracks = 0;
	for (size_t i = 0; i < rp.nt; i++)
		if (rp.t[i].kind == 'c' && !strcmp(rp.t[i].name, "queue") && rp.t[i].pid == 100)
			ctracks++;
	is_int(ctracks, 1, "one counter track for (pid 100, 'queue') across threads");
	int unfinished = 0;
	for (size_t i = 0; i < rp.out.n; i++)
		unfinished += rp.out.r[i].unfinished;
	is_int(unfinished, 2, "both spans open at the child's exit are marked unfinished");
	replay_free(&rp);
	free(text);
	feed_release(&f);
}

static void test_intervals(void)
{
	struct event ev[3] = {
		{.name = (char *)"task-clock", .unit = "msec", .scale = 1e-6},
		{.name = (char *)"cycles", .unit = "", .scale = 1},
		{.name = (char *)"page-faults", .unit = "", .scale = 1},
	};
	struct evlist evl = {.ev = ev, .n = 3, .ngroups = 3};
	struct feed f;
	feed_init(&f, &evl, 100);
	for (int i = 0; i < 3; i++) {
		struct count c[3] = {
			{.state = COUNT_OK, .raw = 100000000, .value = 100.5 + i},
			{.state = COUNT_NOT_SUPPORTED, .err = ENOENT},
			{.state = COUNT_OK, .raw = (uint64_t)(10 * i), .value = 10.0 * i},
		};
		struct interval_sample s = {.run = 0,
					    .t_ns = (uint64_t)(i + 1) * 100000000,
					    .mono_ns = 1000 + (uint64_t)(i + 1) * 100000000,
					    .length_ns = 100000000,
					    .counts = c};
		f.w.ops->interval(&f.w, &s);
	}
	is_int(f.w.ops->finish(&f.w, NULL), 0, "finish after intervals");
	char *text = protoc_decode(f.fp);
	ok(text != NULL, "protoc decodes the interval trace");
	if (!text) {
		feed_release(&f);
		return;
	}
	struct replay rp = {0};
	replay_text(&rp, text);
	if (!ok(rp.errors == 0, "interval trace follows the importer's rules"))
		printf("#   %s\n", rp.first_error);
	is_int(rp.counters, 6, "2 countable events x 3 samples; the unsupported one skipped");
	double tc = 0, pf = 0;
	int ntc = 0;
	for (size_t i = 0; i < rp.out.n; i++) {
		if (!strcmp(rp.out.r[i].name, "task-clock"))
			tc += rp.out.r[i].value, ntc++;
		if (!strcmp(rp.out.r[i].name, "page-faults"))
			pf += rp.out.r[i].value;
	}
	is_int(ntc, 3, "task-clock sampled 3 times");
	is_dbl(tc, 100.5 + 101.5 + 102.5, 1e-9, "task-clock samples carry the scaled values");
	is_dbl(pf, 30, 1e-9, "page-faults samples carry their deltas");
	ok(strstr(text, "name: \"spanstat\"") != NULL, "counters hang under a 'spanstat' track");
	ok(strstr(text, "unit_name: \"msec\"") != NULL, "task-clock's track has unit msec");
	ok(!strstr(text, "name: \"cycles\""), "no track for an unsupported event");
	replay_free(&rp);
	free(text);
	feed_release(&f);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* Random balanced streams: each stream its own processes (so several streams
 * share one trace file and one protoc run), with threads interleaved. */
static void test_roundtrip(void)
{
	static const char *names[] = {
		"a",	       "b",	     "main",	 "parse",
		"x y",	       "semi;colon", "quote\"d", "back\\slash",
		"caf\xc3\xa9", "tab\there",  "nl\nx",	 "long_name_long_name_long_name_long"};
	const int batches = 10, streams = 30;
	int good = 0, decoded = 0;
	size_t slices = 0;
	for (int b = 0; b < batches; b++) {
		struct feed f;
		feed_init(&f, NULL, 0);
		uint64_t ts = 10000;
		for (int s = 0; s < streams; s++) {
			uint32_t base = (uint32_t)(1000 + (b * streams + s) * 10);
			int nproc = 1 + (int)(rng() % 2);
			for (int p = 0; p < nproc; p++) {
				uint32_t pid = base + (uint32_t)p * 5;
				if (rng() % 4)
					feed(&f, SPAN_PROCESS, pid, pid, ts++, names[rng() % 12], 1,
					     0);
			}
			int ops = (int)(rng() % 60);
			for (int i = 0; i < ops; i++) {
				uint32_t pid = base + (uint32_t)(rng() % nproc) * 5;
				uint32_t tid = pid + (uint32_t)(rng() % 3);
				int t = feed_thread(&f, pid, tid);
				unsigned op = (unsigned)(rng() % 10);
				ts += rng() % 1000;
				if (op < 4 && f.th[t].depth < 30)
					feed(&f, SPAN_BEGIN, pid, tid, ts, names[rng() % 12], 0, 0);
				else if (op < 8 && f.th[t].depth)
					feed(&f, SPAN_END, pid, tid, ts, NULL, 0, 0);
				else if (op == 8)
					feed(&f, SPAN_INSTANT, pid, tid, ts, names[rng() % 12], 0,
					     0);
				else
					feed(&f, SPAN_COUNTER, pid, tid, ts, names[rng() % 3],
					     (int64_t)(rng() % 2000) - 1000, 0);
			}
			/* the decoder closes whatever is open, flagged */
			for (int t = 0; t < f.nth; t++)
				while (f.th[t].depth)
					feed(&f, SPAN_END, f.th[t].pid, f.th[t].tid, ++ts, NULL, 0,
					     SPAN_F_UNFINISHED);
			f.nth = 0;
		}
		f.w.ops->finish(&f.w, NULL);
		char *text = protoc_decode(f.fp);
		if (text) {
			decoded++;
			struct replay rp = {0};
			if (replay_text(&rp, text) == 0 && rp.errors == 0 &&
			    recs_same(&rp.out, &f.want))
				good++;
			else if (rp.errors)
				printf("#   batch %d: %s\n", b, rp.first_error);
			slices += rp.out.n;
			replay_free(&rp);
			free(text);
		}
		feed_release(&f);
	}
	is_int(decoded, batches, "protoc decodes every random trace");
	is_int(good, batches, "%d random streams come back as the same slices (%zu records)",
	       batches * streams, slices);
}

/* The size goal: a begin/end pair costs at most 24 bytes on a stream like
 * a traced program's (nested spans a few tens of ns apart, two threads
 * taking turns), and the trace still decodes to the same slices. */
static void test_size(bool decode)
{
	static const char *names[] = {"main", "run", "parse", "lex", "sort", "compare"};
	const int spans = 20000;
	struct feed f;
	feed_init(&f, NULL, 0);
	feed(&f, SPAN_PROCESS, 7, 7, 1000, "main", 1, 0);
	feed(&f, SPAN_THREAD, 7, 7, 1000, "main", 0, 0);
	feed(&f, SPAN_THREAD, 7, 8, 1000, "worker", 0, 0);
	uint64_t ts = 1000;
	int begun = 0;
	uint32_t tid = 7;
	for (int i = 0; begun < spans || f.th[0].depth || f.th[1].depth; i++) {
		if (i % 64 == 0)
			tid = 7 + (uint32_t)((i / 64) % 2);
		int t = feed_thread(&f, 7, tid);
		ts += 10 + rng() % 60;
		bool begin = begun < spans && f.th[t].depth < 5 && (!f.th[t].depth || rng() % 2);
		if (begin) {
			feed(&f, SPAN_BEGIN, 7, tid, ts, names[rng() % 6], 0, 0);
			begun++;
		} else if (f.th[t].depth) {
			feed(&f, SPAN_END, 7, tid, ts, NULL, 0, 0);
		}
	}
	is_int(f.w.ops->finish(&f.w, NULL), 0, "finish after %d nested spans", spans);
	long size = ftell(f.fp);
	double per = (double)size / spans;
	ok(size > 0 && per <= 24.0, "%.2f bytes per span (begin and end), at most 24", per);
	if (!decode) {
		feed_release(&f);
		return;
	}
	char *text = protoc_decode(f.fp);
	struct replay rp = {0};
	ok(text && replay_text(&rp, text) == 0 && rp.errors == 0 && recs_same(&rp.out, &f.want),
	   "the small trace decodes to the same %zu slices", f.want.n);
	if (rp.errors)
		printf("#   %s\n", rp.first_error);
	replay_free(&rp);
	free(text);
	feed_release(&f);
}

/* Past the one-byte cases: 200 threads (sequence ids over 127) and 300
 * names (iids over 127), each thread running a while before the next, with
 * deltas from 1 ns to over 16 us. */
static void test_wide(void)
{
	static char names[300][16];
	for (int i = 0; i < 300; i++)
		snprintf(names[i], sizeof names[i], "n%03d", i);
	struct feed f;
	feed_init(&f, NULL, 0);
	feed(&f, SPAN_PROCESS, 9, 9, 1000, "wide", 1, 0);
	uint64_t ts = 1000;
	for (int run = 0; run < 600; run++) {
		uint32_t tid = 9 + (uint32_t)(rng() % 200);
		int t = feed_thread(&f, 9, tid);
		for (int i = 0; i < 20; i++) {
			ts += rng() % 8 ? 1 + rng() % 100 : rng() % 20000;
			if (f.th[t].depth < 6 && (!f.th[t].depth || rng() % 2))
				feed(&f, SPAN_BEGIN, 9, tid, ts, names[rng() % 300], 0, 0);
			else
				feed(&f, SPAN_END, 9, tid, ts, NULL, 0, 0);
		}
	}
	for (int t = 0; t < f.nth; t++)
		while (f.th[t].depth)
			feed(&f, SPAN_END, 9, f.th[t].tid, ++ts, NULL, 0, 0);
	is_int(f.w.ops->finish(&f.w, NULL), 0, "finish after 200 threads and 300 names");
	char *text = protoc_decode(f.fp);
	struct replay rp = {0};
	ok(text && replay_text(&rp, text) == 0 && rp.errors == 0 && recs_same(&rp.out, &f.want),
	   "200 threads on sequences past 127, 300 names: the same %zu slices", f.want.n);
	if (rp.errors)
		printf("#   %s\n", rp.first_error);
	is_int((int)rp.nseq, f.nth + 1, "a sequence per thread");
	replay_free(&rp);
	free(text);
	feed_release(&f);
}

static void test_write_error(void)
{
	FILE *full = fopen("/dev/full", "w");
	if (!full) {
		ok(1, "# SKIP no /dev/full");
		return;
	}
	struct strtab st;
	strtab_init(&st);
	struct run_head head = {.strings = &st, .spans = true};
	struct writer w = {.ops = &perfetto_writer_ops, .fp = full, .head = &head};
	w.ops->start(&w, &head);
	uint32_t id = strtab_intern(&st, "x", 1);
	for (int i = 0; i < 10000; i++) {
		struct span_event b = {
			.kind = SPAN_BEGIN, .pid = 1, .tid = 1, .ts = (uint64_t)i, .name = id};
		struct span_event e = b;
		e.kind = SPAN_END;
		w.ops->span(&w, &b);
		w.ops->span(&w, &e);
	}
	int rc = w.ops->finish(&w, NULL);
	ok(rc < 0, "a full disk is reported by finish (%d)", rc);
	w.ops->release(&w);
	fclose(full);
	strtab_release(&st);
}

int main(void)
{
	test_pbenc();
	test_write_error();
	int have_schema = find_schema() == 0;
	int have_protoc = system("protoc --version >/dev/null 2>&1") == 0;
	if (!have_schema || !have_protoc) {
		const char *why = !have_schema ? "tests/perfetto/pf-decode not found (set SRCDIR)"
					       : "protoc not installed (protobuf-compiler)";
		const char *req = getenv("SPANSTAT_REQUIRE_ALL");
		if (req && *req)
			ok(0, "protoc decoding required but %s", why);
		else
			ok(1, "# SKIP protoc decoding: %s", why);
		test_size(false);
		return tap_done();
	}
	test_handmade();
	test_intervals();
	test_roundtrip();
	test_wide();
	test_size(true);
	return tap_done();
}
