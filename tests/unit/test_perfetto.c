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

static char proto_dir[4096];

static int find_schema(void)
{
	char proto[4200];
	if (tap_find_source("../shared/perfetto/perfetto_trace.proto", proto, sizeof proto) < 0)
		return -1;
	snprintf(proto_dir, sizeof proto_dir, "%.*s", (int)(strrchr(proto, '/') - proto), proto);
	return 0;
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
	snprintf(cmd, sizeof cmd,
		 "protoc --proto_path='%s' --decode=perfetto.protos.Trace perfetto_trace.proto "
		 "< '%s' 2>&1",
		 proto_dir, in);
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

struct replay {
	struct track *t;
	size_t nt;
	char (*iname)[64]; /* by iid */
	size_t niname;
	struct recs out;
	/* what the trace as a whole looked like */
	int packets, begins, ends, instants, counters, interned_defs, snapshot, te_named;
	int errors;
	char first_error[200];
	uint64_t seq_id;
	bool cleared;
};

struct pkt {
	uint64_t ts, seq_id, seq_flags, clock_id;
	bool has_te, has_td, has_td_process, has_td_thread, has_td_counter, has_snapshot;
	int te_type;
	uint64_t te_track, te_iid;
	char te_name[64];
	bool te_has_iid, te_has_name, te_unfinished, te_has_counter;
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

static void rp_packet(struct replay *rp, struct pkt *k)
{
	rp->packets++;
	if (rp->packets == 1) {
		rp->seq_id = k->seq_id;
		if (!(k->seq_flags & 1))
			rp_error(rp, "first packet does not clear incremental state");
		rp->cleared = true;
	} else if (k->seq_id != rp->seq_id || !k->seq_id) {
		rp_error(rp, "packet on another sequence");
	}
	if (k->has_snapshot) {
		rp->snapshot++;
		return;
	}
	if (k->clock_id != 3)
		rp_error(rp, "packet not on the MONOTONIC clock");
	for (int i = 0; i < k->ninterned; i++) {
		uint64_t iid = k->iids[i];
		if (iid >= rp->niname) {
			size_t n = iid * 2 + 16;
			rp->iname = realloc(rp->iname, n * sizeof *rp->iname);
			memset(rp->iname + rp->niname, 0, (n - rp->niname) * sizeof *rp->iname);
			rp->niname = n;
		}
		if (rp->iname[iid][0])
			rp_error(rp, "name interned twice");
		scopy(rp->iname[iid], k->inames[i]);
		rp->interned_defs++;
	}
	if (k->has_td) {
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
	struct track *t = rp_track(rp, k->te_track);
	if (!t) {
		rp_error(rp, "track event before its track descriptor");
		return;
	}
	const char *name = k->te_name;
	rp->te_named += k->te_has_name;
	if (k->te_has_iid) {
		if (!(k->seq_flags & 2))
			rp_error(rp, "interned name used without NEEDS_INCREMENTAL_STATE");
		if (k->te_iid >= rp->niname || !rp->iname[k->te_iid][0]) {
			rp_error(rp, "name iid used before its definition");
			name = "?";
		} else {
			name = rp->iname[k->te_iid];
		}
	}
	struct rec r = {0};
	r.pid = t->pid;
	r.tid = t->tid;
	r.ts = k->ts;
	switch (k->te_type) {
	case 1:
		rp->begins++;
		if (t->kind != 't' || t->depth >= 64) {
			rp_error(rp, "slice begin on a non-thread track");
			return;
		}
		scopy(t->stack[t->depth], name);
		t->stack_ts[t->depth++] = k->ts;
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
		r.end = k->ts;
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
				k->ts = u;
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
				k->te_track = u;
			else if (!strcmp(key, "name_iid"))
				k->te_iid = u, k->te_has_iid = true;
			else if (!strcmp(key, "name"))
				unquote(val, k->te_name, 64), k->te_has_name = true;
			else if (!strcmp(key, "counter_value"))
				k->te_counter = (double)strtoll(val, NULL, 10),
				k->te_has_counter = true;
			else if (!strcmp(key, "double_counter_value"))
				k->te_counter = strtod(val, NULL), k->te_has_counter = true;
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
	free(rp->iname);
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
	} th[64];
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
	is_int(count_str(text, "TYPE_INSTANT"), 1, "1 instant");
	is_int(count_str(text, "TYPE_COUNTER"), 2, "2 counter values");
	is_int(rp.snapshot, 1, "one clock snapshot");
	ok(strstr(text, "clock_id: 6") && strstr(text, "clock_id: 3"),
	   "the snapshot pairs BOOTTIME and MONOTONIC");
	is_int(rp.interned_defs, 6, "each of the 6 span and instant names is interned once");
	is_int(rp.te_named, 0, "no track event carries its name inline (all interned)");
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
		const char *why = !have_schema
					  ? "../shared/perfetto/perfetto_trace.proto not found "
					    "(set SRCDIR)"
					  : "protoc not installed (protobuf-compiler)";
		const char *req = getenv("SPANSTAT_REQUIRE_SHARED");
		if (req && !strcmp(req, "1"))
			ok(0, "protoc decoding required but %s", why);
		else
			ok(1, "# SKIP protoc decoding: %s", why);
		return tap_done();
	}
	test_handmade();
	test_intervals();
	test_roundtrip();
	return tap_done();
}
